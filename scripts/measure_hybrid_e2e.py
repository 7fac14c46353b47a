"""End to end on SciFact dev with hybrid retrieval tried in place of BM25 (a measurement, not a feature).

The corpus index's search is replaced, for this process only, by reciprocal-rank fusion
(k = 60) of its BM25 ranking and the dense ranking of an encoder exported by
``scripts/export_embedder.py``, over each one's top 50. Then ``factcheck eval scifact-binary``
runs as usual. ``--retrieval bm25`` runs the same command with nothing replaced, for the
column beside it. The passage embeddings are the ones ``scripts/measure_retrieval.py
--embedder`` saves.

    python scripts/measure_hybrid_e2e.py --retrieval bm25 --out build/e2e-bm25
    python scripts/measure_hybrid_e2e.py --retrieval hybrid --embedder build/embedder --out build/e2e-hybrid
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from factcheck.sources import corpus

FUSED_DEPTH, RRF_K = 50, 60


def use_hybrid(folder: Path) -> None:
    """Replace :meth:`CorpusIndex.search` with BM25 + dense fused by reciprocal rank."""
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    session = onnxruntime.InferenceSession(str(folder / "embedder.onnx"), providers=["CPUExecutionProvider"])
    (saved,) = folder.glob("scifact-passages-*.npy")  # written by measure_retrieval.py --embedder
    matrix = np.load(saved)
    bm25 = corpus.CorpusIndex.search

    def search(self: corpus.CorpusIndex, query: str, k: int) -> list[tuple[corpus.Passage, float]]:
        position = {id(p): i for i, p in enumerate(self.passages)}
        encoded = tokenizer.encode(query)
        feed = {"input_ids": np.array([encoded.ids]), "attention_mask": np.array([encoded.attention_mask])}
        by_meaning = np.argsort(-(matrix @ session.run(["embedding"], feed)[0][0]))[:FUSED_DEPTH]
        fused: dict[int, float] = {}
        for rank, (passage, _) in enumerate(bm25(self, query, FUSED_DEPTH)):
            fused[position[id(passage)]] = fused.get(position[id(passage)], 0.0) + 1 / (RRF_K + rank)
        for rank, i in enumerate(by_meaning):
            fused[int(i)] = fused.get(int(i), 0.0) + 1 / (RRF_K + rank)
        return [(self.passages[i], fused[i]) for i in sorted(fused, key=fused.__getitem__, reverse=True)[:k]]

    corpus.CorpusIndex.search = search  # type: ignore[method-assign]


def main(args: Any) -> None:
    if args.retrieval == "hybrid":
        use_hybrid(args.embedder)
    from factcheck.cli import main as factcheck

    sys.argv = ["factcheck", "eval", "scifact-binary", "--no-cache", "--out", str(args.out)]
    sys.argv += ["--scorers", "mafc", "--labels", "threshold"]
    factcheck()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retrieval", choices=["bm25", "hybrid"], required=True)
    parser.add_argument("--embedder", type=Path, default=Path("build/embedder"))
    parser.add_argument("--out", type=Path, required=True)
    main(parser.parse_args())
