"""Recall@k of the gold abstract for the 188 SciFact dev claims the MAFC paper uses.

The offline default's corpus agent searches the shipped SciFact corpus with BM25;
a claim can only be judged right from its own abstract, so this bounds what the
verifier can reach end to end. A claim counts as found when any passage of any
abstract it cites as evidence is among the ``k`` passages retrieved.

With ``--embedder DIR`` (a folder ``scripts/export_embedder.py export`` wrote), dense
retrieval (the cosine of the claim's and each passage's embedding) and hybrid retrieval
(reciprocal-rank fusion of BM25 and dense, k = 60, over each one's top 50) are measured
beside BM25. The passage embeddings are saved in that folder the first time (about
8 minutes for the 11,924 passages on 2 cores), and read from there afterwards.

    python scripts/measure_retrieval.py [--k 1,3,5,10] [--embedder build/embedder]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from factcheck import Claim
from factcheck.sources.corpus import SHIPPED_CORPUS, CorpusSource, Passage, open_index

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
FUSED_DEPTH, RRF_K = 50, 60


def read_jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def dense_ranker(folder: Path, passages: list[Passage]) -> Callable[[str], list[int]]:
    """Passage indices by cosine with the claim, best first, with the embedder in ``folder``."""
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    session = onnxruntime.InferenceSession(str(folder / "embedder.onnx"), providers=["CPUExecutionProvider"])

    def encode(texts: list[str]) -> Any:
        batch = tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
        }
        return session.run(["embedding"], feed)[0]

    saved = folder / f"scifact-passages-{len(passages)}.npy"
    if saved.exists():
        matrix = np.load(saved)
    else:
        started = time.perf_counter()
        texts = [f"{p.title}. {p.text}" if p.title else p.text for p in passages]
        order = np.argsort([len(t) for t in texts])  # batches of like length: less padding
        matrix = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(texts), 32):
            chosen = order[start : start + 32]
            matrix[chosen] = encode([texts[i] for i in chosen])
        np.save(saved, matrix)
        print(f"embedded {len(texts)} passages in {time.perf_counter() - started:.0f}s into {saved}")
    return lambda claim: [int(i) for i in np.argsort(-(matrix @ encode([claim])[0]))]


def main(args: argparse.Namespace) -> None:
    dev = {row["id"]: row for row in read_jsonl(args.data / "scifact" / "claims_dev.jsonl")}
    titles = {row["doc_id"]: row["title"] for row in read_jsonl(args.data / "scifact" / "corpus.jsonl")}
    rows = read_jsonl(args.data / "ito_mafc" / "scifact_single_dev188.jsonl")
    ks = [int(k) for k in args.k.split(",")]
    source = CorpusSource(top_k=max(ks))
    index = open_index(SHIPPED_CORPUS, source.passage_words)
    position = {id(p): i for i, p in enumerate(index.passages)}
    dense = dense_ranker(args.embedder, index.passages) if args.embedder else None
    methods = ["BM25", *(["dense", "hybrid (RRF)"] if dense else [])]
    found = {m: dict.fromkeys(ks, 0) for m in methods}
    for row in rows:
        gold = {titles[int(doc)] for doc in dev[row["scifact_dev_id"]]["evidence"]}  # type: ignore[attr-defined]
        claim = str(row["claim"])
        ranked = {"BM25": [item.title for item in source.search(Claim("r", claim))]}
        if dense is not None:
            by_meaning = dense(claim)[:FUSED_DEPTH]
            by_words = [position[id(p)] for p, _ in index.search(claim, FUSED_DEPTH)]
            fused: dict[int, float] = {}
            for ranking in (by_words, by_meaning):
                for rank, i in enumerate(ranking):
                    fused[i] = fused.get(i, 0.0) + 1 / (RRF_K + rank)
            ranked["dense"] = [index.passages[i].title for i in by_meaning]
            ranked["hybrid (RRF)"] = [
                index.passages[i].title for i in sorted(fused, key=fused.__getitem__, reverse=True)
            ]
        for method in methods:
            for k in ks:
                found[method][k] += bool(gold & set(ranked[method][:k]))
    print(f"SciFact dev, {len(rows)} claims: recall of the gold abstract in the top k passages (shipped corpus)")
    for method in methods:
        print(f"  {method}:")
        for k in ks:
            print(f"    recall@{k:<3} {found[method][k] / len(rows):.3f}  ({found[method][k]}/{len(rows)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", default="1,3,5,10")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--embedder", type=Path, help="a folder scripts/export_embedder.py wrote")
    main(parser.parse_args())
