"""Settings: ``factcheck.toml``, then ``FACTCHECK_*`` environment variables, then
explicit overrides (CLI flags, keyword arguments); later wins.

A profile names a set of agents (source + verifier pairs). ``offline`` needs
no key and no network; ``paper`` is the MAFC paper's three agents and needs
the LLM and web-search components (see docs/getting-started.md).

Example ``factcheck.toml``::

    profile = "offline"

    [agents.corpus]            # an agent of the profile: change its options
    source = "corpus"
    verifier = "lexical"
    path = "my-corpus.jsonl"   # any other key is a source option
    verifier_options = { min_coverage = 0.4 }

    [scoring]
    scorer = "mafc"
    labels = "threshold"
    bounds = "natural"         # other keys go to the scorer or label rule that has them
    thresholds = [0.33, 0.67]

    [pipeline]
    max_concurrency = 8
    agent_timeout_s = 60
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError
from factcheck.options import merge_options

CONFIG_FILE = "factcheck.toml"


@dataclass(frozen=True)
class AgentSpec:
    """An agent: a named pair of a source and a verifier, with their options."""

    name: str
    source: str
    verifier: str
    source_options: Mapping[str, Any] = field(default_factory=dict)
    verifier_options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    """A named set of agents and the verifier that ``--source NAME`` pairs new sources with."""

    name: str
    agents: tuple[AgentSpec, ...]
    default_verifier: str


PROFILES: dict[str, Profile] = {
    "offline": Profile("offline", (AgentSpec("corpus", "corpus", "lexical"),), "lexical"),
    "paper": Profile(
        "paper",
        (
            AgentSpec("web", "serper", "llm"),
            AgentSpec("wikipedia", "wikipedia", "llm"),
            AgentSpec("selfcheck", "selfcheck", "llm"),
        ),
        "llm",
    ),
}


@dataclass(frozen=True)
class Settings:
    """Everything a :class:`~factcheck.Checker` is built from."""

    profile: str = "offline"
    agents: tuple[AgentSpec, ...] = ()
    extractor: str = "sentence"
    extractor_options: Mapping[str, Any] = field(default_factory=dict)
    scorer: str = "mafc"
    labels: str = "threshold"
    scoring_options: Mapping[str, Any] = field(default_factory=dict)
    max_concurrency: int = 8
    agent_timeout_s: float = 60.0
    llm: Mapping[str, Any] = field(default_factory=dict)
    cache: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ConfigError(f"unknown profile {self.profile!r} (available: {', '.join(sorted(PROFILES))})")
        if self.max_concurrency < 1:
            raise ConfigError("max_concurrency must be at least 1")
        if not self.agent_timeout_s > 0:
            raise ConfigError("agent_timeout_s must be positive")

    def resolved_agents(self) -> tuple[AgentSpec, ...]:
        """The profile's agents, with same-named agents of ``agents`` replacing them and new ones added."""
        merged = {spec.name: spec for spec in PROFILES[self.profile].agents}
        for spec in self.agents:
            merged[spec.name] = spec
        return tuple(merged.values())

    def with_overrides(
        self,
        *,
        profile: str | None = None,
        extractor: str | None = None,
        scorer: str | None = None,
        labels: str | None = None,
        scoring_options: Mapping[str, Any] | None = None,
        corpus: str | os.PathLike[str] | None = None,
        sources: Sequence[str] = (),
        max_concurrency: int | None = None,
        agent_timeout_s: float | None = None,
    ) -> Settings:
        """A copy with explicit overrides applied (the CLI flags and keyword arguments).

        ``corpus`` points every ``corpus`` agent at the given collection (adding
        one if the profile has none); each of ``sources`` adds an agent pairing
        that source with the profile's default verifier.
        """
        settings = replace(
            self,
            profile=profile or self.profile,
            extractor=extractor or self.extractor,
            scorer=scorer or self.scorer,
            labels=labels or self.labels,
            scoring_options=merge_options(self.scoring_options, scoring_options),
            max_concurrency=max_concurrency or self.max_concurrency,
            agent_timeout_s=agent_timeout_s or self.agent_timeout_s,
        )
        agents = list(settings.resolved_agents())
        default_verifier = PROFILES[settings.profile].default_verifier
        if corpus is not None:
            path = os.fspath(corpus)
            if not any(a.source == "corpus" for a in agents):
                agents.append(AgentSpec("corpus", "corpus", default_verifier))
            agents = [
                replace(a, source_options={**a.source_options, "path": path}) if a.source == "corpus" else a
                for a in agents
            ]
        for source in sources:
            if not any(a.source == source for a in agents):
                agents.append(AgentSpec(source, source, default_verifier))
        return replace(settings, agents=tuple(agents))


def _agent_from_toml(name: str, table: Any, profile: str) -> AgentSpec:
    if not isinstance(table, dict):
        raise ConfigError(f"[agents.{name}] must be a table")
    table = dict(table)
    base = next((a for a in PROFILES[profile].agents if a.name == name), None)
    source = table.pop("source", base.source if base else None)
    verifier = table.pop("verifier", base.verifier if base else PROFILES[profile].default_verifier)
    if not source:
        raise ConfigError(f"[agents.{name}] needs a 'source'")
    verifier_options = table.pop("verifier_options", {})
    if not isinstance(verifier_options, dict):
        raise ConfigError(f"[agents.{name}] verifier_options must be a table")
    return AgentSpec(name, str(source), str(verifier), table, verifier_options)


def settings_from_mapping(data: Mapping[str, Any], where: str = CONFIG_FILE) -> Settings:
    """Settings from a parsed ``factcheck.toml``."""
    known = {"profile", "extractor", "agents", "scoring", "pipeline", "llm", "cache"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown setting {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    profile = str(data.get("profile", "offline"))
    if profile not in PROFILES:
        raise ConfigError(f"{where}: unknown profile {profile!r} (available: {', '.join(sorted(PROFILES))})")
    extractor = data.get("extractor", {})
    if isinstance(extractor, str):
        extractor = {"name": extractor}
    extractor = dict(extractor)
    scoring = dict(data.get("scoring", {}))
    pipeline = dict(data.get("pipeline", {}))
    agents = tuple(_agent_from_toml(name, table, profile) for name, table in dict(data.get("agents", {})).items())
    return Settings(
        profile=profile,
        agents=agents,
        extractor=str(extractor.pop("name", "sentence")),
        extractor_options=extractor,
        scorer=str(scoring.pop("scorer", "mafc")),
        labels=str(scoring.pop("labels", "threshold")),
        scoring_options=scoring,
        max_concurrency=int(pipeline.get("max_concurrency", 8)),
        agent_timeout_s=float(pipeline.get("agent_timeout_s", 60.0)),
        llm=dict(data.get("llm", {})),
        cache=dict(data.get("cache", {})),
    )


def read_config(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Parse ``path``, or ``./factcheck.toml`` if it exists (else no settings)."""
    if path is None:
        default = Path.cwd() / CONFIG_FILE
        if not default.is_file():
            return {}
        path = default
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    """``FACTCHECK_PROFILE``, ``_EXTRACTOR``, ``_SCORER``, ``_LABELS``, ``_CORPUS``,
    ``_MAX_CONCURRENCY`` and ``_AGENT_TIMEOUT_S``."""
    overrides: dict[str, Any] = {}
    for key in ("profile", "extractor", "scorer", "labels", "corpus"):
        value = env.get(f"FACTCHECK_{key.upper()}")
        if value:
            overrides[key] = value
    try:
        if env.get("FACTCHECK_MAX_CONCURRENCY"):
            overrides["max_concurrency"] = int(env["FACTCHECK_MAX_CONCURRENCY"])
        if env.get("FACTCHECK_AGENT_TIMEOUT_S"):
            overrides["agent_timeout_s"] = float(env["FACTCHECK_AGENT_TIMEOUT_S"])
    except ValueError as exc:
        raise ConfigError(f"bad FACTCHECK_* number: {exc}") from None
    return overrides


def load_settings(
    config: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Settings from the config file, the environment and ``overrides`` (see :meth:`Settings.with_overrides`)."""
    settings = settings_from_mapping(read_config(config), str(config or CONFIG_FILE))
    settings = settings.with_overrides(**_env_overrides(os.environ if env is None else env))
    return settings.with_overrides(**overrides)
