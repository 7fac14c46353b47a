"""Registering plugin objects for the duration of a ``with`` block (:func:`registered`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from factcheck.plugin import DatasetReader, Source, Verifier, hookimpl
from factcheck.registry import get_plugin_manager, reset_plugins


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
        from factcheck.plugin import ClaimExtractor

        self._register(register, ClaimExtractor)

    @hookimpl
    def register_scorers(self, register: Callable[[Any], None]) -> None:
        from factcheck.plugin import LabelRule, Scorer

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
    from factcheck.plugin import ClaimExtractor, LabelRule, Scorer

    return isinstance(obj, Source | Verifier | ClaimExtractor | Scorer | LabelRule | DatasetReader)
