#!/usr/bin/env python3
"""Checks the query adapter's training set (see README.md). Usage: python3 check.py. Exit 1 on a problem.

- `tools.json` parses, every tool has a name and a description, names are unique;
- every line of `queries.jsonl` parses with exactly id, prompt and needs, ids and prompts are
  unique, and every tool a need names is in `tools.json`;
- no prompt is identical to, contained in (from 20 characters on), or contains (40 characters
  or more) a prompt of the
  evaluation sets (eval/everyday, eval/bfcl, eval/metatool, eval/unseen), after lowercasing and folding
  whitespace; no tool shares a name or a description with a tool of those sets.
Python's standard library only; it reads the data and scores nothing.
"""
import json, sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from eval_overlap import EVAL_DIRS, EvalPrompts, jsonl_rows, row_problems, tool_problems, tools_of  # noqa: E402

problems = []
bad = problems.append
tools = json.loads((HERE / "tools.json").read_text())
names = {t.get("name") for t in tools}
eval_tools = tools_of(EVAL_DIRS)
problems += tool_problems(tools, eval_tools)
rows = []
for _, r in jsonl_rows(HERE / "queries.jsonl", {"id", "prompt", "needs"}, bad, "queries.jsonl "):
    for need in r["needs"]:
        for n in need:
            if n not in names:
                bad(f"{r['id']}: needs a tool the inventory lacks")
    rows.append(r)
evaluation = EvalPrompts()
problems += row_problems(rows, evaluation)

servers = Counter(t["namespace"]["name"] if "namespace" in t else t["sourceInfo"]["source"] for t in tools)
print(f"{len(tools)} tools of {len(servers)} servers and extensions, {len(rows)} prompts; "
      f"compared with {len(evaluation.prompts)} evaluation prompts and {len(eval_tools)} evaluation tools")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
