"""Choosing a deliberation policy everywhere: factcheck.toml, the environment, flags, -o, the builder and the server."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import factcheck
from factcheck import ConfigError, Settings, load_settings
from factcheck.build import build_checker, build_deliberator, fingerprint, route_options, split_options
from factcheck.cli import cli
from factcheck.deliberation.ecmr import ECMR
from factcheck.deliberation.lase import LASE
from factcheck.plugin import Action, stop
from factcheck.registry import get_registry
from factcheck.scoring.labels import ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.server.answers import cacheable
from factcheck.types import DeliberationStep

CLAIM = "Statins reduce cardiovascular events."


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


# --- settings ---


def test_the_deliberation_table_names_the_policy_and_its_options(tmp_path: Path) -> None:
    config = write(tmp_path / "factcheck.toml", '[deliberation]\npolicy = "lase"\ntau_conf = 0.7\nmax_steps = 3\n')
    settings = load_settings(config, env={})
    assert settings.deliberation == "lase"
    assert dict(settings.deliberation_options) == {"tau_conf": 0.7, "max_steps": 3}
    policy = build_deliberator(settings)
    assert isinstance(policy, LASE) and (policy.tau_conf, policy.max_steps) == (0.7, 3)
    assert load_settings(write(tmp_path / "none.toml", ""), env={}).deliberation == "off"


def test_a_misspelt_table_or_an_option_the_policy_lacks_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown setting deliberations"):
        load_settings(write(tmp_path / "a.toml", '[deliberations]\npolicy = "lase"\n'), env={})
    settings = load_settings(write(tmp_path / "b.toml", '[deliberation]\npolicy = "ecmr"\ntau_lp = 0.5\n'), env={})
    with pytest.raises(ConfigError, match=r"ecmr: unknown option tau_lp \(options: .*tau_confidence"):
        build_deliberator(settings)
    with pytest.raises(ConfigError, match=r"unknown deliberation policy 'nope' \(available: ecmr, lase, off\)"):
        build_checker(Settings(deliberation="nope", cache={"enabled": False}))


def test_the_environment_sets_the_policy_and_an_override_wins(tmp_path: Path) -> None:
    config = write(tmp_path / "factcheck.toml", '[deliberation]\npolicy = "lase"\ntau_lp = 0.9\n')
    assert load_settings(config, env={"FACTCHECK_DELIBERATION": "ecmr"}).deliberation == "ecmr"
    assert load_settings(config, env={"FACTCHECK_DELIBERATION": "ecmr"}, deliberation="off").deliberation == "off"
    # turning the file's policy off works although off has no tau_lp
    off = load_settings(config, env={}, deliberation="off")
    assert build_deliberator(off).name == "off" and not build_deliberator(off).active
    merged = Settings(deliberation_options={"tau_lp": 0.9}).with_overrides(deliberation_options={"tau_h": 0.2})
    assert dict(merged.deliberation_options) == {"tau_lp": 0.9, "tau_h": 0.2}


def trust_file(path: Path, gate: dict[str, Any] | None = None) -> str:
    data: dict[str, Any] = {"schema": "factcheck-trust/1", "agents": {}}
    if gate is not None:
        data["gate"] = gate
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_a_routing_trust_file_reaches_a_policy_without_its_own(tmp_path: Path) -> None:
    routed_file, own_file = trust_file(tmp_path / "trust.json"), trust_file(tmp_path / "mine.json")
    routed = build_deliberator(Settings(deliberation="lase", routing_options={"trust": routed_file}))
    assert routed.trust == routed_file
    own = Settings(
        deliberation="lase", deliberation_options={"trust": own_file}, routing_options={"trust": routed_file}
    )
    assert build_deliberator(own).trust == own_file


def test_the_gate_fitted_into_the_trust_file_applies_unless_an_option_is_named(tmp_path: Path) -> None:
    gate = {"policies": {"lase": {"options": {"tau_conf": 0.71, "tau_lp": 0.42}}, "ecmr": {"options": {}}}}
    path = trust_file(tmp_path / "trust.json", gate)
    fitted = build_deliberator(Settings(deliberation="lase", routing_options={"trust": path}))
    assert (fitted.tau_conf, fitted.tau_lp) == (0.71, 0.42)
    named = build_deliberator(
        Settings(deliberation="lase", deliberation_options={"tau_lp": 0.9}, routing_options={"trust": path})
    )
    assert (named.tau_conf, named.tau_lp) == (0.71, 0.9)
    # A policy the file fitted nothing for keeps its defaults.
    assert build_deliberator(Settings(deliberation="ecmr", routing_options={"trust": path})) == ECMR(trust=path)


# --- the builder and the fingerprint ---


def test_the_builder_hands_the_checker_the_policy_by_name_or_as_an_object() -> None:
    by_name = build_checker(Settings(cache={"enabled": False}), deliberation="ecmr")
    assert isinstance(by_name.deliberation, ECMR)
    handed = LASE(max_steps=1)
    assert build_checker(Settings(cache={"enabled": False}), deliberation=handed).deliberation is handed
    assert not build_checker(Settings(cache={"enabled": False})).deliberation.active  # off by default


def test_the_fingerprint_differs_by_policy_and_by_its_options() -> None:
    off = fingerprint(Settings())
    assert "deliberation" not in off  # a run recorded before deliberation existed still resumes
    lase = fingerprint(Settings(deliberation="lase"))
    assert lase["deliberation"]["name"] == "lase" and lase["deliberation"]["tau_lp"] == LASE().tau_lp
    assert fingerprint(Settings(deliberation="ecmr"))["deliberation"]["name"] == "ecmr"
    capped = fingerprint(Settings(deliberation="lase", deliberation_options={"max_steps": 2}))
    assert capped != lase and capped["deliberation"]["max_steps"] == 2
    assert {k: v for k, v in lase.items() if k != "deliberation"} == off


# --- -o routing ---


def test_each_option_goes_to_the_component_that_declares_it() -> None:
    settings = route_options(
        Settings(deliberation="lase"), {"bounds": "reference", "max_steps": "3", "deliberation.tau_conf": "0.7"}
    )
    assert dict(settings.scoring_options) == {"bounds": "reference"}
    assert dict(settings.deliberation_options) == {"max_steps": "3", "tau_conf": "0.7"}
    checker = build_checker(settings, cache={"enabled": False})
    assert isinstance(checker.deliberation, LASE)
    assert (checker.deliberation.max_steps, checker.deliberation.tau_conf) == (3, 0.7)
    assert checker.scorer.options()["bounds"] == "reference"


@dataclass(frozen=True)
class Thresholded(LASE):
    """A policy with an option a label rule has too, to show who gets a shared key."""

    name: str = "thresholded"
    claim_threshold: float = 0.5


def test_the_prefix_sends_a_shared_key_to_the_policy_and_trust_goes_to_everyone_that_has_it() -> None:
    rule, policy = ThresholdRule(), Thresholded()
    plain = split_options({"claim_threshold": "0.6"}, (MAFCScorer(), rule), policy)
    assert plain == ({"claim_threshold": "0.6"}, {}, [])  # the label rule's first
    prefixed = split_options({"deliberation.claim_threshold": "0.6"}, (MAFCScorer(), rule), policy)
    assert prefixed == ({}, {"claim_threshold": "0.6"}, [])
    pamas = get_registry().get("scorers", "pamas")
    assert split_options({"trust": "t.json"}, (pamas, rule), policy) == ({"trust": "t.json"}, {"trust": "t.json"}, [])
    assert split_options({"deliberation.name": "x", "colour": "red"}, (pamas, rule), policy)[2] == [
        "deliberation.name",
        "colour",
    ]


def test_an_option_nobody_has_is_refused_with_what_they_have() -> None:
    with pytest.raises(ConfigError, match="unknown scoring option colour for scorer 'mafc', labels 'compose' and "):
        route_options(Settings(deliberation="lase"), {"colour": "red"})
    with pytest.raises(ConfigError, match=r"options: .*bounds.*max_steps.*tau_lp"):
        route_options(Settings(deliberation="lase"), {"colour": "red"})
    with pytest.raises(ConfigError, match=r"unknown deliberation option tau_lp for policy 'ecmr' \(options: always"):
        route_options(Settings(deliberation="ecmr"), {"deliberation.tau_lp": "0.5"})
    with pytest.raises(ConfigError, match=r"max_steps is a deliberation policy's, and deliberation is off"):
        route_options(Settings(), {"max_steps": "3"})


# --- the command line ---


def test_check_takes_the_policy_and_its_options_from_the_flags() -> None:
    code, output = run(
        "check", CLAIM, "--profile", "baseline", "--no-cache", "--format", "json",
        "--deliberation", "lase", "-o", "max_steps=2", "-o", "deliberation.tau_conf=0.95",
    )  # fmt: skip
    assert code == 0, output
    (claim,) = json.loads(output)["claims"]
    record = claim["deliberation"]
    assert record["policy"] == "lase"
    assert (record["options"]["max_steps"], record["options"]["tau_conf"]) == (2, 0.95)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--deliberation", "nope"], "unknown deliberation policy 'nope' (available: ecmr, lase, off)"),
        (["-o", "max_steps=3"], "max_steps is a deliberation policy's, and deliberation is off"),
        (["--deliberation", "ecmr", "-o", "deliberation.tau_lp=1"], "unknown deliberation option tau_lp"),
        (["--deliberation", "lase", "-o", "max_steps=-1"], "max_steps must be a whole number of at least 0"),
    ],
)
def test_a_bad_policy_or_option_is_one_clear_line(args: list[str], message: str) -> None:
    code, output = run("check", CLAIM, "--profile", "baseline", *args)
    assert code == 1
    (line,) = output.strip().splitlines()
    assert line.startswith("Error: ") and message in line


@pytest.mark.parametrize("command", ["check", "batch", "eval", "serve"])
def test_every_checking_command_has_the_flag(command: str) -> None:
    code, output = run(command, "--help")
    assert code == 0 and "--deliberation" in output


def test_a_batch_resumes_only_with_the_policy_it_was_recorded_with(tmp_path: Path) -> None:
    documents = write(tmp_path / "in.jsonl", json.dumps({"id": "d1", "text": CLAIM}) + "\n")
    out = tmp_path / "out.jsonl"
    common = ("batch", str(documents), "--out", str(out), "--profile", "baseline", "--no-cache", "-q")
    code, output = run(*common, "--deliberation", "lase")
    assert code == 0, output
    recorded = json.loads((tmp_path / "out.jsonl.run.json").read_text())
    assert recorded["deliberation"]["name"] == "lase"
    assert json.loads(out.read_text())["claims"][0]["deliberation"]["policy"] == "lase"
    code, output = run(*common, "--deliberation", "ecmr")
    assert code == 1 and "recorded with other settings (changed: deliberation" in output
    assert run(*common, "--deliberation", "lase")[0] == 0


def test_eval_checks_its_deliberation_options_before_reading_data(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("FACTCHECK_SHARED_DATA", str(tmp_path))
    code, output = run("eval", "scifact-binary", "--deliberation", "lase", "-o", "deliberation.colour=1")
    assert code == 1 and "unknown deliberation option colour for policy 'lase'" in output
    assert "missing data file" not in output
    recorded = write(tmp_path / "judgments.jsonl", "")
    code, output = run("eval", "scifact-binary", "--judgments", str(recorded), "--deliberation", "lase")
    assert code == 1 and "--deliberation applies when checking" in output


# --- the server ---


def test_an_answer_whose_deliberation_was_cut_short_is_not_cached() -> None:
    def answer(stopped: str | None) -> dict[str, Any]:
        claim: dict[str, Any] = {"id": "c1", "judgments": [{"agent": "corpus", "error": None}]}
        if stopped is not None:
            claim["deliberation"] = {"policy": "lase", "stopped": stopped}
        return {"claims": [claim], "partial": False}

    assert cacheable(answer(None)) and cacheable(answer("the leader is sure"))
    for stopped in ("deadline reached: kept the first-round verdict", "budget: --max-llm-calls", "error: boom"):
        assert not cacheable(answer(stopped)), stopped


fastapi = pytest.importorskip("fastapi", reason="the server extra is not installed")


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("config")
    return str(write(folder / "factcheck.toml", 'profile = "baseline"\n'))


def test_the_pool_keys_checkers_and_answers_on_the_policy(lexical: str) -> None:
    from factcheck.server.pool import CheckerPool
    from factcheck.server.settings import ServerSettings

    pool = CheckerPool(ServerSettings(profile="baseline", deliberation="ecmr", config=lexical))
    assert pool.key() == ("baseline", None, None, "ecmr") == pool.key(deliberation="ecmr")
    assert pool.key(deliberation="lase") == ("baseline", None, None, "lase")
    default, lase = pool.get(), pool.get(deliberation="lase")
    assert default.deliberation.name == "ecmr" and lase.deliberation.name == "lase"
    assert pool.get(deliberation="ecmr") is default and lase is not default
    unset = CheckerPool(ServerSettings(profile="baseline", config=lexical))
    assert unset.key()[3] is None and not unset.get().deliberation.active  # the settings file's: off


def test_serve_refuses_an_unknown_default_policy_before_it_starts() -> None:
    code, output = run("serve", "--deliberation", "nope", "--port", "0")
    assert code == 1 and "unknown deliberation policy 'nope' (available: ecmr, lase, off)" in output


def test_a_request_names_a_registered_policy_and_never_its_options(lexical: str) -> None:
    from starlette.testclient import TestClient

    from factcheck.server.app import create_app
    from factcheck.server.settings import ServerSettings

    app = create_app(ServerSettings(profile="baseline", config=lexical, rate_per_minute=0))
    client = TestClient(app, raise_server_exceptions=False)  # no lifespan: nothing warmed up
    unknown = client.post("/v1/check", json={"text": CLAIM, "deliberation": "nope"})
    assert unknown.status_code == 422 and "unknown deliberation policy 'nope'" in unknown.json()["error"]
    malformed = client.post("/v1/check", json={"text": CLAIM, "deliberation": "lase; rm"})
    assert malformed.status_code == 422 and "must be a component name" in malformed.json()["error"]
    options = client.post("/v1/check", json={"text": CLAIM, "deliberation": "lase", "max_steps": 99})
    assert options.status_code == 422 and "max_steps" in options.json()["error"]

    first = client.post("/v1/check", json={"text": CLAIM, "deliberation": "lase"})
    assert first.status_code == 200, first.text
    assert first.json()["claims"][0]["deliberation"]["policy"] == "lase"
    again = client.post("/v1/check", json={"text": CLAIM, "deliberation": "lase"})
    assert again.json()["usage"]["cache_hits"] == {"answer": 1}
    other = client.post("/v1/check", json={"text": CLAIM, "deliberation": "off"})
    assert other.json()["usage"]["cache_hits"] != {"answer": 1}  # another policy: another answer
    assert "deliberation" not in other.json()["claims"][0]


# --- the public API ---


def test_the_deliberation_names_are_public() -> None:
    for name in ("Deliberator", "DeliberationState", "Deliberation", "DeliberationStep", "Critique"):
        assert name in factcheck.__all__ and getattr(factcheck, name).__doc__
    assert set(factcheck.get_deliberators()) >= {"off", "lase", "ecmr"}

    @dataclass(frozen=True)
    class Quiet(factcheck.Deliberator):
        name: str = "quiet"

        def gate(self, state: factcheck.DeliberationState) -> str | None:
            return None

        def next_action(self, state: factcheck.DeliberationState, steps: Sequence[DeliberationStep]) -> Action:
            return stop("nothing to say")

    assert Quiet().configure(max_steps="2").max_steps == 2  # a plugin's policy takes the shared options


def test_naming_another_policy_keeps_only_the_options_every_policy_has() -> None:
    settings = Settings(deliberation="lase", deliberation_options={"tau_conf": 0.7, "max_steps": 3})
    other = settings.with_overrides(deliberation="ecmr")
    assert dict(other.deliberation_options) == {"max_steps": 3}
    assert build_deliberator(other).max_steps == 3  # and no "ecmr: unknown option tau_conf"
    assert dict(settings.with_overrides(deliberation="lase").deliberation_options) == {"tau_conf": 0.7, "max_steps": 3}
