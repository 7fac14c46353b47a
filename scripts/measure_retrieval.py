"""Recall@k of the gold abstract for the 188 SciFact dev claims the MAFC paper uses, by retrieval.

The offline default's corpus agent searches the shipped SciFact corpus; a claim can only be judged
right from its own abstract, so this bounds what the verifier can reach end to end. A claim counts as
found when any passage of any abstract it cites as evidence is among the ``k`` passages retrieved.
The three ways of the ``corpus`` source's ``retrieval`` option are measured side by side, as shipped:
``bm25``, ``dense`` (the cosine of the claim's and each passage's embedding) and ``hybrid`` (the
default: both rankings' top 50 fused by reciprocal rank, k = 60).

    python scripts/measure_retrieval.py [--k 1,3,5,10]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from factcheck import Claim
from factcheck.sources.corpus import RETRIEVALS, CorpusSource

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def read_jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(args: argparse.Namespace) -> None:
    dev = {row["id"]: row for row in read_jsonl(args.data / "scifact" / "claims_dev.jsonl")}
    titles = {row["doc_id"]: row["title"] for row in read_jsonl(args.data / "scifact" / "corpus.jsonl")}
    rows = read_jsonl(args.data / "ito_mafc" / "scifact_single_dev188.jsonl")
    ks = [int(k) for k in args.k.split(",")]
    found = {way: dict.fromkeys(ks, 0) for way in RETRIEVALS}
    for way in RETRIEVALS:
        source = CorpusSource(top_k=max(ks), retrieval=way)
        for row in rows:
            gold = {titles[int(doc)] for doc in dev[row["scifact_dev_id"]]["evidence"]}  # type: ignore[attr-defined]
            ranked = [item.title for item in source.search(Claim("r", str(row["claim"])))]
            for k in ks:
                found[way][k] += bool(gold & set(ranked[:k]))
    print(f"SciFact dev, {len(rows)} claims: recall of the gold abstract in the top k passages (shipped corpus)")
    print("| k | " + " | ".join(RETRIEVALS) + " |")
    print("|---|" + "---|" * len(RETRIEVALS))
    for k in ks:
        cells = [f"{found[way][k] / len(rows):.3f} ({found[way][k]})" for way in RETRIEVALS]
        print(f"| {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", default="1,3,5,10")
    parser.add_argument("--data", type=Path, default=DATA)
    main(parser.parse_args())
