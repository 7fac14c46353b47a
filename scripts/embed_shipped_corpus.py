"""Compute the passage embeddings shipped with the SciFact corpus (``factcheck/data/scifact-embeddings.npy``).

The same code embeds a user's corpus on first use (:func:`factcheck.sources.corpus.embed_passages`); this
writes its result, float16, beside the corpus, with a stamp (``scifact-embeddings.json``) naming the corpus
fingerprint, the encoder's digest and the embedded text's format: the ``corpus`` source uses the shipped
file only when all three match, else it embeds the corpus itself.

    python scripts/embed_shipped_corpus.py
"""

from __future__ import annotations

import json
import time

import numpy as np

from factcheck.embed import embedder_digest
from factcheck.sources.corpus import (
    SHIPPED_CORPUS,
    SHIPPED_EMBEDDINGS,
    CorpusSource,
    _cached_fingerprint,
    embed_passages,
    embedding_stamp,
    open_index,
)


def main() -> None:
    words = CorpusSource().passage_words
    index = open_index(SHIPPED_CORPUS, words)
    started = time.perf_counter()
    vectors = embed_passages(index.passages, SHIPPED_CORPUS.name)
    elapsed = time.perf_counter() - started
    np.save(SHIPPED_EMBEDDINGS, vectors)
    stamp = {**embedding_stamp(_cached_fingerprint(SHIPPED_CORPUS, words), embedder_digest()), "passages": len(vectors)}
    SHIPPED_EMBEDDINGS.with_suffix(".json").write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
    print(
        f"embedded {len(vectors)} passages in {elapsed:.0f} s ({len(vectors) / elapsed:.0f} a second): "
        f"{SHIPPED_EMBEDDINGS}"
    )


if __name__ == "__main__":
    main()
