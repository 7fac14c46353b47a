"""Build the SciFact corpus shipped as the offline default (factcheck/data/scifact-corpus.jsonl.gz).

Reads ../shared/data/scifact/corpus.jsonl (5,183 abstracts) and writes one
``{"id", "title", "text"}`` record per abstract, sentences separated by line
breaks so passage splitting keeps SciFact's own sentence boundaries. The
output is byte-for-byte reproducible (gzip mtime 0).

    python scripts/build_scifact_corpus.py [SOURCE] [OUT]
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "data" / "scifact" / "corpus.jsonl"
OUT = ROOT / "factcheck" / "data" / "scifact-corpus.jsonl.gz"


def main(source: Path = SOURCE, out: Path = OUT) -> None:
    buffer = io.StringIO()
    count = 0
    with source.open(encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            record = {"id": f"scifact:{doc['doc_id']}", "title": doc["title"], "text": "\n".join(doc["abstract"])}
            buffer.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(buffer.getvalue().encode("utf-8"))
    print(f"wrote {count} abstracts to {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:3]))
