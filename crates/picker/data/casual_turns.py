#!/usr/bin/env python3
"""Held-out turns of a coding session typed casually (`casual-turns.jsonl`), as evaluation
folders: what a turn that reads like a follow-up costs, and what a request in that voice gets.
The same for the held-out tasks (`held-out-tasks.jsonl`: everyday work on the code and requests
for something outside it, typed every way) with `--file held-out-tasks.jsonl`, and for the
held-out prompts with a web address in them (`held-out-links.jsonl`) with `--file
held-out-links.jsonl`.

    python3 crates/picker/data/casual_turns.py DIR [--file held-out-tasks.jsonl|held-out-links.jsonl]
    context-decisions eval --set DIR/small --split all        # examples/inventory.json, 24 tools
    context-decisions eval --set DIR/everyday --split all     # the everyday inventory, 157 tools

Each folder has an inventory's `tools.json`, every turn that asks for work in the repository as
a coding-only prompt and every turn that asks for something outside it as a near miss (they name
no tool, so `eval` reports how much each kind exposes and what the need gate passes, not needs
met), and one labelled prompt `eval` needs to run. `--check` checks the file instead: the fields,
unique ids and prompts, none in an evaluation set, `need-prompts.jsonl` or `local-prompts.jsonl`
(these turns are kept out of every fit), for both files, and none in the other file; and that
`held-out-needs.jsonl` (`held-out-links-needs.jsonl`) labels only the held-out tasks' (links')
requests, with tools of the everyday inventory. With those labels the everyday folder has the
labelled requests as labelled prompts, so `eval` says whether their needs were met.
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
HELD_OUT = ('casual-turns.jsonl', 'held-out-tasks.jsonl', 'held-out-links.jsonl')


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
        inventory, needs = labelled_needs(name, problems)
        if inventory:
            problems += needs_problems(rows, needs, INVENTORIES[inventory])
            print(f'  {len(needs)} of them labelled with the {inventory} inventory\'s tools')
    for p in problems:
        print('PROBLEM:', p)
    return 1 if problems else 0


# The held-out tasks' requests labelled with the everyday inventory's tools they need, by hand
# (`held-out-needs.jsonl`: `{"id", "needs"}`, each need the tools any one of which would do it).
NEEDS = {'held-out-tasks.jsonl': ('everyday', 'held-out-needs.jsonl'),
         'held-out-links.jsonl': ('everyday', 'held-out-links-needs.jsonl')}


def labelled_needs(file, problems):
    """The inventory a held-out file's requests are labelled for, and their needs by id (none for
    a file without labels)."""
    if file not in NEEDS:
        return None, {}
    inventory, name = NEEDS[file]
    rows = [r for _, r in jsonl_rows(HERE / name, {'id', 'needs'}, problems.append)]
    needs = {r['id']: r['needs'] for r in rows}
    if len(needs) != len(rows):
        problems.append(f'{name}: an id labelled twice')
    return inventory, needs


def needs_problems(rows, needs, inventory):
    """What is wrong with a held-out file's labels: an id that is not one of its requests, an
    empty need, or a tool the inventory lacks."""
    external = {r['id'] for r in rows if r['external'] is True}
    tools = {t['name'] for t in json.loads(inventory.read_text(encoding='utf-8'))}
    out = [f'{i}: labelled but not a request of the file' for i in needs if i not in external]
    for i, row in needs.items():
        if not row or not all(isinstance(n, list) and n for n in row):
            out.append(f'{i}: an empty need')
            continue
        out += [f'{i}: no tool {t!r} in the inventory' for n in row for t in n if t not in tools]
    return out


def write(directory, file='casual-turns.jsonl'):
    problems = []
    rows = turns(problems, file)
    labelled_for, needs = labelled_needs(file, problems)
    if problems:
        sys.exit('\n'.join(problems))
    for name, inventory in INVENTORIES.items():
        out = Path(directory) / name
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(inventory, out / 'tools.json')
        prompt, tool = LABELLED[name]
        queries = [{'id': f'{name}-q', 'prompt': prompt, 'relevant_tools': [tool],
                    'needs': [[tool]]}]
        labels = needs if name == labelled_for else {}
        # A labelled request is a query, so `eval` says whether its needs were met.
        queries += [{'id': r['id'], 'prompt': r['prompt'],
                     'relevant_tools': sorted({t for need in labels[r['id']] for t in need}),
                     'needs': labels[r['id']]} for r in rows if r['id'] in labels]
        (out / 'queries.jsonl').write_text(
            ''.join(json.dumps(q, ensure_ascii=False) + '\n' for q in queries))
        with open(out / 'irrelevance.jsonl', 'w') as f:
            for r in rows:
                if r['id'] in labels:
                    continue
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
