"""Build the collection an evaluation set's claims are checked against in retrieve mode: Check-COVID's own,
or (``--set fever``) the pooled gold sentences of a seeded slice of FEVER claims.

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

``--set fever`` draws 300 claims of ``fever-binary`` (SufficientFacts' FEVER claims, which the shipped model
never trained on) with a seeded shuffle, and pools their gold Wikipedia sentences by page into a corpus:
every claim's evidence is in it, among the other claims' (``build/fever-corpus.jsonl``, with the slice's
claims and gold labels in ``build/fever-claims.jsonl``). ``scripts/measure_deliberation.py --set fever``
checks them against it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "build" / "check-covid-corpus.jsonl"
CORPUS = Path("check_covid") / "Check-COVID" / "corpus.json"
FEVER_OUT = ROOT / "build" / "fever-corpus.jsonl"
FEVER_CLAIMS = ROOT / "build" / "fever-claims.jsonl"
FEVER_SLICE, FEVER_SEED = 300, 0


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


def fever_slice(data: Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The seeded slice of FEVER claims (``{"claim", "gold"}``) and the corpus of their gold sentences pooled
    by page (``{"id", "title", "text"}``, one sentence a line, in first-seen order)."""
    from factcheck.eval.datasets import load_dataset

    items = list(load_dataset("fever-binary", data).items)
    random.Random(FEVER_SEED).shuffle(items)
    claims, pages = [], {}
    for item in items[:FEVER_SLICE]:
        claims.append({"claim": item.claims[0].text, "gold": str(item.gold)})
        for evidence in item.claims[0].evidence:
            page = pages.setdefault(
                evidence.title, {"id": f"wiki:{evidence.title}", "title": evidence.title, "text": ""}
            )
            if evidence.text not in page["text"].split("\n"):
                page["text"] = f"{page['text']}\n{evidence.text}".strip()
    return claims, list(pages.values())


def write_jsonl(path: Path, rows: Sequence[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=None, help="the corpus JSONL to write (default: under build/)")
    parser.add_argument("--set", default="check-covid", choices=("check-covid", "fever"), dest="name")
    args = parser.parse_args(argv)
    if args.name == "fever":
        claims, pages = fever_slice(args.data)
        out = args.out or FEVER_OUT
        write_jsonl(out, pages)
        write_jsonl(FEVER_CLAIMS, claims)
        print(f"wrote {len(pages)} pages for {len(claims)} FEVER claims to {out} and the claims to {FEVER_CLAIMS}")
        return 0
    args.out = args.out or OUT
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
