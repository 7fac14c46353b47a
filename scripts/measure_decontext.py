"""How well the offline extractor resolves references: pronouns, "the ministry", "it" (issue 40).

Reads a JSON-lines set of short texts, each with the claim a careful reader would check for its
last sentence (``tests/data/extraction/decontext.jsonl``, written for this measure: none of it is
training data). Each text is extracted as ``factcheck extract`` does, and the claim made of its
last sentence is compared with the expected one:

- **right**: the same claim;
- **kept**: the sentence left as written where a reader would have resolved it (a missed chance,
  never a harm: the claim says what the text says);
- **wrong**: anything else, above all a claim that names a subject the text does not. The rule is
  that this never happens; the tests hold it at zero.

    python scripts/measure_decontext.py
    python scripts/measure_decontext.py --show   # each text that is not right

The figures are quoted in docs/extraction.md ("Decontextualisation").
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from factcheck.extractors.sentence import SentenceExtractor

SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction" / "decontext.jsonl"


@dataclass(frozen=True)
class Outcome:
    text: str
    expected: str
    got: str
    kind: str
    verdict: str  # "right", "kept" or "wrong"


def measure(path: Path = SET) -> list[Outcome]:
    extractor = SentenceExtractor()
    outcomes = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        text = item["text"].rstrip()
        last = max((m.end() for m in re.finditer(r"[.!?]\s+", text)), default=0)  # the last sentence's start
        claim = next((c for c in extractor.extraction(text).claims if c.span[1] > last), None)
        got = claim.text if claim is not None else "(skipped)"
        if got == item["claim"] or (claim is None and item["claim"] == text[last:].strip()):
            verdict = "right"
        elif claim is not None and "decontextualised" not in claim.edits:
            verdict = "kept"
        else:
            verdict = "wrong"
        outcomes.append(Outcome(item["text"], item["claim"], got, item["kind"], verdict))
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET, help="the JSON-lines set (default: %(default)s)")
    parser.add_argument("--show", action="store_true", help="print each text whose claim is not right")
    args = parser.parse_args()
    outcomes = measure(args.set)
    counts = Counter(o.verdict for o in outcomes)
    n = len(outcomes)
    print(
        f"{n} texts: right {counts['right']} ({counts['right'] / n:.1%}), kept as written "
        f"{counts['kept']} ({counts['kept'] / n:.1%}), wrong {counts['wrong']} ({counts['wrong'] / n:.1%})"
    )
    if args.show:
        for o in outcomes:
            if o.verdict != "right":
                print(f"\n[{o.verdict}] ({o.kind}) {o.text!r}\n  expected: {o.expected}\n  got:      {o.got}")


if __name__ == "__main__":
    main()
