"""The one builder: settings in, a Checker of resolved components out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from factcheck import Agent, ConfigError, Settings, build_checker
from factcheck.build import fingerprint
from factcheck.testing import ScriptedVerifier, StaticSource


def test_names_go_into_the_settings_and_objects_are_used_as_they_are() -> None:
    by_name = build_checker(Settings(), scorer="normsum", cache={"enabled": False})
    assert by_name.scorer.name == "normsum" and by_name.profile == "offline"
    agents = [Agent("a", StaticSource(), ScriptedVerifier())]
    handed = build_checker(Settings(), agents=agents, labels="threshold", cache={"enabled": False})
    assert handed.agents == tuple(agents) and handed.labels.name == "threshold"
    assert handed.profile is None  # agents handed in: no profile judged the check
    assert handed.fallback_extractor is not None and handed.fallback_extractor.name == "sentence"


def test_the_pipeline_limits_and_independence_come_from_the_settings() -> None:
    settings = Settings(max_claims=3, agent_timeout_s=5.0, independence=0.4, cache={"enabled": False})
    checker = build_checker(settings)
    assert (checker.limits.max_claims, checker.limits.agent_timeout_s) == (3, 5.0)
    assert checker.independence == 0.4
    with pytest.raises(ConfigError, match="independence threshold"):
        build_checker(Settings(), independence=1.5)


def test_a_toml_file_is_read_by_the_builder(tmp_path: Path) -> None:
    config = tmp_path / "factcheck.toml"
    config.write_text('profile = "baseline"\n[scoring]\nscorer = "average"\n[pipeline]\nmax_claims = 7\n')
    checker = build_checker(config=config, cache={"enabled": False})
    assert checker.agents[0].verifier.name == "lexical" and checker.scorer.name == "average"
    assert checker.limits.max_claims == 7


def test_the_fingerprint_follows_what_changes_results_and_nothing_else() -> None:
    base = fingerprint(Settings())
    assert base == fingerprint(Settings())
    assert fingerprint(Settings(independence=0.5))["independence"] == 0.5
    assert fingerprint(Settings(scorer="normsum"))["scorer"]["name"] == "normsum"
    agents = [Agent("given", StaticSource(), ScriptedVerifier())]  # swapped in: they stand for the settings' own
    assert [a["name"] for a in fingerprint(Settings(), agents)["agents"]] == ["given"]


def test_the_independence_flag_overrides_the_file_either_way(tmp_path: Path) -> None:
    from factcheck.cli.flags import CheckerFlags, settings_from_flags

    config = tmp_path / "factcheck.toml"
    config.write_text("[pipeline]\nindependence = 0.4\n")
    flags = CheckerFlags(config=config, no_cache=True)
    assert settings_from_flags(replace(flags, independence=None)).independence == 0.4  # unset: the file decides
    assert settings_from_flags(replace(flags, independence="off")).independence is None
    merge = replace(flags, independence="merge", independence_threshold=0.7)
    assert settings_from_flags(merge).independence == 0.7
