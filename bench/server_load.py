"""Load benchmark of ``factcheck serve``: N concurrent clients for a bounded time, cold and warm cache.

Starts the server itself (a subprocess on a free loopback port, offline profile, a
fresh cache folder, rate limiting off), then for each number of clients runs two
phases of ``--duration`` seconds:

- ``cold``: every request is a text never sent before (two SciFact titles as two
  claims), so each claim is searched and judged;
- ``warm``: the requests cycle through a few texts that were all checked once
  before the phase, so the judgment cache answers their claims.

Each client (httpx, async) sends ``POST /v1/check`` one request after the other.
Reported per phase: requests, requests/s, p50 / p95 / p99 latency, errors (any
answer but 200, or a failed connection), and the share of claims answered from
the judgment cache. Traffic goes to 127.0.0.1 only and stops by itself.

    python bench/server_load.py [--clients 1,10,50] [--duration 10] [--verifier lexical] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

CORPUS = Path(__file__).resolve().parent.parent / "factcheck" / "data" / "scifact-corpus.jsonl.gz"
KEY = "bench-key-0123456789"
WARM_TEXTS = 20


@dataclass(frozen=True)
class Row:
    """One phase: how many clients, cold or warm, and what was measured."""

    clients: int
    cache: str
    requests: int
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    errors: int
    judgment_hit_rate: float


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


def start_server(port: int, cache: Path, profile: str, verifier: str | None) -> subprocess.Popen[bytes]:
    """``factcheck serve`` in a subprocess, so the clients and the server do not share one interpreter."""
    args = [sys.executable, "-m", "factcheck", "serve", "--port", str(port), "--profile", profile]
    args += ["--rate-per-minute", "0", "--log-level", "warning", "--deadline", "60"]
    if verifier:
        config = cache / "factcheck.toml"
        config.write_text(f'[agents.corpus]\nsource = "corpus"\nverifier = "{verifier}"\n', encoding="utf-8")
        args += ["--config", str(config)]
    env = {**os.environ, "FACTCHECK_API_KEYS": KEY, "FACTCHECK_CACHE_DIR": str(cache), "FACTCHECK_CACHE": ""}
    process = subprocess.Popen(args, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                return process
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


async def phase(url: str, clients: int, duration: float, pick: Iterator[str], cache: str) -> Row:
    """``clients`` clients sending checks back to back for ``duration`` seconds."""
    latencies: list[float] = []
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
                if response.status_code != 200:
                    errors += 1
                    continue
                verdict = response.json()
                claims += len(verdict["claims"])
                hits += sum(v for k, v in verdict["usage"]["cache_hits"].items() if k.startswith("judgment"))

        began = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        elapsed = time.perf_counter() - began
    return Row(
        clients=clients,
        cache=cache,
        requests=len(latencies),
        rps=round(len(latencies) / elapsed, 1),
        p50_ms=round(percentile(latencies, 50), 1),
        p95_ms=round(percentile(latencies, 95), 1),
        p99_ms=round(percentile(latencies, 99), 1),
        errors=errors,
        judgment_hit_rate=round(hits / claims, 3) if claims else 0.0,
    )


async def run(url: str, levels: list[int], duration: float) -> list[Row]:
    fresh = texts()
    warm = [next(fresh) for _ in range(WARM_TEXTS)]
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=120) as client:
        for text in warm:  # check each warm text once, so the warm phases find its claims in the cache
            (await client.post("/v1/check", json={"text": text})).raise_for_status()
    rows = []
    for clients in levels:
        rows.append(await phase(url, clients, duration, fresh, "cold"))
        rows.append(await phase(url, clients, duration, itertools.cycle(warm), "warm"))
    return rows


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| clients | cache | requests | req/s | p50 ms | p95 ms | p99 ms | errors | judgment cache hits |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.clients} | {r.cache} | {r.requests} | {r.rps} | {r.p50_ms} | {r.p95_ms} | {r.p99_ms} "
            f"| {r.errors} | {r.judgment_hit_rate:.0%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,10,50", help="Comma list of concurrent clients.")
    parser.add_argument("--duration", type=float, default=10.0, help="Seconds per phase (at most 120).")
    parser.add_argument("--profile", default="offline")
    parser.add_argument("--verifier", help="Pin the corpus agent's verifier (e.g. lexical); default: the profile's.")
    parser.add_argument("--out", type=Path, help="Also write the rows as JSON here.")
    args = parser.parse_args()
    levels = [int(n) for n in args.clients.split(",") if n.strip()]
    duration = min(max(args.duration, 1.0), 120.0)  # bounded: a benchmark never runs unattended for long
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="factcheck-bench-") as folder:
        server = start_server(port, Path(folder), args.profile, args.verifier)
        try:
            rows = asyncio.run(run(f"http://127.0.0.1:{port}", levels, duration))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(table(rows))
    if args.out:
        args.out.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
