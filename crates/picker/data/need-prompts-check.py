#!/usr/bin/env python3
"""Checks need-prompts.jsonl and local-prompts.jsonl (see need-prompts.md). Usage: python3 need-prompts-check.py. Exit 1 on a problem.

- every line parses, has exactly the fields id, prompt, external, kind, with the right types;
- ids are `np-` and 4 digits, and unique; prompts are unique (after folding);
- at least 350 need prompts with external=false and 350 with external=true; every prompt of
  local-prompts.jsonl has external=false, and ids and prompts are unique across both files;
- no prompt is identical to, contained in, or contains (either from 20 characters on) a prompt
  of the evaluation sets (eval/everyday, eval/bfcl, eval/metatool and eval/unseen, every
  queries/irrelevance file), after lowercasing and folding whitespace;
- about-code-needs.jsonl labels only about-code need prompts, each once, with tools of the
  everyday inventory.
Python's standard library only; it reads the data and scores nothing.
"""
import json, re, sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_overlap import EvalPrompts, jsonl_rows, row_problems  # noqa: E402

HERE = Path(__file__).resolve().parent
LEAST = 350

problems = []
bad = problems.append
rows = []
need, local = [], []
for name in ("need-prompts.jsonl", "local-prompts.jsonl"):
    for i, r in jsonl_rows(HERE / name, {"id", "prompt", "external", "kind"}, bad):
        if not re.fullmatch(r"np-\d{4}", str(r["id"])):
            bad(f"{name} line {i}: id {r['id']!r}")
        if not isinstance(r["prompt"], str) or not r["prompt"].strip():
            bad(f"{r['id']}: empty prompt")
        if not isinstance(r["external"], bool):
            bad(f"{r['id']}: external is not a boolean")
        if not isinstance(r["kind"], str) or not re.fullmatch(r"[a-z][a-z-]*", r["kind"]):
            bad(f"{r['id']}: kind {r['kind']!r}")
        if name == "local-prompts.jsonl":
            if r["external"] is not False:
                bad(f"{r['id']}: a local prompt with external={r['external']!r}")
            local.append(r)
        else:
            need.append(r)
        rows.append(r)

evaluation = EvalPrompts()
problems += row_problems(rows, evaluation)
by_class = Counter(r["external"] for r in need)
for cls in (False, True):
    if by_class[cls] < LEAST:
        bad(f"only {by_class[cls]} prompts with external={str(cls).lower()} (at least {LEAST})")


kinds = {cls: Counter(r["kind"] for r in need if r["external"] is cls) for cls in (False, True)}
print(f"{len(need)} need prompts: {by_class[False]} external=false, {by_class[True]} external=true; "
      f"compared with {len(evaluation.prompts)} evaluation prompts from {len(evaluation.found)} files")
for cls in (False, True):
    print(f"  external={str(cls).lower()} kinds: " + ", ".join(f"{k} {c}" for k, c in sorted(kinds[cls].items())))
print(f"{len(local)} local prompts: " + ", ".join(
    f"{k} {c}" for k, c in sorted(Counter(r["kind"] for r in local).items())))
# The labels of the requests about the code: each an `about-code` need prompt, at most once,
# each need a non-empty list of tools of the everyday inventory.
inventory = {t["name"] for t in json.loads((HERE.parents[2] / "eval" / "everyday" / "tools.json")
                                          .read_text(encoding="utf-8"))}
about = {r["id"] for r in need if r["kind"] == "about-code"}
labelled = set()
for i, r in jsonl_rows(HERE / "about-code-needs.jsonl", {"id", "needs"}, bad):
    if r["id"] not in about:
        bad(f"about-code-needs.jsonl line {i}: {r['id']!r} is not an about-code need prompt")
    if r["id"] in labelled:
        bad(f"about-code-needs.jsonl line {i}: {r['id']!r} labelled twice")
    labelled.add(r["id"])
    needs = r["needs"]
    if not (isinstance(needs, list) and needs and all(isinstance(n, list) and n for n in needs)):
        bad(f"about-code-needs.jsonl line {i}: needs must be non-empty lists of tool names")
    elif any(t not in inventory for n in needs for t in n):
        bad(f"about-code-needs.jsonl line {i}: a need names a tool the everyday inventory lacks")
print(f"{len(labelled)} of {len(about)} about-code prompts labelled with the everyday inventory's tools")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
