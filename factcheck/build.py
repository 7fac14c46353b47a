"""The one builder: settings in, a :class:`~factcheck.Checker` of resolved components out.

This is the only code that reads :class:`~factcheck.Settings` and looks component names up in the
plugin registry. The CLI, evaluation, the server, batch and Ray all build their checkers here::

    checker = build_checker(load_settings("factcheck.toml", profile="wiki"))
    checker = build_checker(scorer="normsum", corpus="my-docs/")   # settings from the file, env and these

A part handed in as an object (``agents=[...]``, ``extractor=LLMExtractor()``, ``scorer=...``,
``labels=...``, ``routing=...``) is used as it is; a name goes into the settings.
:func:`fingerprint` says what a checker built from some settings answers with, for resumable runs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from factcheck.cache import open_cache
from factcheck.config import Settings, load_settings
from factcheck.errors import ConfigError
from factcheck.extractors.base import ClaimExtractor
from factcheck.limits import Limits
from factcheck.llm.client import llm_settings
from factcheck.pipeline import Agent, Checker, answer_options
from factcheck.plugins.manager import get_registry
from factcheck.routing import RoutingPolicy, build_routing
from factcheck.scoring.base import LabelRule, Scorer
from factcheck.types import TextVerdict

FALLBACK_EXTRACTOR = "sentence"  # splits the text when a model-based extractor fails


def build_checker(
    settings: Settings | None = None,
    *,
    config: str | os.PathLike[str] | None = None,
    agents: Sequence[Agent] | None = None,
    extractor: ClaimExtractor | str | None = None,
    scorer: Scorer | str | None = None,
    labels: LabelRule | str | None = None,
    routing: RoutingPolicy | str | None = None,
    **overrides: Any,
) -> Checker:
    """The checker ``settings`` describe (default: ``factcheck.toml`` or ``config``, the environment and
    ``overrides``, see :meth:`Settings.with_overrides`), with any part handed in as an object used as it is.

    ConfigError names an unknown component, option or value.
    """
    for key, value in (("extractor", extractor), ("scorer", scorer), ("labels", labels), ("routing", routing)):
        if isinstance(value, str):
            overrides[key] = value
    if settings is None:
        settings = load_settings(config, **overrides)
    elif overrides:
        settings = settings.with_overrides(**overrides)
    configured_scorer, configured_rule = build_scoring(settings, scorer if isinstance(scorer, Scorer) else None)
    return Checker(
        agents if agents is not None else build_agents(settings),
        extractor=extractor if isinstance(extractor, ClaimExtractor) else build_extractor(settings),
        scorer=configured_scorer,
        labels=labels if isinstance(labels, LabelRule) else configured_rule,
        routing=routing
        if isinstance(routing, RoutingPolicy)
        else build_routing(settings.routing, settings.routing_options),
        llm=llm_settings(settings.llm),
        cache=open_cache(settings.cache),
        limits=limits(settings),
        independence=settings.independence,
        profile=settings.profile if agents is None else None,
        fallback_extractor=get_registry().get("extractors", FALLBACK_EXTRACTOR),
    )


def check(text: str, as_of: str | None = None, **options: Any) -> TextVerdict:
    """Check ``text``, written at ``as_of`` (ISO 8601; default now), with the checker :func:`build_checker`
    builds from ``options``."""
    return build_checker(**options).check(text, as_of=as_of)


def limits(settings: Settings) -> Limits:
    """The ``[pipeline]`` limits of ``settings`` (each field of :class:`Limits` is a setting of that name)."""
    return Limits(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(Limits)})


def build_agents(settings: Settings) -> tuple[Agent, ...]:
    """The agents of ``settings`` (:meth:`Settings.resolved_agents`), each source and verifier configured."""
    registry = get_registry()
    return tuple(
        Agent(
            spec.name,
            registry.get("sources", spec.source).configure(**spec.source_options),
            registry.get("verifiers", spec.verifier).configure(**spec.verifier_options),
        )
        for spec in settings.resolved_agents()
    )


def build_extractor(settings: Settings) -> ClaimExtractor:
    """The claim extractor of ``settings``, configured."""
    extractor: ClaimExtractor = get_registry().get("extractors", settings.extractor_name)
    return extractor.configure(**settings.extractor_options)


def build_scoring(settings: Settings, scorer: Scorer | None = None) -> tuple[Scorer, LabelRule]:
    """The scorer (``scorer``, else the settings') and label rule of ``settings``, configured. A routing
    trust file reaches a trust-aware scorer too: routing orders agents by it, the scorer weighs them by it."""
    configured, rule = resolve_scoring(settings.scorer, settings.labels, dict(settings.scoring_options))
    scorer = scorer or configured
    trust_file = settings.routing_options.get("trust")
    if trust_file and scorer.options().get("trust") == "":
        scorer = scorer.configure(trust=str(trust_file))
    return scorer, rule


def split_scoring_options(options: dict[str, Any], scorer: Scorer, rule: LabelRule) -> tuple[Scorer, LabelRule]:
    """Configure the scorer and the label rule from one option mapping: each key goes to the one that has it."""
    scorer_keys, rule_keys = set(scorer.options()), set(rule.options())
    unknown = sorted(set(options) - scorer_keys - rule_keys)
    if unknown:
        known = ", ".join(sorted(scorer_keys | rule_keys)) or "none"
        # The text thresholds belong to the paper's rule, which is no longer the default (compose is).
        hint = " (thresholds are the threshold rule's: add --labels threshold)" if "thresholds" in unknown else ""
        raise ConfigError(
            f"unknown scoring option {', '.join(unknown)} for scorer {scorer.name!r} "
            f"and labels {rule.name!r} (options: {known}){hint}"
        )
    scorer = scorer.configure(**{k: v for k, v in options.items() if k in scorer_keys})
    rule = rule.configure(**{k: v for k, v in options.items() if k in rule_keys and k not in scorer_keys})
    return scorer, rule


def resolve_scoring(name: str, labels: str, options: dict[str, Any]) -> tuple[Scorer, LabelRule]:
    """The registered scorer and label rule, configured; ConfigError names what is available."""
    registry = get_registry()
    return split_scoring_options(options, registry.get("scorers", name), registry.get("label_rules", labels))


def fingerprint(settings: Settings, agents: Sequence[Agent] | None = None) -> dict[str, Any]:
    """What the results of a checker built from ``settings`` depend on: its agents with their options,
    extractor, scoring, routing, independence and model. A resumed run must match it.

    Options a source holds as data (a ``given`` source's ``evidence``) are left out: they are the
    dataset, which the caller records by name; so are transport options (time-outs, the operator's
    User-Agent), which change no result. ``agents`` stand for the settings' own when a caller swaps
    them (evaluation against gold evidence).
    """
    scorer, rule = build_scoring(settings)
    extractor = build_extractor(settings)
    llm = llm_settings(settings.llm)
    return {
        "agents": [
            {
                "name": a.name,
                "source": a.source.name,
                "source_options": _without(answer_options(a.source), "evidence"),
                "verifier": a.verifier.name,
                "verifier_options": answer_options(a.verifier),
            }
            for a in (agents if agents is not None else build_agents(settings))
        ],
        "extractor": {"name": extractor.name, **extractor.options()},
        "scorer": {"name": scorer.name, **scorer.options()},
        "labels": {"name": rule.name, **rule.options()},
        "routing": {"name": settings.routing, **settings.routing_options},
        "independence": settings.independence,
        "llm": {"base_url": llm.base_url, "model": llm.model},
    }


def _without(options: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != key}


__all__ = [
    "FALLBACK_EXTRACTOR",
    "build_agents",
    "build_checker",
    "build_extractor",
    "build_scoring",
    "check",
    "fingerprint",
    "limits",
    "resolve_scoring",
    "split_scoring_options",
]
