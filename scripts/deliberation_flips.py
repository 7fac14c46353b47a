"""What deliberation changed, from the records ``scripts/measure_deliberation.py --records`` wrote: for each
policy against ``off`` on the same claims, how many labels moved from right to wrong and from wrong to right,
and how often a revision or ruling disagreed with the first round (applied, or recorded only).

    python scripts/deliberation_flips.py build/delib/records/scifact-dev-duo-off.jsonl \\
        build/delib/records/scifact-dev-duo-lase.jsonl ...
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def flips(off: list[dict[str, Any]], policy: list[dict[str, Any]]) -> Counter[str]:
    """Label changes against ``off`` (``right>wrong``, ``wrong>right``, ``wrong>wrong``) and what the rulings did."""
    counts: Counter[str] = Counter()
    for before, after in zip(off, policy, strict=True):
        gold, was, now = before["gold"], before["claims"][0]["label"], after["claims"][0]["label"]
        if was != now:
            counts[f"{'right' if was == gold else 'wrong'}>{'right' if now == gold else 'wrong'}"] += 1
        record = after["claims"][0].get("deliberation") or {}
        first = {j["agent"]: j for j in record.get("replaced", [])}
        for j in after["claims"][0]["judgments"]:
            first.setdefault(j["agent"], j)
        for step in record.get("steps", []):
            ruling = step.get("judgment")
            if step["action"] not in ("revise", "arbitrate") or not ruling or ruling.get("factuality") is None:
                continue
            counts["rulings"] += 1
            standing = [j["factuality"] for j in first.values() if j.get("factuality") is not None]
            if standing and any(f != ruling["factuality"] for f in standing):
                counts[
                    "rulings against a first-round vote" + ("" if step.get("applied", True) else " (not applied)")
                ] += 1
    return counts


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    off = load(Path(argv[0]))
    for name in argv[1:]:
        print(f"{Path(name).stem}: {dict(sorted(flips(off, load(Path(name))).items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
