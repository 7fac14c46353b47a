"""The hooks a factcheck plugin can implement.

Each hook is called with a ``register`` callback; call it once per object. A name
already taken by a built-in is refused unless the plugin says it replaces it:
``register(obj, replace=True)``. Implementations may accept fewer arguments than
the spec (pluggy), so hooks grow by adding arguments, never by renaming. The
classes named below are all in :mod:`factcheck.plugin`. See docs/plugins.md.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

hookspec = pluggy.HookspecMarker("factcheck")
hookimpl = pluggy.HookimplMarker("factcheck")

Register = Callable[..., None]  # register(obj) or register(obj, replace=True)


@hookspec
def register_sources(register: Register) -> None:
    """Register evidence sources: ``register(source)`` with a :class:`factcheck.plugin.Source`."""


@hookspec
def register_extractors(register: Register) -> None:
    """Register claim extractors: ``register(extractor)`` with a :class:`factcheck.plugin.ClaimExtractor`."""


@hookspec
def register_verifiers(register: Register) -> None:
    """Register verifiers: ``register(verifier)`` with a :class:`factcheck.plugin.Verifier`."""


@hookspec
def register_scorers(register: Register) -> None:
    """Register scorers and label rules: ``register(obj)`` with a :class:`factcheck.plugin.Scorer` or
    :class:`factcheck.plugin.LabelRule`."""


@hookspec
def register_commands(register: Register) -> None:
    """Register CLI subcommands: ``register(command)`` with a :class:`click.Command`."""


@hookspec
def register_datasets(register: Register) -> None:
    """Register evaluation datasets: ``register(reader)`` with a :class:`factcheck.plugin.DatasetReader`."""


@hookspec
def register_deliberators(register: Register) -> None:
    """Register deliberation policies: ``register(policy)`` with a :class:`factcheck.plugin.Deliberator`."""


@hookspec
def register_memory_retrievers(register: Register) -> None:
    """Register experience-memory retrievers: ``register(retriever)`` with a
    :class:`factcheck.plugin.MemoryRetriever`."""


__all__ = ["Register", "hookimpl", "hookspec"]
