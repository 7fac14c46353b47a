"""factcheck: evidence-based, multi-agent fact-checking.

    >>> import factcheck
    >>> verdict = factcheck.check("Aspirin lowers the risk of colorectal cancer.")
    >>> verdict.label, verdict.score

The public API is exactly what this module exports. Each name is imported where it lives on first use,
so a plugin's ``import factcheck.plugin`` (the door for plugin authors: docs/plugins.md) loads the
contracts alone, never the pipeline, the registry or the built-in components.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factcheck.agent import Agent
    from factcheck.build import build_checker, check
    from factcheck.config import AgentSpec, Settings, load_settings
    from factcheck.context import CheckContext
    from factcheck.errors import (
        BudgetReachedError,
        ConfigError,
        FactcheckError,
        InputError,
        LLMError,
        LLMRefusedError,
        LLMUnreachableError,
        MissingKeyError,
        PluginError,
        ServiceHTTPError,
        ServiceRefusedError,
        ServiceUnreachableError,
        SourceError,
        SourceRefusedError,
        UnknownComponentError,
        VerifierError,
    )
    from factcheck.events import CheckEvent, ClaimChecked, ClaimDeliberated, ClaimsFound, TextChecked
    from factcheck.limits import Limits
    from factcheck.memory.store import Correction, MemoryStore
    from factcheck.pipeline import Checker
    from factcheck.plugin import (
        ClaimExtractor,
        DeliberationState,
        Deliberator,
        LabelRule,
        MemoryRetriever,
        Scorer,
        Source,
        Verifier,
        hookimpl,
    )
    from factcheck.registry import (
        get_deliberators,
        get_extractors,
        get_label_rules,
        get_scorers,
        get_sources,
        get_verifiers,
    )
    from factcheck.scoring import rescore
    from factcheck.types import (
        SCHEMA,
        Assessment,
        Claim,
        ClaimTime,
        ClaimVerdict,
        Critique,
        Deliberation,
        DeliberationStep,
        Evidence,
        Extraction,
        JudgedBy,
        JudgingAgent,
        Judgment,
        Label,
        SkippedSentence,
        TextVerdict,
        Usage,
    )

# Where each public name lives (tests/test_public_api.py holds it to the imports above and to __all__).
_HOMES: dict[str, tuple[str, ...]] = {
    "factcheck.agent": ("Agent",),
    "factcheck.build": ("build_checker", "check"),
    "factcheck.config": ("AgentSpec", "Settings", "load_settings"),
    "factcheck.context": ("CheckContext",),
    "factcheck.errors": (
        "BudgetReachedError",
        "ConfigError",
        "FactcheckError",
        "InputError",
        "LLMError",
        "LLMRefusedError",
        "LLMUnreachableError",
        "MissingKeyError",
        "PluginError",
        "ServiceHTTPError",
        "ServiceRefusedError",
        "ServiceUnreachableError",
        "SourceError",
        "SourceRefusedError",
        "UnknownComponentError",
        "VerifierError",
    ),
    "factcheck.events": ("CheckEvent", "ClaimChecked", "ClaimDeliberated", "ClaimsFound", "TextChecked"),
    "factcheck.limits": ("Limits",),
    "factcheck.memory.store": ("Correction", "MemoryStore"),
    "factcheck.pipeline": ("Checker",),
    "factcheck.plugin": (
        "ClaimExtractor",
        "DeliberationState",
        "Deliberator",
        "LabelRule",
        "MemoryRetriever",
        "Scorer",
        "Source",
        "Verifier",
        "hookimpl",
    ),
    "factcheck.registry": (
        "get_deliberators",
        "get_extractors",
        "get_label_rules",
        "get_scorers",
        "get_sources",
        "get_verifiers",
    ),
    "factcheck.scoring": ("rescore",),
    "factcheck.types": (
        "SCHEMA",
        "Assessment",
        "Claim",
        "ClaimTime",
        "ClaimVerdict",
        "Critique",
        "Deliberation",
        "DeliberationStep",
        "Evidence",
        "Extraction",
        "JudgedBy",
        "JudgingAgent",
        "Judgment",
        "Label",
        "SkippedSentence",
        "TextVerdict",
        "Usage",
    ),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

if not TYPE_CHECKING:  # type checkers read the imports above, and flag a misspelt name

    def __getattr__(name: str) -> Any:
        module = _HOME.get(name)
        if module is None:
            raise AttributeError(f"module 'factcheck' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


__all__ = [
    "SCHEMA",
    "Agent",
    "AgentSpec",
    "Assessment",
    "BudgetReachedError",
    "CheckContext",
    "CheckEvent",
    "Checker",
    "Claim",
    "ClaimChecked",
    "ClaimDeliberated",
    "ClaimExtractor",
    "ClaimTime",
    "ClaimVerdict",
    "ClaimsFound",
    "ConfigError",
    "Correction",
    "Critique",
    "Deliberation",
    "DeliberationState",
    "DeliberationStep",
    "Deliberator",
    "Evidence",
    "Extraction",
    "FactcheckError",
    "InputError",
    "JudgedBy",
    "JudgingAgent",
    "Judgment",
    "LLMError",
    "LLMRefusedError",
    "LLMUnreachableError",
    "Label",
    "LabelRule",
    "Limits",
    "MemoryRetriever",
    "MemoryStore",
    "MissingKeyError",
    "PluginError",
    "Scorer",
    "ServiceHTTPError",
    "ServiceRefusedError",
    "ServiceUnreachableError",
    "Settings",
    "SkippedSentence",
    "Source",
    "SourceError",
    "SourceRefusedError",
    "TextChecked",
    "TextVerdict",
    "UnknownComponentError",
    "Usage",
    "Verifier",
    "VerifierError",
    "build_checker",
    "check",
    "get_deliberators",
    "get_extractors",
    "get_label_rules",
    "get_scorers",
    "get_sources",
    "get_verifiers",
    "hookimpl",
    "load_settings",
    "rescore",
]
