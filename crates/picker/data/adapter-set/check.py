#!/usr/bin/env python3
"""Checks the query adapter's training set (see README.md). Usage: python3 check.py. Exit 1 on a problem.

- `tools.json` parses, every tool has a name and a description, names are unique;
- every line of `queries.jsonl` parses with exactly id, prompt and needs, ids and prompts are
  unique, and every tool a need names is in `tools.json`;
- no prompt is identical to, contained in, or contains (either from 20
  characters on) a prompt of the evaluation sets (eval/everyday, eval/bfcl, eval/metatool,
  eval/unseen) or of `../example-set`, after lowercasing and folding whitespace; no tool shares
  a name or a description with a tool of those.
Python's standard library only; it reads the data and scores nothing
(`eval_overlap.check_training_set`).
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from eval_overlap import check_training_set  # noqa: E402

sys.exit(check_training_set(HERE))
