"""Compare a retrained model's hidden-pair figures with the shipped model's, set by set.

Issue 39's bar for a retrained ``nli`` model: none of the hidden-pair figures (``nli.json``'s ``heldout``, int8
and fp32, and ``heldout_by_source``: accuracy and macro-F1 per set) may fall by more than ``--max-fall`` (2
points). Prints every figure side by side, marks each fall past the bar, and exits 1 when there is one.

    python scripts/compare_nli.py build/nli-continued/nli.json [--against factcheck/data/nli/nli.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SHIPPED = Path(__file__).resolve().parent.parent / "factcheck" / "data" / "nli" / "nli.json"
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


def figures(config: dict[str, Any]) -> dict[str, float]:
    """Every hidden-pair figure of a model's ``nli.json``, by name."""
    found: dict[str, float] = {}
    for kind, metrics in config["heldout"].items():
        if kind not in ("fp32", "int8"):
            continue
        for key in ("accuracy", "macro_f1", "support_vs_refute_accuracy"):
            found[f"all, {kind}: {key}"] = metrics[key]
        for label in LABELS:
            found[f"all, {kind}: F1 {label}"] = metrics["f1"][label]
    for source, metrics in sorted(config.get("heldout_by_source", {}).items()):
        for key in ("accuracy", "macro_f1"):
            found[f"{source} ({metrics['pairs']} pairs), int8: {key}"] = metrics[key]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="the retrained model's nli.json")
    parser.add_argument("--against", type=Path, default=SHIPPED, help="the model to compare with (the shipped one)")
    parser.add_argument("--max-fall", type=float, default=0.02)
    args = parser.parse_args()
    before = figures(json.loads(args.against.read_text(encoding="utf-8")))
    after = figures(json.loads(args.run.read_text(encoding="utf-8")))
    falls = 0
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            print(f"{name:60s} {old:.4f} -> (not measured)")
            continue
        fell = new - old < -args.max_fall
        falls += fell
        print(f"{name:60s} {old:.4f} -> {new:.4f} ({new - old:+.4f}){'  falls past the bar' if fell else ''}")
    print(f"{falls} figure(s) fall by more than {args.max_fall:g}")
    return 1 if falls else 0


if __name__ == "__main__":
    sys.exit(main())
