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

``--baseline REF`` measures each level twice, in two fresh processes one after
the other: once with this working tree and once with the ``factcheck`` package
of git commit REF (exported with ``git archive`` into a temporary folder; nothing
is checked out). On a machine shared with other work the absolute figures move;
the two columns, measured under the same load, can be compared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factcheck import get_verifiers
from factcheck.agent import Agent
from factcheck.batch.engine import LocalEngine, Tally, run_batch
from factcheck.batch.inputs import Document, open_input
from factcheck.build import build_checker
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
    code = folder / "baseline"
    code.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
    results = []
    for concurrency in levels:
        measured: dict[str, Any] = {"concurrency": concurrency}
        for name, root in (("current", ROOT), (ref, code)):
            env = {**os.environ, "PYTHONPATH": str(root)}
            args = [sys.executable, str(Path(__file__).resolve()), "--mode", "throughput", "--row-json"]
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=["all", "throughput", "memory"], default="all")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake model takes per call (L)")
    parser.add_argument("--concurrency", default="1,4,16,64", help="comma list of documents in flight (C)")
    parser.add_argument("--rounds", type=int, default=8, help="documents per slot: C x rounds documents per level")
    parser.add_argument("--cache", action="store_true", help="keep the SQLite cache on (off by default)")
    parser.add_argument("--memory-docs", type=int, default=10_000)
    parser.add_argument("--memory-concurrency", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path("bench/out"), help="where batch.json goes")
    parser.add_argument("--baseline", help="also measure git commit REF (e.g. HEAD), level by level, side by side")
    parser.add_argument("--row-json", action="store_true", help=argparse.SUPPRESS)  # one level, as JSON (internal)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"command": "python " + shlex.join(sys.argv)}
    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    if args.row_json:
        with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as tmp:
            (row,) = throughput(args.latency, levels[:1], args.rounds, args.cache, Path(tmp))
        print(json.dumps({**row.__dict__, "share": row.share}))
        return 0
    with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as tmp:
        if args.baseline and args.mode == "throughput":
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
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "batch.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
