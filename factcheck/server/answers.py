"""Whole answers kept in memory, so a text checked a moment ago costs a lookup.

The judgment cache (SQLite, per claim) already spares the searches and the
judging of a claim seen before, but a repeated text is still split into
claims, and each judgment read and scored. Here the finished answer of
``/v1/check`` is kept, keyed by the checker's settings (profile, scorer, label
rule, deliberation policy) and the text exactly as sent (claim spans point into
it, so two texts that differ only in spacing are two entries).

Only complete answers are kept: not a partial one (the deadline cut it short),
not one where an agent failed (an error, a time-out: the next request should
try again), not one whose deliberation of a claim was cut short (the deadline,
a budget or an error stopped it: the next request should settle it). Entries
expire after ``ttl_s`` so changed evidence reaches callers; at most ``size`` are
kept, least recently used dropped first. The cache is per process: with several
workers each keeps its own (the SQLite judgment cache is the one they share).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from factcheck.types import Usage

HIT_USAGE = Usage(
    cache_hits={"answer": 1},
    notes=("the same text was checked earlier with the same settings: answered from memory",),
).to_dict()


@dataclass(frozen=True)
class StoredAnswer:
    """An answer ready to send: its JSON body (usage already saying it came from memory) and its claim count."""

    body: bytes
    claims: int

    def with_fields(self, fields: bytes) -> bytes:
        """The body with more top-level fields (``fields`` is a JSON object, e.g. ``{"url": ...}``)."""
        if fields in (b"", b"{}"):
            return self.body
        return self.body[:-1] + b", " + fields[1:]


class AnswerCache:
    """An LRU map of rendered answers with a time to live."""

    def __init__(self, size: int, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = int(size)
        self.ttl_s = ttl_s
        self.clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, StoredAnswer]] = OrderedDict()

    def get(self, key: Hashable) -> StoredAnswer | None:
        """The stored answer for ``key``; ``None`` if absent or expired."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, answer = entry
        if self.clock() - stored_at > self.ttl_s:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return answer

    def put(self, key: Hashable, answer: dict[str, Any], render: Callable[[dict[str, Any]], bytes]) -> None:
        """Keep ``answer`` (rendered once by ``render``, with the answer-cache usage) if it is complete."""
        if self.size <= 0 or not cacheable(answer):
            return
        body = render({**answer, "usage": HIT_USAGE})
        if not body.endswith(b"}"):
            return
        self._entries[key] = (self.clock(), StoredAnswer(body, len(answer.get("claims", ()))))
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


# How a claim's ``deliberation.stopped`` begins when the deliberation was cut short, not finished.
CUT_SHORT = ("deadline", "budget", "error")


def cacheable(answer: dict[str, Any]) -> bool:
    """True for an answer worth repeating: complete, no agent failed on any claim, and no claim's
    deliberation was cut short (:data:`CUT_SHORT`)."""
    if answer.get("partial") or not answer.get("claims"):
        return False
    claims = answer.get("claims", ())
    if any(str((claim.get("deliberation") or {}).get("stopped", "")).startswith(CUT_SHORT) for claim in claims):
        return False
    return not any(judgment.get("error") for claim in claims for judgment in claim.get("judgments", ()))
