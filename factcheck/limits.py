"""How much one check may do: the ``[pipeline]`` limits a :class:`~factcheck.Checker` runs under."""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.options import check_fields, setting


@dataclass(frozen=True)
class Limits:
    """``max_concurrency`` agent calls at once; each within ``agent_timeout_s``; a component's ``prepare()``
    within ``prepare_timeout_s``; at most ``max_claims`` claims a text and ``max_evidence`` passages an
    agent and claim. Range-checked as the settings they come from (:class:`~factcheck.Settings`)."""

    max_concurrency: int = setting(8, minimum=1)
    agent_timeout_s: float = setting(60.0, minimum=0, min_open=True, unit="seconds")
    prepare_timeout_s: float = setting(300.0, minimum=0, min_open=True, unit="seconds")
    max_claims: int = setting(200, minimum=1)
    max_evidence: int = setting(50, minimum=1)

    def __post_init__(self) -> None:
        check_fields(self)
