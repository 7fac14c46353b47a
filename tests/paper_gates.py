"""The deliberation policies with the papers' own gate thresholds, for the tests of the gates and the floor.

Since issue 39 the policies' defaults are the gate ``factcheck calibrate --gate`` fitted for the offline
default, which deliberates only a claim no agent answered. These tests exercise the gates themselves and
what follows them, so they build the policies with the papers' thresholds (``lase.PAPER``, ``ecmr.PAPER``)
as their defaults; an option given still wins."""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.deliberation import ecmr, lase
from factcheck.options import setting


@dataclass(frozen=True)
class LASE(lase.LASE):
    tau_lp: float = setting(lase.PAPER["tau_lp"], minimum=0.0, maximum=1.0)
    tau_h: float = setting(lase.PAPER["tau_h"], minimum=0.0)
    tau_conf: float = setting(lase.PAPER["tau_conf"], minimum=0.0, maximum=1.0)


@dataclass(frozen=True)
class ECMR(ecmr.ECMR):
    tau_confidence: float = setting(ecmr.PAPER["tau_confidence"], minimum=0.0, maximum=1.0)
