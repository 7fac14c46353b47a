"""How much one check may do: the ``[pipeline]`` limits a :class:`~factcheck.Checker` runs under."""

from __future__ import annotations

import math
from dataclasses import dataclass

from factcheck.errors import ConfigError


@dataclass(frozen=True)
class Limits:
    """``max_concurrency`` agent calls at once; each within ``agent_timeout_s``; a component's ``prepare()``
    within ``prepare_timeout_s``; at most ``max_claims`` claims a text and ``max_evidence`` passages an
    agent and claim."""

    max_concurrency: int = 8
    agent_timeout_s: float = 60.0
    prepare_timeout_s: float = 300.0
    max_claims: int = 200
    max_evidence: int = 50

    def __post_init__(self) -> None:
        for name in ("max_concurrency", "max_claims", "max_evidence"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
        for name in ("agent_timeout_s", "prepare_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
