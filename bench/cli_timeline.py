"""Where a ``factcheck check`` of one claim spends its start-up: a timeline of one run, on standard error.

Runs the command line in this process with a few of the project's own functions wrapped to print when they
start and end, and in which thread: building the registry, opening the corpus index, loading the spaCy
pipeline, loading the language detector's model, extracting, and the check as a whole. Imports are not
listed one by one (``python -X importtime`` does that).

    python bench/cli_timeline.py check "Statins lower LDL cholesterol." --no-cache
"""

from __future__ import annotations

import atexit
import functools
import importlib
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

STARTED = time.perf_counter()


def log(what: str) -> None:
    thread = threading.current_thread().name[:24]
    print(f"{(time.perf_counter() - STARTED) * 1000:7.0f} ms  [{thread:24}]  {what}", file=sys.stderr)


def timed(module: str, name: str, owner: str | None = None) -> None:
    """Wrap ``module.name`` (or ``module.owner.name``) to log its start and end."""
    target: Any = importlib.import_module(module)
    if owner is not None:
        target = getattr(target, owner)
    function: Callable[..., Any] = getattr(target, name)

    @functools.wraps(function)
    def logged(*args: Any, **kwargs: Any) -> Any:
        log(f"start {name}")
        try:
            return function(*args, **kwargs)
        finally:
            log(f"end   {name}")

    setattr(target, name, logged)


def main() -> None:
    log("python up")
    import factcheck.cli

    log("factcheck.cli imported")
    timed("factcheck.registry", "get_plugin_manager")
    timed("factcheck.sources.corpus", "open_index")
    timed("factcheck.extractors.sentence", "read_pipeline")
    timed("factcheck.extractors.sentence", "extraction", "SentenceExtractor")
    timed("factcheck.pipeline.checker", "check", "Checker")
    import factcheck.language as language

    load = language._identifier  # loaded once, on first use: the detector's model

    @functools.wraps(load)
    def identifier() -> Any:
        first = load.cache_info().currsize == 0
        if first:
            log("start language detector")
        try:
            return load()
        finally:
            if first:
                log("end   language detector")

    language._identifier = identifier  # type: ignore[assignment]
    atexit.register(log, "exit")
    sys.argv = ["factcheck", *sys.argv[1:]]
    factcheck.cli.main()


if __name__ == "__main__":
    main()
