"""The training script's batching (scripts/train_offline_nli.py): what a CPU run changes must not change
which pairs an epoch trains on."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.scripts import SCRIPTS, script


def pairs(n: int) -> list:
    module = script("train_offline_nli")
    rng = random.Random(3)
    return [module.Pair(f"claim {i}", "word " * rng.randint(1, 60), i % 3, "snli", f"g{i}") for i in range(n)]


def test_length_buckets_keep_every_pair_once_and_cut_padding() -> None:
    module = script("train_offline_nli")
    items = pairs(1000)
    plain = module.batches(items, 32, random.Random(13))
    bucketed = module.batches(items, 32, random.Random(13), buckets=8)
    assert sorted(p.group for b in bucketed for p in b) == sorted(p.group for p in items)
    assert max(map(len, bucketed)) == 32 and len(bucketed) == len(plain)

    def padded(batches: list) -> int:  # what a batch costs: its longest pair, times its size
        return sum(len(b) * max(len(p.evidence) for p in b) for b in batches)

    assert padded(bucketed) < 0.6 * padded(plain)
    # Seeded: the same order again; and the batch order is shuffled, not sorted by length.
    assert [p.group for b in module.batches(items, 32, random.Random(13), buckets=8) for p in b] == [
        p.group for b in bucketed for p in b
    ]
    longest = [max(len(p.evidence) for p in b) for b in bucketed]
    assert longest != sorted(longest)


def test_compare_nli_fails_a_run_that_loses_more_than_two_points_on_a_hidden_set(tmp_path: Path) -> None:
    import subprocess
    import sys

    def config(scifact: float) -> dict[str, object]:
        overall = {"accuracy": 0.76, "macro_f1": 0.76, "support_vs_refute_accuracy": 0.81}
        overall["f1"] = {"SUPPORTS": 0.77, "REFUTES": 0.72, "NOT ENOUGH INFO": 0.79}  # type: ignore[assignment]
        by_source = {"scifact": {"pairs": 154, "accuracy": scifact, "macro_f1": 0.55}}
        return {"heldout": {"int8": overall}, "heldout_by_source": by_source}

    shipped, within, past = (tmp_path / f"{name}.json" for name in ("shipped", "within", "past"))
    for path, scifact in ((shipped, 0.448), (within, 0.430), (past, 0.422)):
        path.write_text(json.dumps(config(scifact)), encoding="utf-8")
    command = [sys.executable, str(SCRIPTS / "compare_nli.py")]
    ok = subprocess.run([*command, str(within), "--against", str(shipped)], capture_output=True, text=True)
    assert ok.returncode == 0 and "0 figure(s) fall" in ok.stdout
    bad = subprocess.run([*command, str(past), "--against", str(shipped)], capture_output=True, text=True)
    assert bad.returncode == 1 and "scifact (154 pairs), int8: accuracy" in bad.stdout
    assert "0.4480 -> 0.4220 (-0.0260)  falls past the bar" in bad.stdout
