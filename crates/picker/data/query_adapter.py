"""The query adapter of `src/semantic.rs` (`query-adapter.f32`), and the experiments behind it.

The prompt's vector `p` becomes `p + p W` (normalised) before its cosines with the candidates,
`W` a 384 x 384 matrix fitted with an L2 penalty, by Adam, to a softmax over each inventory's
candidates of their fused evidence (a tool's 0.35 of its lexical score to the power 1.5 + 0.65 of
its cosine, with its one vector joined from its whole text's and its description's first
sentence's, `semantic::joined_vector`; a group's 0.15 lexical + 0.85 of the mix of its whole text's cosine and its best member name's, as `src/semantic.rs`
has them) toward the candidates each prompt needs. The reach (every need within the cap's best:
6 tools, 3 groups) and R@5 are then measured on other sets.

The shipped adapter is fitted on the two training sets alone (`adapter-set/` and
`example-set/`: invented servers and extensions and prompts written for them, most in other
words than the tool's; see their README.md), every prompt of both, in both modes (their tools
and their groups), so no evaluation prompt or tool shapes it:

    M=MODEL_DIR; D=DIR
    for mode in tools mcp; do
      for set in adapter example; do
        cargo run --release -p pcd-eval --example ranking_dump -- crates/picker/data/$set-set $mode $M > $D/$set-$mode.jsonl
      done
      cargo run --release -p pcd-eval --example ranking_dump -- eval/everyday $mode $M > $D/everyday-$mode.jsonl
      cargo run --release -p pcd-eval --example ranking_dump -- eval/bfcl $mode $M > $D/bfcl-$mode.jsonl
    done
    python3 crates/picker/data/query_adapter.py $D adapter-tools,adapter-mcp,example-tools,example-mcp \\
        everyday-tools,bfcl-tools,everyday-mcp,bfcl-mcp 0.01 1 --write

`python3 crates/picker/data/query_adapter.py $D 0.01 1 --held-out` holds out each of the adapter
set's four domains in turn (the adapter set's part and the example set's of that domain: both
were written from the same four briefs) from a fit on everything else (the other three, and the
example set's own domains), and measures the adapter set's part of it on its own servers' tools
with a bank of every other domain's example requests (`example_requests.py`), against the fit on
the adapter set alone at 4 epochs (`LEX_POW=X` for another power).

(`ranking_dump` embeds the prompts as they are: the dumps are read without the adapter, and the
script applies the one it fits.) Lambda 0.01 and 4 epochs were chosen by the reach on each of the
adapter set's four parts held out in turn from a fit on the other three, tools mode (0.704 ->
0.746; 8 epochs 0.733, lambda 0.03 0.739, 0.1 0.732), when the adapter set was all there was.
With the example set's first round as well, twice the pairs, 2 epochs (as many steps as 4 did)
held best: held out as `--held-out` holds them (`SEEDS=0,1,2,3,4`), the adapter set's parts
reached 0.775 of their needs on average over the five seeds, against 0.765 fitted on the
adapter set alone at 4 epochs (3 epochs 0.770 over seeds 1 to 4, 4 epochs 0.766). With its second
round too, three times the pairs, 1 epoch holds best: 0.778 against 0.7655 (2 epochs 0.773);
every seed gains. With its third round, four domains none of the others has
(`example-set/README.md`), which are in every fold's fit and bank since no fold holds them out:
0.794 at 1 epoch against 0.769 for the adapter set alone (its bank has them too), 2 epochs 0.791
over seeds 0 to 3; every seed gains again (0.778 before the round). With each tool read as its
whole text and its description's first sentence joined (`load`, `semantic::joined_vector`),
seed 0 reaches 0.821 at 1 epoch, against 0.791 with the whole text alone; every held-out half
gains (`BENCHMARKS.md`, "Issue 31: a tool read from its description's first sentence too").
With the example set's fourth round (four more domains of its own, in every fold's fit and
bank), the five seeds reach 0.8305 at 1 epoch on average against 0.8221 without it (2 epochs
0.8250 over seeds 0 and 1, against 0.8279 at 1); every seed gains (`BENCHMARKS.md`, "Issue 31:
the example set's fourth round").
A set named `adapter-*` or `example-*` is fitted whole; any other set named in TRAIN_SETS is
fitted on its tune half (so `DIR everyday-tools everyday-tools,bfcl-tools 0.01 4` asks what
labelled prompts of one inventory teach: that inventory's tools, `BENCHMARKS.md` has it).

Needs numpy (development only).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ranking_views  # noqa: E402  (its reader and its `measure`, which every script here reports)

# The fused evidence's lexical share, and the cap of the reach, per mode (`src/semantic.rs`).
LEXICAL_SHARE = {'tools': ranking_views.LEXICAL_SHARE, 'mcp': 0.15}
# The power the lexical score is raised to before its share (`LEXICAL_EXPONENT`,
# `GROUP_LEXICAL_EXPONENT`); `LEX_POW=X` tries another for tools, as in `decision_policy.py`.
LEXICAL_EXPONENT = {'tools': float(os.environ.get('LEX_POW', ranking_views.LEXICAL_EXPONENT)), 'mcp': 1.0}
CAP = {'tools': 6, 'mcp': 3}
MEMBER_SHARE = 0.5


def load(directory, name):
    """A `ranking_dump` as `ranking_views.read` gives it, with each candidate's vector as the
    cosine reads it (`semantic::joined_vector`: a tool's whole text's and its description's first
    sentence's, summed and normalised; a group's whole text's) and its members' (a group's)."""
    cands, prompts = ranking_views.read(os.path.join(directory, name + '.jsonl'))
    mode = 'mcp' if name.endswith('-mcp') else 'tools'
    whole = np.array([ranking_views.joined(c['vectors']) if mode == 'tools' else c['vectors'][0]
                      for c in cands], np.float32)
    members, owner = [], []
    for i, c in enumerate(cands):
        if mode == 'mcp' and len(c['vectors']) > 1:
            members += c['vectors'][1:]
            owner += [i] * (len(c['vectors']) - 1)
    for q in prompts:
        q['needs'] = [n for n in q['needs'] if n]
        q['lex'] = q['lex'].astype(np.float32) ** LEXICAL_EXPONENT[mode]  # as the fusion reads it
    return dict(mode=mode, whole=whole, n=len(cands), whole_set=name.startswith(('adapter', 'example')),
                labels=[c['label'] for c in cands],
                prompts=[q for q in prompts if q['needs']],
                members=np.array(members, np.float32).reshape(-1, 384), owner=np.array(owner, int))


def cosines(s, u):
    """Each candidate's cosine with the unit vector `u` (a group's mixing its whole text's with its
    best member's), and which member was best (or None)."""
    whole = s['whole'] @ u
    if len(s['members']) == 0:
        return whole, None
    cm = s['members'] @ u
    order = np.argsort(cm)  # ascending: the last write, the best, wins
    best = np.full(s['n'], -1)
    best[s['owner'][order]] = order
    has = best >= 0
    mixed = np.where(has, (1 - MEMBER_SHARE) * whole + MEMBER_SHARE * cm[np.maximum(best, 0)], whole)
    return mixed, (has, best)


def adapt(p, W):
    u = p + p @ W if W is not None else p
    return u / np.linalg.norm(u)


def score(s, q, W):
    cos = np.max([cosines(s, adapt(p, W))[0] for p in q['pv']], axis=0)
    share = LEXICAL_SHARE[s['mode']]
    return share * q['lex'] + (1 - share) * cos


def measure(s, W, split, sl=None):
    """The reach (every need within the cap's best) and R@5 over needs of `split`'s prompts (of
    slice `sl`, when given), as `ranking_views.measure` counts them, and how many prompts."""
    chosen = [q for q in s['prompts'] if q['split'] == split and (sl is None or q['slice'] == sl)]
    if not chosen:
        return 0.0, 0.0, 0
    reach, r5 = ranking_views.measure(chosen, lambda q: score(s, q, W), split, CAP[s['mode']])
    return reach, r5, len(chosen)


def train(sets, lam, epochs, tau=0.05, lr=1e-3, seed=0):
    rng = np.random.default_rng(seed)  # its own draws: the fit depends on its data and settings only
    W = np.zeros((384, 384), np.float32)
    m, v = np.zeros_like(W), np.zeros_like(W)
    ex = [(s, q['pv'][0], q['lex'], need) for s in sets for q in s['prompts']
          if s['whole_set'] or q['split'] == 'tune' for need in q['needs']]
    print(f'  {len(ex)} training pairs', file=sys.stderr)
    t = 0
    for ep in range(epochs):
        order = rng.permutation(len(ex))
        for b in range(0, len(order), 64):
            batch = order[b:b + 64]
            g = np.zeros_like(W)
            for i in batch:
                s, p, lex, need = ex[i]
                u = p + p @ W
                nu = np.linalg.norm(u)
                ut = u / nu
                cos, best = cosines(s, ut)
                share = LEXICAL_SHARE[s['mode']]
                z = ((1 - share) * cos + share * lex) / tau
                e = np.exp(z - z.max())
                sm = e / e.sum()
                target = np.zeros_like(sm)
                target[need] = sm[need] / sm[need].sum()
                dcos = (sm - target) * (1 - share) / tau
                if best is None:
                    gu = dcos @ s['whole']
                else:
                    has, which = best
                    gu = (np.where(has, 1 - MEMBER_SHARE, 1.0) * dcos) @ s['whole'] \
                        + (MEMBER_SHARE * dcos[has]) @ s['members'][which[has]]
                g += np.outer(p, (gu - (gu @ ut) * ut) / nu)
            t += 1
            gk = g / len(batch) + lam * W
            m = 0.9 * m + 0.1 * gk
            v = 0.999 * v + 0.001 * gk * gk
            W -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        print(f'  epoch {ep} done', file=sys.stderr)
    return W


# The adapter set's parts (`adapter-set/README.md`), by the prefix of their prompts' ids.
PARTS = ('syn-dev-', 'syn-office-', 'syn-world-', 'syn-misc-')


def restrict(s, part, inside):
    """`s` with the prompts of `part` (`inside`) or of the other parts only, and only the
    candidates of the servers and extensions those prompts ask for: a part's own inventory."""
    prompts = [q for q in s['prompts'] if q['id'].startswith(part) == inside]
    labels = {s['labels'][c] for q in prompts for need in q['needs'] for c in need}
    kept = [i for i in range(s['n']) if s['labels'][i] in labels]
    at = {old: new for new, old in enumerate(kept)}
    member = np.isin(s['owner'], kept)
    moved = [dict(q, lex=q['lex'][kept], needs=[[at[c] for c in need] for need in q['needs']])
             for q in prompts]
    return dict(s, whole=s['whole'][kept], n=len(kept), prompts=moved, labels=[s['labels'][i] for i in kept],
                members=s['members'][member], owner=np.array([at[o] for o in s['owner'][member]], int))


def held_out_folds(directory, lam, epochs, seed=0):
    """Each of the adapter set's four domains held out in turn from a fit on everything else
    (tools and groups alike, each on its own servers' candidates; the adapter set's part and the
    example set's parts of that domain held out, the example set's own domains never): yields
    (the domain's part, the adapter set's fits on the other three domains, `fit(epochs)` giving
    the adapter fitted on both sets, a bank of every other domain's example requests, the adapter
    set's part on its own inventory), with `fit` seeded by `seed`.
    What the shipped adapter and example requests are chosen on (this module's and
    `example_requests.py`'s docstrings)."""
    import example_requests as er  # it imports this module
    tools, groups = load(directory, 'adapter-tools'), load(directory, 'adapter-mcp')
    more_tools, more_groups = load(directory, 'example-tools'), load(directory, 'example-mcp')

    def same_domain(part):
        # The example set's ids of `part`'s domain: `syn3-dev-0001` is of `syn-dev-`'s.
        domain = part.split('-', 1)[1]
        return tuple(sorted({q['id'].rsplit('-', 1)[0] + '-' for q in more_tools['prompts']
                             if q['id'].split('-', 1)[1].startswith(domain)}))

    prefixes = {q['id'].rsplit('-', 1)[0] + '-' for q in more_tools['prompts']}
    for part in PARTS:
        others = [p for p in PARTS if p != part]
        # The example set's prompts of every other domain, its own domains beyond the adapter
        # set's four (`syn5-*`) among them: all the bank would hold but the held-out domain.
        bank = er.joined(er.bank(tools, others),
                         er.bank(more_tools, sorted(prefixes - set(same_domain(part)))))
        alone = [restrict(tools, part, False), restrict(groups, part, False)]
        both = alone + [restrict(more_tools, same_domain(part), False),
                        restrict(more_groups, same_domain(part), False)]
        yield part, alone, lambda e, both=both: train(both, lam, e, seed=seed), bank, restrict(tools, part, True)


def held_out(directory, lam, epochs):
    """The reach of each held-out domain (`held_out_folds`), tools mode, both halves, fitted on
    both sets at `epochs` against the adapter set alone at 4 epochs (the fit before the example
    set), and the means. `SEEDS=0,1,...` repeats it for other seeds of the fit's draws."""
    import example_requests as er  # it imports this module
    for seed in [int(x) for x in os.environ.get('SEEDS', '0').split(',')]:
        alone, both = [], []
        for part, fits, fit, bank, held in held_out_folds(directory, lam, epochs, seed):
            W_alone, W_both = train(fits, lam, 4, seed=seed), fit(epochs)
            for split in ('test', 'tune'):
                a = er.measure(held, W_alone, bank, er.SHIPPED, split)[0]
                b = er.measure(held, W_both, bank, er.SHIPPED, split)[0]
                print(f'seed {seed} {part:12} {split}: reach {a:.3f} (adapter set alone) -> {b:.3f} (both sets)')
                alone.append(a)
                both.append(b)
        print(f'seed {seed}: mean held-out reach {np.mean(alone):.4f} -> {np.mean(both):.4f}', flush=True)


def main():
    if '--held-out' in sys.argv:
        return held_out(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))
    directory, train_sets, eval_sets = sys.argv[1], sys.argv[2].split(','), sys.argv[3].split(',')
    lam, epochs = float(sys.argv[4]), int(sys.argv[5])
    cache = {s: load(directory, s) for s in set(train_sets + eval_sets)}
    W = train([cache[s] for s in train_sets], lam, epochs)
    if '--write' in sys.argv:
        # Little-endian f32, row-major: p' = p + p W, W[i][j] at i * 384 + j.
        W.astype('<f4').tofile(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'query-adapter.f32'))
        print('wrote query-adapter.f32', file=sys.stderr)
    for name in eval_sets:
        s = cache[name]
        for split in ('test', 'tune'):
            b, a = measure(s, None, split), measure(s, W, split)
            print(f'{name:14} {split}: reach {b[0]:.3f} -> {a[0]:.3f}  R@5 {b[1]:.3f} -> {a[1]:.3f}  (n={b[2]})')
        if any(q['slice'] == 'paraphrase' for q in s['prompts']):
            for split in ('test', 'tune'):
                b, a = measure(s, None, split, 'paraphrase'), measure(s, W, split, 'paraphrase')
                print(f'  paraphrase {split}: reach {b[0]:.3f} -> {a[0]:.3f}  R@5 {b[1]:.3f} -> {a[1]:.3f}  (n={b[2]})')


if __name__ == '__main__':
    main()
