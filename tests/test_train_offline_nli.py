"""The training script's batching (scripts/train_offline_nli.py): what a CPU run changes must not change
which pairs an epoch trains on."""

from __future__ import annotations

import random

from tests.scripts import script


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
