"""Full garbage collections in ``factcheck serve`` under load: how many, and how long each took.

Runs ``bench/server_load.py`` with the arguments given after ``--``, with a
``sitecustomize`` hook on the servers' ``PYTHONPATH`` that times every
generation-2 collection (``gc.callbacks``) of a ``factcheck serve`` process and
appends it to a log: the server's working folder (which code it serves), when,
and how long. The servers then get the same load as in that benchmark; the
summary gives, per server (this tree, and the ``--baseline`` one), the number
of full collections, their median and longest duration, and when each came.
The load generator's own collections are not counted. (The hook takes the
place of any other ``sitecustomize`` for the run.)

    python bench/gc_pauses.py -- --clients 50 --duration 5 --baseline HEAD --per-second
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HOOK = """
import gc, os, sys, time
_log = os.environ.get("FACTCHECK_GC_LOG")
if _log:
    _started = [0.0]
    def _timed(phase, info):
        if info["generation"] != 2 or "serve" not in sys.argv:  # the servers only
            return
        if phase == "start":
            _started[0] = time.perf_counter()
        else:
            with open(_log, "a", encoding="utf-8") as out:
                out.write(f"{os.getcwd()}\\t{time.time():.3f}\\t{1000 * (time.perf_counter() - _started[0]):.2f}\\n")
    gc.callbacks.append(_timed)
"""

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("load", nargs=argparse.REMAINDER, help="arguments for bench/server_load.py, after --")
    args = parser.parse_args()
    load = [a for a in args.load if a != "--"]
    with tempfile.TemporaryDirectory(prefix="factcheck-gc-") as folder:
        (Path(folder) / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
        log = Path(folder) / "gc.log"
        env = {**os.environ, "FACTCHECK_GC_LOG": str(log)}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, env.get("PYTHONPATH", "")) if p)
        script = ROOT / "bench" / "server_load.py"
        done = subprocess.run([sys.executable, str(script), *load], env=env, capture_output=True, text=True)
        print(done.stdout)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        # Each server runs in the folder of its code: this tree, or the exported baseline.
        pauses: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
            where, at, ms = line.split("\t")
            pauses["current" if Path(where).resolve() == ROOT else "baseline"].append((float(at), float(ms)))
    print("Full (generation 2) collections in each server, over the whole run (start-up included):\n")
    print("| server | collections | median ms | longest ms | each: seconds after the server's first, ms |")
    print("|---|---:|---:|---:|---|")
    for name, found in sorted(pauses.items()):
        values = [ms for _, ms in found]
        each = ", ".join(f"+{at - found[0][0]:.1f} s {ms:.0f}" for at, ms in found)
        print(f"| {name} | {len(values)} | {statistics.median(values):.1f} | {max(values):.1f} | {each} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
