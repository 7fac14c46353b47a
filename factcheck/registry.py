"""Loading plugins and collecting what they register.

Order: the built-in plugins first, then entry points in group ``factcheck``
(sorted by name), then anything registered on the manager at run time. The
first plugin to register a name keeps it; a later one with the same name is
reported as a clash (a :class:`PluginWarning` and an entry in
``factcheck plugins``), never silently overwritten. The one exception is asked
for by name: a plugin's ``register(obj, replace=True)`` replaces the built-in
component of that name (as datasette's plugins override its ``trylast``
built-ins), and ``factcheck plugins`` lists it under the plugin's ``replaces``.

Environment switches:

- ``FACTCHECK_LOAD_PLUGINS``: comma-separated allow-list of entry points
  (entry-point or distribution names); set but empty loads none.
- ``FACTCHECK_DISABLED_PLUGINS``: comma-separated block-list.
- ``FACTCHECK_TRACE_PLUGINS=1``: write each hook call, and the plugins it
  reaches, to standard error (pluggy's hook-call monitoring, as datasette's
  ``DATASETTE_TRACE_PLUGINS``).

A plugin that fails to import, uses a hook name that does not exist, or raises
inside a hook is skipped with a warning naming its distribution.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import click
import pluggy

from factcheck.errors import PluginError, UnknownComponentError
from factcheck.plugin import (
    ClaimExtractor,
    DatasetReader,
    Deliberator,
    LabelRule,
    MemoryRetriever,
    Scorer,
    Source,
    Verifier,
    hooks,
)
from factcheck.switches import read_switches

ENTRY_POINT_GROUP = "factcheck"

# Built-in components are ordinary plugins, registered through the same hooks.
BUILTIN_PLUGINS = (
    "factcheck.extractors.sentence",
    "factcheck.extractors.llm",
    "factcheck.sources.corpus",
    "factcheck.sources.given",
    "factcheck.sources.selfcheck",
    "factcheck.sources.wikipedia",
    "factcheck.sources.websearch",
    "factcheck.sources.wikidata",
    "factcheck.verifiers.lexical",
    "factcheck.verifiers.nli",
    "factcheck.verifiers.llm",
    "factcheck.verifiers.wikidata",
    "factcheck.deliberation.builtins",
    "factcheck.memory.retrieval",
    "factcheck.memory.source",
    "factcheck.memory.precedent",
    "factcheck.scoring.builtins",
    "factcheck.eval.datasets.scifact",
    "factcheck.eval.datasets.fever",
    "factcheck.eval.datasets.biomedical",
    "factcheck.eval.datasets.wice",
    "factcheck.eval.datasets.averitec",
    "factcheck.eval.datasets.liar",
    "factcheck.eval.datasets.anli",
    "factcheck.cli",
    "factcheck.batch.cli",
    "factcheck.server.cli",
)

# kind -> (hook name, accepted types)
KINDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "sources": ("register_sources", (Source,)),
    "extractors": ("register_extractors", (ClaimExtractor,)),
    "verifiers": ("register_verifiers", (Verifier,)),
    "scorers": ("register_scorers", (Scorer,)),
    "label_rules": ("register_scorers", (LabelRule,)),
    "commands": ("register_commands", (click.Command,)),
    "datasets": ("register_datasets", (DatasetReader,)),
    "deliberators": ("register_deliberators", (Deliberator,)),
    "memory_retrievers": ("register_memory_retrievers", (MemoryRetriever,)),
}

_SINGULAR = {
    "sources": "source",
    "extractors": "extractor",
    "verifiers": "verifier",
    "scorers": "scorer",
    "label_rules": "label rule",
    "commands": "command",
    "datasets": "dataset",
    "deliberators": "deliberation policy",
    "memory_retrievers": "memory retriever",
}


class PluginWarning(UserWarning):
    """A plugin was skipped or one of its registrations was refused."""


@dataclass
class PluginInfo:
    """What ``factcheck plugins`` shows for one plugin."""

    name: str
    builtin: bool
    distribution: str | None = None
    version: str | None = None
    registered: dict[str, list[str]] = field(default_factory=dict)
    replaces: dict[str, list[str]] = field(default_factory=dict)  # built-ins it replaced, by kind
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.distribution:
            data["distribution"] = self.distribution
        data["builtin"] = self.builtin
        data["registered"] = {kind: names for kind, names in self.registered.items() if names}
        if self.replaces:
            data["replaces"] = self.replaces
        if self.problems:
            data["problems"] = self.problems
        return data


@dataclass
class Registry:
    """Every registered component by kind and name, and which plugin registered it."""

    components: dict[str, dict[str, Any]] = field(default_factory=lambda: {kind: {} for kind in KINDS})
    plugins: dict[str, PluginInfo] = field(default_factory=dict)

    def add(self, obj: Any, plugin: PluginInfo, hook: str, *, replace: bool = False) -> None:
        """Add ``obj`` registered by ``plugin`` through ``hook``; refuse wrong types and clashes. With
        ``replace``, a plugin's ``obj`` replaces the built-in of its name (never another plugin's)."""
        kind = next((k for k, (h, types) in KINDS.items() if h == hook and isinstance(obj, types)), None)
        if kind is None:
            expected = " or ".join(t.__name__ for k, (h, types) in KINDS.items() if h == hook for t in types)
            raise PluginError(f"{hook} expects a {expected}, got {type(obj).__name__}")
        name = getattr(obj, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"{type(obj).__name__} registered through {hook} has no name")
        if name in self.components[kind]:
            owner = next(p for p in self.plugins.values() if name in p.registered.get(kind, []))
            if not (replace and owner.builtin and not plugin.builtin):
                raise PluginError(_clash(kind, name, owner, replace))
            owner.registered[kind].remove(name)
            plugin.replaces.setdefault(kind, []).append(name)
        self.components[kind][name] = obj
        plugin.registered.setdefault(kind, []).append(name)

    def get(self, kind: str, name: str) -> Any:
        """The component of ``kind`` called ``name``; UnknownComponentError lists the alternatives."""
        try:
            return self.components[kind][name]
        except KeyError:
            raise UnknownComponentError(_SINGULAR[kind], name, self.components[kind]) from None


def _clash(kind: str, name: str, owner: PluginInfo, replace: bool) -> str:
    """Why registering ``name`` again is refused."""
    taken = f"{_SINGULAR[kind]} {name!r} is already registered by {owner.name}"
    if owner.builtin and not replace:
        return f"{taken} (a built-in); ignored: register(obj, replace=True) replaces it"
    if replace and not owner.builtin:
        return f"{taken}; ignored: replace=True replaces only a built-in"
    return f"{taken}; ignored"


_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_registry: Registry | None = None
_load_problems: dict[str, PluginInfo] = {}
_distributions: dict[str, tuple[str | None, str | None]] = {}  # entry-point name -> (distribution, version)


def _warn(message: str) -> None:
    warnings.warn(message, PluginWarning, stacklevel=3)


def _register_checked(pm: pluggy.PluginManager, plugin: object, name: str, label: str) -> str | None:
    """Register a plugin and check its hook names; on failure unregister it and return why."""
    try:
        pm.register(plugin, name=name)
    except (pluggy.PluginValidationError, ValueError) as exc:
        return f"{label}: {exc}"
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        pm.unregister(plugin)
        return f"{label}: {exc}"
    return None


def _load_entry_points(pm: pluggy.PluginManager, allowed: frozenset[str] | None, disabled: frozenset[str]) -> None:
    entry_points = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    for ep in entry_points:
        dist_name = ep.dist.name if ep.dist is not None else None
        names = {ep.name, dist_name}
        if allowed is not None and not names & allowed:
            continue
        if names & disabled or pm.has_plugin(ep.name):
            continue
        label = f"plugin {ep.name!r} (distribution {dist_name or 'unknown'})"
        version = ep.dist.version if ep.dist is not None else None
        _distributions[ep.name] = (dist_name, version)
        try:
            plugin = ep.load()
        except (Exception, SystemExit) as exc:  # a broken plugin must never break factcheck
            problem = f"{label} failed to import and was skipped: {type(exc).__name__}: {exc}"
        else:
            refused = _register_checked(pm, plugin, ep.name, label)
            if refused is None:
                continue
            problem = refused + " (skipped)"
        _warn(problem)
        _load_problems[ep.name] = PluginInfo(ep.name, False, dist_name, version, problems=[problem])


def _trace_before(hook: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]) -> None:
    if impls:  # the registry asks each plugin in turn: a call reaching none is noise
        names = ", ".join(impl.plugin_name for impl in impls)
        print(f"factcheck plugins: {hook}({', '.join(kwargs)}) -> {names}", file=sys.stderr, flush=True)


def _trace_after(
    outcome: pluggy.Result[object], hook: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]
) -> None:
    if impls and outcome.exception is not None:
        error = f"{type(outcome.exception).__name__}: {outcome.exception}"
        print(f"factcheck plugins: {hook} raised {error}", file=sys.stderr, flush=True)


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with built-ins and entry points loaded."""
    global _pm
    with _lock:
        if _pm is None:
            switches = read_switches()  # loading the plugins is a front door: the plugin lists, tracing
            pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
            pm.add_hookspecs(hooks)
            if switches.trace_plugins:
                pm.add_hookcall_monitoring(_trace_before, _trace_after)
            for module_name in BUILTIN_PLUGINS:
                pm.register(importlib.import_module(module_name), name=module_name)
            _load_entry_points(pm, switches.load_plugins, switches.disabled_plugins)
            _pm = pm
        return _pm


def _plugin_info(name: str) -> PluginInfo:
    if name in BUILTIN_PLUGINS:
        return PluginInfo(name, True, "factcheck-agents", _own_version())
    dist_name, version = _distributions.get(name, (None, None))
    return PluginInfo(name, False, dist_name, version)


def _own_version() -> str | None:
    try:
        return importlib.metadata.version("factcheck-agents")
    except importlib.metadata.PackageNotFoundError:
        return None


def _collect(pm: pluggy.PluginManager) -> Registry:
    registry = Registry()
    plugins = [(name, plugin) for name, plugin in pm.list_name_plugin() if plugin is not None]
    for name, _plugin in plugins:
        info = _plugin_info(name)
        registry.plugins[name] = info
        others = [p for n, p in plugins if n != name]
        for hook in dict.fromkeys(h for h, _ in KINDS.values()):
            caller = pm.subset_hook_caller(hook, remove_plugins=others)
            refused: list[str] = []

            def register(
                obj: Any,
                *,
                replace: bool = False,
                _info: PluginInfo = info,
                _hook: str = hook,
                _refused: list[str] = refused,
            ) -> None:
                try:
                    registry.add(obj, _info, _hook, replace=replace)
                except PluginError as exc:
                    _refused.append(f"{_info.name}: {exc}")

            try:
                caller(register=register)
            except Exception as exc:  # a plugin raising in its hook is reported, not fatal
                refused.append(f"{name}: {hook} raised {type(exc).__name__}: {exc}")
            for problem in refused:
                _warn(problem)
                info.problems.append(problem)
    for name, info in _load_problems.items():
        registry.plugins.setdefault(name, info)
    return registry


def get_registry() -> Registry:
    """The registry of every component the loaded plugins registered (built once, then cached)."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = _collect(get_plugin_manager())
        return _registry


def reset_plugins(*, reload: bool = False) -> None:
    """Forget the collected registry (after registering a plugin at run time); with
    ``reload``, also rebuild the plugin manager and re-read entry points and env switches."""
    global _pm, _registry
    with _lock:
        _registry = None
        if reload:
            _pm = None
            _load_problems.clear()
            _distributions.clear()


def get_sources() -> dict[str, Source]:
    """Registered evidence sources by name."""
    return dict(get_registry().components["sources"])


def get_extractors() -> dict[str, ClaimExtractor]:
    """Registered claim extractors by name."""
    return dict(get_registry().components["extractors"])


def get_verifiers() -> dict[str, Verifier]:
    """Registered verifiers by name."""
    return dict(get_registry().components["verifiers"])


def get_scorers() -> dict[str, Scorer]:
    """Registered scorers by name."""
    return dict(get_registry().components["scorers"])


def get_label_rules() -> dict[str, LabelRule]:
    """Registered label rules by name."""
    return dict(get_registry().components["label_rules"])


def get_commands() -> dict[str, click.Command]:
    """Registered CLI commands by name."""
    return dict(get_registry().components["commands"])


def get_datasets() -> dict[str, DatasetReader]:
    """Registered evaluation dataset readers by name."""
    return dict(get_registry().components["datasets"])


def get_deliberators() -> dict[str, Deliberator]:
    """Registered deliberation policies by name."""
    return dict(get_registry().components["deliberators"])


def list_plugins(include_builtins: bool = False) -> list[dict[str, Any]]:
    """What ``factcheck plugins`` prints: each plugin, its version and what it registered."""
    infos: Iterable[PluginInfo] = get_registry().plugins.values()
    return [info.to_dict() for info in infos if include_builtins or not info.builtin]
