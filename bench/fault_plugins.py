"""Misbehaving components for bench/faults.py, registered by its launcher (never installed).

Each is a source a careless or hostile plugin could ship: one that blocks its
event loop, one that raises KeyboardInterrupt, one that returns garbage or far
too many passages, one whose evidence holds a lone surrogate, one whose
``prepare`` never returns. They are written against the plugin API of every
version the benchmark compares, so the same file serves the old code and the new.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from factcheck.plugin import Source, hookimpl
from factcheck.types import Claim, Evidence


@dataclass(frozen=True)
class Blocking(Source):
    name: str = "fault-blocking"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        time.sleep(5)  # blocks whatever loop it runs on
        return [Evidence(self.name, "Statins lower LDL cholesterol.")]


@dataclass(frozen=True)
class Interrupting(Source):
    name: str = "fault-interrupt"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        raise KeyboardInterrupt


@dataclass(frozen=True)
class Garbage(Source):
    name: str = "fault-garbage"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return ["a string", {"text": "a dict"}, object()]  # type: ignore[list-item]


@dataclass(frozen=True)
class Flood(Source):
    name: str = "fault-flood"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return [Evidence(self.name, f"Passage {i} about statins and LDL cholesterol.") for i in range(200_000)]


@dataclass(frozen=True)
class Surrogate(Source):
    name: str = "fault-surrogate"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return [Evidence(self.name, "Statins lower \ud800 LDL cholesterol.")]


@dataclass(frozen=True)
class NeverReady(Source):
    name: str = "fault-never-ready"

    async def prepare(self) -> None:
        await asyncio.Event().wait()

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return [Evidence(self.name, "Statins lower LDL cholesterol.")]


SOURCES = (Blocking(), Interrupting(), Garbage(), Flood(), Surrogate(), NeverReady())


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    for source in SOURCES:
        register(source)
