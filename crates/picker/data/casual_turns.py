#!/usr/bin/env python3
"""Held-out turns of a coding session typed casually (`casual-turns.jsonl`), as evaluation
folders: what a turn that reads like a follow-up costs, and what a request in that voice gets.
The same for the held-out tasks (`held-out-tasks.jsonl`: everyday work on the code and requests
for something outside it, typed every way) with `--file held-out-tasks.jsonl`.

    python3 crates/picker/data/casual_turns.py DIR [--file held-out-tasks.jsonl]
    context-decisions eval --set DIR/small --split all        # examples/inventory.json, 24 tools
    context-decisions eval --set DIR/everyday --split all     # the everyday inventory, 157 tools

Each folder has an inventory's `tools.json`, every turn that asks for work in the repository as
a coding-only prompt and every turn that asks for something outside it as a near miss (they name
no tool, so `eval` reports how much each kind exposes and what the need gate passes, not needs
met), and one labelled prompt `eval` needs to run. `--check` checks the file instead: the fields,
unique ids and prompts, none in an evaluation set, `need-prompts.jsonl` or `local-prompts.jsonl`
(these turns are kept out of every fit), for both files, and none in the other file.
`need-prompts.md` says how they were written. Python's standard library only.
"""
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_overlap import ROOT, EvalPrompts, jsonl_rows, row_problems  # noqa: E402

HERE = Path(__file__).resolve().parent
INVENTORIES = {'small': ROOT / 'examples' / 'inventory.json',
               'everyday': ROOT / 'eval' / 'everyday' / 'tools.json'}
# The one labelled prompt of each folder (`eval` runs on a set with at least one).
LABELLED = {'small': ('How hot is it in Rome?', 'weather_now'),
            'everyday': ('what issues are open on acme/billing-api with the bug label?',
                         'mcp__forgehub__list_issues')}


# The held-out files: kept out of every fit, each checked against the other too.
HELD_OUT = ('casual-turns.jsonl', 'held-out-tasks.jsonl')


def turns(problems, name='casual-turns.jsonl'):
    return [r for _, r in jsonl_rows(HERE / name,
                                     {'id', 'prompt', 'external', 'kind'}, problems.append)]


def check():
    problems = []
    for name in HELD_OUT:
        rows = turns(problems, name)
        problems += [f"{r['id']}: external is not a boolean" for r in rows
                     if not isinstance(r['external'], bool)]
        others = [HERE / n for n in HELD_OUT if n != name]
        problems += row_problems(rows, EvalPrompts(
            files=[HERE / 'need-prompts.jsonl', HERE / 'local-prompts.jsonl', *others],
            what='an evaluation, need, local or other held-out prompt'))
        outside = sum(r['external'] is True for r in rows)
        print(f'{name}: {len(rows)} prompts, {outside} asking for something outside the code')
    for p in problems:
        print('PROBLEM:', p)
    return 1 if problems else 0


def write(directory, file='casual-turns.jsonl'):
    problems = []
    rows = turns(problems, file)
    if problems:
        sys.exit('\n'.join(problems))
    for name, inventory in INVENTORIES.items():
        out = Path(directory) / name
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(inventory, out / 'tools.json')
        prompt, tool = LABELLED[name]
        labelled = {'id': f'{name}-q', 'prompt': prompt, 'relevant_tools': [tool],
                    'needs': [[tool]]}
        (out / 'queries.jsonl').write_text(json.dumps(labelled) + '\n')
        with open(out / 'irrelevance.jsonl', 'w') as f:
            for r in rows:
                kind = 'near-miss' if r['external'] else 'coding'
                f.write(json.dumps({'id': r['id'], 'prompt': r['prompt'], 'relevant_tools': [],
                                    'kind': kind}, ensure_ascii=False) + '\n')
        print(f'wrote {out}')
    return 0


if __name__ == '__main__':
    if sys.argv[1:] == ['--check']:
        sys.exit(check())
    if len(sys.argv) == 4 and sys.argv[2] == '--file' and sys.argv[3] in HELD_OUT:
        sys.exit(write(sys.argv[1], sys.argv[3]))
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(write(sys.argv[1]))
