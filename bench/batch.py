"""Benchmark of ``factcheck batch``: throughput against the ideal, and memory over 10,000 documents.

Throughput: a fake OpenAI-compatible model server (``factcheck.testing_llm``, in
its own process on 127.0.0.1) answers every call after a fixed latency L. Each
synthetic document is one sentence, hence one claim, judged by the ``llm``
verifier against a static offline source: exactly one LLM call per document.
With C documents in flight, no engine can beat C / L documents (and LLM calls)
per second; the table sets what the batch runner reaches beside that ideal,
for C = 1, 4, 16, 64. Everything else is the real path: the spaCy sentence
extractor, the pipeline, the OpenAI client over HTTP, and the output file
appended and fsynced once per document.

Memory: 10,000 synthetic documents read from a JSON Lines file and checked
with a cheap verifier (no model server), resident memory (RSS) sampled every
1,000 documents. The runner streams its input, so RSS should stay flat.

    python bench/batch.py                          # both, L = 0.5 s
    python bench/batch.py --mode throughput --latency 0.25 --concurrency 1,4,16,64
    python bench/batch.py --mode memory --memory-docs 10000
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from factcheck.batch.inputs import Document, open_input
from factcheck.batch.runner import LocalEngine, Tally, run_batch
from factcheck.pipeline import Agent, Checker
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
        [sys.executable, "-m", "factcheck.testing_llm", "--latency", str(latency_s)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def llm_checker(base_url: str, concurrency: int, cache: bool) -> Checker:
    """One agent: a static offline source judged by the ``llm`` verifier on the fake server."""
    verifier = get_verifiers()["llm"]
    return Checker(
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
    checker = Checker(
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
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"command": "python " + shlex.join(sys.argv)}
    with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as tmp:
        if args.mode in ("all", "throughput"):
            levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
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
