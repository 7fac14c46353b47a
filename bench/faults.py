"""Fault suite: the hostile inputs and misbehaving plugins of issue 16, each run for real, with figures.

Every scenario starts ``factcheck`` in subprocesses (the server on a free
loopback port, ``factcheck batch`` on files in a temporary folder), so a fault
that kills or freezes a process is seen as such. With ``--baseline REF`` each
scenario also runs against the code of git commit REF (exported with ``git
archive`` into a temporary folder; nothing is checked out), one after the
other, and the table shows both columns.

Scenarios (offline profile, the ``lexical`` verifier; misbehaving sources from
bench/fault_plugins.py, registered by a small launcher, never installed):

- ``plugins``: one server per misbehaving source (blocks its loop, raises
  KeyboardInterrupt, returns garbage, returns 200,000 passages, returns a lone
  surrogate, never finishes ``prepare``); a check is sent while ``/v1/health``
  is polled. Figures: the check's status and seconds, the slowest health answer,
  and whether the server still answers afterwards.
- ``surrogate``: a batch of 34 documents, the first with ``"\\ud800"``: lines written.
- ``budget``: 64 documents at concurrency 64, each one LLM call to a fake model,
  ``--max-llm-calls 5``: calls the model received.
- ``big``: one document of ``--big-mb`` MB (about 100 bytes a sentence): claims
  checked, seconds, and the output line's size (bounded by ``--timeout``).
- ``connections``: ``--idle`` connections that send half a request and wait;
  then the health latency, how many the server closed, and its log size.
- ``cache``: a check, the cache file overwritten with garbage, then two checks:
  whether the last one is answered from the cache again.

    python bench/faults.py [--baseline HEAD] [--only plugins,budget] [--idle 2000] [--big-mb 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
KEY = "faults-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
LAUNCHER = (
    "import sys; sys.path.insert(0, {bench!r}); import fault_plugins; "
    "from factcheck.plugins.manager import get_plugin_manager, reset_plugins; "
    "get_plugin_manager().register(fault_plugins, name='fault-plugins'); reset_plugins(); "
    "from factcheck.cli import main; sys.argv = ['factcheck', *sys.argv[1:]]; main()"
)
FAULT_SOURCES = ("blocking", "interrupt", "garbage", "flood", "surrogate", "never-ready")
Row = tuple[str, str, str]  # scenario, figure, value


def export(ref: str, folder: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    folder.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def env_for(code: Path, folder: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTCHECK_", "OPENAI_"))}
    env.update(
        PYTHONPATH=str(code),
        FACTCHECK_CACHE_DIR=str(folder / "cache"),
        FACTCHECK_LOAD_PLUGINS="",
        FACTCHECK_API_KEYS=KEY,
        **extra,
    )
    return env


def config(
    folder: Path, code: Path, source: str = "corpus", verifier: str = "lexical", *, short: bool = False, **llm: str
) -> Path:
    """A factcheck.toml with one agent; short set-up time-outs where the code has them."""
    corpus = folder / "tiny-corpus.jsonl"  # a small index: set-up time is not what is measured
    corpus.write_text(json.dumps({"id": "p", "text": "Statins lower LDL cholesterol in adults."}) + "\n")
    lines = ['profile = "offline"', "[agents.corpus]", f'source = "{source}"', f'verifier = "{verifier}"']
    if source == "corpus":
        lines.append(f"path = {json.dumps(str(corpus))}")
    if short and "prepare_timeout_s" in (code / "factcheck" / "config.py").read_text():
        lines += ["[pipeline]", "prepare_timeout_s = 5", "agent_timeout_s = 3"]
    elif short:
        lines += ["[pipeline]", "agent_timeout_s = 3"]
    if llm:
        lines += ["[llm]", *(f"{k} = {json.dumps(v)}" for k, v in llm.items())]
    path = folder / f"factcheck-{source}-{verifier}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@contextmanager
def serving(
    code: Path, folder: Path, cfg: Path, *, wait_s: float = 150
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    log = (folder / f"server-{port}.log").open("wb")
    args = [sys.executable, "-c", LAUNCHER.format(bench=str(BENCH)), "serve", "--port", str(port)]
    args += ["--config", str(cfg), "--rate-per-minute", "0", "--deadline", "10", "--log-level", "warning"]
    process = subprocess.Popen(args, env=env_for(code, folder), cwd=code, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and process.poll() is None:
            try:
                httpx.get(f"{url}/v1/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url, process
    finally:
        process.kill()
        process.wait()
        log.close()


def poll_health(url: str, stop: threading.Event, worst: list[float]) -> None:
    """Ask ``/v1/health`` every 0.1 s until ``stop``, adding each answer's seconds to ``worst``."""
    while not stop.is_set():
        started = time.monotonic()
        try:
            httpx.get(f"{url}/v1/health", timeout=30)
            worst.append(time.monotonic() - started)
        except httpx.HTTPError:
            worst.append(float("inf"))
        time.sleep(0.1)


def scenario_plugins(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    for fault in FAULT_SOURCES:
        cfg = config(folder, code, source=f"fault-{fault}", short=True)
        with serving(code, folder, cfg) as (url, process):
            stop = threading.Event()
            latencies: list[float] = []
            poller = threading.Thread(target=poll_health, args=(url, stop, latencies))
            poller.start()
            started = time.monotonic()
            try:
                response = httpx.post(f"{url}/v1/check", json={"text": "Statins lower LDL."}, headers=AUTH, timeout=60)
                outcome = f"{response.status_code}"
                if response.status_code == 200:
                    judgment = response.json()["claims"][0]["judgments"][0]
                    outcome += f" ({'abstained' if judgment['factuality'] is None else 'judged'})"
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            seconds = time.monotonic() - started
            time.sleep(0.3)
            stop.set()
            poller.join()
            try:
                alive = httpx.get(f"{url}/v1/health", timeout=5).status_code == 200
            except httpx.HTTPError:
                alive = False
            worst = max(latencies, default=float("nan"))
            rows.append(
                (
                    f"plugin: {fault}",
                    "check status, s / slowest health s / alive after",
                    f"{outcome}, {seconds:.1f} / {worst:.2f} / {'yes' if alive and process.poll() is None else 'NO'}",
                )
            )
    return rows


def batch(code: Path, folder: Path, *args: str, timeout: float, **env: str) -> tuple[int | str, str]:
    command = [sys.executable, "-c", LAUNCHER.format(bench=str(BENCH)), "batch", *args, "--quiet"]
    try:
        done = subprocess.run(
            command, env=env_for(code, folder, **env), cwd=code, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"not finished in {timeout:g} s", ""
    last = (done.stderr or "").strip().splitlines()
    return done.returncode, last[-1] if last else ""


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def scenario_surrogate(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    docs = folder / "surrogate.jsonl"
    texts = ["Statins lower \ud800 LDL cholesterol."] + [f"Statins lower LDL by {i} percent." for i in range(33)]
    docs.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    out = folder / "surrogate-out.jsonl"
    cfg = config(folder, code)
    first, _ = batch(code, folder, str(docs), "--out", str(out), "--config", str(cfg), timeout=args.timeout)
    second, _ = batch(
        code, folder, str(docs), "--out", str(out), "--config", str(cfg), "--retry-failed", timeout=args.timeout
    )
    return [("surrogate line", "exit codes / lines of 34", f"{first}, {second} / {len(lines(out))}")]


def scenario_budget(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    from factcheck.testing_llm import FakeChatServer

    docs = folder / "budget.jsonl"
    docs.write_text(
        "".join(json.dumps({"id": i, "text": f"Statins lower LDL by {i} percent."}) + "\n" for i in range(64))
    )
    out = folder / "budget-out.jsonl"
    with FakeChatServer(latency_s=0.3) as fake:
        cfg = config(folder, code, verifier="llm", base_url=fake.url, model="gpt-4o-mini")
        code_, _ = batch(
            code,
            folder,
            str(docs),
            "--out",
            str(out),
            "--config",
            str(cfg),
            "--no-cache",
            "--concurrency",
            "64",
            "--max-llm-calls",
            "5",
            timeout=args.timeout,
        )
        calls = fake.requests
    return [("budget --max-llm-calls 5", "exit / calls made / lines", f"{code_} / {calls} / {len(lines(out))}")]


def scenario_big(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    count = int(args.big_mb * 1e6 / 100)
    text = " ".join(f"Statins lower LDL cholesterol by {i % 90} percent in study {i} of adults." for i in range(count))
    docs = folder / "big.jsonl"
    docs.write_text(json.dumps({"id": "big", "text": text}) + "\n")
    out = folder / "big-out.jsonl"
    started = time.monotonic()
    result, _ = batch(
        code, folder, str(docs), "--out", str(out), "--config", str(config(folder, code)), timeout=args.timeout
    )
    seconds = time.monotonic() - started
    written = lines(out)
    claims = len(written[0]["claims"]) if written else 0
    size = out.stat().st_size / 1e6 if out.exists() else 0.0
    return [
        (
            f"{args.big_mb:g} MB document",
            "exit / claims / seconds / line MB",
            f"{result} / {claims} / {seconds:.0f} / {size:.2f}",
        )
    ]


def scenario_connections(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    cfg = config(folder, code)
    with serving(code, folder, cfg) as (url, _process):
        host, port = url.removeprefix("http://").split(":")
        idle: list[socket.socket] = []
        refused = 0
        for _ in range(args.idle):
            try:
                conn = socket.create_connection((host, int(port)), timeout=2)
                conn.sendall(b"POST /v1/check HTTP/1.1\r\nHost: x\r\n")
                idle.append(conn)
            except OSError:
                refused += 1
        started = time.monotonic()
        try:
            health = f"{httpx.get(f'{url}/v1/health', timeout=10).status_code} in {time.monotonic() - started:.2f}s"
        except httpx.HTTPError as exc:
            health = type(exc).__name__
        time.sleep(12)
        closed = 0
        for conn in idle:
            conn.setblocking(False)
            try:
                closed += conn.recv(1) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
            conn.close()
        log = sum(p.stat().st_size for p in folder.glob("server-*.log"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return [
        (
            f"{args.idle} half-open connections",
            "health during / closed by server after 12 s / server log KB",
            f"{health} / {closed} of {len(idle)} (+{refused} refused) / {log / 1e3:.0f}",
        )
    ]


def scenario_cache(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    corpus = folder / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p", "text": "Statins lower LDL cholesterol in adults."}) + "\n")
    cfg = folder / "factcheck-cache.toml"
    cfg.write_text(
        f'profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\npath = "{corpus}"\n'
    )
    cache = folder / "corrupt.sqlite"

    def check() -> dict[str, Any]:
        command = [sys.executable, "-m", "factcheck", "check", "Statins lower LDL cholesterol.", "--format", "json"]
        command += ["--config", str(cfg), "--cache", str(cache)]
        done = subprocess.run(command, env=env_for(code, folder), cwd=code, capture_output=True, text=True, timeout=120)
        return json.loads(done.stdout) if done.returncode == 0 else {"usage": {"cache_hits": {}}}

    check()
    cache.write_bytes(b"garbage " * 4096)
    for suffix in ("-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    check()
    hits = check()["usage"]["cache_hits"]
    aside = len(list(folder.glob("corrupt.sqlite.corrupt-*")))
    return [("corrupt cache", "cache hits on the check after / files set aside", f"{hits or 'none'} / {aside}")]


SCENARIOS: dict[str, Callable[[Path, Path, argparse.Namespace], list[Row]]] = {
    "plugins": scenario_plugins,
    "surrogate": scenario_surrogate,
    "budget": scenario_budget,
    "big": scenario_big,
    "connections": scenario_connections,
    "cache": scenario_cache,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", help="also run every scenario against git commit REF (e.g. HEAD)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma list of scenarios")
    parser.add_argument("--idle", type=int, default=2000, help="half-open connections in the connections scenario")
    parser.add_argument("--big-mb", type=float, default=0.5, help="size of the big document")
    parser.add_argument("--timeout", type=float, default=180, help="seconds a batch may run before it is stopped")
    args = parser.parse_args()
    chosen = [name for name in args.only.split(",") if name]
    results: dict[tuple[str, str], dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="factcheck-faults-") as tmp:
        codes = {"current": ROOT}
        if args.baseline:
            codes[args.baseline] = export(args.baseline, Path(tmp) / "baseline")
        for name in chosen:
            for label, code in codes.items():
                folder = Path(tmp) / f"{name}-{label}"
                folder.mkdir()
                for scenario, figure, value in SCENARIOS[name](code, folder, args):
                    results.setdefault((scenario, figure), {})[label] = value
                    print(f"{scenario} [{label}]: {value}", file=sys.stderr)
    labels = list(codes)
    print("| fault | figure | " + " | ".join(labels) + " |")
    print("|---|---|" + "---|" * len(labels))
    for (scenario, figure), values in results.items():
        print(f"| {scenario} | {figure} | " + " | ".join(values.get(label, "") for label in labels) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
