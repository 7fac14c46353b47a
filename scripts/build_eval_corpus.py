"""Build the collection an evaluation set's claims are checked against in retrieve mode: Check-COVID's own.

Check-COVID (``../shared/data/check_covid``, MIT; see its SOURCE.md) ships ``Check-COVID/corpus.json``: the
347 CORD-19 abstracts its claims' evidence sentences come from (JSON lines of ``cord_id``, ``title`` and
``abstract``, a list of sentences). This writes them as a corpus the ``corpus`` source reads
(:func:`factcheck.sources.corpus.load_passages`): one ``{"id", "title", "text"}`` record per abstract, id
``cord:<cord_id>``, the sentences a line each so passage splitting keeps the dataset's sentence boundaries.
The output goes under ``build/`` (ignored by git), never into the package; it is byte-for-byte reproducible.

    python scripts/build_eval_corpus.py [--data ../shared/data] [--out build/check-covid-corpus.jsonl]

Then check Check-COVID's claims against it (every ``corpus`` agent searches it), e.g. with a setup of
``bench/deliberation.toml``:

    python bench/deliberation.py --write-configs build/deliberation
    factcheck eval check-covid --dataset-option split=test --corpus build/check-covid-corpus.jsonl \\
        --config build/deliberation/duo.toml --deliberation lase --no-cache --out runs/check-covid-test-duo-lase

The first check embeds the 347 abstracts once (saved under the cache folder beside the BM25 index).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "build" / "check-covid-corpus.jsonl"
CORPUS = Path("check_covid") / "Check-COVID" / "corpus.json"


def records(source: Path) -> list[dict[str, str]]:
    """The corpus records of Check-COVID's ``corpus.json``, in file order (a repeated ``cord_id`` once)."""
    out: dict[str, dict[str, str]] = {}
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            doc = json.loads(line)
            sentences = doc.get("abstract")
            if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
                raise SystemExit(f"{source}:{number}: 'abstract' must be a list of sentences")
            key = f"cord:{doc['cord_id']}"
            text = "\n".join(s.strip() for s in sentences if s.strip())
            if text:
                out.setdefault(key, {"id": key, "title": str(doc.get("title") or "").strip(), "text": text})
    return list(out.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=OUT, help="the corpus JSONL to write (default: %(default)s)")
    args = parser.parse_args(argv)
    source = args.data / CORPUS
    if not source.is_file():
        print(f"not found: {source} (is --data the shared data folder?)", file=sys.stderr)
        return 1
    docs = records(source)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="\n") as handle:
        for doc in docs:
            handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"wrote {len(docs)} abstracts to {args.out} ({args.out.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
