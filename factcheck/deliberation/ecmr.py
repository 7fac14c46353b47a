"""ECMR (papers/001): a controller reads the state of the debate and picks the next action.

The paper's controller is learned (actor-critic with a risk head, Table 5) and our copy gives no equation
for it, so this rule is our reconstruction from its state (Table 4) and thresholds: answer concentration,
independent support, evidence independence, contradiction and the budget left. It deliberates when

- no agent gave a verdict (verify, then diversify);
- the agents disagree: concentration below ``tau_concentration`` or contradiction (confident support on
  both sides) at least ``tau_contradiction`` (challenge, then arbitrate);
- agreement rests on dependent evidence: independence below ``min_independence`` (verify with evidence not
  yet seen, then arbitrate) — suspected false consensus;
- the leading answer is unsure: the leader's confidence below ``tau_confidence`` (diversify, then
  arbitrate).

The decision-maker's ruling (PAMAS eq. 6) replaces the votes. Everything else stops after the first round.

``tau_confidence`` defaults to the value ``factcheck calibrate --gate`` fitted for the offline default on issue
39's calibration split, 0: the unsure-leader trigger stops nothing within the share it may send, so it is off
(ECMR's own is 0.55, :data:`PAPER`); the other triggers keep ECMR's thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.options import setting
from factcheck.plugin import Action, DeliberationState, Deliberator, stop, taken
from factcheck.plugin.deliberator import ARBITER
from factcheck.types import DeliberationStep

PAPER = {"tau_confidence": 0.55}  # ECMR's unsure-leader threshold (Table 5)


@dataclass(frozen=True)
class ECMR(Deliberator):
    """An evidence-aware controller (see the module docstring); thresholds are ECMR's (Table 5)."""

    name: str = "ecmr"
    tau_concentration: float = setting(0.8, minimum=0.0, maximum=1.0)
    tau_contradiction: float = setting(0.4, minimum=0.0, maximum=1.0)
    min_independence: float = setting(0.45, minimum=0.0, maximum=1.0)
    tau_confidence: float = setting(0.0, minimum=0.0, maximum=1.0)  # fitted (module docstring); ECMR's: PAPER

    def split(self, state: DeliberationState) -> bool:
        """The agents disagree, or confident support stands on both sides."""
        return state.concentration < self.tau_concentration or state.contradiction >= self.tau_contradiction

    def dependent(self, state: DeliberationState) -> bool:
        """The agreement rests on shared evidence (independence known and low): a suspected false consensus."""
        return state.votes >= 2 and state.independence is not None and state.independence < self.min_independence

    def unsure(self, state: DeliberationState) -> bool:
        return state.leader_confidence < self.tau_confidence

    def triggers(self, state: DeliberationState) -> list[str]:
        """Every reason in ``state`` to deliberate, in the order they are acted on."""
        if state.unanswered:
            return ["no agent gave a verdict"]
        found = []
        if state.concentration < self.tau_concentration:
            found.append(f"the agents disagree (concentration {state.concentration:.2f} < {self.tau_concentration:g})")
        elif self.split(state):
            found.append(f"confident support on both sides (contradiction {state.contradiction:.2f})")
        if self.dependent(state):
            shared = f"independence {state.independence:.2f} < {self.min_independence:g}"
            found.append(f"agreement rests on shared evidence ({shared})")
        if self.unsure(state):
            found.append(
                f"the leading answer is unsure (confidence {state.leader_confidence:.2f} < {self.tau_confidence:g})"
            )
        return found

    def gate(self, state: DeliberationState) -> str | None:
        found = self.triggers(state)
        return "; ".join(found) if found else None

    def next_action(self, state: DeliberationState, steps: Sequence[DeliberationStep]) -> Action:
        if taken(steps, "arbitrate"):
            return stop("the decision-maker ruled")
        if state.unanswered:
            if not taken(steps, "verify") or (taken(steps, "verify") < 2 and state.asked < state.agents):
                return Action("verify", "verifier", "no agent gave a verdict: look further")
            if not taken(steps, "diversify"):
                return Action("diversify", "verifier", "no agent gave a verdict: search another way")
            return stop("no agent found evidence that addresses the claim")
        if steps and not self.triggers(state) and not self.always:
            return stop("the state no longer calls for deliberation")
        if self.dependent(state) and not taken(steps, "verify"):
            return Action("verify", "verifier", "agreement rests on shared evidence: find independent evidence")
        if not taken(steps, "challenge") and (self.split(state) or self.always or not steps):
            return Action("challenge", "devil's advocate", "test the leading answer against its counter-evidence")
        if self.unsure(state) and not taken(steps, "diversify"):
            return Action("diversify", "verifier", "the leading answer is unsure: search another way")
        return Action("arbitrate", "decision-maker", "rule with every agent's verdict, evidence and critique")

    def final(self, held: Mapping[str, Any], leader: str) -> list[str] | None:
        """The decision-maker's ruling, when it gave one; else every vote."""
        ruling = held.get(ARBITER)
        return [ARBITER] if ruling is not None and not ruling.abstained else None
