"""Each server recipe in docs/configuration.md, run as written against a fake of that server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck.cli import cli
from factcheck.testing.llm import FakeModel
from tests.fake_llm import model_route
from tests.fakes import FakeServer
from tests.test_llm_quirks import CLAIMS, TEXT, mediawiki, serper

DOC = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def recipe(heading: str) -> str:
    """The TOML block under ``### heading`` in the configuration guide."""
    section = DOC.read_text(encoding="utf-8").split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    found = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert found, f"no TOML under {heading}"
    return found.group(1)


# Each recipe's server as it answers: how its models wrap JSON and which quirks it has.
SERVERS = {
    "Ollama": FakeModel(style="plain", missing_model="ollama_missing_model"),
    "vLLM": FakeModel(style="think", missing_model="vllm_missing_model"),
    "llama.cpp server": FakeModel(style="think", usage=False),
    "An OpenAI reasoning model": FakeModel(style="plain", reasoning=True),
}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("SERPER_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeServer() as s:
        s.route("POST", "/search", serper)
        s.route("GET", "/w/api.php", mediawiki)
        yield s


def run_recipe(server: FakeServer, heading: str, model: FakeModel, tmp_path: Path) -> dict:
    config = tmp_path / "factcheck.toml"
    config.write_text(recipe(heading), encoding="utf-8")
    server.route("POST", "/v1/chat/completions", model_route(model))
    args = ["check", TEXT, "--config", str(config), "--profile", "paper", "--no-cache", "--format", "json"]
    args += ["--llm-base-url", server.url + "/v1", "--serper-url", server.url]
    result = CliRunner().invoke(cli, [*args, "--wikipedia-url", server.url + "/w/api.php"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


@pytest.mark.parametrize("heading", sorted(SERVERS))
def test_each_recipe_checks_the_three_claims_right(server: FakeServer, heading: str, tmp_path: Path) -> None:
    model = SERVERS[heading]
    model.requests.clear()
    data = run_recipe(server, heading, model, tmp_path)
    assert {c["text"]: c["label"] for c in data["claims"]} == CLAIMS
    assert all(j["error"] is None for c in data["claims"] for j in c["judgments"])
    configured = re.search(r'model = "([^"]+)"', recipe(heading))
    assert configured and {r["model"] for r in model.requests} == {configured.group(1)}
    if heading == "An OpenAI reasoning model":
        assert not any("temperature" in r for r in model.requests) and data["usage"]["cost_usd"] > 0
    if not model.usage:
        assert data["usage"]["estimated_llm_calls"] == data["usage"]["llm_calls"] > 0


@pytest.mark.parametrize("heading", ["Ollama", "vLLM"])
def test_a_model_the_server_lacks_is_named_in_its_own_words(server: FakeServer, heading: str, tmp_path: Path) -> None:
    template = SERVERS[heading]
    model = FakeModel(style=template.style, models=("some-other-model",), missing_model=template.missing_model)
    data = run_recipe(server, heading, model, tmp_path)
    wanted = re.search(r'model = "([^"]+)"', recipe(heading)).group(1)  # type: ignore[union-attr]
    expected = {
        "Ollama": f'model "{wanted}" not found, try pulling it first',
        "vLLM": f"The model `{wanted}` does not exist.",
    }
    assert expected[heading] in data["usage"]["notes"][0]
    assert len(model.requests) == 1 and not server.calls("/search")
