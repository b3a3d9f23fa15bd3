"""Tries ranking changes offline on the dumps of `crates/eval/examples/ranking_dump.rs`: what
share of labelled prompts have every need within the cap's 6 best (the ranking's reach, the most
any threshold meets) and recall@5, on both halves, for other texts of a tool (its name as words,
its description's first sentence, both, and their mean with the whole text; the shipped vector
joins the whole text's and the first sentence's), a share of the best
sibling's evidence (tools of one server or extension), and the inventory's mean direction taken
out of every cosine.

    cargo run --release -p pcd-eval --example ranking_dump -- eval/everyday tools MODEL_DIR > everyday.jsonl
    python3 crates/picker/data/ranking_views.py everyday.jsonl

Needs numpy. Tools mode only (a group has no single description).
"""
import json
import sys

import numpy as np

LEXICAL_SHARE = 0.35  # semantic::LEXICAL_SHARE
LEXICAL_EXPONENT = 1.5  # semantic::LEXICAL_EXPONENT
CAP = 6


def read(path):
    """A `ranking_dump`: its candidates, and each labelled prompt with a need (its split, needs as
    candidate indices, lexical scores, prompt vectors and slice)."""
    f = open(path)
    cands = json.loads(f.readline())["candidates"]
    tool_to_c = {m: i for i, c in enumerate(cands) for m in c["members"]}
    prompts = []
    for line in f:
        q = json.loads(line)
        if q["kind"] == "irrelevance" or not q["needs"]:
            continue
        prompts.append(
            dict(
                id=q["id"],
                split=q["split"],
                needs=[sorted({tool_to_c[t] for t in need if t in tool_to_c}) for need in q["needs"]],
                lex=np.array(q["lexical"]),
                pv=np.array(q["prompt_vectors"], dtype=np.float32),
                slice=q.get("slice"),
            )
        )
    return cands, prompts


def joined(vectors):
    """A tool's one vector from its texts' (`semantic::joined_vector`): their sum, normalised."""
    v = np.sum(np.array(vectors, np.float64), axis=0)
    return v / np.linalg.norm(v)


def load(path):
    cands, prompts = read(path)
    whole = np.array([c["vectors"][0] for c in cands], dtype=np.float32)
    views = np.array(
        [c["view_vectors"] if c["view_vectors"] else [c["vectors"][0]] * 3 for c in cands],
        dtype=np.float32,
    )
    labels = sorted({c["label"] for c in cands})
    group = np.array([labels.index(c["label"]) for c in cands])
    shipped = np.array([joined(c["vectors"]) for c in cands], dtype=np.float32)
    for q in prompts:
        q["whole"] = (q["pv"] @ whole.T).max(0)
        q["joined"] = (q["pv"] @ shipped.T).max(0)
        q["views"] = np.einsum("pd,cvd->pcv", q["pv"], views).max(0)
    return whole, group, prompts


def sibling(fused, group, share):
    best = np.full(group.max() + 1, -9.0)
    np.maximum.at(best, group, fused)
    return fused + share * best[group]


def measure(prompts, score, split, cap=CAP):
    """The reach (every need within the `cap` best) and R@5 over needs of `split`'s prompts."""
    reach = r5 = n = needs = 0
    for q in prompts:
        if q["split"] != split:
            continue
        s = score(q)
        rank = np.empty(len(s), int)
        rank[np.argsort(-s)] = np.arange(len(s))
        ranks = [min(rank[c] for c in need) for need in q["needs"]]
        n += 1
        reach += max(ranks) < cap
        for r in ranks:
            needs += 1
            r5 += r < 5
    return reach / max(n, 1), r5 / max(needs, 1)


def main():
    whole, group, prompts = load(sys.argv[1])
    mean = whole.mean(0)
    hub = whole @ mean
    cosines = {
        "whole text (shipped before the first sentence)": lambda q: q["whole"],
        "whole and first sentence as one unit vector (shipped)": lambda q: q["joined"],
        "mean of whole, name, first sentence, both": lambda q: (q["whole"] + q["views"].sum(1)) / 4,
        "first sentence": lambda q: q["views"][:, 1],
        "mean of whole and first sentence": lambda q: (q["whole"] + q["views"][:, 1]) / 2,
        "whole less half the inventory's mean": lambda q: q["whole"] - 0.5 * hub,
    }
    print(f"{len(whole)} candidates, {len(prompts)} labelled prompts")
    print(f"{'cosine':45} {'share':>5}  test reach  R@5  tune reach  R@5")
    for name, cos in cosines.items():
        for share in (0.0, 0.2):
            fused = lambda q: sibling(LEXICAL_SHARE * q["lex"] ** LEXICAL_EXPONENT + (1 - LEXICAL_SHARE) * cos(q), group, share)
            test = measure(prompts, fused, "test")
            tune = measure(prompts, fused, "tune")
            print(f"{name:45} {share:5.1f}  {test[0]:.3f}  {test[1]:.3f}  {tune[0]:.3f}  {tune[1]:.3f}")


if __name__ == "__main__":
    main()
