#!/usr/bin/env python3
"""Checks the paraphrase slice of the everyday set. Usage: python3 paraphrase.py [DIR]. Exit 1 on a problem.

A line of queries.jsonl with "slice": "paraphrase" must share no content word with any tool of
its `needs` (every tool of every group, not only the first): not with the tool's name, not with
its description, and not with its label (an MCP tool's server name and raw alias; an extension's
name, from its sourceInfo).

Words: the text is lowercased after splitting camelCase, and cut at every character that is not
a letter (so `_`, `-`, digits, punctuation and whitespace all separate words; numbers are not
words). Words of one letter and the stop words below are dropped. Two words match when their
stems (`stem` below) are equal, or when both are at least 5 letters long and start with the same
5 letters (strict on purpose: `translation`/`transfer` and `deploy`/`deployment` both match).

This only reads the data: it scores nothing.
"""
import json, re, sys
from collections import Counter
from pathlib import Path

STOP = set("""
a about above after again against all also am an and any anything are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down during
each either else etc even ever every few for from further had hadn has hasn have haven having he her
here hers herself him himself his how i if in into is isn it its itself just let ll me might more most
must mustn my myself needn no nor not now of off on once only or other our ours ourselves out over own
re same shan she should shouldn so some such than that the their theirs them themselves then there
these they this those through to too under until up upon us ve very via was wasn we were weren what
when where whether which while who whom whose why will with won would wouldn yet you your yours
yourself yourselves im ive id youre thats whats its lets gonna wanna gotta ok okay pls plz please
hey hi hmm yeah yep nope eg ie vs per
""".split())

# Suffixes stripped by step 3, longest first; the stem must keep at least 3 letters.
SUFFIXES = sorted("""
ational ization isation fulness iveness ousness ements ements ations itions ation ition ement ment ments
ness able ible ance ence ities ity ive ize ise ful ous ism ist ant ent ally al er ers or ors ly ic
""".split(), key=len, reverse=True)
VOWELS = set("aeiouy")


def stem(w):
    """A light Porter-style stemmer (written for this check, not Porter's full algorithm):
    1. plurals: -sses -> -ss, -ies -> -i, a final -s is dropped unless the word ends in -ss/-us/-is;
    2. -eed -> -ee, -ed / -ing are dropped when a vowel stays before them, then a doubled final
       consonant (except l, s, z) is undoubled (`stopped` -> `stop`);
    3. one derivational suffix of SUFFIXES is dropped when 3 or more letters stay;
    4. a final -e is dropped and a final -y becomes -i (`merge`/`merging`, `retry`/`retries`)."""
    if len(w) <= 3:
        return w
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-3] + "i"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("eed"):
        w = w[:-1]
    else:
        for suf in ("ing", "ed"):
            if w.endswith(suf) and VOWELS & set(w[: -len(suf)]) and len(w) - len(suf) >= 2:
                w = w[: -len(suf)]
                if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiouylsz":
                    w = w[:-1]
                break
    for suf in SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if w.endswith("y") and len(w) > 2:
        w = w[:-1] + "i"
    return w


def words(text):
    """Content words of `text` (see the module doc)."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return [w for w in re.split(r"[^a-z]+", text.lower()) if len(w) > 1 and w not in STOP]


def label(tool):
    """The names a tool is known by besides its own: an MCP server's name and raw aliases; an
    extension's package name (npm:/git:, without scope and version), or its file's stem (or
    folder, for index.*) for a local or auto-discovered file."""
    ns = tool.get("namespace")
    if ns:
        return [ns["name"].removeprefix("mcp__")] + list(ns.get("aliases", []))
    si = tool.get("sourceInfo", {})
    src = si.get("source", "")
    if src.startswith(("npm:", "git:")):
        spec = src.split(":", 1)[1]
        if src.startswith("npm:"):
            name = spec[1:].split("@", 1)[0] if spec.startswith("@") else spec.split("@", 1)[0]
            return [name.split("/")[-1]]
        return [spec.split("@", 1)[0].rstrip("/").split("/")[-1]]
    p = Path(si.get("path", ""))
    return [p.parent.name if p.stem == "index" else p.stem]


def match(a, b):
    return stem(a) == stem(b) or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def fnv1a64(text):
    """64-bit FNV-1a of the id's UTF-8 bytes, as `stable_hash` in crates/context-decisions/src/eval.rs."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def half(qid):
    return "tune" if fnv1a64(qid) % 2 == 0 else "test"


def shared(said, name, tool):
    """(where, prompt word, tool word) for each of the content words `said` that matches a word
    of the tool `name`'s name, description or label."""
    sources = (("name", name), ("description", tool.get("description", "")),
               ("label", " ".join(label(tool))))
    for where, text in sources:
        for tw in set(words(text)):
            for pw in sorted(said):
                if match(pw, tw):
                    yield where, pw, tw


def check(d, least_per_half=30):
    """(problems, report lines) for the paraphrase slice of the set in directory `d`."""
    d = Path(d)
    tools = {t["name"]: t for t in json.loads((d / "tools.json").read_text())}
    problems, report = [], []
    per_topic, per_half, per_topic_half = Counter(), Counter(), Counter()
    for line in (d / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q.get("slice") is None:
            continue
        qid = q.get("id")
        if q["slice"] != "paraphrase":
            problems.append(f"{qid}: unknown slice {q['slice']!r}")
            continue
        said = set(words(q.get("prompt", "")))
        for name in {n for g in q.get("needs", []) for n in g}:
            t = tools.get(name)
            if t is None:
                problems.append(f"{qid}: unknown tool {name}")
                continue
            for where, pw, tw in shared(said, name, t):
                problems.append(f"{qid}: prompt word {pw!r} matches {tw!r} in the {where} of {name}")
        h = half(qid)
        per_half[h] += 1
        for topic in q.get("topics", []):
            per_topic[topic] += 1
            per_topic_half[topic, h] += 1
    total = sum(per_half.values())
    report.append(f"paraphrase slice: {total} prompts, {per_half['tune']} tune / {per_half['test']} test")
    report.append("  per topic (tune/test): " + ", ".join(
        f"{t} {c} ({per_topic_half[t, 'tune']}/{per_topic_half[t, 'test']})" for t, c in sorted(per_topic.items())))
    for h in ("tune", "test"):
        if per_half[h] < least_per_half:
            problems.append(f"only {per_half[h]} paraphrase prompts in the {h} half (at least {least_per_half})")
    return problems, report


if __name__ == "__main__":
    problems, report = check(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    print("\n".join(report))
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)
