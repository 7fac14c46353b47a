"""The share of Check-COVID **test** claims that the offline default leaves UNVERIFIED against the shipped
SciFact corpus, which predates COVID-19: claims inside its domain, outside its coverage (issue 26's measure).

It uses only ``Claim``, ``CorpusSource`` and ``NLIVerifier`` with their defaults, so that the same script
measures an older checkout too (``PYTHONPATH=path/to/checkout python scripts/measure_uncovered.py``).

    python scripts/measure_uncovered.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from factcheck import Claim
from factcheck.sources.corpus import CorpusSource
from factcheck.verifiers.nli import NLIVerifier

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
FILES = ("covidCheck_test_composed.json", "covidCheck_test_extracted.json")


def main(args: argparse.Namespace) -> None:
    folder = args.data / "check_covid" / "Check-COVID" / "test"
    claims = list(
        dict.fromkeys(
            json.loads(line)["claim"].strip() for name in FILES for line in (folder / name).open() if line.strip()
        )
    )
    source, verifier = CorpusSource(), NLIVerifier()
    unverified = sum(verifier.assess(Claim("c", c), source.search(Claim("c", c))).factuality is None for c in claims)
    print(
        f"Check-COVID test claims against the SciFact corpus: {unverified}/{len(claims)} UNVERIFIED "
        f"({unverified / len(claims):.1%})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    main(parser.parse_args())
