"""The example requests of `src/semantic.rs` (`example-requests.bin`), and the sweep behind them.

The query adapter (`query_adapter.py`) is one linear map for every request; what it cannot hold
is local: "umbrella tmrw in bergen?" lies near requests people make of a forecast tool, far
from the words "Daily forecast for a place". So the prompt also looks at the example requests
it resembles: the prompts of the adapter set and of the example set (invented servers and
extensions, prompts written for them, most in other words than their tools';
`adapter-set/README.md`, `example-set/README.md`), each with the vector of the tool it needed
(as the cosine reads a tool: its whole text's and its first sentence's joined, `query_adapter.load`).
The `EXAMPLE_NEIGHBOURS` most similar example prompts (the prompt's own vector against theirs:
requests resemble requests far more reliably than they resemble tool texts) weigh their tools'
vectors by a softmax of that similarity (`EXAMPLE_TEMPERATURE`); their mean, as a unit vector,
is added to the adapted prompt, `EXAMPLE_WEIGHT` times the share by which the best similarity
clears `EXAMPLE_FLOOR` ((best - floor) / (1 - floor), 0 below it), and the sum is normalised.
A prompt like no example is left as the adapter has it. The user's candidates are never in the
bank: it pulls toward where such tools lie, whoever provides them.

    M=MODEL_DIR; D=DIR
    cargo run --release -p pcd-eval --example ranking_dump -- crates/picker/data/adapter-set tools $M > $D/adapter-tools.jsonl
    cargo run --release -p pcd-eval --example ranking_dump -- crates/picker/data/example-set tools $M > $D/example-tools.jsonl
    python3 crates/picker/data/example_requests.py $D --write

writes `example-requests.bin`: little-endian, a u32 count of tools T and a u32 count of
examples N, then T tool vectors and N prompt vectors of 384 IEEE binary16 values each (the
model's vectors are rounded to binary16 already), then N u16 tool indices, one per example (a
prompt with two needs is two examples): the adapter set's, then the example set's.

    python3 crates/picker/data/example_requests.py $D --sweep

(with the other `ranking_dump`s of `query_adapter.py`'s docstring in `$D`, `adapter-mcp` and
`example-mcp`) prints, for each setting, the reach (every need within the cap's best) of the
adapter set's four domains each held out in turn as the shipped adapter was chosen
(`query_adapter.held_out_folds`: an adapter fitted on every other domain of both sets and a bank
of their prompts only: a domain the bank has never seen, where the examples can only mislead),
then both halves of the evaluation sets with the shipped adapter and the whole bank. The setting
is chosen on the held-out parts (no loss) and the tune halves; `eval/unseen` is printed, never
chosen on. Needs numpy (development only).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import query_adapter as qa  # noqa: E402
import ranking_views  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# `semantic::EXAMPLE_*`: the shipped setting.
SHIPPED = dict(weight=1.0, neighbours=10, temperature=0.1, floor=0.4)
# The epochs of the shipped query adapter's fit (`query_adapter.py`'s docstring).
SHIPPED_EPOCHS = 1
DIM = 384


def joined(*banks):
    """The banks `banks` as one: their examples one after another, each tool index moved past the
    tools of the banks before it."""
    prompts = np.vstack([b[0] for b in banks])
    tools = np.vstack([b[1] for b in banks])
    offsets = np.cumsum([0] + [len(b[1]) for b in banks[:-1]])
    index = np.concatenate([b[2] + o for b, o in zip(banks, offsets)])
    return prompts, tools, index


def bank(s, parts=None):
    """(prompt vectors, tool vectors, each example's tool index) of a tools-mode dump: one example
    per prompt and need (its first candidate), of the prompts of `parts` only when given."""
    prompts, index = [], []
    for q in s['prompts']:
        if parts is not None and not q['id'].startswith(tuple(parts)):
            continue
        for need in q['needs']:
            prompts.append(q['pv'][0])
            index.append(need[0])
    return np.array(prompts, np.float32), s['whole'].astype(np.float32), np.array(index, int)


def expand(p, u, b, weight, neighbours, temperature, floor):
    """The adapted prompt `u` of the prompt `p`, pulled toward the tools of the example requests
    `p` resembles (the module's docstring)."""
    prompts, tools, index = b
    if weight == 0 or len(prompts) == 0:
        return u
    sims = prompts @ p
    k = min(neighbours, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    best = sims[top].max()
    strength = weight * max(0.0, best - floor) / (1 - floor)
    if strength == 0:
        return u
    w = np.exp((sims[top] - best) / temperature)
    v = (w / w.sum()) @ tools[index[top]]
    out = u + strength * v / np.linalg.norm(v)
    return out / np.linalg.norm(out)


def score(s, q, W, b, cfg):
    """A candidate's fused evidence as `src/semantic.rs` has it, the prompt adapted and expanded."""
    cos = np.max([qa.cosines(s, expand(p, qa.adapt(p, W), b, **cfg))[0] for p in q['pv']], axis=0)
    share = qa.LEXICAL_SHARE[s['mode']]
    return share * q['lex'] + (1 - share) * cos


def measure(s, W, b, cfg, split, sl=None):
    chosen = [q for q in s['prompts'] if q['split'] == split and (sl is None or q['slice'] == sl)]
    if not chosen:
        return 0.0, 0.0
    return ranking_views.measure(chosen, lambda q: score(s, q, W, b, cfg), split, qa.CAP[s['mode']])


def write(directory):
    prompts, tools, index = shipped_bank(directory)
    path = os.path.join(HERE, 'example-requests.bin')
    with open(path, 'wb') as f:
        f.write(np.array([len(tools), len(prompts)], '<u4').tobytes())
        f.write(tools.astype('<f2').tobytes())
        f.write(prompts.astype('<f2').tobytes())
        f.write(index.astype('<u2').tobytes())
    print(f'wrote {path}: {len(tools)} tools, {len(prompts)} examples', file=sys.stderr)


def shipped_bank(directory):
    """The bank that ships: the adapter set's examples, then the example set's (when its dump,
    `example-tools`, is in `directory`; without it, the bank as it was before the example set)."""
    banks = [bank(qa.load(directory, 'adapter-tools'))]
    if os.path.exists(os.path.join(directory, 'example-tools.jsonl')):
        banks.append(bank(qa.load(directory, 'example-tools')))
    return joined(*banks)


SETTINGS = [dict(SHIPPED, weight=0.0)] + [
    dict(weight=w, neighbours=k, temperature=t, floor=f)
    for w in (0.5, 1.0, 2.0) for k in (3, 10) for t in (0.05, 0.1) for f in (0.3, 0.4, 0.5)]


def sweep(directory):
    W = np.fromfile(os.path.join(HERE, 'query-adapter.f32'), '<f4').reshape(DIM, DIM)
    # Each domain held out as the shipped adapter was chosen (`query_adapter.held_out_folds`,
    # fitted on both sets at the shipped 1 epoch), with a bank of every other domain's requests.
    held = {part: (fit(SHIPPED_EPOCHS), b, h)
            for part, _, fit, b, h in qa.held_out_folds(directory, 0.01, SHIPPED_EPOCHS)}
    whole = shipped_bank(directory)
    names = [n for n in ('everyday-tools', 'bfcl-tools', 'metatool-tools', 'everyday-mcp', 'bfcl-mcp',
                         'unseen-tools', 'unseen-mcp')
             if os.path.exists(os.path.join(directory, n + '.jsonl'))]
    sets = {n: qa.load(directory, n) for n in names}
    print('setting: held-out parts (mean reach) | per set, tune / test: reach R@5 (paraphrases: reach)')
    for cfg in SETTINGS:
        parts = np.mean([measure(h, Wp, bp, cfg, split)[0]
                         for Wp, bp, h in held.values() for split in ('test', 'tune')])
        row = [f"w={cfg['weight']} k={cfg['neighbours']} t={cfg['temperature']} f={cfg['floor']}: {parts:.4f}"]
        for n, s in sets.items():
            halves = []
            for split in ('tune', 'test'):
                reach, r5 = measure(s, W, whole, cfg, split)
                text = f'{reach:.3f} {r5:.3f}'
                if any(q['slice'] == 'paraphrase' for q in s['prompts']):
                    text += f" ({measure(s, W, whole, cfg, split, 'paraphrase')[0]:.3f})"
                halves.append(text)
            row.append(f"{n} {' / '.join(halves)}")
        print(' | '.join(row), flush=True)


if __name__ == '__main__':
    if '--write' in sys.argv:
        write(sys.argv[1])
    elif '--sweep' in sys.argv:
        sweep(sys.argv[1])
    else:
        sys.exit(__doc__)
