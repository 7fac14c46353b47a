"""Where factcheck reads the environment: settings are read once, at a front door, and passed down as data.

``load_settings(env=...)`` reads no other environment, ``factcheck serve`` never writes it (its checkers
and its worker processes get its flags as data), and the places that read it are few and named.
"""

from __future__ import annotations

import ast
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from factcheck.cli import cli
from factcheck.config import ENDPOINT_VARIABLES, Settings, load_settings
from factcheck.memory.settings import MemorySettings
from factcheck.options import declared
from factcheck.secrets import secret

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "factcheck"
KEY = "environment-test-key-0123"

# Every place in the package that reads the environment, by (file, function), and why it may.
READS = {
    ("config.py", "load_settings"): "a checker's settings: the file, then the environment, then overrides",
    ("server/settings.py", "from_env"): "the server's settings from the environment",
    ("server/settings.py", "load"): "the server's settings: its [server] table, then the environment, then flags",
    ("secrets.py", "secret"): "a component's key, by the variable its options name, when it needs it",
    ("secrets.py", "environment_secrets"): "every provider key, for the server to scrub from its answers",
    ("switches.py", "read_switches"): "the process's debugging and plugin-loading switches",
    ("paths.py", "cache_dir"): "the cache folder (FACTCHECK_CACHE_DIR, XDG_CACHE_HOME)",
    ("paths.py", "shared_data_candidates"): "the evaluation data folder (FACTCHECK_SHARED_DATA)",
    ("server/workers.py", "handed"): "a worker process reads what the supervisor handed it",
}
# The one write: the settings handed to the worker processes of factcheck serve --workers N.
WRITES = {("server/workers.py", "hand_off")}


def _environment_uses(path: Path) -> list[tuple[str, bool, int]]:
    """Each use of the environment in ``path``: (the enclosing function, whether it writes, line)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            names = {alias.name for alias in node.names} & {"environ", "getenv", "putenv", "unsetenv"}
            assert not names, f"{path}:{node.lineno} imports {names} from os: use os.environ where it is allowed"
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in {"environ", "getenv", "putenv", "unsetenv"}
        ):
            continue
        parent = parents[node]
        writes = node.attr in {"putenv", "unsetenv"} or (
            isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store | ast.Del)
        )
        if isinstance(parent, ast.Attribute) and parent.attr in {"update", "pop", "setdefault", "clear", "popitem"}:
            writes = True
        function, up = "<module>", parent
        while up is not None:
            if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef):
                function = up.name
                break
            up = parents.get(up)
        uses.append((function, writes, node.lineno))
    return uses


def test_the_environment_is_read_only_where_settings_are_loaded_and_secrets_looked_up() -> None:
    reads, writes = set(), set()
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        for function, written, line in _environment_uses(path):
            (writes if written else reads).add((name, function))
            place = f"factcheck/{name}:{line} ({function})"
            if written:
                assert (name, function) in WRITES, f"{place} writes the environment"
            else:
                assert (name, function) in READS, f"{place} reads the environment outside the allowed places"
    assert reads == set(READS) and writes == WRITES  # each allowed place still is one (the list stays true)


def test_the_check_of_the_environment_sees_reads_and_writes(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import os\n"
        "X = os.environ.get('A')\n"
        "def f():\n    os.environ['B'] = '1'\n"
        "def g():\n    return os.getenv('C')\n"
        "def h():\n    os.environ.update(D='1')\n"
    )
    assert sorted(_environment_uses(module)) == [
        ("<module>", False, 2),
        ("f", True, 4),
        ("g", False, 6),
        ("h", True, 8),
    ]


# Every variable a checker's settings are read from (the declarations, and the table of docs/configuration.md),
# each set to a value that would change the settings (or be refused) if it were read.
def _documented_variables() -> dict[str, str]:
    from factcheck.cache import CacheSettings
    from factcheck.llm.client import LLMSettings

    names = {
        e
        for cls in (Settings, MemorySettings, LLMSettings, CacheSettings)
        for d in declared(cls)
        for e in d.constraint.env
    }
    names |= {variable for _, _, variable in ENDPOINT_VARIABLES}
    table = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8").split("## Environment variables")[1]
    names |= set(re.findall(r"`((?:FACTCHECK|OPENAI|SERPER|SERPAPI)_[A-Z_]+)", table.split("\n## ")[0]))
    values = dict.fromkeys(names, "1")
    values |= {"FACTCHECK_PROFILE": "paper", "FACTCHECK_SCORER": "normsum", "FACTCHECK_MAX_CLAIMS": "3"}
    values |= {"SERPAPI_API_KEY": "serpapi-key", "OPENAI_API_KEY": "sk-key", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    values |= {"FACTCHECK_SERPER_URL": "http://127.0.0.1:9", "FACTCHECK_CORPUS": "elsewhere.jsonl"}
    values |= {"FACTCHECK_MEMORY": "elsewhere.sqlite", "FACTCHECK_CACHE": "elsewhere-cache.sqlite"}
    return values


def test_load_settings_reads_only_the_environment_it_is_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no factcheck.toml
    given = {"FACTCHECK_MAX_CLAIMS": "7"}
    alone = load_settings(env=given)
    paper = load_settings(env=given, profile="paper")
    variables = _documented_variables()
    assert {"FACTCHECK_PROFILE", "FACTCHECK_CORPUS", "FACTCHECK_LLM_MODEL", "FACTCHECK_WIKIPEDIA_URL"} <= set(variables)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert load_settings(env=given) == alone and alone.max_claims == 7 and alone.profile == "offline"
    assert load_settings(env=given, profile="paper") == paper
    # The web agent is Serper's: env= holds no SerpAPI key, whatever the process environment holds.
    assert paper.resolved_agents()[0].source == "serper"
    serpapi = load_settings(env={"SERPAPI_API_KEY": "k"}, profile="paper")
    assert serpapi.resolved_agents()[0].source == "serpapi"
    # Secrets excepted (documented on load_settings): a component looks its key up when it needs it.
    assert secret("SERPAPI_API_KEY") == "serpapi-key"


def _serve(monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    """The app ``factcheck serve ARGS`` would serve, in this process (nothing listens)."""
    apps: list[Any] = []
    monkeypatch.setattr("factcheck.server.runner.serve", lambda app, host, port, **options: apps.append(app))
    monkeypatch.setattr("factcheck.server.cli.configure_logging", lambda level: None)  # no handler left behind
    result = CliRunner().invoke(cli, ["serve", "--port", "0", *args])
    assert result.exit_code == 0, result.output
    (app,) = apps
    return app


def test_serve_leaves_the_environment_alone_and_its_checkers_use_its_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    corpus, memory = tmp_path / "corpus.jsonl", tmp_path / "memory.sqlite"
    corpus.write_text(json.dumps({"id": "a", "title": "A", "text": "Statins lower LDL cholesterol."}) + "\n")
    monkeypatch.setenv("FACTCHECK_CORPUS", "not this corpus")  # a flag wins over its variable
    before = dict(os.environ)
    app = _serve(
        monkeypatch,
        *("--profile", "paper", "--corpus", str(corpus), "--memory", str(memory)),
        *("--serper-url", "http://127.0.0.1:9/serper", "--wikipedia-url", "http://127.0.0.1:9/w/api.php"),
    )
    assert dict(os.environ) == before
    checker = app.state.factcheck.pool.get()
    sources = {agent.name: agent.source for agent in checker.agents}
    assert sources["corpus"].path == str(corpus)
    assert sources["memory"].path == str(memory)
    assert sources["web"].base_url == "http://127.0.0.1:9/serper"
    assert sources["wikipedia"].api_url == "http://127.0.0.1:9/w/api.php"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_hands_its_flags_to_its_worker_processes(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    corpus = tmp_path / "almanac.jsonl"
    record = {"id": "q1", "title": "Quux almanac", "url": "https://quux.example/a", "text": "The Quuxian river floods."}
    corpus.write_text(json.dumps(record) + "\n", encoding="utf-8")
    config = tmp_path / "factcheck.toml"
    config.write_text('profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n')
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTCHECK_API_KEYS": KEY, "FACTCHECK_CORPUS": "not this"}
    args = ["serve", "--port", str(port), "--workers", "2", "--config", str(config), "--corpus", str(corpus)]
    server = subprocess.Popen(
        [sys.executable, "-m", "factcheck", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        started = time.monotonic()
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() - started < 120, "the workers did not start"
            time.sleep(0.3)
        for _ in range(4):  # either worker may answer: each has the corpus the flag named
            answer = httpx.post(
                f"{url}/v1/check",
                json={"text": "The Quuxian river floods."},
                headers={"Authorization": f"Bearer {KEY}"},
                timeout=60,
            )
            assert answer.status_code == 200, answer.text
            (claim,) = answer.json()["claims"]
            titles = {e["title"] for judgment in claim["judgments"] for e in judgment["evidence"]}
            assert titles == {"Quux almanac"}
    finally:
        server.terminate()
        server.wait(30)
