"""The checkers a server keeps (:class:`CheckerPool`), their warm-up, and which components can run
(:mod:`factcheck.server.pool`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")

from factcheck.errors import ConfigError
from factcheck.server.pool import CheckerPool, prepare, warm_up
from factcheck.server.settings import ServerSettings
from tests.test_server import config_with


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Settings for the corpus agent judged by ``lexical``."""
    return config_with(tmp_path_factory.mktemp("config"), "corpus", "lexical")


@dataclass
class Part:
    """A source or verifier standing in for a real one: only its name is read."""

    name: str


@dataclass
class Agent:
    source: Part
    verifier: Part


@dataclass
class PreparingChecker:
    """A checker whose ``prepare_component`` answers from ``reasons`` (a component's name -> why it cannot
    run, an exception to raise, or ``"hang"``), counting the prepares."""

    reasons: dict[str, Any]
    agents: list[Agent] = field(default_factory=list)
    extractor: Part = field(default_factory=lambda: Part("llm"))
    prepared: list[str] = field(default_factory=list)

    async def prepare_component(self, component: Part) -> str | None:
        self.prepared.append(component.name)
        reason = self.reasons.get(component.name)
        if reason == "hang":
            await asyncio.sleep(60)
        if isinstance(reason, Exception):
            raise reason
        return reason


def test_checkers_are_built_once_per_choice_and_bounded(lexical: str) -> None:
    pool = CheckerPool(ServerSettings(profile="offline", max_checkers=2, config=lexical))
    first = pool.get()
    assert pool.get() is first and pool.get("offline") is first
    normsum = pool.get(scorer="normsum")
    assert normsum is not first and normsum.scorer.name == "normsum"
    pool.get(scorer="average")  # a third choice pushes out the least recently used (the default)
    assert pool.get(scorer="normsum") is normsum
    assert pool.get() is not first


@pytest.mark.parametrize(
    ("reason", "answer"),
    [
        (None, {"usable": True}),
        ("skipped: SERPER_API_KEY is not set", {"usable": False, "reason": "SERPER_API_KEY is not set"}),
        (ConfigError("no corpus at /nowhere"), {"usable": False, "reason": "ConfigError: no corpus at /nowhere"}),
        (RuntimeError("boom"), {"usable": False, "reason": "RuntimeError: boom"}),
        ("hang", {"usable": False, "reason": "not ready within 0.05s"}),
    ],
)
def test_prepare_says_whether_a_component_can_run_and_why_not(reason: Any, answer: dict[str, Any]) -> None:
    checker = PreparingChecker({"web": reason})
    assert asyncio.run(prepare(Part("web"), checker, within_s=0.05)) == answer  # type: ignore[arg-type]


def test_warm_up_prepares_each_component_once_and_names_those_that_cannot_run() -> None:
    shared = Part("lexical")  # one verifier for two agents: prepared once
    agents = [Agent(Part("corpus"), shared), Agent(Part("web"), shared)]
    checker = PreparingChecker({"web": "skipped: SERPER_API_KEY is not set"}, agents)
    assert asyncio.run(warm_up(checker)) == ["web: SERPER_API_KEY is not set"]  # type: ignore[arg-type]
    assert sorted(checker.prepared) == ["corpus", "lexical", "web"]


def test_a_pool_of_broken_settings_raises_a_config_error_and_keeps_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "factcheck.toml"
    broken.write_text('profile = "offline"\n[agents.corpus]\nsource = "nope"\n')
    pool = CheckerPool(ServerSettings(profile="offline", config=str(broken)))
    with pytest.raises(ConfigError, match="unknown source 'nope'"):
        pool.get()
    assert not pool._checkers  # the next request tries again (the settings may be fixed)
