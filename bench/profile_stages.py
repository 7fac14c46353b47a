"""Where a check's time goes: a sampled profile of a cached request and of cold claims, stage by stage.

The profiler is py-spy (sampling, in its own process: the code runs unchanged, at full speed). Two
measurements, each on this tree and, with ``--baseline REF[,REF...]``, on each git commit REF side by side:

- ``cached``: ``factcheck serve`` (offline profile) runs under py-spy; one text is checked once, then
  ``--clients`` clients send that same text for ``--duration`` seconds, so every answer comes from the
  server's cache. Reported: CPU microseconds per request, by stage.
- ``cold``: ``factcheck batch`` checks ``--claims`` SciFact titles one at a time (``--concurrency 1``,
  an empty judgment cache) under py-spy. Reported: CPU milliseconds per claim, by stage, start-up
  (imports, loading the models and the corpus index) apart.

A sample is given to the stage of the innermost frame that belongs to one (:data:`STAGES`): a sentence
embedded while the verifier picks its evidence counts as ``embed``, the verifier's own model run as
``verify``. The samples are py-spy's non-idle ones (threads waiting are not sampled), so a stage's share
is CPU time. Each run also writes its raw collapsed stacks (``--out``; open them in speedscope or
flamegraph.pl), and the table lists the functions that cost the most.

    python bench/profile_stages.py                                  # cached and cold, this tree
    python bench/profile_stages.py --baseline 4af1622 --out build/profile
    python bench/profile_stages.py --baseline 0c5605c,4af1622      # two earlier commits beside this tree
    python bench/profile_stages.py --what cold --claims 60 --rate 250
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import export
from server_load import CORPUS, ROOT, RawClient, free_port, start_server

# (stage, what a frame's file or function name contains): the innermost frame that matches decides.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("start-up", ("importlib._bootstrap", "load_embedder", "load_model", "open_onnx", "_load_index", "warm_up")),
    ("embed", ("factcheck/embed.py",)),
    ("verify", ("factcheck/verifiers/",)),  # a model run counts where it was asked for: verify or embed
    ("retrieve", ("factcheck/sources/", "bm25s/", "Stemmer", "factcheck/ranking.py", "factcheck/pages.py")),
    ("extract", ("factcheck/extractors/", "spacy/", "thinc/", "factcheck/claimtime.py", "dateparser/", "py3langid")),
    ("deliberate", ("factcheck/deliberation/",)),
    ("memory", ("factcheck/memory/", "factcheck/precedents.py")),
    ("score", ("factcheck/scoring/", "factcheck/vote.py", "factcheck/trust.py", "factcheck/independence.py")),
    ("cache", ("factcheck/cache.py",)),
    ("serialise", ("json/", "factcheck/jsonl.py", "factcheck/report.py", "factcheck/secrets.py", "to_dict")),
    ("server", ("uvicorn/", "h11/", "starlette/", "fastapi/", "pydantic", "anyio/", "factcheck/server/")),
    ("batch", ("factcheck/batch/", "factcheck/resume.py")),
    ("pipeline", ("factcheck/pipeline/", "factcheck/calls.py", "factcheck/loops.py", "factcheck/agent.py")),
    ("asyncio, threads", ("asyncio/", "threading.py", "concurrent/", "selectors.py")),
)


# Innermost frames of a thread that waits, not works. py-spy's own idle test misses these here (a worker
# thread blocked on its queue shows as running), so they are dropped by name.
WAITING = (
    "_worker (concurrent/futures/thread.py:81)",
    "EpollSelector.select (",
    "Condition.wait (",
    "Event.wait (",
    "Thread.join (",
    "_wait_for_tstate_lock (",
    "Queue.get (",
)


def stage_of(stack: Sequence[str]) -> str:
    """The stage of one sample, its frames root first (``function (file:line)``)."""
    if any("importlib._bootstrap" in frame for frame in stack):
        return "start-up"  # anything under an import runs once a process
    for frame in reversed(stack):
        for stage, marks in STAGES:
            if any(mark in frame for mark in marks):
                return stage
    return "other"


@dataclass
class Profile:
    """The samples of one run: counted by stage, by innermost function, and by function anywhere on the stack."""

    rate: int
    samples: int = 0
    stages: Counter[str] = field(default_factory=Counter)
    own: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)

    @classmethod
    def read(cls, path: Path, rate: int) -> Profile:
        """Parse py-spy's raw output: one ``frame;frame;... count`` line per distinct stack."""
        profile = cls(rate)
        for line in path.read_text(encoding="utf-8").splitlines():
            stacks, _, count = line.rpartition(" ")
            if not stacks or not count.isdigit():
                continue
            if stacks.split(";")[-1].startswith(WAITING):
                continue
            frames = [short(frame) for frame in stacks.split(";")]
            n = int(count)
            profile.samples += n
            profile.stages[stage_of(stacks.split(";"))] += n
            profile.own[frames[-1]] += n
            for frame in set(frames):
                profile.total[frame] += n
        return profile

    def seconds(self, samples: int) -> float:
        return samples / self.rate


def short(frame: str) -> str:
    """``function (path/to/file.py:123)`` without the line and the folders above the package."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "/factcheck/", "lib/python3"):
        if marker in where:
            where = where.split(marker, 1)[1] if marker != "/factcheck/" else "factcheck/" + where.split(marker, 1)[1]
            break
    return f"{name} ({where})"


def py_spy() -> str:
    """The py-spy program (the dev extra installs it beside this interpreter)."""
    found = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("bench/profile_stages.py needs py-spy: pip install py-spy (or the dev extra)")
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (Linux ``/proc``), all its threads together."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def profile_server(code: Path, folder: Path, rate: int, kind: str, args: argparse.Namespace) -> Run:
    """``factcheck serve`` of ``code``, up and warmed, profiled while it answers cached or cold checks."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, folder, "offline", None, code)
    out = folder / f"{kind}.txt"
    try:
        texts = list(titles(args.claims + 1))
        asyncio.run(sequential(url, texts[:1]))  # the first check loads what a check loads lazily
        spy = subprocess.Popen(
            [
                py_spy(),
                "record",
                "--nonblocking",
                "--format",
                "raw",
                "--rate",
                str(rate),
                "-o",
                str(out),
                "--pid",
                str(server.pid),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)  # py-spy attached
        cpu = cpu_seconds(server.pid)
        if kind == "cached":
            count = asyncio.run(repeat(url, texts[0], args.clients, args.duration))
        else:
            count = asyncio.run(sequential(url, texts[1:]))
        cpu = cpu_seconds(server.pid) - cpu
        spy.send_signal(signal.SIGINT)
        _, errors = spy.communicate(timeout=60)
        if not out.exists():
            raise SystemExit(f"py-spy wrote no profile: {errors.decode()[-1000:]}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return Run(Profile.read(out, rate), count, cpu)


@dataclass(frozen=True)
class Run:
    """A profile, how many requests (cached) or claims (cold) it covers, and the server's measured CPU seconds."""

    profile: Profile
    count: int
    cpu_s: float


async def sequential(url: str, texts: Sequence[str]) -> int:
    """Check each text in turn from one client; the number answered 200."""
    client = RawClient(url)
    done = 0
    try:
        for text in texts:
            status, _ = await client.post(text)
            done += status == 200
    finally:
        client.close()
    return done


async def repeat(url: str, text: str, clients: int, duration: float) -> int:
    """Send ``text`` (checked before) from ``clients`` clients for ``duration`` s; the requests answered."""
    end = time.perf_counter() + duration
    done = 0

    async def one() -> None:
        nonlocal done
        client = RawClient(url)
        try:
            while time.perf_counter() < end:
                status, _ = await client.post(text)
                done += status == 200
        finally:
            client.close()

    await asyncio.gather(*(one() for _ in range(clients)))
    return done


def titles(count: int) -> list[str]:
    """The first ``count`` titles of the shipped corpus worth a claim, each a one-sentence text."""
    found = []
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        for line in handle:
            title = json.loads(line)["title"].strip().rstrip(".")
            if 4 <= len(title.split()) <= 25:
                found.append(title + ".")
                if len(found) == count:
                    break
    return found


def table(columns: dict[str, Run], unit: str, scale: float, top: int) -> str:
    """CPU per request or claim by stage for each run (sampled: time Python threads spent running), the
    process's measured CPU, and the costliest functions of each."""
    names = list(columns)
    first = columns[names[0]].profile
    stages = sorted({s for run in columns.values() for s in run.profile.stages}, key=lambda s: -first.stages[s])
    head = "| stage | " + " | ".join(f"{n}: {unit}" for n in names) + " |"
    lines = [head, "|---" + "|---:" * len(names) + "|"]

    def per(run: Run, samples: int) -> float:
        return scale * run.profile.seconds(samples) / max(run.count, 1)

    def row(label: str, cells: Iterable[float]) -> str:
        return f"| {label} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |"

    for stage in stages:
        lines.append(row(stage, (per(r, r.profile.stages[stage]) for r in columns.values())))
    lines.append(row("**sampled, all stages**", (per(r, r.profile.samples) for r in columns.values())))
    measured = [scale * r.cpu_s / max(r.count, 1) for r in columns.values()]
    lines.append(row("**measured CPU of the process**", measured))
    outside = (m - per(r, r.profile.samples) for m, r in zip(measured, columns.values(), strict=True))
    lines.append(row("measured less sampled (native threads: onnxruntime's pool)", outside))
    for name, cpu in zip(names[1:], measured[1:], strict=True):
        lines.append(f"\n{names[0]} / {name}: {measured[0] / cpu:.2f}x the measured CPU a {unit.split('/')[1]}")
    for name, run in columns.items():
        lines += [
            f"\n{name}: the {top} costliest functions ({unit}; own: innermost frame; total: anywhere on the stack)\n"
        ]
        lines += ["| function | own | total |", "|---|---:|---:|"]
        for function, n in run.profile.own.most_common(top):
            lines.append(f"| `{function}` | {per(run, n):.1f} | {per(run, run.profile.total[function]):.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--what", default="cached,cold", help="cached, cold, or both (comma list).")
    parser.add_argument("--baseline", help="Also profile these git commits (a comma list, e.g. 4af1622), side by side.")
    parser.add_argument("--rate", type=int, default=200, help="Samples a second.")
    parser.add_argument("--clients", type=int, default=50, help="Clients repeating the cached text.")
    parser.add_argument("--duration", type=float, default=6.0, help="Seconds of cached requests.")
    parser.add_argument("--claims", type=int, default=30, help="Cold claims checked, one after the other.")
    parser.add_argument("--top", type=int, default=12, help="Functions listed per run.")
    parser.add_argument("--out", type=Path, help="Keep the raw collapsed stacks and the tables here.")
    args = parser.parse_args()
    what = [w.strip() for w in args.what.split(",") if w.strip()]
    report = []
    with tempfile.TemporaryDirectory(prefix="factcheck-profile-") as tmp:
        codes = {"current": ROOT}
        for ref in (r.strip() for r in (args.baseline or "").split(",") if r.strip()):
            (Path(tmp) / f"code-{ref}").mkdir()
            codes[ref] = export(ref, Path(tmp) / f"code-{ref}")
        for kind in what:
            columns = {}
            for name, code in codes.items():
                folder = Path(tmp) / f"{kind}-{name}"
                folder.mkdir()
                columns[name] = profile_server(code, folder, args.rate, kind, args)
                if args.out:
                    args.out.mkdir(parents=True, exist_ok=True)
                    (args.out / f"{kind}-{name}.txt").write_bytes((folder / f"{kind}.txt").read_bytes())
            counts = ", ".join(f"{n}: {r.count}" for n, r in columns.items())
            if kind == "cached":
                load = f"{args.clients} clients, {args.duration:g} s; requests {counts}"
                report += [f"## A cached request: server CPU µs ({load})"]
                report += ["", table(columns, "µs/request", 1e6, args.top), ""]
            else:
                report += [f"## A cold claim: server CPU ms (one-claim texts one after another; claims {counts})"]
                report += ["", table(columns, "ms/claim", 1e3, args.top), ""]
    text = "\n".join(report)
    print(text)
    if args.out:
        (args.out / "profile.md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
