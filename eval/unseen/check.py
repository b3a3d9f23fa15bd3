#!/usr/bin/env python3
"""Checks the unseen set (see README.md). Usage: python3 eval/unseen/check.py. Exit 1 on a problem.

- `tools.json` parses, every tool has a name, a description and an MCP namespace or a
  `sourceInfo`, and names are unique;
- every line of `queries.jsonl` parses with exactly id, prompt and needs (and slice, when it is
  in the paraphrase slice), ids and prompts are unique, and every tool a need names is in
  `tools.json`;
- no prompt is identical to, contained in, or contains (40 characters or more) a prompt of the
  other evaluation sets or of the data anything is fitted on (the query adapter's
  `adapter-set`, the need gate's `need-prompts.jsonl`), after lowercasing and folding
  whitespace, and no tool shares a name or a description with one of theirs;
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
sys.path.insert(0, str(ROOT / "crates" / "picker" / "data"))
sys.path.insert(0, str(ROOT / "eval" / "everyday"))
from eval_overlap import fold, jsonl_rows  # noqa: E402
import paraphrase  # noqa: E402

problems = []
bad = problems.append

tools = json.loads((HERE / "tools.json").read_text())
names = Counter(t.get("name") for t in tools)
for t in tools:
    if not t.get("name") or not t.get("description"):
        bad(f"a tool without a name or a description: {str(t)[:60]!r}")
    if "namespace" not in t and "sourceInfo" not in t:
        bad(f"tool {t.get('name')}: neither an MCP namespace nor a sourceInfo")
for n, c in names.items():
    if c > 1:
        bad(f"tool name repeated {c} times: {n}")
by_name = {t.get("name"): t for t in tools}

rows = []
lines = (HERE / "queries.jsonl").read_text().splitlines()
for i, line in enumerate(lines, 1):
    try:
        r = json.loads(line)
    except ValueError:
        bad(f"queries.jsonl line {i}: not JSON")
        continue
    if not isinstance(r, dict) or set(r) - {"slice"} != {"id", "prompt", "needs"}:
        bad(f"queries.jsonl line {i}: fields {sorted(r) if isinstance(r, dict) else type(r).__name__}")
        continue
    if not r["needs"] or not all(r["needs"]):
        bad(f"{r['id']}: an empty need")
    for need in r["needs"]:
        for n in need:
            if n not in by_name:
                bad(f"{r['id']}: needs a tool the inventory lacks")
    rows.append(r)
for what, counts in (("id", Counter(r["id"] for r in rows)),
                     ("prompt", Counter(fold(r["prompt"]) for r in rows))):
    problems.extend(f"{what} repeated {c} times: {k[:80]!r}" for k, c in counts.items() if c > 1)

# What must stay apart from this set: the other evaluation sets, and what is fitted.
others, other_tools, found = set(), [], []
for d in ("everyday", "bfcl", "metatool"):
    for f in ("queries.jsonl", "irrelevance.jsonl"):
        p = ROOT / "eval" / d / f
        if p.is_file():
            found.append(d)
            others.update(fold(json.loads(x).get("prompt", "")) for x in p.read_text().splitlines() if x.strip())
    other_tools += json.loads((ROOT / "eval" / d / "tools.json").read_text())
data = ROOT / "crates" / "picker" / "data"
for p in (data / "adapter-set" / "queries.jsonl", data / "need-prompts.jsonl"):
    others.update(fold(json.loads(x)["prompt"]) for x in p.read_text().splitlines() if x.strip())
other_tools += json.loads((data / "adapter-set" / "tools.json").read_text())
for d in ("everyday", "bfcl", "metatool"):
    if d not in found:
        bad(f"eval/{d} not found")
haystack = "\n".join(others)
long = [e for e in others if len(e) >= 40]
for r in rows:
    p = fold(r["prompt"])
    if p in others:
        bad(f"{r['id']}: identical to a prompt of another set")
    elif p in haystack:
        bad(f"{r['id']}: contained in a prompt of another set")
    elif any(e in p for e in long):
        bad(f"{r['id']}: contains a prompt of another set")
other_names = {t.get("name") for t in other_tools}
other_descriptions = {fold(t.get("description") or "") for t in other_tools}
for t in tools:
    if t.get("name") in other_names:
        bad(f"tool {t['name']}: named as a tool of another set")
    if fold(t.get("description") or "") in other_descriptions:
        bad(f"tool {t.get('name')}: described as a tool of another set")

# The paraphrase slice: what is in it shares no word (paraphrase.py), and what shares none is in it.
slice_problems, report = paraphrase.check(HERE)
problems += slice_problems
for r in rows:
    if r.get("slice") == "paraphrase":
        continue
    said = set(paraphrase.words(r["prompt"]))
    texts = [src for n in {n for g in r["needs"] for n in g} if n in by_name
             for src in (n, by_name[n].get("description", ""), " ".join(paraphrase.label(by_name[n])))]
    if not any(paraphrase.match(a, b) for src in texts for a in said for b in paraphrase.words(src)):
        bad(f"{r['id']}: shares no word with its tools but is not in the paraphrase slice")

servers = Counter(t["namespace"]["name"] if "namespace" in t else t["sourceInfo"]["source"] for t in tools)
print(f"{len(tools)} tools of {len(servers)} servers and extensions, {len(rows)} prompts, "
      f"{sum(r.get('slice') == 'paraphrase' for r in rows)} in the paraphrase slice; "
      f"compared with {len(others)} prompts and {len(other_tools)} tools of other sets")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
