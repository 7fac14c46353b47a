"""The SQLite cache: round trips, version keys, size bound, several processes, and `cached`."""

import asyncio
import multiprocessing
from pathlib import Path

import pytest

from factcheck.cache import Cache, cache_key, cached, current_cache
from factcheck.usage import UsageRecorder, current_usage


def test_values_round_trip_and_keys_depend_on_version(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite")
    key = cache_key("llm", "v1", {"q": "x"})
    cache.set(key, "llm", {"text": "answer", "n": [1, 2]})
    assert cache.get(key) == {"text": "answer", "n": [1, 2]}
    assert cache.get(cache_key("llm", "v2", {"q": "x"})) is None
    assert cache_key("llm", "v1", {"a": 1, "b": 2}) == cache_key("llm", "v1", {"b": 2, "a": 1})


def test_least_recently_used_entries_are_evicted_beyond_the_bound(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite", max_bytes=3000)
    for i in range(5):
        cache.set(f"k{i}", "x", "v" * 700)
        cache.get("k0")  # keep k0 fresh
    assert cache.stats()["bytes"] <= 3000
    assert cache.get("k0") is not None and cache.get("k1") is None


def _writer(path: str, start: int) -> None:
    cache = Cache(path)
    for i in range(start, start + 200):
        cache.set(f"key-{i}", "x", {"i": i})


def test_several_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(path, n * 1000)) for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert Cache(path).stats()["entries"] == 600


def test_cached_counts_hits_and_computes_once(tmp_path: Path) -> None:
    calls = []

    async def compute() -> dict[str, int]:
        calls.append(1)
        return {"value": 42}

    async def twice() -> list[dict[str, int]]:
        return [await cached("search", "1", {"q": "x"}, compute) for _ in range(2)]

    recorder = UsageRecorder()
    tokens = current_cache.set(Cache(tmp_path / "c.sqlite")), current_usage.set(recorder)
    try:
        assert asyncio.run(twice()) == [{"value": 42}, {"value": 42}]
    finally:
        current_cache.reset(tokens[0])
        current_usage.reset(tokens[1])
    assert len(calls) == 1 and recorder.freeze().cache_hits == {"search": 1}
    assert asyncio.run(twice()) == [{"value": 42}] * 2 and len(calls) == 3  # no cache outside a check


def test_cache_flags_and_settings(tmp_path: Path) -> None:
    from factcheck import ConfigError
    from factcheck.pipeline import open_cache

    assert open_cache({"enabled": False}) is None
    cache = open_cache({"path": str(tmp_path / "x.sqlite"), "max_mb": 1})
    assert cache is not None and cache.max_bytes == 1_000_000
    with pytest.raises(ConfigError, match="unknown setting size"):
        open_cache({"size": 3})
