#!/usr/bin/env python3
"""Checks the shape and labels of the everyday set. Usage: python3 check.py [DIR]. Exit 1 on a problem."""
import json, re, sys
from collections import Counter
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
problems = []
bad = problems.append

tools = json.loads((d / "tools.json").read_text())
by_name, groups = {}, Counter()
for t in tools:
    n = t.get("name", "")
    if n in by_name:
        bad(f"duplicate tool {n}")
    by_name[n] = t
    if not n or re.search(r"\s", n):
        bad(f"bad tool name {n!r}")
    for k in ("description", "parameters", "exposure", "sourceInfo", "topic"):
        if k not in t:
            bad(f"{n}: no {k}")
    if t.get("exposure") not in ("direct", "deferred", "model-only"):
        bad(f"{n}: exposure {t.get('exposure')}")
    if not re.fullmatch(r"[a-z][a-z-]*", t.get("topic", "")):
        bad(f"{n}: topic {t.get('topic')!r}")
    si, ns = t.get("sourceInfo", {}), t.get("namespace")
    if not {"path", "source", "scope", "origin"} <= si.keys():
        bad(f"{n}: incomplete sourceInfo")
    if ns:
        server = ns["aliases"][0]
        if ns["name"] != "mcp__" + server.replace("-", "_") or not n.startswith(ns["name"] + "__"):
            bad(f"{n}: name and namespace {ns['name']} / {server} disagree")
        if si != {"path": "builtin:mcp", "source": "builtin", "scope": "temporary", "origin": "top-level"}:
            bad(f"{n}: MCP tool without builtin:mcp provenance")
        groups[ns["name"]] += 1
    elif n.startswith("mcp__"):
        bad(f"{n}: MCP-style name without a namespace")
    elif t.get("topic") == "builtin":
        if si.get("source") != "builtin" or not si.get("path", "").startswith("builtin:"):
            bad(f"{n}: builtin topic without builtin provenance")
    else:
        if si.get("source") == "builtin":
            bad(f"{n}: extension tool with builtin provenance")
        groups[si["source"] + " " + si["path"]] += 1
external = {n for n, t in by_name.items() if t.get("topic") != "builtin"}
topics = {by_name[n]["topic"] for n in external}
small = [g for g, c in groups.items() if c < 3]
if len(small) > 4:
    bad(f"too many groups with fewer than 3 tools: {small}")

def lines(name):
    out = []
    for i, line in enumerate((d / name).read_text().splitlines(), 1):
        try:
            out.append(json.loads(line))
        except ValueError:
            bad(f"{name}:{i}: not JSON")
    return out

queries, irrelevance = lines("queries.jsonl"), lines("irrelevance.jsonl")
ids = Counter(q.get("id") for q in queries + irrelevance)
for i, c in ids.items():
    if c > 1:
        bad(f"id {i} repeated")
for q in queries:
    qid, needs = q.get("id"), q.get("needs") or []
    if not q.get("prompt", "").strip() or not needs:
        bad(f"{qid}: empty prompt or needs")
    for g in needs:
        for n in g:
            if n not in external:
                bad(f"{qid}: {n} is not an external tool")
    if q.get("relevant_tools") != [g[0] for g in needs]:
        bad(f"{qid}: relevant_tools is not the first of each need")
    want = list(dict.fromkeys(by_name[n]["topic"] for n in q.get("relevant_tools", []) if n in by_name))
    if q.get("topics") != want:
        bad(f"{qid}: topics {q.get('topics')} != {want}")
kinds = Counter()
for q in irrelevance:
    qid, kind = q.get("id"), q.get("kind")
    kinds[kind] += 1
    if q.get("relevant_tools") != [] or not q.get("prompt", "").strip():
        bad(f"{qid}: needs an empty relevant_tools and a prompt")
    prefix = {"coding": "ev-c-", "near-miss": "ev-n-"}.get(kind)
    if not prefix or not qid.startswith(prefix):
        bad(f"{qid}: kind {kind!r} and id disagree")
    if kind == "near-miss" and not (q.get("topics") and set(q["topics"]) <= topics):
        bad(f"{qid}: near-miss topics {q.get('topics')} not in the inventory")

for what, n, least in (("external tools", len(external), 110), ("groups", len(groups), 16),
                       ("queries", len(queries), 280), ("coding", kinds["coding"], 50),
                       ("near-miss", kinds["near-miss"], 30)):
    if n < least:
        bad(f"only {n} {what} (at least {least})")

# The paraphrase slice: no content word shared with its tools (paraphrase.py), 30+ per half.
sys.path.insert(0, str(Path(__file__).parent))
import paraphrase

para_problems, para_report = paraphrase.check(d, least_per_half=30)
problems.extend(para_problems)
if sum(q.get("slice") == "paraphrase" for q in queries) < 70:
    bad("fewer than 70 paraphrase prompts")

multi = sum(len(q.get("needs", [])) > 1 for q in queries)
used = {n for q in queries for g in q.get("needs", []) for n in g}
print(f"{len(tools)} tools ({len(external)} external) in {len(groups)} servers/extensions; "
      f"{len(queries)} queries ({multi} multi-tool), {kinds['coding']} coding, {kinds['near-miss']} near-miss; "
      f"{len(external - used)} external tools never labelled")
print("\n".join(para_report))
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
