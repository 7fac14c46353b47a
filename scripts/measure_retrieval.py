"""Recall@k of the gold abstract for the 188 SciFact dev claims the MAFC paper uses.

The offline default's corpus agent searches the shipped SciFact corpus with BM25;
a claim can only be judged right from its own abstract, so this bounds what the
verifier can reach end to end. A claim counts as found when any passage of any
abstract it cites as evidence is among the ``k`` passages retrieved.

    python scripts/measure_retrieval.py [--k 1,3,5,10]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from factcheck import Claim
from factcheck.sources.corpus import CorpusSource

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def read_jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(args: argparse.Namespace) -> None:
    dev = {row["id"]: row for row in read_jsonl(args.data / "scifact" / "claims_dev.jsonl")}
    titles = {row["doc_id"]: row["title"] for row in read_jsonl(args.data / "scifact" / "corpus.jsonl")}
    rows = read_jsonl(args.data / "ito_mafc" / "scifact_single_dev188.jsonl")
    ks = [int(k) for k in args.k.split(",")]
    source = CorpusSource(top_k=max(ks))
    found = dict.fromkeys(ks, 0)
    for row in rows:
        gold = {titles[int(doc)] for doc in dev[row["scifact_dev_id"]]["evidence"]}  # type: ignore[attr-defined]
        ranked = [item.title for item in source.search(Claim("r", str(row["claim"])))]
        for k in ks:
            found[k] += bool(gold & set(ranked[:k]))
    print(f"SciFact dev, {len(rows)} claims: recall of the gold abstract in the top k passages (BM25, shipped corpus)")
    for k in ks:
        print(f"  recall@{k:<3} {found[k] / len(rows):.3f}  ({found[k]}/{len(rows)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", default="1,3,5,10")
    parser.add_argument("--data", type=Path, default=DATA)
    main(parser.parse_args())
