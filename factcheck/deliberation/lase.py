"""LASE (papers/003): a leader answers alone; only when it is unsure do supporters engage, in order.

The leader's uncertainty is LASE's gate (eq. 5-7): U = 1 when the least likely token (or, for the ``nli``
verifier, the deciding class) has probability below ``tau_lp``, or the largest entropy exceeds ``tau_h``;
where the verifier measured neither, its confidence below ``tau_conf`` (the calibrated verbal confidence).
Then, as in eq. 8-12 and Appendix D: the devil's advocate names the strongest counter-evidence and the
leader revises; if still unsure, a collaborator adds hints and the leader revises; then an expert. It
stops as soon as the leader is sure (U = 0) and the answer is the leader's, not a vote. Supporters never
give a verdict. The interaction is a star: only the leader reads its peers (Prop. 3.2).

The paper's thresholds were swept on its test benchmark (Table 5: tau_lp 0.5-0.95, tau_h 0.5; its
main-table row is 0.8 and 0.5, with ``tau_conf`` 0.6: :data:`PAPER`). The defaults here are the gate
``factcheck calibrate --gate`` fitted for the offline default on issue 39's calibration split (the harm
probe's calibration half, the held-out SciFact train claims, Check-COVID dev): no threshold stops claims
accurate enough within the share it may send, so an answered claim is not deliberated (``tau_lp`` 0,
``tau_h`` 10, ``tau_conf`` 0) and only a claim the leader could not answer is. Refit them for another team
(``factcheck calibrate --gate``, the trust file carries them) or give the paper's (``-o tau_lp=0.8 ...``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.options import setting
from factcheck.plugin import Action, DeliberationState, Deliberator, stop, taken
from factcheck.types import DeliberationStep

ORDER = (
    ("challenge", "devil's advocate"),
    ("revise", "leader"),
    ("support", "collaborator"),
    ("revise", "leader"),
    ("support", "expert"),
    ("revise", "leader"),
)
ROUND0 = ("leader", "all")
PAPER = {"tau_lp": 0.8, "tau_h": 0.5, "tau_conf": 0.6}  # LASE's main-table gate (Table 5)


@dataclass(frozen=True)
class LASE(Deliberator):
    """Leader and supporters, engaged only when the leader is unsure (see the module docstring).

    Options: ``tau_lp`` (a probability), ``tau_h`` (nats), ``tau_conf`` (the verbal fallback) and
    ``round0`` (``leader``: only the leader answers first, at single-agent cost; ``all``: every agent
    answers, and a claim the gate stops keeps every answer)."""

    name: str = "lase"
    # Fitted on issue 39's calibration split (the module docstring); the paper's are PAPER.
    tau_lp: float = setting(0.0, minimum=0.0, maximum=1.0)
    tau_h: float = setting(10.0, minimum=0.0)
    tau_conf: float = setting(0.0, minimum=0.0, maximum=1.0)
    round0: str = setting("leader", choices=ROUND0)

    def round0_agents(self, agents: Sequence[str], alpha: Mapping[str, float]) -> list[str]:
        if self.round0 == "all":
            return list(agents)
        return [self.lead(agents, alpha)]

    def gate(self, state: DeliberationState) -> str | None:
        if state.unanswered:
            return "the leader gave no verdict"
        p = state.leader_probability
        if p is not None and p < self.tau_lp:
            return f"the leader is unsure: its answer's probability {p:.2f} < tau_lp {self.tau_lp:g}"
        if state.h_max is not None and state.h_max > self.tau_h:
            return f"the leader is unsure: its answer's entropy {state.h_max:.2f} > tau_h {self.tau_h:g}"
        if state.leader_confidence < self.tau_conf:
            return f"the leader is unsure: confidence {state.leader_confidence:.2f} < tau_conf {self.tau_conf:g}"
        return None

    def next_action(self, state: DeliberationState, steps: Sequence[DeliberationStep]) -> Action:
        if state.unanswered:
            if not taken(steps, "verify") and state.asked < state.agents:
                return Action("verify", "verifier", "the leader found nothing: ask the next agent")
            return stop("no agent found evidence that addresses the claim")
        if steps and steps[-1].action == "revise" and self.gate(state) is None:
            return stop("the leader is sure after revising")
        done = sum(1 for s in steps if s.action in ("challenge", "support", "revise"))
        if done >= len(ORDER):
            return stop("every supporter has spoken")
        kind, role = ORDER[done]
        return Action(kind, role, _why(kind, role))

    def final(self, held: Mapping[str, Any], leader: str) -> list[str] | None:
        """The leader's answer alone (LASE's y is the leader's, not a vote), when it has one."""
        judgment = held.get(leader)
        return [leader] if judgment is not None and not judgment.abstained else None


def _why(kind: str, role: str) -> str:
    return {
        "challenge": "the devil's advocate looks for the strongest counter-evidence",
        "revise": "the leader rules again with what the supporters said",
        "support": f"the {role} adds what the leader may have missed",
    }[kind]
