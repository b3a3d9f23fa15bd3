"""What training data must not share with the evaluation sets: their prompts (`eval/everyday`,
`eval/bfcl`, `eval/metatool`, `eval/unseen`, every queries and irrelevance file), folded. Used
by `need-prompts-check.py`, `casual_turns.py`, `adapter-set/check.py`, `example-set/check.py`
and `eval/unseen/check.py`, with the reading of a JSON-lines file, the checks of a `tools.json`
and the whole check of an invented training set (`check_training_set`) they share. Python's
standard library only."""
import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EVAL_DIRS = [ROOT / "eval" / name for name in ("everyday", "bfcl", "metatool", "unseen")]


# The fewest characters a folded prompt has for "contained in a prompt kept apart" to count.
SHORTEST_CONTAINED = 20


def fold(text):
    """Lowercased, whitespace folded."""
    return re.sub(r"\s+", " ", text.lower()).strip()


class EvalPrompts:
    """The prompts to keep apart, folded: those of the sets in `dirs` (the evaluation sets by
    default, every queries and irrelevance file) and of the JSON-lines `files`, each named
    `what` in a problem; and the files they came from (`found`)."""

    def __init__(self, dirs=None, files=(), what="an evaluation prompt"):
        self.dirs = EVAL_DIRS if dirs is None else list(dirs)
        self.what, self.prompts, self.found = what, set(), []
        paths = [d / f for d in self.dirs for f in ("queries.jsonl", "irrelevance.jsonl")]
        self.read = set()
        for p in paths + list(files):
            if p.is_file():
                self.read.add(p.parent)
                self.found.append(str(p.relative_to(ROOT.parent)) if p.is_relative_to(ROOT.parent) else str(p))
                for line in p.read_text().splitlines():
                    if line.strip():
                        self.prompts.add(fold(json.loads(line).get("prompt", "")))
        self.haystack = "\n".join(self.prompts)
        # Containment counts from the same length either way round: a prompt of another set
        # inside this one is as much a copy as this one inside another's (the check of the set
        # on the other side would flag it).
        self.long = [e for e in self.prompts if len(e) >= SHORTEST_CONTAINED]

    def missing(self):
        """The sets of `dirs` whose prompts were not found, as problems."""
        return [f"eval/{d.name} not found" for d in self.dirs if d not in self.read]

    def overlap(self, prompt):
        """Why `prompt` may not be here (identical to, contained in, or containing one of the
        prompts kept apart), or None. Containment counts from `SHORTEST_CONTAINED` characters
        on, either way round: a short turn ("ok", "try again") is a piece of many sentences, not
        a copy of one."""
        p = fold(prompt)
        if p in self.prompts:
            return f"identical to {self.what}"
        if len(p) >= SHORTEST_CONTAINED and p in self.haystack:
            return f"contained in {self.what}"
        hit = next((e for e in self.long if e in p), None)
        return f"contains {self.what} {hit[:60]!r}" if hit else None


def tools_of(dirs):
    """The tools of each folder's `tools.json`, one list."""
    return [t for d in dirs for t in json.loads((d / "tools.json").read_text())]


def tool_problems(tools, others, where="an evaluation set"):
    """A tool without a name or a description, a name used twice, and a tool named or described
    (folded) as one of `others` (the tools of `where`)."""
    out = [f"a tool without a name or a description: {str(t)[:60]!r}"
           for t in tools if not t.get("name") or not t.get("description")]
    out += [f"tool name repeated {c} times: {n}"
            for n, c in Counter(t.get("name") for t in tools).items() if c > 1]
    names = {t.get("name") for t in others}
    descriptions = {fold(t.get("description") or "") for t in others}
    for t in tools:
        if t.get("name") in names:
            out.append(f"tool {t.get('name')}: named as a tool of {where}")
        if fold(t.get("description") or "") in descriptions:
            out.append(f"tool {t.get('name')}: described as a tool of {where}")
    return out


def jsonl_rows(path, fields, bad, where="", optional=frozenset()):
    """Each line of `path` that is a JSON object with exactly `fields` (and any of `optional`),
    as (line number, object); every other line is reported through `bad`, by its number (after
    `where`)."""
    rows = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        try:
            r = json.loads(line)
        except ValueError:
            bad(f"{where}line {i}: not JSON")
            continue
        if not isinstance(r, dict) or set(r) - set(optional) != fields:
            bad(f"{where}line {i}: fields {sorted(r) if isinstance(r, dict) else type(r).__name__}")
            continue
        rows.append((i, r))
    return rows


def row_problems(rows, evaluation=None):
    """The problems every training file shares: a repeated id or prompt (folded), a set to keep
    apart not found, a prompt it has (`EvalPrompts.overlap`; the evaluation sets by default)."""
    out = []
    for what, counts in (("id", Counter(r["id"] for r in rows)),
                         ("prompt", Counter(fold(r["prompt"]) for r in rows))):
        out += [f"{what} repeated {c} times: {k[:80]!r}" for k, c in counts.items() if c > 1]
    evaluation = evaluation or EvalPrompts()
    out += evaluation.missing()
    for r in rows:
        why = evaluation.overlap(r["prompt"])
        if why:
            out.append(f"{r['id']}: {why}")
    return out


# The folders of invented servers, tools and prompts something is fitted on: the query adapter
# and the example requests are fitted on both (`adapter-set`, `example-set`).
TRAINING_DIRS = [ROOT / "crates" / "picker" / "data" / name for name in ("adapter-set", "example-set")]


def check_training_set(folder):
    """Checks one invented training set (`adapter-set`, `example-set`): its `tools.json` parses,
    every tool has a name and a description, names are unique; every line of its `queries.jsonl`
    has exactly id, prompt and needs, ids and prompts are unique, and every tool a need names is
    in `tools.json`; no prompt is identical to, contained in or containing a prompt of the
    evaluation sets or of the other training sets (`EvalPrompts.overlap`), and no tool shares a
    name or a description with a tool of theirs. Prints a summary and the problems; returns the
    exit status (1 on a problem)."""
    folder = Path(folder).resolve()
    others = [d for d in TRAINING_DIRS if d != folder]
    problems = []
    bad = problems.append
    tools = json.loads((folder / "tools.json").read_text())
    names = {t.get("name") for t in tools}
    kept_tools = tools_of(EVAL_DIRS + others)
    problems += tool_problems(tools, kept_tools, "an evaluation set or another training set")
    rows = []
    for _, r in jsonl_rows(folder / "queries.jsonl", {"id", "prompt", "needs"}, bad, "queries.jsonl "):
        for need in r["needs"]:
            for n in need:
                if n not in names:
                    bad(f"{r['id']}: needs a tool the inventory lacks")
        rows.append(r)
    kept = EvalPrompts(None, [d / "queries.jsonl" for d in others],
                       "an evaluation prompt or another training set's")
    problems += row_problems(rows, kept)
    servers = Counter(t["namespace"]["name"] if "namespace" in t else t["sourceInfo"]["source"]
                      for t in tools)
    print(f"{len(tools)} tools of {len(servers)} servers and extensions, {len(rows)} prompts; "
          f"compared with {len(kept.prompts)} prompts and {len(kept_tools)} tools kept apart")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0
