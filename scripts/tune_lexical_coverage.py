"""Choose the lexical verifier's ``min_coverage`` on SciFact **train** (never on the dev claims we report).

For each value, runs the offline default end to end (BM25 over the shipped corpus,
then ``lexical``) on the 505 SUPPORT / CONTRADICT train claims and prints accuracy
(abstentions count as wrong), macro-F1 and the abstention rate, side by side.

    python scripts/tune_lexical_coverage.py [--values 0.2,0.3,0.4,0.5]
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from factcheck import Agent, Checker, Label
from factcheck.eval.metrics import accuracy, bootstrap_ci, macro_f1
from factcheck.jsonl import read_records
from factcheck.sources.corpus import CorpusSource
from factcheck.verifiers.lexical import LexicalVerifier

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


async def main(values: list[float], data: Path) -> None:
    rows = [r for _, r in read_records(data / "scifact" / "claims_train.jsonl") if r["label"] != "NOT_ENOUGH_INFO"]
    gold = [Label.TRUE if r["label"] == "SUPPORT" else Label.FALSE for r in rows]
    print(f"SciFact train: {len(rows)} claims ({gold.count(Label.TRUE)} TRUE / {gold.count(Label.FALSE)} FALSE)")
    print(f"{'min_coverage':>12}{'accuracy':>10}{'95% CI':>18}{'macro-F1':>10}{'abstain':>9}")
    for value in values:
        agent = Agent("corpus", CorpusSource(), LexicalVerifier(min_coverage=value))
        checker = Checker(agents=[agent], scoring_options={"thresholds": "0.5"})
        predicted = [(await checker.acheck(r["claim"])).label for r in rows]
        low, high = bootstrap_ci(gold, predicted, accuracy)
        abstain = predicted.count(Label.UNVERIFIED) / len(predicted)
        print(
            f"{value:>12.2f}{accuracy(gold, predicted):>10.3f}{f'[{low:.3f}, {high:.3f}]':>18}"
            f"{macro_f1(gold, predicted, [Label.TRUE, Label.FALSE]):>10.3f}{abstain:>9.1%}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--values", default="0.2,0.3,0.4,0.5")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    asyncio.run(main([float(v) for v in args.values.split(",")], args.data))
