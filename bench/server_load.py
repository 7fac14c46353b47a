"""Load benchmark of ``factcheck serve``: N concurrent clients for a bounded time, cold and warm cache.

Starts the server itself (a subprocess on a free loopback port, offline profile, a
fresh cache folder, rate limiting off), then for each number of clients runs two
phases of ``--duration`` seconds:

- ``cold``: every request is a text never sent before (two SciFact titles as two
  claims), so each claim is searched and judged;
- ``warm``: the requests cycle through a few texts that were all checked once
  before the phase, so the judgment cache answers their claims.

Each client sends ``POST /v1/check`` one request after the other over its own
kept-alive connection. The clients are plain asyncio streams writing HTTP/1.1 by
hand (``--client raw``, the default): a pool-managing client such as httpx
spends more CPU per request than the server's cached answer costs, and on a
shared 2-core machine that would measure the client (``--client httpx`` keeps
the old way).
Reported per phase: requests, requests/s, p50 / p95 / p99 latency, errors (any
answer but 200, or a failed connection), and the share of claims answered from
a cache (the judgment cache, or the server's cache of whole answers). Traffic
goes to 127.0.0.1 only and stops by itself.

``--baseline REF`` (e.g. ``HEAD``) also serves the code of that git commit
(exported with ``git archive`` into a temporary folder, nothing checked out)
and runs every phase against both servers, one after the other, so the two
columns are measured under the same load on a shared machine; the table gives
both and their ratio. That code runs with this interpreter when it has every
requirement of the commit's pyproject.toml, else with an overlay venv that adds
the missing ones (``bench/baseline.py``; made once under ~/.cache/factcheck/bench).

``--short`` is CI's form (.ci/run): 2 s phases, 1 s of quiet, 5 warm texts, and a
cold phase only at the fewest clients (one of 50 clients lasts until the 50 first
answers are in: half a minute on 2 cores). About 45 s with ``--baseline`` here.

    python bench/server_load.py [--clients 1,10,50] [--duration 10] [--verifier lexical] [--baseline HEAD] [--out FILE]
    python bench/server_load.py --clients 50 --duration 5 --settle 15   # quiet before each warm phase
    python bench/server_load.py --clients 50 --duration 5 --baseline HEAD --per-second   # p95 second by second
    python bench/server_load.py --clients 1 --duration 5 --baseline 76d4395 --stream 20   # and a streamed check
    python bench/server_load.py --clients 1,50 --short --baseline 4af1622   # CI's short form

``--stream N`` also sends texts of N claims to ``POST /v1/check/stream``, one at a time (each server in
turn, ``--stream-repeats`` texts, cold then the same texts again warm), and reports the time to the first
``claim`` event and to the ``verdict``, and the verdict's ``usage.wall_s.prepare``: the time the check
spent preparing its agents, summed over every preparation it made.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from baseline import export, python_for

CORPUS = Path(__file__).resolve().parent.parent / "factcheck" / "data" / "scifact-corpus.jsonl.gz"
KEY = "bench-key-0123456789"
WARM_TEXTS = 20


@dataclass(frozen=True)
class Row:
    """One phase: how many clients, cold or warm, and what was measured."""

    server: str
    clients: int
    cache: str
    requests: int
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    errors: int
    judgment_hit_rate: float
    per_second: tuple[float, ...] = ()  # p95 ms of the answers sent in each second of the phase


def texts() -> Iterator[str]:
    """Distinct two-claim texts from the titles of the shipped corpus, in file order."""
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        titles = [json.loads(line)["title"].strip().rstrip(".") for line in handle]
    titles = [t for t in titles if 4 <= len(t.split()) <= 25]
    for first, second in zip(titles[::2], titles[1::2], strict=False):
        yield f"{first}. {second}."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


ROOT = Path(__file__).resolve().parent.parent


def start_server(
    port: int, cache: Path, profile: str, verifier: str | None, code: Path = ROOT, workers: int = 1
) -> subprocess.Popen[bytes]:
    """``factcheck serve`` from the code in ``code``, in a subprocess, so the clients and the server do not
    share one interpreter."""
    python = sys.executable if code == ROOT else python_for(code, extras=("server",))
    args = [python, "-m", "factcheck", "serve", "--port", str(port), "--profile", profile]
    args += ["--rate-per-minute", "0", "--log-level", "warning", "--deadline", "60"]
    if workers > 1:
        args += ["--workers", str(workers)]
    if verifier:
        config = cache / "factcheck.toml"
        config.write_text(f'[agents.corpus]\nsource = "corpus"\nverifier = "{verifier}"\n', encoding="utf-8")
        args += ["--config", str(config)]
    env = {**os.environ, "FACTCHECK_API_KEYS": KEY, "FACTCHECK_CACHE_DIR": str(cache), "FACTCHECK_CACHE": ""}
    env["FACTCHECK_CLAIMS_PER_MINUTE"] = "0"  # rate limiting off (the baseline ignores it)
    env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    process = subprocess.Popen(args, env=env, cwd=code)
    wait_until_up(process, f"http://127.0.0.1:{port}")
    return process


def wait_until_up(process: subprocess.Popen[bytes], url: str) -> None:
    """Wait until the server ``process`` answers ``GET /v1/health`` at ``url`` (at most 120 s)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit("the server did not start within 120 s")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) in milliseconds."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class RawClient:
    """One kept-alive HTTP/1.1 connection sending ``POST /v1/check`` and reading whole answers."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, text: str) -> tuple[int, bytes]:
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = json.dumps({"text": text}).encode()
        head = (
            f"POST /v1/check HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        payload = await self.reader.readexactly(length)
        return int(status_line.split()[1]), payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def phase(
    server: str, url: str, clients: int, duration: float, pick: Iterator[str], cache: str, client_kind: str = "raw"
) -> Row:
    """``clients`` clients sending checks back to back for ``duration`` seconds."""
    if client_kind == "raw":
        return await raw_phase(server, url, clients, duration, pick, cache)
    latencies: list[float] = []
    starts: list[float] = []
    errors = 0
    claims = hits = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as client:
        end = time.perf_counter() + duration

        async def one_client() -> None:
            nonlocal errors, claims, hits
            while time.perf_counter() < end:
                started = time.perf_counter()
                try:
                    response = await client.post("/v1/check", json={"text": next(pick)})
                except httpx.HTTPError:
                    errors += 1
                    continue
                latencies.append(time.perf_counter() - started)
                starts.append(started - began)
                if response.status_code != 200:
                    errors += 1
                    continue
                verdict = response.json()
                claims += len(verdict["claims"])
                hits += hits_of(verdict)

        began = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        elapsed = time.perf_counter() - began
    return row_of(server, clients, cache, latencies, elapsed, errors, hits / claims if claims else 0.0, starts)


def row_of(
    server: str,
    clients: int,
    cache: str,
    latencies: list[float],
    elapsed: float,
    errors: int,
    hit_rate: float,
    starts: list[float] | None = None,
) -> Row:
    """A phase's row from its latencies (seconds) and counts; with ``starts`` (seconds into the phase
    each request was sent), the p95 of each second too."""
    seconds: dict[int, list[float]] = {}
    for start, latency in zip(starts or [], latencies, strict=False):
        seconds.setdefault(int(start), []).append(latency)
    return Row(
        server=server,
        clients=clients,
        cache=cache,
        requests=len(latencies),
        rps=round(len(latencies) / elapsed, 1),
        p50_ms=round(percentile(latencies, 50), 1),
        p95_ms=round(percentile(latencies, 95), 1),
        p99_ms=round(percentile(latencies, 99), 1),
        errors=errors,
        judgment_hit_rate=round(hit_rate, 3),
        per_second=tuple(round(percentile(seconds[k], 95), 1) for k in sorted(seconds)),
    )


def hits_of(verdict: dict[str, Any]) -> int:
    """Claims of ``verdict`` answered from a cache (every claim when the whole answer came from memory)."""
    found = verdict["usage"]["cache_hits"]
    if found.get("answer"):
        return len(verdict["claims"])
    return sum(v for k, v in found.items() if k.startswith("judgment"))


async def raw_phase(server: str, url: str, clients: int, duration: float, pick: Iterator[str], cache: str) -> Row:
    """As :func:`phase`, with :class:`RawClient` connections."""
    latencies: list[float] = []
    starts: list[float] = []
    errors = claims = hits = 0
    end = time.perf_counter() + duration

    async def one_client() -> None:
        nonlocal errors, claims, hits
        client = RawClient(url)
        try:
            while time.perf_counter() < end:
                started = time.perf_counter()
                try:
                    status, payload = await client.post(next(pick))
                except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                    errors += 1
                    client.close()
                    client = RawClient(url)
                    continue
                latencies.append(time.perf_counter() - started)
                starts.append(started - began)
                if status != 200:
                    errors += 1
                    continue
                verdict = json.loads(payload)
                claims += len(verdict["claims"])
                hits += hits_of(verdict)
        finally:
            client.close()

    began = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    elapsed = time.perf_counter() - began
    return row_of(server, clients, cache, latencies, elapsed, errors, hits / claims if claims else 0.0, starts)


async def run(
    urls: dict[str, str],
    levels: list[int],
    duration: float,
    client_kind: str = "raw",
    settle: float = 0.0,
    warm_texts: int = WARM_TEXTS,
    cold_levels: list[int] | None = None,
) -> list[Row]:
    """Every phase against every server in turn (the same texts for each); ``settle`` seconds of quiet before
    each warm phase; cold phases only at ``cold_levels`` (default: every level)."""
    everything = list(texts())
    warm, rest = everything[:warm_texts], everything[warm_texts:]
    share = len(rest) // len(levels)  # each level's cold phases get texts of their own
    for url in urls.values():
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=120) as client:
            for text in warm:  # check each warm text once, so the warm phases find its claims in the cache
                (await client.post("/v1/check", json={"text": text})).raise_for_status()
    rows = []
    for number, clients in enumerate(levels):
        cold = rest[number * share : (number + 1) * share]  # cycled if a phase sends more (then not all cold)
        for name, url in urls.items():
            if cold_levels is None or clients in cold_levels:
                rows.append(await phase(name, url, clients, duration, itertools.cycle(cold), "cold", client_kind))
        await asyncio.sleep(settle)
        for name, url in urls.items():
            rows.append(await phase(name, url, clients, duration, itertools.cycle(warm), "warm", client_kind))
    return rows


@dataclass(frozen=True)
class StreamRow:
    """One streamed check: how long to its first claim and to its verdict, and its preparing time."""

    server: str
    cache: str
    claims: int
    first_claim_ms: float
    verdict_ms: float
    prepare_ms: float


def stream_texts(claims: int, count: int) -> list[str]:
    """``count`` texts of ``claims`` sentences each (titles of the shipped corpus, none used twice)."""
    sentences = [sentence for text in texts() for sentence in text.split(". ") if sentence]
    sentences = sentences[-claims * count :]  # the end of the corpus: never one of the load phases' texts
    return [" ".join(s.rstrip(".") + "." for s in sentences[i * claims : (i + 1) * claims]) for i in range(count)]


async def streamed(server: str, url: str, text: str, cache: str) -> StreamRow:
    """One ``POST /v1/check/stream``, timed event by event."""
    headers = {"Authorization": f"Bearer {KEY}"}
    first = verdict_at = 0.0
    verdict: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
        started = time.perf_counter()
        async with client.stream("POST", "/v1/check/stream", json={"text": text}) as response:
            response.raise_for_status()
            name = ""
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and name == "claim" and not first:
                    first = time.perf_counter() - started
                elif line.startswith("data:") and name == "verdict":
                    verdict_at = time.perf_counter() - started
                    verdict = json.loads(line.split(":", 1)[1])
    return StreamRow(
        server=server,
        cache=cache,
        claims=len(verdict.get("claims", ())),
        first_claim_ms=round(1000 * first, 1),
        verdict_ms=round(1000 * verdict_at, 1),
        prepare_ms=round(1000 * verdict.get("usage", {}).get("wall_s", {}).get("prepare", 0.0), 1),
    )


async def run_streams(urls: dict[str, str], claims: int, repeats: int) -> list[StreamRow]:
    """Each text streamed cold on every server in turn, then each again warm."""
    rows = []
    chosen = stream_texts(claims, repeats)
    for cache in ("cold", "warm"):
        for text in chosen:
            for name, url in urls.items():
                rows.append(await streamed(name, url, text, cache))
    return rows


def stream_table(rows: list[StreamRow]) -> str:
    """Median of each server's streamed checks, cold and warm."""
    lines = [
        "| server | cache | claims | checks | first claim ms | verdict ms | prepare ms (summed) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for key in dict.fromkeys((r.server, r.cache) for r in rows):
        group = [r for r in rows if (r.server, r.cache) == key]

        def median(values: list[float]) -> float:
            return sorted(values)[len(values) // 2]

        lines.append(
            f"| {key[0]} | {key[1]} | {group[0].claims} | {len(group)} | "
            f"{median([r.first_claim_ms for r in group])} | {median([r.verdict_ms for r in group])} | "
            f"{median([r.prepare_ms for r in group])} |"
        )
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table; with a baseline, its p95 and the ratio beside each row."""
    baseline = {(r.clients, r.cache): r for r in rows if r.server != "current"}
    current = [r for r in rows if r.server == "current"]
    head = "| clients | cache | requests | req/s | p50 ms | p95 ms | p99 ms | errors | cache hits |"
    rule = "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    if baseline:
        head += " baseline req/s | baseline p95 ms | baseline errors | p95 ratio |"
        rule += "---:|---:|---:|---:|"
    lines = [head, rule]
    for r in current:
        line = (
            f"| {r.clients} | {r.cache} | {r.requests} | {r.rps} | {r.p50_ms} | {r.p95_ms} | {r.p99_ms} "
            f"| {r.errors} | {r.judgment_hit_rate:.0%} |"
        )
        if (b := baseline.get((r.clients, r.cache))) is not None:
            line += f" {b.rps} | {b.p95_ms} | {b.errors} | {r.p95_ms / b.p95_ms:.2f} |"
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,10,50", help="Comma list of concurrent clients.")
    parser.add_argument("--duration", type=float, help="Seconds per phase (at most 120; default 10, --short 2).")
    parser.add_argument("--profile", default="offline")
    parser.add_argument("--verifier", help="Pin the corpus agent's verifier (e.g. lexical); default: the profile's.")
    parser.add_argument("--workers", type=int, default=1, help="Worker processes of this code's server.")
    parser.add_argument("--client", choices=["raw", "httpx"], default="raw", help="How the load is sent.")
    parser.add_argument("--baseline", help="Also serve this git commit (e.g. HEAD) and measure both, side by side.")
    parser.add_argument("--out", type=Path, help="Also write the rows as JSON here.")
    parser.add_argument("--settle", type=float, help="Seconds of quiet before each warm phase (default 0, --short 1).")
    parser.add_argument(
        "--short",
        action="store_true",
        help="CI's form: 2 s phases, 1 s settle, 5 warm texts, a cold phase only at the fewest clients.",
    )
    parser.add_argument("--per-second", action="store_true", help="Also print each phase's p95 second by second.")
    parser.add_argument("--stream", type=int, default=0, help="Also stream texts of this many claims (0: none).")
    parser.add_argument("--stream-repeats", type=int, default=5, help="How many texts --stream sends a server.")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout's TERM still stops the servers
    levels = [int(n) for n in args.clients.split(",") if n.strip()]
    duration = args.duration if args.duration is not None else (2.0 if args.short else 10.0)
    duration = min(max(duration, 1.0), 120.0)  # bounded: a benchmark never runs unattended for long
    settle = args.settle if args.settle is not None else (1.0 if args.short else 0.0)
    # A cold phase of 50 clients lasts until the 50 first answers are in, half a minute on 2 cores: the short
    # form measures a new claim's cost with the fewest clients only.
    warm_texts, cold_levels = (5, [min(levels)]) if args.short else (WARM_TEXTS, None)
    with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as folder:
        servers: dict[str, subprocess.Popen[bytes]] = {}
        urls: dict[str, str] = {}
        try:
            codes = {"current": ROOT}
            if args.baseline:
                codes[args.baseline] = export(args.baseline, Path(folder) / "baseline")
            for name, code in codes.items():
                cache = Path(folder) / f"cache-{len(urls)}"
                cache.mkdir()
                port = free_port()
                workers = args.workers if name == "current" else 1
                servers[name] = start_server(port, cache, args.profile, args.verifier, code, workers)
                urls[name] = f"http://127.0.0.1:{port}"
            rows = asyncio.run(run(urls, levels, duration, args.client, settle, warm_texts, cold_levels))
            streams = asyncio.run(run_streams(urls, args.stream, args.stream_repeats)) if args.stream else []
        finally:
            for server in servers.values():
                server.terminate()
                server.wait(timeout=30)
    print(table(rows))
    if streams:
        print(f"\nstreamed checks of {args.stream}-claim texts (medians):\n")
        print(stream_table(streams))
    if args.per_second:
        print("\np95 ms of the answers sent in each second of a phase:\n")
        for r in rows:
            print(f"- {r.server}, {r.clients} clients, {r.cache}: {' '.join(f'{p:g}' for p in r.per_second)}")
    if args.out:
        every = [asdict(r) for r in rows] + [asdict(r) for r in streams]
        args.out.write_text(json.dumps(every, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
