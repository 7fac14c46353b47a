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
  whether the last one is answered from the cache again; then a garbage WAL, a
  folder in the cache file's place, a file in its folder's place, and a read-only
  cache file and folder (as "nobody" via setpriv when run as root): the verdict,
  the warning lines, the note in ``usage.notes``, and the judgment hits.
- ``maxlag``: a loopback MediaWiki that always answers maxlag (Retry-After 5),
  two claims, agent time-out 20 s: the check's seconds and each agent's outcome.
- ``wikihtml``: a loopback MediaWiki whose lead extracts are HTML: whether
  markup reaches the evidence.
- ``neverready``: a corpus agent beside a source whose ``prepare`` never returns
  (``prepare_timeout_s`` over the server's deadline): a CLI check's seconds, and
  three server checks by a checker the warm-up did not prepare, with the corpus
  agent's answer.
- ``stalled_llm``: the llm extractor against a model that answers nothing for
  30 s, in a check and in a batch with ``--max-llm-calls 2``: requests received,
  calls counted in usage, exit time.
- ``search_budget``: 3 documents of 3 claims extracted by a fake model, a Serper and a
  MediaWiki agent judged by it, with ``--max-llm-calls 3`` (spent by the extractions)
  and then ``--max-searches 4``: the requests the fakes received and what the batch
  summary says was spent and sent.
- ``unreachable``: a Serper agent aimed at a closed loopback port, beside a MediaWiki
  agent that answers: the seconds a check and a batch of 8 documents take, and what
  the Serper agent and the batch say.

    python bench/faults.py [--baseline HEAD] [--only plugins,budget] [--idle 2000] [--big-mb 0.5]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
KEY = "faults-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
LAUNCHER = (
    "import sys; sys.path.insert(0, {bench!r}); import fault_plugins; "
    "from factcheck.registry import get_plugin_manager, reset_plugins; "
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
    from factcheck.testing.llm import FakeChatServer

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
    # A read-only cache needs a user the permissions apply to: as root, those checks run as "nobody".
    unprivileged = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    home = folder / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    for path in (folder, folder.parent, corpus, cfg):
        path.chmod(path.stat().st_mode | 0o755)

    def check(path: Path = cache, nobody: bool = False) -> dict[str, Any]:
        command = [sys.executable, "-m", "factcheck", "check", "Statins lower LDL cholesterol.", "--format", "json"]
        command += ["--config", str(cfg), "--cache", str(path)]
        env = env_for(code, folder)
        if nobody:
            command = [*unprivileged, *command]
            env.update(FACTCHECK_CACHE_DIR=str(home / "cache"), HOME=str(home))
        done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, timeout=120)
        found = json.loads(done.stdout) if done.returncode == 0 else {"usage": {"cache_hits": {}}}
        warned = [line for line in done.stderr.splitlines() if "cache" in line]
        judgment = (found.get("claims") or [{}])[0].get("judgments", [{}])[0]
        error = str(judgment.get("error") or "")
        verdict = "judged" if judgment.get("factuality") is not None else "abstained" if not error else "dropped"
        verdict += f" ({error.split(': ')[1]})" if error.count(": ") >= 2 else ""
        notes = [n for n in found["usage"].get("notes", []) if "cache" in n]
        return {**found, "warned": len(warned), "verdict": verdict, "noted": "noted" if notes else "no note"}

    def hits(found: dict[str, Any]) -> str:
        return ", ".join(f"{k}: {v}" for k, v in found["usage"]["cache_hits"].items() if k == "judgment") or "none"

    check()
    cache.write_bytes(b"garbage " * 4096)
    for suffix in ("-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    check()
    last = check()
    aside = len(list(folder.glob("corrupt.sqlite.corrupt-*")))
    rows = [("corrupt cache", "cache hits on the check after / files set aside", f"{hits(last) or 'none'} / {aside}")]
    figure = "verdict / cache warnings / note in usage / judgment hits (on the next check, or as marked)"

    def row(fault: str, found: dict[str, Any], after: dict[str, Any]) -> Row:
        return fault, figure, f"{found['verdict']} / {found['warned']} / {found['noted']} / {hits(after)}"

    wal = folder / "wal.sqlite"
    check(wal)
    Path(f"{wal}-wal").write_bytes(b"garbage " * 4096)  # the log a killed run left, overwritten
    damaged = check(wal)
    rows.append(row("garbage in the cache's WAL (hits: this check)", damaged, damaged))

    place = folder / "a-folder.sqlite"
    place.mkdir()
    first = check(place)
    rows.append(row("a folder where the cache file should be", first, check(place)))
    (folder / "a-file").write_text("not a folder")
    under = folder / "a-file" / "cache.sqlite"
    first = check(under)
    rows.append(row("a file where the cache's folder should be", first, check(under)))

    if unprivileged and shutil.which("setpriv") is None:
        return [*rows, ("read-only cache", figure, "not run: root, and no setpriv to drop privileges")]
    for what in ("file", "folder"):
        ro = folder / f"ro-{what}"
        ro.mkdir(mode=0o777)
        ro.chmod(0o777)
        path = ro / "cache.sqlite"
        check(path)  # written by this user, its log folded into the file, then made read-only
        with closing(sqlite3.connect(path)) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (path if what == "file" else ro).chmod(0o444 if what == "file" else 0o555)
        found = check(path, nobody=True)
        rows.append(row(f"read-only cache {what} (hits: this check)", found, found))
        ro.chmod(0o777)
    return rows


def _check_seconds(url: str, body: dict[str, Any]) -> tuple[float, str]:
    """One check's seconds and what its first agent said ("judged", or its error)."""
    started = time.monotonic()
    try:
        response = httpx.post(f"{url}/v1/check", json=body, headers=AUTH, timeout=60)
        judgment = response.json()["claims"][0]["judgments"][0]
        said = "judged" if judgment["factuality"] is not None else judgment.get("error") or "abstained"
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        said = type(exc).__name__
    return time.monotonic() - started, said


def scenario_neverready(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    """Issue 24, item 2: a healthy corpus agent beside one whose source's prepare() never returns, with
    prepare_timeout_s (12 s) over the server's deadline (10 s) and agent_timeout_s = 3: the seconds of a
    CLI check, and of three server checks by a checker the warm-up did not prepare (another scorer),
    with the corpus agent's answer."""
    corpus = folder / "tiny-corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p", "text": "Statins lower LDL cholesterol in adults."}) + "\n")
    cfg = folder / "factcheck-neverready.toml"
    cfg.write_text(
        'profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n'
        f"path = {json.dumps(str(corpus))}\n"
        '[agents.hung]\nsource = "fault-never-ready"\nverifier = "lexical"\n'
        "[pipeline]\nprepare_timeout_s = 12\nagent_timeout_s = 3\n"
    )
    command = [sys.executable, "-c", LAUNCHER.format(bench=str(BENCH)), "check", "Statins lower LDL cholesterol."]
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*command, "--config", str(cfg), "--format", "json"],
            env=env_for(code, folder),
            cwd=code,
            capture_output=True,
            text=True,
            timeout=60,
        )
        judgment = json.loads(done.stdout)["claims"][0]["judgments"][0]
        cli = "judged" if judgment["factuality"] is not None else judgment.get("error") or "abstained"
    except (subprocess.TimeoutExpired, ValueError, KeyError, IndexError) as exc:
        cli = type(exc).__name__
    cli_s = time.monotonic() - started
    with serving(code, folder, cfg) as (url, _process):
        body = {"text": "Statins lower LDL cholesterol.", "scorer": "normsum"}
        answers = [_check_seconds(url, body) for _ in range(3)]
    said = sorted({a for _, a in answers})
    return [
        ("never-ready plugin: CLI check", "seconds / corpus agent", f"{cli_s:.1f} / {cli[:60]}"),
        (
            "never-ready plugin: server, 3 checks",
            "seconds of each / corpus agent",
            f"{', '.join(f'{s:.1f}' for s, _ in answers)} / {'; '.join(a[:60] for a in said)}",
        ),
    ]


def scenario_stalled_llm(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    """Issue 24, item 3: the llm extractor against a fake model that answers nothing for 30 s (timeout_s
    = 2, max_retries = 3, agent_timeout_s = 3): for one CLI check and for a batch of 4 documents with
    --max-llm-calls 2, the requests the model received, the calls counted in usage, and the exit time."""
    from factcheck.testing.llm import FakeChatServer

    # Python 3.11 logs a traceback for each stalled answer the fake cancels when it stops: not a finding.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    corpus = folder / "tiny-corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p", "text": "Statins lower LDL cholesterol in adults."}) + "\n")
    docs = folder / "stalled.jsonl"
    docs.write_text(
        "".join(json.dumps({"id": i, "text": f"Statins lower LDL by {i} percent."}) + "\n" for i in range(4))
    )
    rows: list[Row] = []
    figure = "requests received / calls counted (check: usage.llm_calls; batch: its summary) / exit, s"
    for kind in ("check", "batch --max-llm-calls 2"):
        with FakeChatServer(latency_s=30) as fake:
            cfg = folder / f"factcheck-stalled-{kind.split()[0]}.toml"
            cfg.write_text(
                'profile = "offline"\nextractor = "llm"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n'
                f"path = {json.dumps(str(corpus))}\n[pipeline]\nagent_timeout_s = 3\n"
                f'[llm]\nbase_url = "{fake.url}"\nmodel = "gpt-4o-mini"\ntimeout_s = 2\nmax_retries = 3\n'
            )
            out = folder / "stalled-out.jsonl"
            command = [sys.executable, "-c", LAUNCHER.format(bench=str(BENCH))]
            if kind == "check":
                command += ["check", "Statins lower LDL cholesterol.", "--format", "json", "--config", str(cfg)]
            else:
                command += ["batch", str(docs), "--out", str(out), "--config", str(cfg), "--quiet"]
                command += ["--no-cache", "--concurrency", "4", "--max-llm-calls", "2"]
            started = time.monotonic()
            try:
                done = subprocess.run(
                    command, env=env_for(code, folder), cwd=code, capture_output=True, text=True, timeout=90
                )
                exit_s = f"{time.monotonic() - started:.1f}"
                if kind == "check":
                    counted = str(json.loads(done.stdout)["usage"]["llm_calls"])
                else:  # the summary's count: documents cut off by the budget have no line to count from
                    said = re.findall(r"(\d+) LLM calls", done.stderr) or re.findall(r"(\d+) calls made", done.stderr)
                    counted = said[-1] if said else "none said"
            except subprocess.TimeoutExpired:
                exit_s, counted = "not finished in 90", "?"
            except (ValueError, KeyError):
                exit_s, counted = f"{time.monotonic() - started:.1f}", "no JSON"
            time.sleep(1)  # a request sent as the process ended still arrives
            rows.append((f"stalled LLM extraction: {kind}", figure, f"{fake.requests} / {counted} / {exit_s}"))
    return rows


@contextmanager
def fake_wiki(answer: Callable[[dict[str, str]], tuple[Any, dict[str, str]]]) -> Iterator[str]:
    """A loopback MediaWiki ``api.php`` answering every GET with ``answer(query)``: (JSON body, headers)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qsl, urlsplit

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body, headers = answer(dict(parse_qsl(urlsplit(self.path).query)))
            data = json.dumps(body).encode()
            self.send_response(200)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    finally:
        server.shutdown()
        server.server_close()


def wiki_check(code: Path, folder: Path, api_url: str, text: str) -> tuple[float, dict[str, Any]]:
    """``factcheck check TEXT`` with a corpus agent and a wikipedia agent on ``api_url`` (agent time-out 20 s)."""
    corpus = folder / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p", "text": "The Eiffel Tower is a tower in Paris, 330 metres tall."}) + "\n")
    cfg = folder / "factcheck-wiki.toml"
    cfg.write_text(
        f'profile = "offline"\n[pipeline]\nagent_timeout_s = 20\n[agents.corpus]\nsource = "corpus"\n'
        f'verifier = "lexical"\npath = "{corpus}"\n[agents.wikipedia]\nsource = "wikipedia"\n'
        f'verifier = "lexical"\napi_url = "{api_url}"\n'
    )
    command = [sys.executable, "-m", "factcheck", "check", text, "--format", "json", "--config", str(cfg), "--no-cache"]
    started = time.monotonic()
    done = subprocess.run(command, env=env_for(code, folder), cwd=code, capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - started
    return seconds, json.loads(done.stdout) if done.stdout.strip().startswith("{") else {"claims": []}


def judgments_of(found: dict[str, Any], agent: str) -> list[dict[str, Any]]:
    return [j for claim in found["claims"] for j in claim["judgments"] if j["agent"] == agent]


def scenario_maxlag(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    lagged = {"error": {"code": "maxlag", "info": "Waiting for 10.64.48.35: 6 seconds lagged.", "lag": 6}}
    with fake_wiki(lambda query: (lagged, {"Retry-After": "5", "X-Database-Lag": "6"})) as api:  # as MediaWiki
        seconds, found = wiki_check(code, folder, api, "The Eiffel Tower is in Paris. The Eiffel Tower is 330 m tall.")

    def outcome(judgment: dict[str, Any]) -> str:
        error = judgment.get("error") or ""
        if judgment.get("factuality") is not None:
            return "judged"
        return "timed out" if "timed out" in error else "gave up (maxlag)" if "maxlag" in error else "abstained"

    wiki = [outcome(j) for j in judgments_of(found, "wikipedia")]
    corpus = [outcome(j) for j in judgments_of(found, "corpus")]
    return [
        (
            "a wiki whose maxlag never clears (Retry-After 5, 2 claims, agent time-out 20 s)",
            "check s / wikipedia judgments / corpus judgments",
            f"{seconds:.1f} / {', '.join(wiki) or 'none'} / {', '.join(corpus) or 'none'}",
        )
    ]


def scenario_wikihtml(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    html = "<p>The <b>Eiffel Tower</b> is a <i>wrought-iron</i> tower in <a href='/wiki/Paris'>Paris</a>.</p>"
    page = {"pageid": 1, "ns": 0, "title": "Eiffel Tower", "index": 1, "extract": html, "lastrevid": 5}
    page |= {"canonicalurl": "https://en.wikipedia.org/wiki/Eiffel_Tower", "touched": "2024-01-01T00:00:00Z"}
    with fake_wiki(lambda query: ({"batchcomplete": True, "query": {"pages": [page]}}, {})) as api:
        _seconds, found = wiki_check(code, folder, api, "The Eiffel Tower is in Paris.")
    texts = [e["text"] for j in judgments_of(found, "wikipedia") for e in j.get("evidence", [])]
    markup = "yes" if any("<" in t for t in texts) else "no" if texts else "no evidence"
    start = repr(texts[0][:24]) if texts else "-"
    return [("HTML in Wikipedia lead extracts", "markup in the evidence / its start", f"{markup} / {start}")]


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _p95(values: list[float]) -> str:
    done = sorted(values)
    return f"{done[min(len(done) - 1, int(0.95 * len(done)))]:.2f}" if done else "-"


def scenario_slowbody(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    """One address, no key: ``--slow-connections`` connections each sending a request body a byte every 5 s
    (a closed one is opened again at the next byte), for ``--slow-s`` seconds, while health and
    authenticated checks are asked from the same address."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    head = b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
    with serving(code, folder, config(folder, code)) as (url, _process):
        host, port = url.removeprefix("http://").split(":")

        def opened() -> socket.socket | None:
            try:
                conn = socket.create_connection((host, int(port)), timeout=2)
                conn.sendall(head)
                conn.setblocking(False)
                return conn
            except OSError:
                return None

        def gone(conn: socket.socket) -> bool:
            try:
                return conn.recv(65536) == b"" or gone(conn)  # an answer (401), then the close
            except BlockingIOError:
                return False
            except OSError:
                return True

        flood = [opened() for _ in range(args.slow_connections)]
        stop = threading.Event()
        health: list[float] = []
        checks: list[float] = []

        def probe(kind: str, out: list[float], every_s: float) -> None:
            number = 0
            while not stop.is_set():
                number += 1
                started = time.monotonic()
                try:
                    if kind == "health":
                        ok = httpx.get(f"{url}/v1/health", timeout=5).status_code == 200
                    else:
                        text = {"text": f"Statins lower LDL cholesterol by {number} percent."}
                        ok = httpx.post(f"{url}/v1/check", json=text, headers=AUTH, timeout=15).status_code == 200
                    out.append(time.monotonic() - started if ok else float("inf"))
                except httpx.HTTPError:
                    out.append(float("inf"))
                stop.wait(every_s)

        probes = [
            threading.Thread(target=probe, args=("health", health, 0.25)),
            threading.Thread(target=probe, args=("check", checks, 1.0)),
        ]
        for thread in probes:
            thread.start()
        ends = time.monotonic() + args.slow_s
        reopened = 0
        while time.monotonic() < ends - 5:
            time.sleep(5)
            for i, conn in enumerate(flood):
                if conn is None or gone(conn):
                    if conn is not None:
                        conn.close()
                    flood[i] = opened()
                    reopened += 1
                else:
                    with suppress(OSError):
                        conn.send(b" ")
        time.sleep(max(0.0, ends - time.monotonic()))
        stop.set()
        for thread in probes:
            thread.join()
        still = sum(1 for conn in flood if conn is not None and not gone(conn))
        for conn in flood:
            if conn is not None:
                conn.close()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    def answered(values: list[float]) -> str:
        done = [v for v in values if v != float("inf")]
        return f"{len(done)} of {len(values)}, p95 {_p95(done)} s"

    return [
        (
            f"slow bodies: {args.slow_connections} conns, no key, {args.slow_s:g} s",
            "health answered / checks answered / flood conns open at the end (reopened)",
            f"{answered(health)} / {answered(checks)} / {still} ({reopened})",
        )
    ]


def scenario_disconnect(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    """``--drops`` checks of a text that is slow to split, each dropped by its client at 0.2 s: the server's
    CPU seconds from the first until it is idle again, against one check answered whole."""
    text = " ".join(f"He said it lowers LDL by {i} percent in adults." for i in range(420))[:19_000]
    with serving(code, folder, config(folder, code)) as (url, process):
        started_cpu, started = _cpu_s(process.pid), time.monotonic()
        httpx.post(f"{url}/v1/check", json={"text": text}, headers=AUTH, timeout=120)
        full_cpu, full_s = _cpu_s(process.pid) - started_cpu, time.monotonic() - started

        def dropped(number: int) -> None:
            with suppress(httpx.HTTPError):
                httpx.post(f"{url}/v1/check", json={"text": f"{number}. {text}"}, headers=AUTH, timeout=0.2)

        before = _cpu_s(process.pid)
        clients = [threading.Thread(target=dropped, args=(n,)) for n in range(args.drops)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        last, settled_by = _cpu_s(process.pid), time.monotonic() + 60
        while time.monotonic() < settled_by:  # until the server is idle again (under 0.05 CPU-s a second)
            time.sleep(1)
            now = _cpu_s(process.pid)
            if now - last < 0.05:
                break
            last = now
        burned = last - before
    return [
        (
            f"{args.drops} checks dropped at 0.2 s during splitting",
            "CPU-s burned / one whole check: CPU-s, s",
            f"{burned:.1f} / {full_cpu:.1f}, {full_s:.1f}",
        )
    ]


SERPER_KEY = "faults-serper-key-0123456789"


@contextmanager
def fake_search() -> Iterator[tuple[str, dict[str, int]]]:
    """A loopback Serper (``POST /search``, one organic result) and MediaWiki (``GET /w/api.php``, one page)
    on one port: its URL and the requests received, by path."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received = {"/search": 0, "/w/api.php": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            query = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}").get("q", "")
            with lock:
                received["/search"] += 1
            self._answer({"organic": [{"title": query, "snippet": query, "link": "https://example.org/a"}]})

        def do_GET(self) -> None:
            with lock:
                received["/w/api.php"] += 1
            page = {"pageid": 1, "title": "Statin", "index": 1, "extract": "Statins lower LDL cholesterol."}
            self._answer({"batchcomplete": True, "query": {"pages": [page]}})

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def search_agents(folder: Path, url: str, verifier: str, **llm: str) -> Path:
    """A factcheck.toml with a Serper agent and a MediaWiki agent at ``url``, judged by ``verifier``."""
    lines = ['profile = "offline"']
    agents = (("web", "serper", "base_url", url), ("wiki", "wikipedia", "api_url", f"{url}/w/api.php"))
    for name, source, option, endpoint in agents:
        lines += [f"[agents.{name}]", f'source = "{source}"', f'verifier = "{verifier}"', f'{option} = "{endpoint}"']
    if llm:  # the model extracts the claims too (one LLM call a document), as in the paper profile
        lines += ["[extractor]", 'name = "llm"', "[llm]", *(f"{k} = {json.dumps(v)}" for k, v in llm.items())]
    path = folder / f"factcheck-search-{verifier}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def summary_says(stdout: str, stderr: str) -> str:
    """What a batch's summary says was spent and sent (its "spent" and "sent by this run" rows)."""
    said = [" ".join(line.strip(" │").split()) for line in stdout.splitlines() if "spent" in line or "sent by" in line]
    return "; ".join(said) or (stderr.strip().splitlines() or ["(nothing)"])[-1][:160]


def scenario_search_budget(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    """Issue 24, item 4: 3 documents of 3 claims extracted by a fake model (2 queries each), a Serper and a
    MediaWiki agent judged by it; ``--max-llm-calls 3`` (spent by the extractions), then ``--max-searches 4``:
    the requests the fakes received, and what the summary says."""
    from factcheck.testing.llm import FakeChatServer

    docs = folder / "search-budget.jsonl"
    sentences = (
        "Statins lower LDL cholesterol by {i} percent. Smoking causes lung cancer in {i} of cases. "
        "Aspirin lowers the risk of heart attacks by {i} percent."
    )
    docs.write_text("".join(json.dumps({"id": i, "text": sentences.format(i=i + 10)}) + "\n" for i in range(3)))
    rows: list[Row] = []
    for limit in (("--max-llm-calls", "3"), ("--max-searches", "4")):
        out = folder / f"search-budget-out{limit[0]}.jsonl"
        with FakeChatServer(latency_s=0.2) as llm, fake_search() as (url, received):
            cfg = search_agents(folder, url, "llm", base_url=llm.url, model="gpt-4o-mini")
            command = [sys.executable, "-m", "factcheck", "batch", str(docs), "--out", str(out), "--config", str(cfg)]
            command += ["--no-cache", *limit]
            try:
                env = env_for(code, folder, SERPER_API_KEY=SERPER_KEY, COLUMNS="250")  # the summary unwrapped
                done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, timeout=args.timeout)
                said = summary_says(done.stdout, done.stderr)
                exit_code: int | str = done.returncode
            except subprocess.TimeoutExpired:
                said, exit_code = "", f"not finished in {args.timeout:g} s"
            time.sleep(0.5)  # a request sent as the process ended still arrives
            rows.append(
                (
                    f"search budget {' '.join(limit)}, 3 documents",
                    "exit / LLM, Serper, MediaWiki requests received / the summary says",
                    f"{exit_code} / {llm.requests}, {received['/search']}, {received['/w/api.php']} / {said}",
                )
            )
    return rows


def scenario_unreachable(code: Path, folder: Path, args: argparse.Namespace) -> list[Row]:
    """Issue 24, item 9: a Serper agent aimed at a closed loopback port (``--serper-url``, a config file where the
    flag is missing) beside a MediaWiki agent that answers: seconds a check and a batch of 8 documents take, and
    what the Serper agent says."""
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    rows: list[Row] = []
    env = env_for(code, folder, SERPER_API_KEY=SERPER_KEY)
    with fake_search() as (url, _received):
        cfg = search_agents(folder, url, "lexical")
        text = "Statins lower LDL cholesterol. Smoking causes lung cancer."
        command = [sys.executable, "-m", "factcheck", "check", text, "--format", "json", "--config", str(cfg)]
        started = time.monotonic()
        command += ["--no-cache", "--serper-url", dead]
        done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, timeout=180)
        seconds = time.monotonic() - started
        try:
            web = [j for c in json.loads(done.stdout)["claims"] for j in c["judgments"] if j["agent"] == "web"]
            said = (web[0].get("error") or "judged")[:110] if web else "no judgment"
        except (ValueError, KeyError):
            said = f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:100]}"
        rows.append(("unreachable Serper: check --serper-url", "seconds / the agent says", f"{seconds:.1f} / {said}"))
        docs = folder / "unreachable.jsonl"
        texts = [f"Statins lower LDL by {i} percent." for i in range(8)]
        docs.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
        for how, extra in (("--serper-url", ["--serper-url", dead]), ("config file", [])):
            target = cfg
            if not extra:  # the endpoint in the settings file: the only way on code without the flag
                target = folder / "factcheck-dead.toml"
                target.write_text(cfg.read_text().replace(f'base_url = "{url}"', f'base_url = "{dead}"'))
            out = folder / f"unreachable-out-{len(extra)}.jsonl"
            started = time.monotonic()
            result, last = batch(
                code,
                folder,
                str(docs),
                "--out",
                str(out),
                "--config",
                str(target),
                "--no-cache",
                *extra,
                timeout=args.timeout,
                SERPER_API_KEY=SERPER_KEY,
            )
            seconds = time.monotonic() - started
            rows.append(
                (
                    f"unreachable Serper: batch of 8, {how}",
                    "exit / seconds / lines / last message",
                    f"{result} / {seconds:.1f} / {len(lines(out))} / {last[:110] or '(none)'}",
                )
            )
    return rows


SCENARIOS: dict[str, Callable[[Path, Path, argparse.Namespace], list[Row]]] = {
    "plugins": scenario_plugins,
    "surrogate": scenario_surrogate,
    "budget": scenario_budget,
    "big": scenario_big,
    "connections": scenario_connections,
    "cache": scenario_cache,
    "maxlag": scenario_maxlag,
    "wikihtml": scenario_wikihtml,
    "neverready": scenario_neverready,
    "stalled_llm": scenario_stalled_llm,
    "slowbody": scenario_slowbody,
    "disconnect": scenario_disconnect,
    "search_budget": scenario_search_budget,
    "unreachable": scenario_unreachable,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", help="also run every scenario against git commit REF (e.g. HEAD)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma list of scenarios")
    parser.add_argument("--idle", type=int, default=2000, help="half-open connections in the connections scenario")
    parser.add_argument("--big-mb", type=float, default=0.5, help="size of the big document")
    parser.add_argument("--slow-connections", type=int, default=1100, help="slow-body connections (slowbody)")
    parser.add_argument("--slow-s", type=float, default=30, help="seconds the slow-body flood lasts (slowbody)")
    parser.add_argument("--drops", type=int, default=5, help="checks dropped during splitting (disconnect)")
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
