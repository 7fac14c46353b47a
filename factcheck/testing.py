"""Helpers for testing factcheck plugins (and factcheck itself).

- :class:`StaticSource` returns the same passages for every claim.
- :class:`ScriptedVerifier` answers from a script: the first rule whose text
  occurs in the claim decides, else the default.
- :func:`registered` registers plugin objects for the duration of a ``with``
  block, so a test sees them through ``get_sources()`` and the CLI.

Example::

    from factcheck import Agent, Checker
    from factcheck.testing import ScriptedVerifier, StaticSource

    checker = Checker(agents=[Agent("a", StaticSource(), ScriptedVerifier({"Paris": (True, 0.9)}))])
    assert checker.check("The Eiffel Tower is in Paris.").label == "TRUE"
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from factcheck.errors import SourceError
from factcheck.eval.datasets.core import DatasetReader
from factcheck.plugins.hookspecs import hookimpl
from factcheck.plugins.manager import get_plugin_manager, reset_plugins
from factcheck.sources.base import Source
from factcheck.types import Assessment, Claim, Evidence
from factcheck.verifiers.base import Verifier


@dataclass(frozen=True)
class StaticSource(Source):
    """Returns ``passages`` (as Evidence) for every claim; ``fail`` makes it raise,
    ``delay_s`` makes it slow, to exercise abstentions and time-outs."""

    name: str = "static"
    passages: tuple[str, ...] = ("Static evidence passage.",)
    title: str = "Static passage"
    url: str | None = "https://example.org/static"
    fail: str | None = None
    delay_s: float = 0.0

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail:
            raise SourceError(self.fail)
        return [Evidence(source=self.name, text=p, title=self.title, url=self.url) for p in self.passages]


@dataclass(frozen=True)
class ScriptedVerifier(Verifier):
    """Judges by script: ``rules`` maps a substring of the claim to ``(factuality, confidence)``;
    the first match wins, else ``default``. Without evidence it abstains."""

    name: str = "scripted"
    rules: Mapping[str, tuple[bool | None, float]] = field(default_factory=dict)
    default: tuple[bool | None, float] = (True, 0.8)

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        if not evidence:
            return Assessment(None, 0.0, "no evidence")
        factuality, confidence = next(
            (verdict for text, verdict in self.rules.items() if text in claim.text), self.default
        )
        return Assessment(factuality, confidence if factuality is not None else 0.0, "scripted")


class _ObjectsPlugin:
    """A throwaway plugin that registers given objects through every hook."""

    def __init__(self, objects: Sequence[Any]) -> None:
        self.objects = objects

    def _register(self, register: Callable[[Any], None], kind: type) -> None:
        for obj in self.objects:
            if isinstance(obj, kind):
                register(obj)

    @hookimpl
    def register_sources(self, register: Callable[[Any], None]) -> None:
        self._register(register, Source)

    @hookimpl
    def register_verifiers(self, register: Callable[[Any], None]) -> None:
        self._register(register, Verifier)

    @hookimpl
    def register_extractors(self, register: Callable[[Any], None]) -> None:
        from factcheck.extractors.base import ClaimExtractor

        self._register(register, ClaimExtractor)

    @hookimpl
    def register_scorers(self, register: Callable[[Any], None]) -> None:
        from factcheck.scoring.base import LabelRule, Scorer

        self._register(register, (Scorer, LabelRule))  # type: ignore[arg-type]

    @hookimpl
    def register_datasets(self, register: Callable[[Any], None]) -> None:
        self._register(register, DatasetReader)


_counter = itertools.count()


@contextmanager
def registered(*plugins: Any, name: str = "factcheck-testing") -> Iterator[None]:
    """Register plugins for the block: plugin modules/objects with hook implementations,
    or component instances (sources, verifiers, extractors, scorers, label rules, dataset readers).

    Blocks nest. Hook names are checked as for installed plugins (a misspelt hook
    raises ``pluggy.PluginValidationError``).
    """
    pm = get_plugin_manager()
    components = [p for p in plugins if _is_component(p)]
    hook_plugins = [p for p in plugins if p not in components]
    if components:
        hook_plugins.append(_ObjectsPlugin(components))
    names: list[str] = []
    try:
        for plugin in hook_plugins:
            plugin_name = f"{name}-{next(_counter)}"
            pm.register(plugin, name=plugin_name)
            names.append(plugin_name)
            pm.check_pending()
        reset_plugins()
        yield
    finally:
        for plugin_name in names:
            pm.unregister(name=plugin_name)
        reset_plugins()


def _is_component(obj: Any) -> bool:
    from factcheck.extractors.base import ClaimExtractor
    from factcheck.scoring.base import LabelRule, Scorer

    return isinstance(obj, Source | Verifier | ClaimExtractor | Scorer | LabelRule | DatasetReader)
