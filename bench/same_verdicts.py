"""Whether two runs of ``bench/harm.py --out`` gave the same verdicts, claim by claim.

A speed change must leave every verdict as it was, or say why one moved. Run the harm report on two trees into
two folders (for an earlier commit, its code exported with ``git archive``), then compare them here: per set,
how many claims kept their label, score, strength and each agent's judgment (factuality, confidence and
rationale), and each difference in full.

    git archive 0c5605c | tar -x -C /tmp/before
    (cd /tmp/before && PYTHONPATH=$PWD python bench/harm.py --sets probe-held-out,scifact-dev --out /tmp/harm-before)
    python bench/harm.py --sets probe-held-out,scifact-dev --out /tmp/harm-now
    python bench/same_verdicts.py /tmp/harm-before /tmp/harm-now
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def verdicts(path: Path) -> dict[str, dict[str, Any]]:
    """Each record's verdict, by id: what a reader sees decided (not its timings or usage)."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        claims = [
            {
                "label": claim.get("label"),
                "score": claim.get("score"),
                "strength": claim.get("strength"),
                "judgments": [
                    (j.get("agent"), j.get("factuality"), j.get("confidence"), j.get("rationale"))
                    for j in claim.get("judgments", ())
                ],
            }
            for claim in record.get("claims", ())
        ]
        found[record["id"]] = {"text": record.get("text"), "label": record.get("label"), "claims": claims}
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="The first run's --out folder.")
    parser.add_argument("after", type=Path, help="The second run's --out folder.")
    args = parser.parse_args()
    changed = 0
    for first in sorted(args.before.glob("*.jsonl")):
        second = args.after / first.name
        if not second.is_file():
            print(f"{first.stem}: not in {args.after}")
            continue
        old, new = verdicts(first), verdicts(second)
        same = [key for key in old if key in new and old[key] == new[key]]
        labels = sum(1 for key in old if key in new and old[key]["label"] != new[key]["label"])
        print(f"{first.stem}: {len(same)} of {len(old)} claims the same; labels changed: {labels}")
        for key in old:
            if key in new and old[key] != new[key]:
                changed += 1
                print(f"  {key} {old[key]['text']!r}")
                for a, b in zip(old[key]["claims"], new[key]["claims"], strict=False):
                    for field in ("label", "score", "strength"):
                        if a[field] != b[field]:
                            print(f"    {field}: {a[field]} -> {b[field]}")
                    for ja, jb in zip(a["judgments"], b["judgments"], strict=False):
                        if ja != jb:
                            print(f"    {ja[0]}: {ja[1]} {ja[2]} {ja[3]!r}\n      -> {jb[1]} {jb[2]} {jb[3]!r}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
