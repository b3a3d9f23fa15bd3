#!/usr/bin/env python3
"""Prompts about the code as evaluation folders, for the decision policy's fit
(`decision_policy.py`, `LOCAL=DIR`): what a prompt about the code, typed any of the ways people
type one, makes available on an inventory. The prompts are the need prompts' local ones
(`need-prompts.jsonl`, `external: false`; the need gate is fitted on them, and the fit reads it
out of fold for them) and `local-prompts.jsonl` (kept out of the gate; `need-prompts.md`).

    python3 crates/picker/data/small_inventories.py SMALL_DIR
    python3 crates/picker/data/local_prompts.py DIR SMALL_DIR

Two folders: `local-everyday` (the everyday inventory, 157 tools and 28 groups) and `local-small`
(`SMALL_DIR/small-5-0`'s inventory, five groups of it). Each has the inventory's `tools.json`,
every one of those prompts as a coding-only prompt (`irrelevance.jsonl`, the prompt's id kept)
and one labelled prompt `eval` needs to run (the fit does not count it). Python's standard
library only.
"""
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
# The one labelled prompt of each folder: its tool is in both inventories.
LABELLED = {"id": "loc-q", "prompt": "who's on call for payments this weekend?",
            "relevant_tools": ["mcp__pagerline__get_oncall"],
            "needs": [["mcp__pagerline__get_oncall"]]}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: local_prompts.py DIR SMALL_DIR")
    out, small = Path(sys.argv[1]), Path(sys.argv[2])
    rows = [json.loads(line) for name in ("need-prompts.jsonl", "local-prompts.jsonl")
            for line in open(HERE / name, encoding="utf-8") if line.strip()]
    local = [r for r in rows if not r["external"]]
    inventories = {"local-everyday": ROOT / "eval" / "everyday" / "tools.json",
                   "local-small": small / "small-5-0" / "tools.json"}
    for name, inventory in inventories.items():
        if not inventory.exists():
            sys.exit(f"{inventory} is missing (write the small inventories first)")
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(inventory, folder / "tools.json")
        (folder / "queries.jsonl").write_text(json.dumps(LABELLED) + "\n", encoding="utf-8")
        with open(folder / "irrelevance.jsonl", "w", encoding="utf-8") as f:
            for r in local:
                f.write(json.dumps({"id": r["id"], "prompt": r["prompt"], "relevant_tools": [],
                                    "kind": "coding"}, ensure_ascii=False) + "\n")
    print(f"{len(local)} local prompts in {', '.join(inventories)} under {out}")


if __name__ == "__main__":
    main()
