#!/usr/bin/env python3
"""Writes two variants of the everyday set in which every prompt has a pasted stack trace and
log lines around it: OUT/before (the paste, a blank line, then the prompt) and OUT/after (the
prompt, a blank line, then the paste). Labels, kinds and tools are the everyday set's own; the
paste is one fixed traceback of an invented Python worker, about 130 word pieces, the same for
every prompt. It measures whether a request is still read when a user pastes what they are
looking at around it (BENCHMARKS.md, "A request next to pasted text").

Usage: python3 eval/everyday/pasted.py OUT
then: context-decisions eval --set OUT/before [--mode mcp]
"""
import json, os, shutil, sys

PASTE = """Traceback (most recent call last):
  File "/srv/app/worker/main.py", line 212, in run_batch
    result = pipeline.process(chunk, retries=3)
  File "/srv/app/worker/pipeline.py", line 88, in process
    rows = self._transform(rows)
  File "/srv/app/worker/pipeline.py", line 141, in _transform
    return [self._normalise(r) for r in rows]
  File "/srv/app/worker/pipeline.py", line 141, in <listcomp>
    return [self._normalise(r) for r in rows]
  File "/srv/app/worker/pipeline.py", line 163, in _normalise
    value = Decimal(row["amount"]).quantize(Decimal("0.01"))
decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]
2026-11-28 14:02:11,443 WARNING worker.main batch 7781 failed after 3 attempts, moving on
2026-11-28 14:02:11,447 INFO worker.main processed 15230 rows in 41.2s (2 batches failed)"""

def main(out):
    here = os.path.dirname(os.path.abspath(__file__))
    for where in ('before', 'after'):
        d = os.path.join(out, where)
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(os.path.join(here, 'tools.json'), os.path.join(d, 'tools.json'))
        for name in ('queries.jsonl', 'irrelevance.jsonl'):
            with open(os.path.join(here, name), encoding='utf-8') as src, \
                 open(os.path.join(d, name), 'w', encoding='utf-8') as dst:
                for line in src:
                    if not line.strip():
                        continue
                    q = json.loads(line)
                    p = q['prompt']
                    q['prompt'] = f'{PASTE}\n\n{p}' if where == 'before' else f'{p}\n\n{PASTE}'
                    dst.write(json.dumps(q, ensure_ascii=False) + '\n')

if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
