#!/usr/bin/env python3
"""Writes `tests/data/reference.json`: token ids and vectors from the upstream runtime
(sentence-transformers on PyTorch, CPU) for a few texts, which `tests/model.rs` compares with this
crate's tokenizer and encoder.

Development only: `python3 -m venv v && v/bin/pip install sentence-transformers`, then
`v/bin/python data/reference.py MODEL_DIR > tests/data/reference.json`, where MODEL_DIR is the
folder `cargo xtask fetch-model` installs. Written with sentence-transformers 6.2.0, torch 2.15.0.
"""
import json, os, sys

os.environ['HF_HUB_OFFLINE'] = '1'
from sentence_transformers import SentenceTransformer

model = SentenceTransformer(sys.argv[1], device='cpu')
texts = [
    "Is it chilly outside in Porto?",
    "weather now: Current weather conditions for a city",
    "Who's on call for payments tonight?",
    "Ünïcödé naïve café — 東京 🚀",
    "a" * 20 + " " + "word " * 300,
]
vectors = model.encode(texts, normalize_embeddings=True)
ids = [model.tokenizer(t, truncation=True, max_length=model.max_seq_length)['input_ids'] for t in texts]
print(json.dumps({
    "texts": texts,
    "ids": ids,
    "vectors": [[round(float(x), 6) for x in row] for row in vectors],
    "max_seq_length": model.max_seq_length,
}))
