"""Pipeline overhead with the claim extractor held equal: ms per check of a two-claim text.

A trivial extractor (split at ". ") defined here, the offline corpus agent judged
by ``lexical``, no cache: what is left is the pipeline itself (prepare, the calls
into sources and verifiers, scoring). Run it with another version of factcheck on
``PYTHONPATH`` to compare, e.g. the code of HEAD exported with ``git archive``:

    mkdir /tmp/fc-head && git archive HEAD | tar -x -C /tmp/fc-head
    (cd /tmp && PYTHONPATH=/tmp/fc-head python $OLDPWD/bench/pipeline_overhead.py HEAD)
    (cd /tmp && PYTHONPATH=$OLDPWD python $OLDPWD/bench/pipeline_overhead.py current)
"""

import asyncio
import gzip
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "factcheck" / "data" / "scifact-corpus.jsonl.gz"
CHECKS = 300


def main() -> None:
    os.environ["FACTCHECK_CACHE_DIR"] = tempfile.mkdtemp()
    os.environ["FACTCHECK_LOAD_PLUGINS"] = ""
    from factcheck.build import build_checker
    from factcheck.plugin import ClaimExtractor
    from factcheck.types import Claim

    @dataclass(frozen=True)
    class Dots(ClaimExtractor):
        """Claims are the parts between ". ": no model, the same in every version."""

        name: str = "dots"

        def extract(self, text: str) -> list[Claim]:
            claims, start = [], 0
            for part in text.split(". "):
                claims.append(Claim(id=f"c{len(claims) + 1}", text=part.strip(), span=(start, start + len(part))))
                start += len(part) + 2
            return claims

    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "factcheck.toml"
        config.write_text('profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n')
        checker = build_checker(config=str(config), extractor=Dots(), cache={"enabled": False})
        with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
            titles = [json.loads(line)["title"].strip().rstrip(".") for line in handle]
        titles = [t for t in titles if 4 <= len(t.split()) <= 25]
        texts = [f"{a}. {b}." for a, b in zip(titles[::2], titles[1::2], strict=False)]
        checker.check(texts[0])  # loads the index

        async def run() -> float:
            started = time.perf_counter()
            for text in texts[1 : CHECKS + 1]:
                await checker.acheck(text)
            return (time.perf_counter() - started) / CHECKS * 1000

        print(f"{sys.argv[1] if len(sys.argv) > 1 else 'this code'}: {asyncio.run(run()):.2f} ms per check")


if __name__ == "__main__":
    main()
