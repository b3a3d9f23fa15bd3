#!/usr/bin/env python3
"""Checks the example set (see README.md) by the rules `../adapter-set/check.py` lists, with the
adapter set as the other training set kept apart. Usage: python3 check.py. Exit 1 on a problem."""
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
sys.path.insert(0, str(FOLDER.parent))
from eval_overlap import check_training_set  # noqa: E402

sys.exit(check_training_set(FOLDER))
