"""factcheck: evidence-based, multi-agent fact-checking.

    >>> import factcheck
    >>> verdict = factcheck.check("Aspirin lowers the risk of colorectal cancer.")
    >>> verdict.label, verdict.score

The public API is exactly what this module exports.
"""

from factcheck.agent import Agent
from factcheck.build import build_checker, check
from factcheck.config import AgentSpec, Settings, load_settings
from factcheck.context import CheckContext
from factcheck.deliberation.base import Deliberator
from factcheck.deliberation.state import DeliberationState
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
from factcheck.extractors.base import ClaimExtractor
from factcheck.limits import Limits
from factcheck.memory.retrieval import MemoryRetriever
from factcheck.memory.store import Correction, MemoryStore
from factcheck.pipeline import Checker
from factcheck.plugins import (
    get_extractors,
    get_label_rules,
    get_scorers,
    get_sources,
    get_verifiers,
    hookimpl,
)
from factcheck.plugins.manager import get_deliberators
from factcheck.scoring import rescore
from factcheck.scoring.base import LabelRule, Scorer
from factcheck.sources.base import Source
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
from factcheck.verifiers.base import Verifier

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
