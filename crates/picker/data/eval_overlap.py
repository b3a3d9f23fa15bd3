"""What training data must not share with the evaluation sets: their prompts (`eval/everyday`,
`eval/bfcl`, `eval/metatool`, `eval/unseen`, every queries and irrelevance file), folded. Used by
`need-prompts-check.py` and `adapter-set/check.py`, with the reading of a JSON-lines file both
check. Python's standard library only."""
import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EVAL_DIRS = [ROOT / "eval" / name for name in ("everyday", "bfcl", "metatool", "unseen")]


def fold(text):
    """Lowercased, whitespace folded."""
    return re.sub(r"\s+", " ", text.lower()).strip()


class EvalPrompts:
    """The evaluation prompts, folded, and the files they came from (`found`)."""

    def __init__(self):
        self.prompts, self.found = set(), []
        for d in EVAL_DIRS:
            for f in ("queries.jsonl", "irrelevance.jsonl"):
                p = d / f
                if p.is_file():
                    self.found.append(str(p.relative_to(ROOT.parent)))
                    for line in p.read_text().splitlines():
                        if line.strip():
                            self.prompts.add(fold(json.loads(line).get("prompt", "")))
        self.haystack = "\n".join(self.prompts)
        self.long = [e for e in self.prompts if len(e) >= 40]

    def missing(self):
        """The sets whose prompts were not found, as problems."""
        out = []
        if not any("everyday" in f for f in self.found):
            out.append("eval/everyday not found")
        if not any("bfcl" in f for f in self.found) or not any("metatool" in f for f in self.found):
            out.append("eval/bfcl or eval/metatool not found")
        return out

    def overlap(self, prompt):
        """Why `prompt` may not be training data (identical to, contained in, or containing an
        evaluation prompt of 40 characters or more), or None."""
        p = fold(prompt)
        if p in self.prompts:
            return "identical to an evaluation prompt"
        if p in self.haystack:
            return "contained in an evaluation prompt"
        hit = next((e for e in self.long if e in p), None)
        return f"contains the evaluation prompt {hit[:60]!r}" if hit else None


def jsonl_rows(path, fields, bad, where=""):
    """Each line of `path` that is a JSON object with exactly `fields`, as (line number, object);
    every other line is reported through `bad`, by its number (after `where`)."""
    rows = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        try:
            r = json.loads(line)
        except ValueError:
            bad(f"{where}line {i}: not JSON")
            continue
        if not isinstance(r, dict) or set(r) != fields:
            bad(f"{where}line {i}: fields {sorted(r) if isinstance(r, dict) else type(r).__name__}")
            continue
        rows.append((i, r))
    return rows


def row_problems(rows, evaluation=None):
    """The problems every training file shares: a repeated id or prompt (folded), an evaluation
    set not found, a prompt the evaluation sets have (`EvalPrompts.overlap`)."""
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
