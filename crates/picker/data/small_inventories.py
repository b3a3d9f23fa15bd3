#!/usr/bin/env python3
"""Small inventories drawn from `eval/everyday`, for fitting the decision policy
(`decision_policy.py`, `SMALL=DIR`): k whole groups (an extension package, an MCP server) besides
the built-in tools, k = 3, 5 and 8, four seeded draws each, the way most users' setups have a
few. A topical prompt whose needs are all in the draw stays a query (its needs cut to the draw);
the others ask for something no tool of the draw does, and become irrelevance prompts (they
should expose nothing). Coding-only and near-miss prompts are kept as they are. Prompt ids are
unchanged, so the tune and test halves are the everyday set's.

Usage: python3 small_inventories.py OUT_DIR   (after `cargo build --release`: the groups come
from `target/release/context-decisions groups`)
"""
import json, random, subprocess, os, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
BIN = os.path.join(R, 'target/release/context-decisions')
tools = json.load(open(R + '/eval/everyday/tools.json'))
out = subprocess.run([BIN, 'groups', '--tools', R + '/eval/everyday/tools.json'], capture_output=True, text=True).stdout.splitlines()[1:]
group = {}
for line in out:
    parts = line.split()
    if len(parts) >= 3:
        group[parts[0]] = parts[2]
queries = [json.loads(l) for l in open(R + '/eval/everyday/queries.jsonl')]
irr = [json.loads(l) for l in open(R + '/eval/everyday/irrelevance.jsonl')]
groups = sorted({g for g in group.values() if g != '-'})
OUT = sys.argv[1]
for k in [3, 5, 8]:
    for seed in range(4):
        rnd = random.Random(1000 * k + seed)
        sub = set(rnd.sample(groups, k))
        d = f'{OUT}/small-{k}-{seed}'
        os.makedirs(d, exist_ok=True)
        keep = [t for t in tools if group.get(t['name'], '-') == '-' or group[t['name']] in sub]
        json.dump(keep, open(d + '/tools.json', 'w'))
        names = {t['name'] for t in keep}
        qs, absent = [], []
        for q in queries:
            needs = [[a for a in n if a in names] for n in q.get('needs', [])]
            rel = [t for t in q['relevant_tools'] if t in names]
            if q.get('needs') and all(needs) and rel:
                q2 = dict(q); q2['needs'] = needs; q2['relevant_tools'] = rel
                qs.append(q2)
            else:
                absent.append({'id': q['id'], 'prompt': q['prompt'], 'relevant_tools': []})
        with open(d + '/queries.jsonl', 'w') as f:
            for q in qs: f.write(json.dumps(q) + '\n')
        with open(d + '/irrelevance.jsonl', 'w') as f:
            for q in irr: f.write(json.dumps(q) + '\n')
            for q in absent: f.write(json.dumps(q) + '\n')
        print(d, len(keep), len(qs), len(absent))
