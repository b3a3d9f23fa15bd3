"""Tries a learned query-side adapter offline: the prompt's vector `p` becomes `p + p W`
(normalised), `W` a 384 x 384 matrix (or of rank `RANK`) fitted with an L2 penalty on the tune
halves of some sets (softmax over each inventory's candidates of the fused evidence, 0.35 lexical
+ 0.65 cosine), then the reach (every need within the 6 best) and R@5 are measured on other sets.
It asks whether labelled prompts can teach the ranking a mapping that holds on an inventory it
never saw; `BENCHMARKS.md` ("Issue 31: what the tool-round cadence adds") has the answer (no).

    cargo run --release -p pcd-eval --example ranking_dump -- eval/SET tools MODEL_DIR > DIR/SET.jsonl
    python3 crates/picker/data/query_adapter.py DIR TRAIN_SETS EVAL_SETS RANK LAMBDA EPOCHS
    # e.g. DIR bfcl,metatool everyday 0 0.01 4   (metatool: 3,000 prompts drawn, seed 0)

Needs numpy (development only).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ranking_views  # noqa: E402  (its reader, and its `measure`: the reach and R@5 every script here reports)

LEX = ranking_views.LEXICAL_SHARE
rng = np.random.default_rng(0)
DIR = '.'


def load(name):
    cands, ps = ranking_views.read(os.path.join(DIR, f"{name}.jsonl"))
    C = np.array([c["vectors"][0] for c in cands], dtype=np.float32)
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    for q in ps:
        q["needs"] = [n for n in q["needs"] if n]
        q["lex"] = q["lex"].astype(np.float32)
    return C, [q for q in ps if q["needs"]]


def score(C, q, W):
    pv = q["pv"]
    if W is not None:
        pv = pv + pv @ W
        pv = pv / np.linalg.norm(pv, axis=1, keepdims=True)
    cos = (pv @ C.T).max(0)
    return LEX * q["lex"] + (1 - LEX) * cos


def measure(C, ps, W, split, sl=None):
    """Reach and R@5 of `split`'s prompts (of slice `sl`, when given), as `ranking_views.py`
    measures them, and how many prompts."""
    chosen = [q for q in ps if q["split"] == split and (sl is None or q["slice"] == sl)]
    if not chosen:
        return (0.0, 0.0, 0)
    reach, r5 = ranking_views.measure(chosen, lambda q: score(C, q, W), split)
    return (reach, r5, len(chosen))


def train(data, rank, lam, epochs, tau=0.05, lr=1e-3):
    d = 384
    if rank > 0:
        U = rng.normal(0, 1e-3, (d, rank)).astype(np.float32)
        V = np.zeros((rank, d), dtype=np.float32)
        params = [U, V]
    else:
        params = [np.zeros((d, d), dtype=np.float32)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    # examples: (C, p, lex, need_set)
    ex = []
    for C, ps in data:
        for q in ps:
            if q["split"] != "tune":
                continue
            for need in q["needs"]:
                ex.append((C, q["pv"][0], q["lex"], need))
    print(f"  {len(ex)} training pairs", file=sys.stderr)
    t = 0
    for ep in range(epochs):
        order = rng.permutation(len(ex))
        tot = 0.0
        for bstart in range(0, len(order), 64):
            grads = [np.zeros_like(p) for p in params]
            W = params[0] @ params[1] if rank > 0 else params[0]
            for i in order[bstart:bstart + 64]:
                C, p, lex, need = ex[i]
                u = p + p @ W
                nu = np.linalg.norm(u)
                ut = u / nu
                cos = C @ ut
                z = ((1 - LEX) * cos + LEX * lex) / tau
                z = z - z.max()
                e = np.exp(z)
                sm = e / e.sum()
                tgt = np.zeros_like(sm)
                tgt[need] = sm[need] / sm[need].sum()
                tot += -np.log(sm[need].sum() + 1e-12)
                dz = sm - tgt
                dcos = dz * (1 - LEX) / tau
                g = dcos @ C
                du = (g - (g @ ut) * ut) / nu
                gW = np.outer(p, du)
                if rank > 0:
                    grads[0] += gW @ params[1].T
                    grads[1] += params[0].T @ gW
                else:
                    grads[0] += gW
            nb = len(order[bstart:bstart + 64])
            t += 1
            for k, P in enumerate(params):
                gk = grads[k] / nb + lam * P
                m[k] = 0.9 * m[k] + 0.1 * gk
                v[k] = 0.999 * v[k] + 0.001 * gk * gk
                mh = m[k] / (1 - 0.9 ** t)
                vh = v[k] / (1 - 0.999 ** t)
                P -= lr * mh / (np.sqrt(vh) + 1e-8)
        print(f"  epoch {ep} loss {tot / len(ex):.4f}", file=sys.stderr)
    return params[0] @ params[1] if rank > 0 else params[0]


def main():
    global DIR
    DIR = sys.argv[1]
    train_sets = sys.argv[2].split(",")
    eval_sets = sys.argv[3].split(",")
    rank = int(sys.argv[4])
    lam = float(sys.argv[5])
    epochs = int(sys.argv[6])
    cache = {}
    for s in set(train_sets + eval_sets):
        cache[s] = load(s)
        if s == "metatool":
            C, ps = cache[s]
            idx = rng.permutation(len(ps))[:3000]
            cache[s] = (C, [ps[i] for i in sorted(idx)])
    W = train([cache[s] for s in train_sets], rank, lam, epochs)
    for s in eval_sets:
        C, ps = cache[s]
        for split in ("test", "tune"):
            b = measure(C, ps, None, split)
            a = measure(C, ps, W, split)
            print(f"{s:9} {split}: reach {b[0]:.3f} -> {a[0]:.3f}  R@5 {b[1]:.3f} -> {a[1]:.3f}  (n={b[2]})")
        if s == "everyday":
            for split in ("test", "tune"):
                b = measure(C, ps, None, split, "paraphrase")
                a = measure(C, ps, W, split, "paraphrase")
                print(f"  paraphrase {split}: reach {b[0]:.3f} -> {a[0]:.3f}  R@5 {b[1]:.3f} -> {a[1]:.3f} (n={b[2]})")


if __name__ == "__main__":
    main()
