"""Registers the built-in deliberation policies through the public hook: ``off``, ``lase``, ``ecmr``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.deliberation.ecmr import ECMR
from factcheck.deliberation.lase import LASE
from factcheck.plugin import Action, DeliberationState, Deliberator, hookimpl, stop
from factcheck.types import DeliberationStep


@dataclass(frozen=True)
class Off(Deliberator):
    """No deliberation: the first round's judgments are scored as they are (the default)."""

    name: str = "off"

    @property
    def active(self) -> bool:
        return False

    def gate(self, state: DeliberationState) -> str | None:
        return None

    def next_action(self, state: DeliberationState, steps: Sequence[DeliberationStep]) -> Action:
        return stop("deliberation is off")


@hookimpl
def register_deliberators(register: Callable[[Any], None]) -> None:
    for policy in (Off(), LASE(), ECMR()):
        register(policy)
