"""The one builder: settings in, a :class:`~factcheck.Checker` of resolved components out.

This is the only code that reads :class:`~factcheck.Settings` and looks component names up in the
plugin registry. The CLI, evaluation, the server, batch and Ray all build their checkers here::

    checker = build_checker(load_settings("factcheck.toml", profile="wiki"))
    checker = build_checker(scorer="normsum", corpus="my-docs/")   # settings from the file, env and these

A part handed in as an object (``agents=[...]``, ``extractor=LLMExtractor()``, ``scorer=...``,
``labels=...``, ``routing=...``, ``deliberation=...``) is used as it is; a name goes into the settings.
:func:`route_options` sends each command-line ``-o KEY=VALUE`` to the component that declares it, and
:func:`fingerprint` says what a checker built from some settings answers with, for resumable runs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from factcheck.agent import Agent, answer_options
from factcheck.cache import open_cache
from factcheck.config import Settings, load_settings
from factcheck.errors import ConfigError
from factcheck.limits import Limits
from factcheck.llm.client import llm_settings
from factcheck.pipeline import Checker
from factcheck.plugin import ClaimExtractor, Deliberator, LabelRule, Scorer
from factcheck.registry import get_registry
from factcheck.routing import RoutingPolicy, build_routing
from factcheck.trust import gate_thresholds
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
    deliberation: Deliberator | str | None = None,
    **overrides: Any,
) -> Checker:
    """The checker ``settings`` describe (default: ``factcheck.toml`` or ``config``, the environment and
    ``overrides``, see :meth:`Settings.with_overrides`), with any part handed in as an object used as it is.

    ConfigError names an unknown component, option or value.
    """
    named = (("extractor", extractor), ("scorer", scorer), ("labels", labels), ("routing", routing))
    for key, value in (*named, ("deliberation", deliberation)):
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
        deliberation=deliberation if isinstance(deliberation, Deliberator) else build_deliberator(settings),
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


def build_deliberator(settings: Settings) -> Deliberator:
    """The deliberation policy of ``settings``, configured; ConfigError names the registered ones. A routing
    trust file reaches a policy whose ``trust`` is empty, as it reaches a trust-aware scorer. The gate
    thresholds ``factcheck calibrate --gate`` fitted into that file for this policy apply, except any
    option the settings name themselves."""
    policy: Deliberator = get_registry().get("deliberators", settings.deliberation)
    if not policy.active:  # off: nothing to configure, so turning a file's policy off keeps working
        return policy
    options = dict(settings.deliberation_options)
    trust_file = options.get("trust") or settings.routing_options.get("trust")
    if trust_file:
        fitted = gate_thresholds(str(trust_file)).get(policy.name, {})
        known = policy.options()
        options = {"trust": str(trust_file), **{k: v for k, v in fitted.items() if k in known}, **options}
    return policy.configure(**options)


DELIBERATION_PREFIX = "deliberation."  # -o deliberation.KEY=VALUE: the policy's option, whoever else has KEY
SHARED_OPTIONS = ("trust",)  # options every component that declares them receives


def policy_options(policy: Deliberator) -> set[str]:
    """The options ``-o`` may set on ``policy``: its own, but not its ``name``."""
    return set(policy.options()) - {"name"}


def split_options(
    options: Mapping[str, Any], scoring: Sequence[Scorer | LabelRule], policy: Deliberator
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Route one mapping of ``-o`` options: (the scoring options, the policy's options, the keys nobody has).

    ``deliberation.KEY`` goes to the policy; ``trust`` to every component that declares it; any other key to
    the scorer or label rule of ``scoring`` that declares it, else to the policy when it does. A policy's
    ``name`` is not an option, and an inactive policy (``off``) takes none.
    """
    scoring_keys = {key for component in scoring for key in component.options()}
    policy_keys = policy_options(policy) if policy.active else set()
    to_scoring: dict[str, Any] = {}
    to_policy: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in options.items():
        if key.startswith(DELIBERATION_PREFIX):
            bare = key.removeprefix(DELIBERATION_PREFIX)
            if bare in policy_keys:
                to_policy[bare] = value
            else:
                unknown.append(key)
            continue
        if key in scoring_keys:
            to_scoring[key] = value
        if key in policy_keys and (key in SHARED_OPTIONS or key not in scoring_keys):
            to_policy[key] = value
        if key not in scoring_keys and key not in policy_keys:
            unknown.append(key)
    return to_scoring, to_policy, unknown


def route_options(settings: Settings, options: Mapping[str, Any]) -> Settings:
    """``settings`` with the ``-o KEY=VALUE`` ``options`` of ``check`` and ``batch`` added to the scorer's,
    label rule's or deliberation policy's options (:func:`split_options` says which); ConfigError for an
    unknown component or a key none of them has, listing the keys they have."""
    if not options:
        return settings
    registry = get_registry()
    scorer = registry.get("scorers", settings.scorer)
    rule = registry.get("label_rules", settings.labels)
    policy = registry.get("deliberators", settings.deliberation)
    scoring, deliberation, unknown = split_options(options, (scorer, rule), policy)
    if unknown:
        raise ConfigError(_unknown_options(unknown, scorer, rule, policy))
    return settings.with_overrides(scoring_options=scoring, deliberation_options=deliberation)


def _unknown_options(unknown: Sequence[str], scorer: Scorer, rule: LabelRule, policy: Deliberator) -> str:
    """What is wrong with the ``-o`` keys ``unknown``, and what the components take instead."""
    prefixed = sorted(k.removeprefix(DELIBERATION_PREFIX) for k in unknown if k.startswith(DELIBERATION_PREFIX))
    theirs = sorted(
        {k.removeprefix(DELIBERATION_PREFIX) for k in unknown} & policy_options(policy) - set(SHARED_OPTIONS)
    )
    if not policy.active and theirs:
        policies = get_registry().components["deliberators"].items()
        names = ", ".join(sorted(name for name, p in policies if p.active))
        return (
            f"option {', '.join(theirs)} is a deliberation policy's, and deliberation is {policy.name}: "
            f"choose a policy ({names}) with --deliberation or [deliberation] policy"
        )
    if prefixed:
        known = ", ".join(sorted(policy_options(policy))) or "none"
        return f"unknown deliberation option {', '.join(prefixed)} for policy {policy.name!r} (options: {known})"
    keys = {*scorer.options(), *rule.options(), *(policy_options(policy) if policy.active else ())} - {"name"}
    # The text thresholds belong to the paper's rule, which is no longer the default (compose is).
    hint = " (thresholds are the threshold rule's: add --labels threshold)" if "thresholds" in unknown else ""
    return (
        f"unknown scoring option {', '.join(unknown)} for scorer {scorer.name!r}, labels {rule.name!r} "
        f"and deliberation {policy.name!r} (options: {', '.join(sorted(keys))}){hint}"
    )


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
    extractor, scoring, routing, independence, deliberation policy and model. A resumed run must match it.

    Options a source holds as data (a ``given`` source's ``evidence``) are left out: they are the
    dataset, which the caller records by name; so are transport options (time-outs, the operator's
    User-Agent), which change no result. ``agents`` stand for the settings' own when a caller swaps
    them (evaluation against gold evidence). An inactive policy (``off``) is left out, so a run recorded
    before deliberation existed still resumes; naming another policy or option does not.
    """
    scorer, rule = build_scoring(settings)
    policy = build_deliberator(settings)
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
        **({"deliberation": {"name": policy.name, **policy.options()}} if policy.active else {}),
    }


def _without(options: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != key}


__all__ = [
    "DELIBERATION_PREFIX",
    "FALLBACK_EXTRACTOR",
    "build_agents",
    "build_checker",
    "build_deliberator",
    "build_extractor",
    "build_scoring",
    "check",
    "fingerprint",
    "limits",
    "policy_options",
    "resolve_scoring",
    "route_options",
    "split_options",
    "split_scoring_options",
]
