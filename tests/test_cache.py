"""The SQLite cache: round trips, version keys, size bound, several processes, and `cached`."""

import asyncio
import json
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from factcheck.cache import Cache, cache_key, cached
from factcheck.context import using
from factcheck.usage import UsageRecorder


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


def _opener(path: str, go: object) -> None:
    go.wait()  # type: ignore[attr-defined]
    Cache(path).set("key", "x", 1)


def test_a_new_file_opened_by_several_processes_at_once_needs_no_luck(tmp_path: Path) -> None:
    # Switching a new file to WAL while another process opens it fails at once ("database is locked", no busy
    # wait) in about one start in twelve of six processes; before the switch was retried, CI met it once.
    context = multiprocessing.get_context("fork")
    failed = []
    for trial in range(50):
        path = str(tmp_path / f"new-{trial}.sqlite")
        go = context.Event()
        workers = [context.Process(target=_opener, args=(path, go)) for _ in range(6)]
        for worker in workers:
            worker.start()
        go.set()
        for worker in workers:
            worker.join(60)
        failed += [trial for worker in workers if worker.exitcode != 0]
    assert failed == []


def test_cached_counts_hits_and_computes_once(tmp_path: Path) -> None:
    calls = []

    async def compute() -> dict[str, int]:
        calls.append(1)
        return {"value": 42}

    async def twice() -> list[dict[str, int]]:
        return [await cached("search", "1", {"q": "x"}, compute) for _ in range(2)]

    recorder = UsageRecorder()
    with using(cache=Cache(tmp_path / "c.sqlite"), usage=recorder):
        assert asyncio.run(twice()) == [{"value": 42}, {"value": 42}]
    assert len(calls) == 1 and recorder.freeze().cache_hits == {"search": 1}
    assert asyncio.run(twice()) == [{"value": 42}] * 2 and len(calls) == 3  # no cache outside a check


def test_cache_flags_and_settings(tmp_path: Path) -> None:
    from factcheck import ConfigError
    from factcheck.cache import open_cache

    assert open_cache({"enabled": False}) is None
    cache = open_cache({"path": str(tmp_path / "x.sqlite"), "max_mb": 1})
    assert cache is not None and cache.max_bytes == 1_000_000
    with pytest.raises(ConfigError, match="unknown setting size"):
        open_cache({"size": 3})


def _crashed_copy(tmp_path: Path) -> Path:
    """A cache as a process that was killed leaves it: its entries still in the write-ahead log."""
    live = tmp_path / "live"
    live.mkdir(parents=True)
    cache = Cache(live / "cache.sqlite")
    for i in range(5):
        cache.set(f"k{i}", "x", {"i": i})
    crashed = tmp_path / "crashed"
    shutil.copytree(live, crashed)  # while the connection is open: nothing checkpointed
    cache.close()
    assert (crashed / "cache.sqlite-wal").stat().st_size > 0
    return crashed / "cache.sqlite"


def test_a_damaged_write_ahead_log_is_said_once_with_a_copy_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _crashed_copy(tmp_path)
    assert Cache(path).get("k1") == {"i": 1}  # an intact log is read back
    path = _crashed_copy(tmp_path / "again")
    Path(f"{path}-wal").write_bytes(b"garbage " * 4096)
    cache = Cache(path)
    recorder = UsageRecorder()

    async def compute() -> dict[str, int]:
        return {"value": 1}

    with using(cache=cache, usage=recorder), caplog.at_level(logging.WARNING, logger="factcheck.cache"):
        assert cache.get("k1") is None  # lost with the log
        assert asyncio.run(cached("search", "1", {"q": "x"}, compute)) == {"value": 1}
        cache.set("fresh", "x", 2)
        assert cache.get("fresh") == 2  # the cache goes on
    warnings = [r.getMessage() for r in caplog.records if r.name == "factcheck.cache"]
    assert len(warnings) == 1 and "write-ahead log" in warnings[0] and "damaged" in warnings[0]
    assert [n for n in recorder.notes if "write-ahead log" in n] == [warnings[0]]  # in the check's notes, once
    [copy] = path.parent.glob("cache.sqlite.corrupt-*-wal")
    assert copy.read_bytes().startswith(b"garbage ")
    cache.close()
    assert Cache(path).get("fresh") == 2


# A read-only file or folder needs a user the permissions apply to: root ignores them, so as root the
# probe runs in a child process as "nobody" (skipped where that cannot be done).
_READ_ONLY_PROBE = """
import json, logging, sys
from factcheck.cache import Cache
records = []
handler = logging.Handler()
handler.emit = lambda record: records.append(record.getMessage())
logging.getLogger("factcheck.cache").addHandler(handler)
cache = Cache(sys.argv[1])
got = [cache.get("k0"), cache.get("k1")]
cache.set("new", "x", 1)
problem = getattr(cache, "problem", lambda: None)()  # (the code before this fix had none)
print(json.dumps({"got": got, "new": cache.get("new"), "problem": problem, "warnings": records}))
"""


def _probe(path: Path) -> dict[str, object]:
    import subprocess

    command = [sys.executable, "-c", _READ_ONLY_PROBE, str(path)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root with no setpriv to drop privileges: permissions would not apply")
        drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        # "nobody" must reach this checkout and its Python (not so in a private folder, as mktemp -d makes).
        reach = subprocess.run([*drop, sys.executable, "-c", "import factcheck.cache"], capture_output=True, env=env)
        if reach.returncode != 0:
            pytest.skip("running as root, and user nobody cannot reach this checkout to drop privileges")
        command = [*drop, *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_cache_is_said_once_and_read_when_it_can_be(what: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="factcheck-ro-"))  # not under tmp_path: "nobody" must reach it
    try:
        folder.chmod(0o777)
        path = folder / "cache.sqlite"
        cache = Cache(path)
        cache.set("k0", "x", {"i": 0})
        cache.close()
        (path if what == "file" else folder).chmod(0o444 if what == "file" else 0o555)
        found = _probe(path)
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)
    warnings = found["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1, warnings
    assert found["new"] is None  # nothing stored, and nothing raised
    if what == "file":
        assert found["got"] == [{"i": 0}, None]  # what it holds is still read
        assert "is read-only" in warnings[0] and str(found["problem"]).startswith("cache read-only")
    else:
        assert "cannot be used" in warnings[0] and str(found["problem"]).startswith("cache not used")


def test_a_finished_process_leaves_its_entries_in_the_file_not_the_log(tmp_path: Path) -> None:
    import subprocess

    path = tmp_path / "cache.sqlite"
    # A cache still referenced at exit (the CLI's is, through its checker): kept alive here by a frozen cycle.
    script = (
        "import gc, sys\nfrom factcheck.cache import Cache\ncycle = [Cache(sys.argv[1])]\ncycle.append(cycle)\n"
        "cycle[0].set('k', 'x', {'kept': True})\ndel cycle\ngc.freeze()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, env=env, timeout=60)
    assert not Path(f"{path}-wal").exists()  # folded in at exit: garbage in a stale log cannot cost them
    assert Cache(path).get("k") == {"kept": True}
