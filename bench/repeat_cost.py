"""The server's own CPU for a check sent again: the ASGI app called in-process, without the HTTP stack.

A two-claim text is checked once through each route (``POST /v1/check`` and ``POST /v1/check/stream``), then
the same request is sent ``--requests`` times and the process CPU per request is printed. Every answer must
be a 200: rate limits are off, so a refusal can never pass for a cheap repeat. Without the socket, h11 and
uvicorn (the same in every code) what is left is the app's own work: middleware, routing, the cache.

``--baseline REF`` also measures the code of that git commit (exported with ``git archive``, run with this
interpreter or the overlay venv of ``bench/baseline.py``), each code in its own process, side by side.

    python bench/repeat_cost.py --baseline 4af1622
    python bench/repeat_cost.py --requests 5000 --routes /v1/check
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from baseline import ROOT, export, python_for

TEXT = "Statins lower LDL cholesterol. Aspirin reduces the risk of heart attack."
ROUTES = ("/v1/check", "/v1/check/stream")


def measure(route: str, requests: int) -> dict[str, Any]:
    """In the code on ``sys.path``: CPU µs per repeated request to ``route``, after one check and 200 repeats."""
    os.environ.update(
        {
            "FACTCHECK_CACHE_DIR": tempfile.mkdtemp(prefix="factcheck-repeat-"),
            "FACTCHECK_RATE_PER_MINUTE": "0",
            "FACTCHECK_CLAIMS_PER_MINUTE": "0",
        }
    )
    from factcheck.server.app import create_app

    app = create_app()
    body = json.dumps({"text": TEXT}).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": route,
        "raw_path": route.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def call() -> int:
        sent: list[MutableMapping[str, Any]] = []
        delivered = False

        async def receive() -> MutableMapping[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)  # the client stays: no disconnect
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app({**scope, "headers": list(scope["headers"]), "state": {}}, receive, send)
        return int(sent[0]["status"])

    async def run() -> dict[str, Any]:
        async with app.router.lifespan_context(app):
            for _ in range(201):  # the check, then repeats until the caches are warm
                if (status := await call()) != 200:
                    raise SystemExit(f"{route} answered {status}")
            started = time.process_time()
            statuses = [await call() for _ in range(requests)]
            cpu = time.process_time() - started
        if set(statuses) != {200}:
            raise SystemExit(f"{route} answered {sorted(set(statuses))}, not only 200")
        return {"route": route, "requests": requests, "cpu_us": cpu / requests * 1e6}

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="Also measure this git commit (e.g. 4af1622), side by side.")
    parser.add_argument("--requests", type=int, default=3000, help="Repeated requests measured per route.")
    parser.add_argument("--routes", default=",".join(ROUTES), help="Comma list of routes.")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a route, measured in this process
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.requests)))
        return
    routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    with tempfile.TemporaryDirectory(prefix="factcheck-repeat-") as tmp:
        codes = {"current": ROOT}
        if args.baseline:
            codes[args.baseline] = export(args.baseline, Path(tmp) / "baseline")
        results: dict[tuple[str, str], float] = {}
        for route in routes:
            for name, code in codes.items():
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])}
                command = [python_for(code, ("server",)), __file__, "--child", route, "--requests", str(args.requests)]
                done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"{name} on {route}: {done.stderr.strip().splitlines()[-1:]}")
                results[name, route] = json.loads(done.stdout.strip().splitlines()[-1])["cpu_us"]
    names = list(codes)
    header = "| route | " + " | ".join(f"{n}: CPU µs a request" for n in names)
    header += " | ratio |" if args.baseline else " |"
    print(header)
    print("|---|" + "---:|" * (len(names) + (1 if args.baseline else 0)))
    for route in routes:
        cells = [f"{results[n, route]:,.0f}" for n in names]
        if args.baseline:
            cells.append(f"{results['current', route] / results[args.baseline, route]:.2f}")
        print(f"| {route} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
