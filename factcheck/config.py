"""Settings: ``factcheck.toml``, then ``FACTCHECK_*`` environment variables, then
explicit overrides (CLI flags, keyword arguments); later wins.

A profile names a set of agents (source + verifier pairs). ``offline`` needs
no key and no network (BM25 over a local corpus, judged by the shipped NLI
model); ``baseline`` is the same search judged by the rule-based ``lexical``
verifier, kept for comparison; ``wiki`` asks Wikipedia (any MediaWiki) and judges
its lead sections with the same model, no key needed; ``paper`` is the MAFC
paper's three agents and needs the LLM and web-search components (see
docs/getting-started.md).

Example ``factcheck.toml``::

    profile = "offline"

    [agents.corpus]            # an agent of the profile: change its options
    source = "corpus"
    verifier = "nli"
    path = "my-corpus.jsonl"   # any other key is a source option
    verifier_options = { min_relevance = 0.6 }

    [scoring]
    scorer = "mafc"
    labels = "compose"         # a text is TRUE / FALSE when every verified claim is, else PARTLY TRUE
    bounds = "natural"         # other keys go to the scorer or label rule that has them

    [deliberation]             # after the first round, the agents settle open claims (docs/deliberation.md)
    policy = "lase"            # off (default), lase or ecmr, or a plugin's
    max_steps = 4              # other keys are the policy's options

    [pipeline]
    max_concurrency = 8
    agent_timeout_s = 60
    prepare_timeout_s = 300    # a source's or verifier's set-up (loading a model, indexing a corpus)
    max_claims = 200           # claims checked per text; the rest are left out, with a note
    max_evidence = 50          # passages kept per agent and claim
    independence = 0.5         # merge agents whose evidence is this similar (off when unset)
    routing = "trust"          # which agents answer a claim: all (default), trust or gated
    tau = 0.8                  # routing options: tau, costs, trust, weighting (docs/routing.md)
    trust = "trust.json"

    [memory]                   # the opt-in experience memory of corrections (docs/learning.md)
    path = "memory.sqlite"     # adds the `memory` agent: past cases like each claim, as precedents
    require = 2                # distinct reviewers who must agree before a case is lent

    [server]                   # factcheck serve only (docs/server.md): ServerSettings' fields
    max_text_chars = 20000

The ``[pipeline]`` fields and the one-to-one ``FACTCHECK_*`` variables are declared
once, on :class:`Settings` (:func:`~factcheck.options.setting`): parsing, range checks
and the environment all read that declaration.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from factcheck.errors import ConfigError
from factcheck.memory.settings import MEMORY_AGENT, MemorySettings, memory_settings
from factcheck.options import check_fields, coerce_values, declared, env_values, merge_options, reject_unknown, setting
from factcheck.routing import ROUTING_OPTIONS, ROUTINGS
from factcheck.secrets import secret

CONFIG_FILE = "factcheck.toml"
# The top-level keys and tables of factcheck.toml ([memory]: factcheck.memory.settings).
CONFIG_KEYS = (
    "profile",
    "extractor",
    "agents",
    "scoring",
    "deliberation",
    "pipeline",
    "llm",
    "cache",
    "memory",
    "server",
    "wikidata",
)


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
    """A named set of agents, its claim extractor, and the verifier ``--source NAME`` pairs new sources with."""

    name: str
    agents: tuple[AgentSpec, ...]
    default_verifier: str
    extractor: str


PROFILES: dict[str, Profile] = {
    "offline": Profile("offline", (AgentSpec("corpus", "corpus", "nli"),), "nli", "sentence"),
    "baseline": Profile("baseline", (AgentSpec("corpus", "corpus", "lexical"),), "lexical", "sentence"),
    # Keyless general knowledge: any MediaWiki's pages (--wikipedia-url), judged by the shipped model, and
    # Wikidata's statements on entity claims (--wikidata-url), compared by their types.
    "wiki": Profile(
        "wiki",
        (AgentSpec("wikipedia", "wikipedia", "nli"), AgentSpec("wikidata", "wikidata", "wikidata")),
        "nli",
        "sentence",
    ),
    "paper": Profile(
        "paper",
        (
            AgentSpec("web", "serper", "llm"),
            AgentSpec("wikipedia", "wikipedia", "llm"),
            # per_passage: with samples > 1, confidence reflects how far the samples agree
            AgentSpec("selfcheck", "selfcheck", "llm", verifier_options={"per_passage": True}),
            # Entity claims from Wikidata's typed statements (keyless; never the one agent a paper run keeps).
            AgentSpec("wikidata", "wikidata", "wikidata", source_options={"propose": "llm"}),
        ),
        "llm",
        "llm",
    ),
}
WEB_KEYS = {"serper": "SERPER_API_KEY", "serpapi": "SERPAPI_API_KEY"}


def default_profile(env: Mapping[str, str]) -> str:
    """``paper`` when an LLM and a web search are reachable (keys, or a local LLM server), else ``offline``."""
    llm = bool(env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") or env.get("FACTCHECK_LLM_BASE_URL"))
    web = any(env.get(key) for key in WEB_KEYS.values())
    return "paper" if llm and web else "offline"


def web_source(env: Mapping[str, str]) -> str:
    """The paper profile's web search: Serper when its key is set, else SerpAPI when that one is."""
    if not env.get(WEB_KEYS["serper"]) and env.get(WEB_KEYS["serpapi"]):
        return "serpapi"
    return "serper"


@dataclass(frozen=True)
class Settings:
    """Everything a :class:`~factcheck.Checker` is built from.

    ``agents`` holds only agents configured explicitly (in ``factcheck.toml``);
    the profile's agents, ``corpus`` and ``sources`` are combined with them by
    :meth:`resolved_agents`, so switching profile later still works.
    """

    profile: str = setting("offline", choices=tuple(sorted(PROFILES)), env="FACTCHECK_PROFILE")
    agents: tuple[AgentSpec, ...] = ()
    corpus: str | None = setting(None, env="FACTCHECK_CORPUS")
    sources: tuple[str, ...] = ()
    source_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    extractor: str | None = setting(None, env="FACTCHECK_EXTRACTOR")
    extractor_options: Mapping[str, Any] = field(default_factory=dict)
    scorer: str = setting("mafc", env="FACTCHECK_SCORER")
    # compose: a text's label never contradicts its claims' (docs/scoring.md)
    labels: str = setting("compose", env="FACTCHECK_LABELS")
    scoring_options: Mapping[str, Any] = field(default_factory=dict)
    max_concurrency: int = setting(8, minimum=1, table="pipeline", env="FACTCHECK_MAX_CONCURRENCY")
    agent_timeout_s: float = setting(
        60.0, minimum=0, min_open=True, unit="seconds", table="pipeline", env="FACTCHECK_AGENT_TIMEOUT_S"
    )
    prepare_timeout_s: float = setting(300.0, minimum=0, min_open=True, unit="seconds", table="pipeline")
    max_claims: int = setting(200, minimum=1, table="pipeline", env="FACTCHECK_MAX_CLAIMS")
    max_evidence: int = setting(50, minimum=1, table="pipeline")
    llm: Mapping[str, Any] = field(default_factory=dict)
    cache: Mapping[str, Any] = field(default_factory=dict)
    routing: str = setting("all", choices=ROUTINGS, table="pipeline")
    routing_options: Mapping[str, Any] = field(default_factory=dict)
    # The near-duplicate-evidence merge: agents whose evidence is at least this similar count once.
    independence: float | None = setting(
        None, minimum=0, min_open=True, maximum=1, label="independence threshold", table="pipeline"
    )
    # The deliberation policy (a registered name, checked when the checker is built) and its options.
    deliberation: str = setting("off", env="FACTCHECK_DELIBERATION")
    deliberation_options: Mapping[str, Any] = field(default_factory=dict)
    # The opt-in experience memory ([memory]: path, require, ...; factcheck.memory.settings); with a path, the
    # check gets a `memory` agent that lends the past cases like each claim as precedents.
    memory: Mapping[str, Any] = field(default_factory=dict)
    # The agents a check runs, by name and in this order (--agents a,b, or the recommended team of a trust
    # file); empty: every resolved agent.
    only_agents: tuple[str, ...] = ()
    # The paper profile's web search, serper or serpapi: load_settings chooses it by the keys its env holds
    # (web_source); None, for settings made by hand, looks the keys up when the agents are resolved.
    web_search: str | None = None

    def __post_init__(self) -> None:
        check_fields(self)
        reject_unknown(self.routing_options, ROUTING_OPTIONS, what="routing option")
        memory_settings(self.memory)  # a bad [memory] table is an error now, not at the first check

    def resolved_agents(self) -> tuple[AgentSpec, ...]:
        """The agents a check runs.

        The profile's agents, replaced or extended by same-named explicit
        ``agents``; ``corpus`` points every ``corpus`` agent at that collection
        (adding one if there is none); each of ``sources`` adds an agent pairing
        that source with the profile's default verifier.
        """
        profile = PROFILES[self.profile]
        web = self.web_search or web_source({name: secret(name) for name in WEB_KEYS.values()})
        merged = {spec.name: replace(spec, source=web) if spec.source == "serper" else spec for spec in profile.agents}
        merged.update((spec.name, spec) for spec in self.agents)
        agents = list(merged.values())
        if self.corpus is not None:
            if not any(a.source == "corpus" for a in agents):
                agents.append(AgentSpec("corpus", "corpus", profile.default_verifier))
            agents = [
                replace(a, source_options={**a.source_options, "path": self.corpus}) if a.source == "corpus" else a
                for a in agents
            ]
        for source in self.sources:
            if not any(a.source == source for a in agents):
                agents.append(AgentSpec(source, source, profile.default_verifier))
        memory = memory_settings(self.memory)
        if memory.enabled and not any(a.name == MEMORY_AGENT for a in agents):
            verifier = memory.verifier or ("llm" if profile.default_verifier == "llm" else "precedent")
            agents.append(AgentSpec(MEMORY_AGENT, "memory", verifier, memory.source_options()))
        agents = [
            replace(a, source_options={**a.source_options, **self.source_options[a.source]})
            if a.source in self.source_options
            else a
            for a in agents
        ]
        return tuple(chosen(agents, self.only_agents))

    @property
    def extractor_name(self) -> str:
        """The configured claim extractor, else the profile's."""
        return self.extractor or PROFILES[self.profile].extractor

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
        source_options: Mapping[str, Mapping[str, Any]] | None = None,
        max_concurrency: int | None = None,
        agent_timeout_s: float | None = None,
        prepare_timeout_s: float | None = None,
        max_claims: int | None = None,
        max_evidence: int | None = None,
        llm: Mapping[str, Any] | None = None,
        cache: Mapping[str, Any] | None = None,
        routing: str | None = None,
        routing_options: Mapping[str, Any] | None = None,
        independence: float | Literal["off"] | None = None,
        deliberation: str | None = None,
        deliberation_options: Mapping[str, Any] | None = None,
        memory: Mapping[str, Any] | None = None,
        only_agents: Sequence[str] | None = None,
    ) -> Settings:
        """A copy with explicit overrides (CLI flags, keyword arguments); ``None`` leaves a setting alone.

        ``source_options`` maps a source name to options for every agent using it
        (``{"serper": {"base_url": ...}}``); ``llm``, ``cache``, ``routing_options``,
        ``deliberation_options`` and ``memory`` update those tables; ``only_agents`` names the agents to run.
        ``independence="off"`` turns off a threshold set earlier.
        """
        merged_sources = {k: dict(v) for k, v in self.source_options.items()}
        for name, options in (source_options or {}).items():
            merged_sources.setdefault(name, {}).update(options)
        return replace(
            self,
            profile=self.profile if profile is None else profile,
            extractor=self.extractor if extractor is None else extractor,
            scorer=self.scorer if scorer is None else scorer,
            labels=self.labels if labels is None else labels,
            scoring_options=merge_options(self.scoring_options, scoring_options),
            corpus=self.corpus if corpus is None else os.fspath(corpus),
            sources=(*self.sources, *(s for s in sources if s not in self.sources)),
            source_options=merged_sources,
            max_concurrency=self.max_concurrency if max_concurrency is None else max_concurrency,
            agent_timeout_s=self.agent_timeout_s if agent_timeout_s is None else agent_timeout_s,
            prepare_timeout_s=self.prepare_timeout_s if prepare_timeout_s is None else prepare_timeout_s,
            max_claims=self.max_claims if max_claims is None else max_claims,
            max_evidence=self.max_evidence if max_evidence is None else max_evidence,
            llm=merge_options(self.llm, llm),
            cache=merge_options(self.cache, cache),
            routing=self.routing if routing is None else routing,
            routing_options=merge_options(self.routing_options, routing_options),
            independence=None if independence == "off" else self.independence if independence is None else independence,
            deliberation=self.deliberation if deliberation is None else deliberation,
            deliberation_options=merge_options(
                self._policy_options_for(deliberation or self.deliberation), deliberation_options
            ),
            memory=merge_options(self.memory, memory),
            only_agents=self.only_agents if only_agents is None else tuple(only_agents),
        )

    def _policy_options_for(self, policy: str) -> Mapping[str, Any]:
        """The deliberation options that go on with ``policy``: all of them for the same policy; for another
        (a flag or a request naming one), only those every policy has (``max_steps``, ``trust``...), not the
        thresholds of the one the file named."""
        if policy == self.deliberation:
            return self.deliberation_options
        from factcheck.plugin.deliberator import COMMON_OPTIONS

        return {k: v for k, v in self.deliberation_options.items() if k in COMMON_OPTIONS}


def chosen(agents: Sequence[AgentSpec], names: Sequence[str]) -> list[AgentSpec]:
    """The agents ``names`` asks for, in its order (all of them for no names); ConfigError names one unknown."""
    if not names:
        return list(agents)
    by_name = {a.name: a for a in agents}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ConfigError(f"no agent {', '.join(map(repr, unknown))} to run (agents: {', '.join(by_name) or 'none'})")
    return [by_name[n] for n in dict.fromkeys(names)]


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


# The [pipeline] table's own keys (its routing options aside): the Settings fields declared in it.
PIPELINE_SETTINGS = tuple(d.name for d in declared(Settings) if d.constraint.table == "pipeline")


def _table(data: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table, got {type(value).__name__}")
    return dict(value)


def settings_from_mapping(
    data: Mapping[str, Any], where: str = CONFIG_FILE, env: Mapping[str, str] | None = None
) -> Settings:
    """Settings from a parsed ``factcheck.toml`` (a file naming no profile: :func:`default_profile` of
    ``env``, else ``offline``); ConfigError names what is wrong."""
    # [server] is factcheck serve's (ServerSettings.load reads and checks it); checkers ignore it.
    reject_unknown(data, CONFIG_KEYS, where)
    profile = str(data.get("profile", default_profile(env or {})))
    if profile not in PROFILES:  # here already: the agents' tables are read against the profile
        raise ConfigError(f"{where}: unknown profile {profile!r} (available: {', '.join(sorted(PROFILES))})")
    extractor = (
        {"name": data["extractor"]} if isinstance(data.get("extractor"), str) else _table(data, "extractor", where)
    )
    scoring = _table(data, "scoring", where)
    deliberation = _table(data, "deliberation", where)
    pipeline = _table(data, "pipeline", where)
    reject_unknown(pipeline, (*PIPELINE_SETTINGS, *ROUTING_OPTIONS), where, "[pipeline] setting")
    values = coerce_values(Settings, {k: v for k, v in pipeline.items() if k in PIPELINE_SETTINGS}, where)
    agents = tuple(_agent_from_toml(name, table, profile) for name, table in _table(data, "agents", where).items())
    # [wikidata] url: the wikidata agent's Wikibase, as --wikidata-url sets it.
    wikidata = _table(data, "wikidata", where)
    reject_unknown(wikidata, ("url",), where, "[wikidata] setting")
    source_options = {"wikidata": {"api_url": wikidata["url"]}} if "url" in wikidata else {}
    try:
        return Settings(
            profile=profile,
            agents=agents,
            extractor=str(extractor.pop("name")) if "name" in extractor else None,
            extractor_options=extractor,
            scorer=str(scoring.pop("scorer", "mafc")),
            # A file that sets the text thresholds and no rule means the threshold rule, as it did before
            # compose became the default.
            labels=str(scoring.pop("labels", "threshold" if "thresholds" in scoring else "compose")),
            scoring_options=scoring,
            llm=_table(data, "llm", where),
            cache=_table(data, "cache", where),
            routing_options={k: pipeline[k] for k in ROUTING_OPTIONS if k in pipeline},
            deliberation=str(deliberation.pop("policy", "off")),
            deliberation_options=deliberation,  # every other key: checked by the policy when it is built
            memory=_table(data, "memory", where),
            source_options=source_options,
            **values,
        )
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


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


# (source, option, variable): the search endpoints a variable sets, as the CLI's --serper-url, --serpapi-url and
# --wikipedia-url do.
ENDPOINT_VARIABLES = (
    ("serper", "base_url", "FACTCHECK_SERPER_URL"),
    ("serpapi", "base_url", "FACTCHECK_SERPAPI_URL"),
    ("wikipedia", "api_url", "FACTCHECK_WIKIPEDIA_URL"),
    ("wikidata", "api_url", "FACTCHECK_WIKIDATA_URL"),
)


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment sets: each variable a :class:`Settings` field declares
    (``FACTCHECK_PROFILE``, ``_EXTRACTOR``, ``_SCORER``, ``_LABELS``, ``_DELIBERATION``, ``_CORPUS``,
    ``_MAX_CONCURRENCY``, ``_AGENT_TIMEOUT_S``, ``_MAX_CLAIMS``); the search endpoints ``FACTCHECK_SERPER_URL``,
    ``FACTCHECK_SERPAPI_URL`` and ``FACTCHECK_WIKIPEDIA_URL`` (what ``--serper-url``, ``--serpapi-url`` and
    ``--wikipedia-url`` set); the cache's
    (``FACTCHECK_CACHE``, a path, and ``FACTCHECK_NO_CACHE``) and the LLM's (``OPENAI_BASE_URL``,
    ``FACTCHECK_LLM_BASE_URL`` / ``_MODEL`` / ``_API_KEY_ENV``)."""
    overrides = env_values(Settings, env, "bad FACTCHECK_* variable")
    # Endpoint variables (issue 24): serve's --serper-url / --wikipedia-url set them for every checker it builds.
    endpoints = {
        source: {option: env[variable]}
        for source, option, variable in ENDPOINT_VARIABLES
        if env.get(variable, "").strip()
    }
    if endpoints:
        overrides["source_options"] = endpoints
    from factcheck.cache import cache_env
    from factcheck.llm.client import llm_env

    if llm := llm_env(env):
        overrides["llm"] = llm
    if cache := cache_env(env):
        overrides["cache"] = cache
    if memory := env_values(MemorySettings, env, "bad FACTCHECK_* variable"):
        overrides["memory"] = memory
    return overrides


def load_settings(
    config: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Settings from the config file, the environment and ``overrides`` (see :meth:`Settings.with_overrides`).

    The one place a checker's settings are read (each front door calls it once and passes the result
    down): ``env`` (default: the process environment) is the only environment read. A
    variable outside ``env`` changes nothing, with two kinds of exception that are not settings: a
    provider's key, looked up by the component that needs it when it needs it
    (:func:`factcheck.secrets.secret`: ``OPENAI_API_KEY``, ``SERPER_API_KEY``, the Wikipedia User-Agent),
    and the process's own switches and folders (``FACTCHECK_RAISE_ERRORS``, ``FACTCHECK_TRACE_PLUGINS``,
    the plugin lists, ``FACTCHECK_CACHE_DIR``).
    """
    env = os.environ if env is None else env
    data = read_config(config)
    if "profile" not in data:
        data = {**data, "profile": default_profile(env)}
    settings = settings_from_mapping(data, str(config or CONFIG_FILE))
    settings = replace(settings.with_overrides(**_env_overrides(env)), web_search=web_source(env))
    return settings.with_overrides(**overrides)
