#!/usr/bin/env python3
"""Checks the unseen set (see README.md). Usage: python3 eval/unseen/check.py. Exit 1 on a problem.

- `tools.json` parses, every tool has a name, a description and an MCP namespace or a
  `sourceInfo`, and names are unique;
- every line of `queries.jsonl` parses with exactly id, prompt and needs (and slice, when it is
  in the paraphrase slice), ids and prompts are unique, and every tool a need names is in
  `tools.json`;
- no prompt is identical to, contained in, or contains (either from 20 characters on) a prompt
  of the other evaluation sets or of the data anything is fitted on (the query adapter's and the
  example requests' `adapter-set` and `example-set`, the need gate's `need-prompts.jsonl`), after
  lowercasing and folding whitespace, and no tool shares a name or a description with one of
  theirs;
- the paraphrase slice is right (`eval/everyday/paraphrase.py`'s check: no content word shared
  with a needed tool's name, description or label), and every prompt that shares none is in it.
Python's standard library only; it reads the data and scores nothing.
"""
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT / "crates" / "picker" / "data"
sys.path.insert(0, str(DATA))
sys.path.insert(0, str(ROOT / "eval" / "everyday"))
from eval_overlap import TRAINING_DIRS, EvalPrompts, jsonl_rows, row_problems, tool_problems, tools_of  # noqa: E402
import paraphrase  # noqa: E402

problems = []
bad = problems.append

# What must stay apart from this set: the other evaluation sets, and what is fitted.
others = [ROOT / "eval" / d for d in ("everyday", "bfcl", "metatool")]
kept_apart = EvalPrompts(others, [d / "queries.jsonl" for d in TRAINING_DIRS] + [DATA / "need-prompts.jsonl"],
                         "a prompt of another set")
other_tools = tools_of(others + TRAINING_DIRS)

tools = json.loads((HERE / "tools.json").read_text())
problems += tool_problems(tools, other_tools, "another set")
for t in tools:
    if "namespace" not in t and "sourceInfo" not in t:
        bad(f"tool {t.get('name')}: neither an MCP namespace nor a sourceInfo")
by_name = {t.get("name"): t for t in tools}

rows = []
for _, r in jsonl_rows(HERE / "queries.jsonl", {"id", "prompt", "needs"}, bad, "queries.jsonl ", {"slice"}):
    if not r["needs"] or not all(r["needs"]):
        bad(f"{r['id']}: an empty need")
    if any(n not in by_name for need in r["needs"] for n in need):
        bad(f"{r['id']}: needs a tool the inventory lacks")
        continue
    rows.append(r)
problems += row_problems(rows, kept_apart)

# The paraphrase slice: what is in it shares no word (paraphrase.py), and what shares none is in it.
problems += paraphrase.check(HERE)[0]
for r in rows:
    said = set(paraphrase.words(r["prompt"]))
    if r.get("slice") != "paraphrase" and not any(
            next(paraphrase.shared(said, n, by_name[n]), None) for need in r["needs"] for n in need):
        bad(f"{r['id']}: shares no word with its tools but is not in the paraphrase slice")

servers = Counter(t["namespace"]["name"] if "namespace" in t else t["sourceInfo"]["source"] for t in tools)
print(f"{len(tools)} tools of {len(servers)} servers and extensions, {len(rows)} prompts, "
      f"{sum(r.get('slice') == 'paraphrase' for r in rows)} in the paraphrase slice; "
      f"compared with {len(kept_apart.prompts)} prompts and {len(other_tools)} tools of other sets")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
