#!/usr/bin/env python3
"""Prompts about the code as evaluation folders, for the decision policy's fit
(`decision_policy.py`, `LOCAL=DIR`): what a prompt about the code, typed any of the ways people
type one, makes available on an inventory, and whether one that asks for something outside the
code about it gets the tool. The local prompts are the need prompts' local ones
(`need-prompts.jsonl`, `external: false`; the need gate is fitted on them, and the fit reads it
out of fold for them) and `local-prompts.jsonl` (kept out of the gate; `need-prompts.md`). The
others are the need prompts of kind `about-code` (external requests whose subject is the code
at hand: "open a PR for the retry refactor", "search the web for this error"), with the tools
of the everyday inventory each needs in `about-code-needs.jsonl`, labelled by hand.

    python3 crates/picker/data/small_inventories.py SMALL_DIR
    python3 crates/picker/data/local_prompts.py DIR SMALL_DIR

Two folders: `local-everyday` (the everyday inventory, 157 tools and 28 groups) and `local-small`
(`SMALL_DIR/small-5-0`'s inventory, five groups of it). Each has the inventory's `tools.json`,
every local prompt as a coding-only prompt (`irrelevance.jsonl`, the prompt's id kept) and, as
labelled prompts (`queries.jsonl`), the `about-code` prompts whose every need the inventory can
meet, each need cut to the tools the inventory has. Python's standard library only.
"""
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def labelled(rows, needs, inventory):
    """The `about-code` prompts whose every need has a tool in `inventory`, as `eval` reads a
    labelled prompt, each need cut to the tools the inventory has."""
    names = {t["name"] for t in json.loads(inventory.read_text(encoding="utf-8"))}
    out = []
    for r in rows:
        cut = [[t for t in need if t in names] for need in needs.get(r["id"], [])]
        if cut and all(cut):
            out.append({"id": r["id"], "prompt": r["prompt"],
                        "relevant_tools": sorted({t for need in cut for t in need}),
                        "needs": cut})
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: local_prompts.py DIR SMALL_DIR")
    out, small = Path(sys.argv[1]), Path(sys.argv[2])
    rows = [json.loads(line) for name in ("need-prompts.jsonl", "local-prompts.jsonl")
            for line in open(HERE / name, encoding="utf-8") if line.strip()]
    local = [r for r in rows if not r["external"]]
    needs = {}
    for line in open(HERE / "about-code-needs.jsonl", encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            needs[row["id"]] = row["needs"]
    about = [r for r in rows if r["kind"] == "about-code"]
    stray = sorted(set(needs) - {r["id"] for r in about})
    if stray:
        sys.exit(f"about-code-needs.jsonl labels prompts that are not about-code ones: {stray[:5]}")
    inventories = {"local-everyday": ROOT / "eval" / "everyday" / "tools.json",
                   "local-small": small / "small-5-0" / "tools.json"}
    for name, inventory in inventories.items():
        if not inventory.exists():
            sys.exit(f"{inventory} is missing (write the small inventories first)")
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(inventory, folder / "tools.json")
        queries = labelled(about, needs, inventory)
        if not queries:
            sys.exit(f"no about-code prompt has its tools in {inventory}")
        with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
            for q in queries:
                f.write(json.dumps(q, ensure_ascii=False) + "\n")
        with open(folder / "irrelevance.jsonl", "w", encoding="utf-8") as f:
            for r in local:
                f.write(json.dumps({"id": r["id"], "prompt": r["prompt"], "relevant_tools": [],
                                    "kind": "coding"}, ensure_ascii=False) + "\n")
        print(f"{name}: {len(local)} local prompts, {len(queries)} about-code prompts labelled")
    print(f"written under {out}")


if __name__ == "__main__":
    main()
