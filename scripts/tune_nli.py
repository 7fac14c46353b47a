"""Choose the ``nli`` verifier's ``min_relevance`` and the corpus ``top_k`` on held-out SciFact **train** claims.

The held-out claims are the slice ``scripts/train_offline_nli.py`` never trains
on (same seed and share). Each claim is retrieved and classified once per
``top_k``; every ``min_relevance`` is then applied to the same probabilities.
Accuracy and macro-F1 over TRUE / FALSE; abstentions count as wrong, as in the reported
results. SciFact dev is not read.

    python scripts/tune_nli.py [--model factcheck/data/nli] [--top-k 3,5] [--values 0.2,0.3,0.4,0.5,0.6]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from train_offline_nli import heldout_groups, read_jsonl

from factcheck import Claim, Evidence, Label
from factcheck.eval.metrics import accuracy, macro_f1
from factcheck.sources.corpus import CorpusSource
from factcheck.verifiers.nli import SHIPPED_MODEL, NLIVerifier

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def main(args: argparse.Namespace) -> None:
    config = json.loads((args.model / "nli.json").read_text(encoding="utf-8"))
    seed, share = config["hyperparameters"]["seed"], config["hyperparameters"]["holdout"]
    held = heldout_groups(args.data, share, random.Random(seed))
    rows = [
        r
        for r in read_jsonl(args.data / "scifact" / "claims_train.jsonl")
        if f"scifact-{r['id']}" in held and r["label"] != "NOT_ENOUGH_INFO"
    ]
    corpus = {r["doc_id"]: r for r in read_jsonl(args.data / "scifact" / "corpus.jsonl")}
    gold = [r["label"] == "SUPPORT" for r in rows]
    print(f"held-out SciFact train claims: {len(rows)} ({sum(gold)} SUPPORT / {len(gold) - sum(gold)} CONTRADICT)")
    values = [float(v) for v in args.values.split(",")]
    verifier = NLIVerifier(model=str(args.model))
    print(f"{'evidence':>10}{'recall':>8}" + "".join(f"{f'acc@{v:g}':>10}{'F1':>6}{'abst':>6}" for v in values))
    settings: list[tuple[str, int | None]] = [("gold", None)] + [("top_k", int(k)) for k in args.top_k.split(",")]
    for mode, k in settings:
        readings, found = [], 0
        for row in rows:
            claim = Claim(str(row["id"]), row["claim"])
            cited = [corpus[int(d)] for d in row["evidence"]]
            if k is None:
                evidence = [Evidence("gold", "\n".join(doc["abstract"]), doc["title"]) for doc in cited]
            else:
                evidence = CorpusSource(top_k=k).search(claim)
                found += any(item.title == doc["title"] for item in evidence for doc in cited)
            readings.append(verifier.read(claim, evidence))
        cells = ""
        for v in values:
            decide = verifier.configure(min_relevance=v).decide
            predicted = [decide(reading).factuality for reading in readings]
            labels = [Label.UNVERIFIED if p is None else Label.TRUE if p else Label.FALSE for p in predicted]
            truth = [Label.TRUE if g else Label.FALSE for g in gold]
            f1 = macro_f1(truth, labels, [Label.TRUE, Label.FALSE])
            cells += f"{accuracy(truth, labels):>10.3f}{f1:>6.2f}{predicted.count(None) / len(rows):>6.0%}"
        recall = f"{found / len(rows):.2f}" if k is not None else "-"
        print(f"{mode + (f'={k}' if k else ''):>10}{recall:>8}{cells}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=SHIPPED_MODEL)
    parser.add_argument("--top-k", default="3,5")
    parser.add_argument("--values", default="0.2,0.3,0.4,0.5,0.6")
    parser.add_argument("--data", type=Path, default=DATA)
    main(parser.parse_args())
