#!/usr/bin/env python3
"""Fits the embedded scorer's calibration (`SHIPPED_CALIBRATION` in `src/embedded.rs`).

The method: every prompt of the tune halves (the everyday set in `eval/everyday` and the shared
sets `bfcl` and `metatool`, tools mode and `mcp` mode) is scored by the scorer's evidence, dumped
by `cargo run --release -p pcd-eval --example scorer_features -- SET tools|mcp`, one
JSON line per prompt. A candidate's features are what `Evidence` holds in the context of its
prompt (strength, coverage, name share, relative strength, rank, the best candidate's coverage
and strength, the gap to the second, coverage x relative, the number of candidates, whether the
prompt names a file). The weights are chosen for the picker's selection at its defaults
(threshold 0.625, caps 6 tools and 2 groups): they maximise the share of labelled prompts whose
every need (a tool or an accepted alternative) is made available, weighted per set, less
penalties where coding-only prompts exposing nothing fall under 90%, near-miss prompts under 60%,
bfcl's irrelevance prompts under 70%, and tools exposed per prompt rise over 2.5. A logistic fit
gives the start; a seeded random search refines it (first free, then with the log-rank and best-
strength weights held at 0; the scorer caps each score below the one above it, so scores
never rise down the ranking). The test halves are
never read here.

Usage: python3 calibration.py DUMP_DIR   (DUMP_DIR holds NAME-MODE.jsonl dumps)
Needs numpy and scikit-learn (development only; nothing at build or run time).
"""
import json, math, sys, os
import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
SETS = {'everyday': os.path.join(ROOT, 'eval/everyday'),
        'bfcl': os.path.join(ROOT, 'eval/bfcl'),
        'metatool': os.path.join(ROOT, 'eval/metatool')}
DUMPS = sys.argv[1] if len(sys.argv) > 1 else '/tmp/feat'

def labels(name):
    d = SETS[name]; lab = {}
    for f in ['queries.jsonl', 'irrelevance.jsonl']:
        path = os.path.join(d, f)
        if not os.path.exists(path):
            continue
        for l in open(path, encoding='utf-8'):
            if not l.strip():
                continue
            q = json.loads(l)
            needs = q.get('needs') or [[t] for t in q['relevant_tools']]
            lab[q['id']] = (needs, q.get('kind'), q['prompt'])
    return lab

def load(name, mode):
    lab = labels(name); rows = []
    for l in open(os.path.join(DUMPS, f'{name}-{mode}.jsonl'), encoding='utf-8'):
        p = json.loads(l)
        needs, kind, prompt = lab[p['id']]
        rel = set(t for n in needs for t in n)
        for c in p['candidates']:
            c['y'] = int(any(m in rel for m in c['members']))
        p['needs'] = needs; p['kind'] = kind or p['kind']; p['prompt'] = prompt
        rows.append(p)
    return rows


EXTS={'rs','py','ts','tsx','js','jsx','mjs','go','java','kt','rb','c','h','cc','cpp','hpp','cs','swift','php','yml','yaml','toml','json','md','sh','sql','css','scss','html','lock','proto','tf'}
TRIM='"\'`()[]{}<>,;:!?*'
def local_file(prompt):
    for tok in prompt.split():
        t=tok.strip(TRIM).rstrip('.').strip(TRIM)
        if '://' in t or t.lower().startswith('www.'): continue
        seg=t.rsplit('/',1)[-1]
        if '.' not in seg: continue
        stem,ext=seg.rsplit('.',1)
        if ext in EXTS and stem and all(ch.isalnum() or ch in '_-.' for ch in stem): return True
    return False
def feats(p):
    cs=p['candidates']
    if not cs: return []
    best=cs[0]['raw']; second=cs[1]['raw'] if len(cs)>1 else 0.0
    bs=cs[0]['strength']; bc=cs[0]['coverage']
    lf=1.0 if local_file(p['prompt']) else 0.0
    out=[]
    for i,c in enumerate(cs):
        rel=c['raw']/best
        f=[c['strength'], c['coverage'], c['name_share'], rel, math.log(i+1),
           bc, bs, (best-second)/max(best,1e-9), c['coverage']*rel, math.log(p['candidates_total']), lf]
        out.append(f)
    return out

PAIRS=[('everyday','tools'),('everyday','mcp'),('bfcl','tools'),('bfcl','mcp'),('metatool','tools')]
def prep(name,mode,split):
    rows=[p for p in load(name,mode) if p['split']==split]
    if name=='metatool': rows=rows[::3]
    X=[];pid=[];Y=[];members=[]
    P=[]
    for j,p in enumerate(rows):
        F=feats(p)
        for f,c in zip(F,p['candidates']):
            X.append(f);pid.append(j);members.append(c['members'])
        P.append(p)
    return dict(X=np.array(X),pid=np.array(pid),P=P,members=members,cap=6 if mode=='tools' else 2)
def select(d,w,thr=0.625):
    z=d['X']@w[1:]+w[0]; s=1/(1+np.exp(-z))
    chosen={}
    # rows are in rank order within a prompt; cap applies to the best ones over threshold
    for i in np.nonzero(s>=thr)[0]:
        j=d['pid'][i]; l=chosen.setdefault(j,[])
        if len(l)<d['cap']: l.append(i)
    return chosen
def metrics(d,w):
    ch=select(d,w); met=0;nq=0;exp=0;noth={};
    for j,p in enumerate(d['P']):
        c=ch.get(j,[])
        if p['kind']=='query':
            nq+=1; exp+=len(c); mem=set(m for i in c for m in d['members'][i])
            met+=all(any(t in mem for t in need) for need in p['needs'])
        else:
            k=p['kind'] if p['kind'] in ('coding','near-miss') else 'irr'
            a=noth.setdefault(k,[0,0]); a[1]+=1; a[0]+=(len(c)==0)
    r={'met':met/max(nq,1),'exp':exp/max(nq,1)}
    for k,(a,b) in noth.items(): r[k]=a/b
    return r
def objective(D,w,verbose=False):
    J=0; out={}
    for key,d in D.items():
        m=metrics(d,w); out[key]=m
        wt={'everyday-tools':2,'everyday-mcp':1,'bfcl-tools':1,'bfcl-mcp':0.5,'metatool-tools':1}[key]
        J+=wt*m['met']
        J-=wt*max(0,m['exp']-2.5)*0.5
        if 'coding' in m: J-=3*max(0,0.9-m['coding'])
        if 'near-miss' in m: J-=1*max(0,0.6-m['near-miss'])
        if 'irr' in m: J-=3*max(0,0.7-m['irr'])
    if verbose:
        for k,m in out.items(): print(' ',k,{a:round(b,3) for a,b in m.items()})
    return J

def search(D, best, iterations, seed, fixed=()):
    bj = objective(D, best)
    rng = np.random.default_rng(seed); step = 0.5
    mask = np.ones(len(best)); mask[list(fixed)] = 0
    for it in range(iterations):
        cand = best + rng.normal(0, step, len(best)) * (rng.random(len(best)) < 0.3) * mask
        j = objective(D, cand)
        if j > bj:
            best, bj = cand, j
        if it % 100 == 99:
            step *= 0.7
    return best

if __name__ == '__main__':
    D = {f'{n}-{m}': prep(n, m, 'tune') for n, m in PAIRS}
    X = np.vstack([d['X'] for d in D.values()])
    Y = np.concatenate([[int(any(t in set(x for n in d['P'][j]['needs'] for x in n) for t in d['members'][i])) if d['P'][j]['kind'] == 'query' else 0
                         for i, j in enumerate(d['pid'])] for d in D.values()])
    start = LogisticRegression(C=1.0, max_iter=5000).fit(X, Y)
    w = np.concatenate([[start.intercept_[0]], start.coef_[0]])
    w = search(D, w, 400, 1)
    w[5] = 0.0; w[7] = 0.0  # log rank, best strength
    w = search(D, w, 400, 7, fixed=(5, 7))
    print('weights (bias, strength, coverage, name_share, relative, log_rank, best_coverage,')
    print('         best_strength, gap, coverage_relative, log_candidates, local_file):')
    print(', '.join(f'{x:.3f}' for x in w))
    objective(D, w, True)
