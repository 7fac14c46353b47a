"""Benchmark of ``factcheck batch``: throughput against the ideal, and memory over 10,000 documents.

Throughput: a fake OpenAI-compatible model server (``factcheck.testing.llm``, in
its own process on 127.0.0.1) answers every call after a fixed latency L. Each
synthetic document is one sentence, hence one claim, judged by the ``llm``
verifier against a static offline source: exactly one LLM call per document.
With C documents in flight, no engine can beat C / L documents (and LLM calls)
per second; the table sets what the batch engine reaches beside that ideal,
for C = 1, 4, 16, 64. Everything else is the real path: the spaCy sentence
extractor, the pipeline, the OpenAI client over HTTP, and the output file
appended and fsynced once per document.

Memory: 10,000 synthetic documents read from a JSON Lines file and checked
with a cheap verifier (no model server), resident memory (RSS) sampled every
1,000 documents. The engine streams its input, so RSS should stay flat.

    python bench/batch.py                          # both, L = 0.5 s
    python bench/batch.py --mode throughput --latency 0.25 --concurrency 1,4,16,64
    python bench/batch.py --mode memory --memory-docs 10000
    python bench/batch.py --mode throughput --latency 1.0 --baseline HEAD   # this code and HEAD's, side by side
    python bench/batch.py --mode scifact                            # SciFact dev, this tree beside 4af1622
    python bench/batch.py --mode scifact --limit 12 --concurrency 1,8   # CI's short form

``--baseline REF`` measures each level twice, in two fresh processes one after
the other: once with this working tree and once with the ``factcheck`` package
of git commit REF (exported with ``git archive`` into a temporary folder; nothing
is checked out). On a machine shared with other work the absolute figures move;
the two columns, measured under the same load, can be compared. The commit's code
runs with an overlay venv when this one lacks some of its requirements
(``bench/baseline.py``).

SciFact (``--mode scifact``): the real command, ``python -m factcheck batch
claims.jsonl --out OUT --concurrency C --profile offline --quiet``, on the SciFact
dev claims (``--data``, else ``$FACTCHECK_SHARED_DATA``, else ../shared/data beside
the checkout; one document per claim; all 300 or the first ``--limit``), with this
tree and with commit ``--baseline`` (default 4af1622), one after the other at each
concurrency (default 1,8). No API key and no FACTCHECK_ setting of the caller's
reach it; each run has a new, empty judgment cache (``FACTCHECK_CACHE``), while the
corpus index is kept per code in ~/.cache/factcheck/bench (built once, untimed).
Reported: wall seconds, claims/s, CPU ms a claim (user + sys of the process), the
start-up (time and CPU to the first result line at the lowest concurrency: imports,
models, the first claim), the same figures less it, the ratios today / baseline,
and on how many claims the two codes' labels differ (counted, not asserted).
Exit status 1 when an output lacks a claim's result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from baseline import cache_root, export, python_for

from factcheck import get_verifiers
from factcheck.agent import Agent
from factcheck.batch.engine import LocalEngine, Tally, run_batch
from factcheck.batch.inputs import Document, open_input
from factcheck.build import build_checker
from factcheck.paths import shared_data_dir
from factcheck.pipeline import Checker
from factcheck.resume import AppendLog
from factcheck.testing import ScriptedVerifier, StaticSource

TOPICS = ("statins", "aspirin", "smoking", "vitamin D", "exercise", "coffee", "sleep", "salt")


def sentence(number: int) -> str:
    """A distinct one-claim document: no two documents share a claim, so no cache can help."""
    return f"Study {number} found that {TOPICS[number % len(TOPICS)]} changed the outcome of {number % 97} patients."


def rss_mb() -> tuple[float, float]:
    """``(current, peak)`` resident memory of this process in MB (Linux /proc)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


@dataclass(frozen=True)
class Row:
    """One concurrency level of the throughput table."""

    concurrency: int
    documents: int
    seconds: float
    docs_per_s: float
    llm_calls_per_s: float
    ideal: float
    http_alone: float  # requests/s of a bare httpx client at the same concurrency: the harness's own ceiling

    @property
    def share(self) -> float:
        return self.docs_per_s / self.ideal


async def http_alone(base_url: str, concurrency: int, rounds: int) -> float:
    """Requests per second that one bare ``httpx.AsyncClient`` gets from the fake server, ``concurrency`` at a time."""
    import httpx

    body = {"model": "fake-model", "messages": [{"role": "user", "content": "hello"}]}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def slot() -> None:
            for _ in range(rounds):
                (await client.post(f"{base_url}/chat/completions", json=body)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(slot() for _ in range(concurrency)))
        return concurrency * rounds / (time.perf_counter() - start)


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    """The fake model server in its own process, so it never competes with the batch for the GIL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "factcheck.testing.llm", "--latency", str(latency_s)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def llm_checker(base_url: str, concurrency: int, cache: bool) -> Checker:
    """One agent: a static offline source judged by the ``llm`` verifier on the fake server."""
    verifier = get_verifiers()["llm"]
    return build_checker(
        profile="offline",
        extractor="sentence",
        agents=[Agent("static", StaticSource(), verifier)],
        llm={"base_url": base_url, "model": "fake-model", "max_concurrency": max(8, concurrency)},
        cache={"enabled": cache},
        max_concurrency=8,
    )


async def timed_batch(checker: Checker, docs: list[Document], out: Path, concurrency: int) -> tuple[Tally, float]:
    with AppendLog(out) as log:
        start = time.perf_counter()
        result = await run_batch(iter(docs), log, LocalEngine(checker), concurrency=concurrency)
        return result.tally, time.perf_counter() - start


def throughput(latency_s: float, levels: Sequence[int], rounds: int, cache: bool, folder: Path) -> list[Row]:
    process, url = start_server(latency_s)
    rows = []
    try:
        for concurrency in levels:
            checker = llm_checker(url, concurrency, cache)
            checker.check(sentence(10**6))  # warm up: spaCy and the first connection load outside the timing
            count = concurrency * rounds
            docs = [Document(f"c{concurrency}-{i}", sentence(concurrency * 10**4 + i)) for i in range(count)]
            tally, seconds = asyncio.run(timed_batch(checker, docs, folder / f"c{concurrency}.jsonl", concurrency))
            assert tally.documents == count and tally.failed == 0, "every document must be checked"
            bare = asyncio.run(http_alone(url, concurrency, rounds))
            ideal = concurrency / latency_s
            rows.append(Row(concurrency, count, seconds, count / seconds, tally.llm_calls / seconds, ideal, bare))
            print(format_row(rows[-1]), file=sys.stderr)
    finally:
        process.terminate()
        process.wait()
    return rows


def memory(count: int, concurrency: int, folder: Path) -> list[tuple[int, float]]:
    """RSS (MB) after every tenth of ``count`` documents, read from a JSON Lines file like the CLI does."""
    path = folder / "memory.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps({"id": f"m{i}", "text": sentence(i), "source": "bench"}) + "\n")
    checker = build_checker(
        extractor="sentence", agents=[Agent("cheap", StaticSource(), ScriptedVerifier())], cache={"enabled": False}
    )
    checker.check(sentence(10**6))
    samples = [(0, rss_mb()[0])]
    every = max(1, count // 10)

    def sample(record: dict[str, Any], tally: Tally) -> None:
        if tally.documents % every == 0:
            samples.append((tally.documents, rss_mb()[0]))
            print(f"memory: {tally.documents} documents, RSS {samples[-1][1]:.1f} MB", file=sys.stderr)

    source = open_input(path)
    source.scan()

    async def go() -> None:
        with AppendLog(folder / "memory-out.jsonl") as log:
            await run_batch(source.documents(), log, LocalEngine(checker), concurrency=concurrency, on_record=sample)

    asyncio.run(go())
    return samples


def format_row(row: Row) -> str:
    return (
        f"| {row.concurrency} | {row.documents} | {row.seconds:.2f} | {row.docs_per_s:.1f} | "
        f"{row.llm_calls_per_s:.1f} | {row.ideal:.1f} | {row.share:.0%} | {row.http_alone / row.ideal:.0%} |"
    )


ROOT = Path(__file__).resolve().parent.parent


def side_by_side(ref: str, latency_s: float, levels: Sequence[int], rounds: int, folder: Path) -> list[dict[str, Any]]:
    """Each level measured with this code and with commit ``ref``, alternately, each in a fresh process."""
    code = export(ref, folder / "baseline")
    python = python_for(code)
    results = []
    for concurrency in levels:
        measured: dict[str, Any] = {"concurrency": concurrency}
        for name, root in (("current", ROOT), (ref, code)):
            env = {**os.environ, "PYTHONPATH": str(root)}
            interpreter = sys.executable if root == ROOT else python
            args = [interpreter, str(Path(__file__).resolve()), "--mode", "throughput", "--row-json"]
            args += ["--latency", str(latency_s), "--concurrency", str(concurrency), "--rounds", str(rounds)]
            done = subprocess.run(args, env=env, cwd=root, check=True, capture_output=True, text=True)
            measured[name] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"C = {concurrency}, {name}: {measured[name]['share']:.0%} of C/L", file=sys.stderr)
        results.append(measured)
    print(f"\nThroughput, L = {latency_s:g} s, this tree beside {ref} (each level: the two runs back to back):\n")
    print(f"| C | ideal C/L | docs/s | reached | {ref} docs/s | {ref} reached | httpx alone |")
    print("|---|---|---|---|---|---|---|")
    for m in results:
        now, then = m["current"], m[ref]
        print(
            f"| {m['concurrency']} | {now['ideal']:.1f} | {now['docs_per_s']:.1f} | {now['share']:.0%} "
            f"| {then['docs_per_s']:.1f} | {then['share']:.0%} | {now['http_alone'] / now['ideal']:.0%} |"
        )
    return results


DEFAULT_BASELINE = "4af1622"  # the main before issue 43's turn; --baseline names another


def scifact_input(data: Path, limit: int | None, path: Path) -> int:
    """The SciFact dev claims (the first ``limit``) written to ``path`` as JSON Lines, one document per
    claim; how many were written."""
    source = data / "scifact" / "claims_dev.jsonl"
    if not source.is_file():
        raise SystemExit(f"no SciFact dev claims at {source} (--data or FACTCHECK_SHARED_DATA names the data folder)")
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[:limit] if limit else rows
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({"id": f"scifact-{row['id']}", "text": row["claim"]}) + "\n")
    return len(rows)


@dataclass(frozen=True)
class CliRun:
    """One ``factcheck batch`` process: its documents, wall and CPU time (user + sys, its children's
    included), the same when its first result line was written (start-up and the first claims), whether it
    built the corpus index, and each document's label."""

    code: str
    concurrency: int
    claims: int
    seconds: float
    cpu_s: float
    first_s: float
    first_cpu_s: float
    built_index: bool
    labels: dict[str, str]
    failed: int

    @property
    def claims_per_s(self) -> float:
        return self.claims / self.seconds

    @property
    def cpu_ms_per_claim(self) -> float:
        return 1000 * self.cpu_s / self.claims


def cli_env(code: Path, cache_folder: Path, cache_file: Path) -> dict[str, str]:
    """The environment of a bench's ``factcheck batch``: the code in ``code`` first on the path, no API key
    and no FACTCHECK_ setting of the caller's (so the offline defaults run), the corpus index kept in
    ``cache_folder`` and the judgment cache in ``cache_file`` (a new file each run: nothing judged before
    is found)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTCHECK_") and not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env |= {"FACTCHECK_CACHE_DIR": str(cache_folder), "FACTCHECK_CACHE": str(cache_file)}
    return env


def index_folder(name: str) -> Path:
    """The cache folder of code ``name``'s corpus index, kept between benches (``~/.cache/factcheck/bench``):
    building the index is a first use's cost, not a claim's. Judgments never go there."""
    folder = cache_root() / f"cache-{name.replace('/', '-')}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def listing(folder: Path) -> set[str]:
    """Every file under ``folder``, by its path relative to it."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def cpu_of(pid: int) -> float:
    """CPU seconds (user + sys, and its waited-for children's) process ``pid`` has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def run_cli(name: str, python: str, code: Path, source: Path, concurrency: int, folder: Path) -> CliRun:
    """``python -m factcheck batch SOURCE --out OUT --concurrency C --profile offline --quiet`` with the code
    in ``code``, a new judgment cache, in a folder of its own (no factcheck.toml is read). The output file
    is watched every 5 ms for its first line."""
    work = Path(tempfile.mkdtemp(prefix=f"c{concurrency}-", dir=folder))
    out = work / "out.jsonl"
    args = [python, "-m", "factcheck", "batch", str(source), "--out", str(out), "--concurrency", str(concurrency)]
    args += ["--profile", "offline", "--quiet"]
    index = index_folder(name)
    seen = listing(index)
    env = cli_env(code, index, work / "cache.sqlite")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    first_s = first_cpu = float("nan")
    with (work / "stderr.txt").open("wb") as errors:
        process = subprocess.Popen(args, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            while process.poll() is None:
                if first_s != first_s and out.is_file() and out.stat().st_size:  # nan: not seen yet
                    first_s, first_cpu = time.perf_counter() - start, cpu_of(process.pid)
                time.sleep(0.005)
        finally:
            if process.poll() is None:  # the bench was stopped (Ctrl-C, CI's timeout): so is the batch
                process.kill()
                process.wait()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        tail = ((work / "stderr.txt").read_text(errors="replace").strip().splitlines() or [""])[-1]
        raise SystemExit(f"factcheck batch of {name} exited with {process.returncode}: {tail}")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    return CliRun(
        code=name,
        concurrency=concurrency,
        claims=len(records),
        seconds=seconds,
        cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        first_s=first_s,
        first_cpu_s=first_cpu,
        built_index=listing(index) != seen,
        labels={str(r["id"]): str(r.get("label")) for r in records},
        failed=sum(1 for r in records if r.get("error")),
    )


def scifact(ref: str, data: Path, limit: int | None, levels: Sequence[int], folder: Path) -> dict[str, Any]:
    """SciFact dev claims through the real CLI, this tree and commit ``ref`` one after the other at each
    concurrency. A code whose corpus index is not cached yet first checks one claim to build it."""
    source = folder / "claims.jsonl"
    count = scifact_input(data, limit, source)
    baseline_code = export(ref, folder / "baseline")
    codes = {"today": (sys.executable, ROOT), ref: (python_for(baseline_code), baseline_code)}
    for name, (python, code) in codes.items():
        if not listing(index_folder(name)):
            print(f"{name}: building its corpus index in {index_folder(name)} (one claim, not timed)", file=sys.stderr)
            first = folder / "one-claim.jsonl"
            first.write_text(source.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
            run_cli(name, python, code, first, 1, folder)
    runs: list[CliRun] = []
    for concurrency in levels:
        for name, (python, code) in codes.items():
            runs.append(run_cli(name, python, code, source, concurrency, folder))
            r = runs[-1]
            print(f"C = {concurrency}, {name}: {r.claims} claims in {r.seconds:.1f} s", file=sys.stderr)
    problems = [
        f"{r.code} at C = {r.concurrency}: {r.claims} results for {count} claims, {r.failed} failed"
        for r in runs
        if r.claims != count or r.failed
    ]
    notes = [f"{r.code} at C = {r.concurrency} built its corpus index (timed with it)" for r in runs if r.built_index]
    return {"ref": ref, "claims": count, "runs": runs, "problems": problems, "notes": notes}


def scifact_table(measured: dict[str, Any]) -> str:
    """The runs side by side, one row a concurrency, with the ratios today / baseline; then the same less
    each code's start-up (its lowest concurrency's time to the first result); then how many labels differ."""
    ref: str = measured["ref"]
    runs: list[CliRun] = measured["runs"]
    by = {(r.code, r.concurrency): r for r in runs}
    levels = list(dict.fromkeys(r.concurrency for r in runs))
    start = {name: by[name, levels[0]] for name in ("today", ref)}  # the first result of the lowest C
    lines = [
        f"| C | claims | today: s | today: claims/s | today: CPU ms/claim | {ref}: s | {ref}: claims/s "
        f"| {ref}: CPU ms/claim | claims/s ratio | CPU/claim ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    now, then = start["today"], start[ref]
    lines.append(
        f"| start-up: first result at C = {levels[0]} | | {now.first_s:.2f} | | {1000 * now.first_cpu_s:.0f} "
        f"| {then.first_s:.2f} | | {1000 * then.first_cpu_s:.0f} | "
        f"| {now.first_cpu_s / then.first_cpu_s:.2f} |"
    )
    for c in levels:
        now, then = by["today", c], by[ref, c]
        lines.append(
            f"| {c} | {now.claims} | {now.seconds:.2f} | {now.claims_per_s:.2f} | {now.cpu_ms_per_claim:.0f} "
            f"| {then.seconds:.2f} | {then.claims_per_s:.2f} | {then.cpu_ms_per_claim:.0f} "
            f"| {now.claims_per_s / then.claims_per_s:.2f} | {now.cpu_ms_per_claim / then.cpu_ms_per_claim:.2f} |"
        )
    lines += [
        "",
        f"Less each code's start-up (the time and CPU to its first result at C = {levels[0]}), the other claims:",
        "",
        f"| C | claims | today: claims/s | today: CPU ms/claim | {ref}: claims/s | {ref}: CPU ms/claim "
        "| claims/s ratio | CPU/claim ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in levels:
        rates = []
        for name in ("today", ref):
            run, first = by[name, c], start[name]
            rest = max(run.claims - 1, 1)
            seconds = max(run.seconds - first.first_s, 1e-9)
            rates.append((rest / seconds, 1000 * (run.cpu_s - first.first_cpu_s) / rest))
        (now_rate, now_cpu), (then_rate, then_cpu) = rates
        lines.append(
            f"| {c} | {by['today', c].claims - 1} | {now_rate:.2f} | {now_cpu:.0f} | {then_rate:.2f} | {then_cpu:.0f} "
            f"| {now_rate / then_rate:.2f} | {now_cpu / then_cpu:.2f} |"
        )
    lines.append("")
    for c in levels:
        now, then = by["today", c], by[ref, c]
        differ = sum(1 for key, label in now.labels.items() if then.labels.get(key) != label)
        lines.append(f"C = {c}: the two codes' labels differ on {differ} of {now.claims} claims")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=["all", "throughput", "memory", "scifact"], default="all")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake model takes per call (L)")
    parser.add_argument("--concurrency", help="comma list of documents in flight (C); 1,4,16,64, scifact: 1,8")
    parser.add_argument("--rounds", type=int, default=8, help="documents per slot: C x rounds documents per level")
    parser.add_argument("--cache", action="store_true", help="keep the SQLite cache on (off by default)")
    parser.add_argument("--memory-docs", type=int, default=10_000)
    parser.add_argument("--memory-concurrency", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path("bench/out"), help="a .json file, or a folder for batch.json")
    parser.add_argument(
        "--baseline",
        help=f"also measure git commit REF (e.g. HEAD), level by level, side by side (scifact: {DEFAULT_BASELINE})",
    )
    parser.add_argument("--data", type=Path, default=shared_data_dir(), help="scifact: the shared data folder")
    parser.add_argument("--limit", type=int, help="scifact: only the first N dev claims (default: all 300)")
    parser.add_argument("--row-json", action="store_true", help=argparse.SUPPRESS)  # one level, as JSON (internal)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout's TERM still stops the child it runs
    results: dict[str, Any] = {"command": "python " + shlex.join(sys.argv)}
    default_levels = "1,8" if args.mode == "scifact" else "1,4,16,64"
    levels = [int(c) for c in (args.concurrency or default_levels).split(",") if c.strip()]
    if args.row_json:
        with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as tmp:
            (row,) = throughput(args.latency, levels[:1], args.rounds, args.cache, Path(tmp))
        print(json.dumps({**row.__dict__, "share": row.share}))
        return 0
    with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as tmp:
        if args.mode == "scifact":
            ref = args.baseline or DEFAULT_BASELINE
            measured = scifact(ref, args.data, args.limit, levels, Path(tmp))
            print(
                f"\nSciFact dev claims through factcheck batch (offline profile, empty cache), this tree and {ref}:\n"
            )
            print(scifact_table(measured))
            for note in measured["notes"]:
                print(f"note: {note}")
            for problem in measured["problems"]:
                print(f"incomplete output: {problem}")
            results["scifact"] = {**measured, "runs": [asdict(r) for r in measured["runs"]]}
        elif args.baseline and args.mode == "throughput":
            results["side_by_side"] = side_by_side(args.baseline, args.latency, levels, args.rounds, Path(tmp))
        elif args.mode in ("all", "throughput"):
            rows = throughput(args.latency, levels, args.rounds, args.cache, Path(tmp))
            print(f"\nThroughput, fake model latency L = {args.latency:g} s, one LLM call per document:\n")
            print("| C | documents | seconds | docs/s | LLM calls/s | ideal C/L | reached | httpx alone |")
            print("|---|---|---|---|---|---|---|---|")
            for row in rows:
                print(format_row(row))
            results["throughput"] = [{**row.__dict__, "share": row.share} for row in rows]
        if args.mode in ("all", "memory"):
            samples = memory(args.memory_docs, args.memory_concurrency, Path(tmp))
            print(f"\nMemory, {args.memory_docs} documents, concurrency {args.memory_concurrency}:\n")
            print("| documents | RSS MB |")
            print("|---|---|")
            for done, mb in samples:
                print(f"| {done} | {mb:.1f} |")
            growth = samples[-1][1] - samples[1][1]
            print(f"\npeak RSS {rss_mb()[1]:.1f} MB; growth from the first tenth to the end {growth:+.1f} MB")
            results["memory"] = {"samples": samples, "peak_mb": rss_mb()[1]}
    out = args.out if args.out.suffix == ".json" else args.out / "batch.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return 1 if results.get("scifact", {}).get("problems") else 0


if __name__ == "__main__":
    raise SystemExit(main())
