"""The ``memory`` source: the past cases of the experience memory most like the claim, as precedents.

Its agent (``memory``, added by ``[memory] path = ...`` or ``--memory PATH``) is evidence like any other: trust,
routing and scoring treat it like the other agents, and its value is measured (docs/learning.md). The cases are
read from the store at each check (a correction taken by the server meanwhile is seen by the next check) and
ranked by the memory's retriever; only corrections whose label is agreed are lent
(:meth:`~factcheck.memory.store.MemoryStore.cases`). A forgotten correction is gone from the next check on:
the source's judgments are never cached.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from factcheck.memory.store import Case, MemoryStore
from factcheck.options import setting
from factcheck.plugin import Source, hookimpl
from factcheck.precedents import SOURCE, precedent_url, ruled_by
from factcheck.types import Claim, Evidence
from factcheck.usage import record_call, record_note

MAX_NOTE_SHOWN = 300


def precedent_evidence(case: Case) -> Evidence:
    """A case as a precedent passage: the past claim, titled with who ruled it what, when, and why."""
    day = case.ruled_at[:10]
    title = f"Precedent {case.id}: {ruled_by(case.reviewers)} ruled it {case.label} on {day}"
    if case.note:
        note = " ".join(case.note.split())
        title += f', noting: "{note[:MAX_NOTE_SHOWN]}{"..." if len(note) > MAX_NOTE_SHOWN else ""}"'
    assert case.label is not None  # cases() lends only agreed TRUE / FALSE cases
    return Evidence(SOURCE, case.claim, title, precedent_url(case.id, case.label), published_at=case.ruled_at)


_cases: dict[tuple[str, int], tuple[str, list[Case]]] = {}  # (path, require) -> (store stamp, cases)
_lock = threading.Lock()


def current_cases(store: MemoryStore, require: int) -> list[Case]:
    """The store's lendable cases, read again only when the store has changed."""
    stamp = store.stamp()
    key = (str(store.path.resolve()), require)
    with _lock:
        held = _cases.get(key)
    if held is not None and held[0] == stamp:
        return held[1]
    cases = store.cases(require)
    with _lock:
        _cases[key] = (stamp, cases)
    return cases


@dataclass(frozen=True)
class MemorySource(Source):
    """Past cases like the claim from the experience memory at ``path``. Options: ``top_k`` (cases returned),
    ``require`` (distinct reviewers who must agree on a label before it is lent), ``retriever`` (a registered
    memory retriever: ``bm25``, ``hybrid``)."""

    name = "memory"
    gives_precedents = True
    reuse_judgments = False  # the store changes with every correction, and a forgotten case must not come back
    path: str = ""
    top_k: int = setting(3, minimum=1)
    require: int = setting(1, minimum=1)
    retriever: str = "bm25"

    async def prepare(self) -> None:
        from factcheck.registry import get_registry

        get_registry().get("memory_retrievers", self.retriever)  # an unknown name fails the check, clearly
        if self.path and not MemoryStore(self.path).exists():  # a mistyped path must not look like an empty memory
            record_note(f"memory: {self.path} does not exist yet: no precedents until a correction is stored")

    def find(self, claim: Claim) -> list[Evidence]:
        """The ``top_k`` cases the retriever ranks best for the claim, as precedent passages."""
        from factcheck.registry import get_registry

        if not self.path:
            return []
        cases = current_cases(MemoryStore(self.path), self.require)
        if not cases:
            return []
        retriever = get_registry().get("memory_retrievers", self.retriever)
        record_call("memory:search")
        ranked = retriever.rank([c.claim for c in cases], claim.text)
        return [precedent_evidence(cases[i]) for i in ranked[: self.top_k] if 0 <= i < len(cases)]

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return await asyncio.to_thread(self.find, claim)


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(MemorySource())
