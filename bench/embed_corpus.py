"""How long a corpus takes to embed on first use, and to open once embedded (issue 26).

A user's corpus is embedded the first time hybrid retrieval opens it; afterwards its embeddings are
read from the cache. This writes the first ``--passages`` passages of the shipped SciFact corpus to a
JSONL file as a user corpus (one record a passage: a title and up to 120 words), then, in a fresh cache
folder, times side by side:

1. opening it the first time (BM25 index built, every passage embedded: the progress bar's work);
2. opening it again in a new process's place (index and embeddings read from the cache);
3. opening the shipped corpus, whose embeddings are shipped with it.

    python bench/embed_corpus.py [--passages 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from factcheck.sources import corpus


def timed(path: Path) -> float:
    started = time.perf_counter()
    corpus.open_index(path, corpus.CorpusSource().passage_words, embedded=True)
    return time.perf_counter() - started


def main(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="embed-bench-"))
    os.environ["FACTCHECK_CACHE_DIR"] = str(folder / "cache")
    shipped = corpus.load_passages(corpus.SHIPPED_CORPUS, corpus.CorpusSource().passage_words)[: args.passages]
    user = folder / "user.jsonl"
    with user.open("w", encoding="utf-8") as handle:
        for i, p in enumerate(shipped):
            handle.write(json.dumps({"id": str(i), "title": p.title, "text": p.text}) + "\n")
    first = timed(user)
    corpus._indexes.clear()
    again = timed(user)
    corpus._indexes.clear()
    ship = timed(corpus.SHIPPED_CORPUS)
    cores = os.cpu_count()
    print(f"a user corpus of {len(shipped)} passages ({cores} cores):")
    print(
        f"  first use (index built, every passage embedded): {first:.0f} s, "
        f"{len(shipped) / first:.0f} passages a second"
    )
    print(f"  next use (index and embeddings from the cache):  {again:.2f} s ({first / again:.0f}x faster)")
    print(f"the shipped corpus (its embeddings shipped): {ship:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=10000)
    main(parser.parse_args())
