"""The hooks a factcheck plugin can implement.

Each hook is called with a ``register`` callback; call it once per object.
Implementations may accept fewer arguments than the spec (pluggy), so hooks
grow by adding arguments, never by renaming. See docs/plugins.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("factcheck")
hookimpl = pluggy.HookimplMarker("factcheck")


@hookspec
def register_sources(register: Callable[[Any], None]) -> None:
    """Register evidence sources: ``register(source)`` with a :class:`factcheck.Source`."""


@hookspec
def register_extractors(register: Callable[[Any], None]) -> None:
    """Register claim extractors: ``register(extractor)`` with a :class:`factcheck.ClaimExtractor`."""


@hookspec
def register_verifiers(register: Callable[[Any], None]) -> None:
    """Register verifiers: ``register(verifier)`` with a :class:`factcheck.Verifier`."""


@hookspec
def register_scorers(register: Callable[[Any], None]) -> None:
    """Register scorers and label rules: ``register(obj)`` with a :class:`factcheck.Scorer` or ``LabelRule``."""


@hookspec
def register_commands(register: Callable[[Any], None]) -> None:
    """Register CLI subcommands: ``register(command)`` with a :class:`click.Command`."""


@hookspec
def register_datasets(register: Callable[[Any], None]) -> None:
    """Register evaluation datasets: ``register(reader)`` with a :class:`factcheck.eval.datasets.DatasetReader`."""


@hookspec
def register_deliberators(register: Callable[[Any], None]) -> None:
    """Register deliberation policies: ``register(policy)`` with a :class:`factcheck.Deliberator`."""


@hookspec
def register_memory_retrievers(register: Callable[[Any], None]) -> None:
    """Register experience-memory retrievers: ``register(retriever)`` with a
    :class:`factcheck.memory.retrieval.MemoryRetriever`."""
