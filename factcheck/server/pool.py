"""The checkers a server keeps, and whether their components can run.

:class:`CheckerPool` builds a checker per (profile, scorer, labels, deliberation) on first use and
keeps the most recent few; :func:`warm_up` loads the default one's models and indexes
at start, and :func:`component_status` says for ``GET /v1/components`` which sources
and verifiers can run with the keys and files this server has.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from factcheck.build import FALLBACK_EXTRACTOR, build_checker
from factcheck.config import Settings, load_settings
from factcheck.errors import ConfigError, FactcheckError
from factcheck.pipeline import Checker
from factcheck.plugin import Source, Verifier
from factcheck.registry import get_registry
from factcheck.server.settings import ServerSettings

WARM_UP_S = 120.0  # at most this long at start loading the default checker's models and indexes
STATUS_PREPARE_S = 20.0  # /v1/components waits this long for each component's prepare()


PoolKey = tuple[str | None, str | None, str | None, str | None]  # profile, scorer, labels, deliberation


class CheckerPool:
    """Checkers by (profile, scorer, labels, deliberation), built on first use, at most ``size`` kept (least
    recent dropped), each from the same settings (:attr:`base`) with the request's choices on top."""

    def __init__(self, settings: ServerSettings, overrides: Mapping[str, Any] | None = None) -> None:
        """The checkers' settings are read now, once: the settings file (``settings.config``), then the
        environment, then ``overrides`` (``factcheck serve``'s flags for every checker: ``corpus``,
        ``memory``, ``source_options``, as :func:`~factcheck.load_settings` takes them). When they cannot
        be read the server still starts, and each :meth:`get` says why."""
        self.settings = settings
        self.overrides = dict(overrides or {})
        self._checkers: OrderedDict[PoolKey, Checker] = OrderedDict()
        self._base: Settings | None = None
        self._unreadable = ""
        try:
            self._base = load_settings(settings.config, **self.overrides)
        except ConfigError as exc:  # answered 503 with this, as a checker that cannot be built is
            self._unreadable = str(exc)

    @property
    def base(self) -> Settings:
        """The settings every checker is built from; ConfigError when the server's settings cannot be read."""
        if self._base is None:
            raise ConfigError(self._unreadable)
        return self._base

    def key(
        self,
        profile: str | None = None,
        scorer: str | None = None,
        labels: str | None = None,
        deliberation: str | None = None,
    ) -> PoolKey:
        """What tells the checkers apart (and the answers kept for them): a name not given is the server's
        default (``None`` for the scorer and labels: the settings file's)."""
        return (profile or self.settings.profile, scorer, labels, deliberation or self.settings.deliberation)

    def get(
        self,
        profile: str | None = None,
        scorer: str | None = None,
        labels: str | None = None,
        deliberation: str | None = None,
    ) -> Checker:
        """The checker for these choices (``None``: the server's default); ConfigError for an unknown name."""
        key = self.key(profile, scorer, labels, deliberation)
        checker = self._checkers.pop(key, None)
        if checker is None:
            checker = build_checker(self.base, profile=key[0], scorer=scorer, labels=labels, deliberation=key[3])
        self._checkers[key] = checker
        while len(self._checkers) > self.settings.max_checkers:
            self._checkers.popitem(last=False)
        return checker


async def prepare(component: Source | Verifier, checker: Checker, within_s: float | None = None) -> dict[str, Any]:
    """Run a source's or verifier's ``prepare()`` as a check does (:meth:`Checker.prepare_component`:
    the checker's LLM settings, its time-out, plugin faults contained), waiting at most ``within_s``.
    ``{"usable": True}``, or ``False`` with the reason."""
    try:
        async with asyncio.timeout(within_s):
            reason = await checker.prepare_component(component)
    except TimeoutError:
        reason = f"not ready within {within_s:g}s"
    except FactcheckError as exc:  # a setting the operator must fix: this component cannot run
        reason = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # FACTCHECK_RAISE_ERRORS re-raises; still only a status here
        reason = f"{type(exc).__name__}: {exc}"
    if reason is None:
        return {"usable": True}
    return {"usable": False, "reason": reason.removeprefix("skipped: ")}


async def component_status(checker: Checker) -> dict[str, dict[str, Any]]:
    """Whether each registered source and verifier can run here (see :func:`prepare`)."""
    registry = get_registry()
    result: dict[str, dict[str, Any]] = {}
    for kind in ("sources", "verifiers"):
        components = registry.components[kind]
        answers = await asyncio.gather(*(prepare(c, checker, STATUS_PREPARE_S) for c in components.values()))
        result[kind] = dict(zip(components, answers, strict=True))
    return result


async def warm_up(checker: Checker) -> list[str]:
    """Load what the checker's agents need (indexes, models) before the first request; why any cannot run.

    No check is run: with the paper profile that would spend model and search calls at every start.
    The sentence splitter (no model service) is loaded too.
    """
    parts = {id(c): c for agent in checker.agents for c in (agent.source, agent.verifier)}
    answers = await asyncio.gather(*(prepare(c, checker) for c in parts.values()))
    problems = [f"{c.name}: {a['reason']}" for c, a in zip(parts.values(), answers, strict=True) if not a["usable"]]
    if checker.extractor.name == FALLBACK_EXTRACTOR:
        await asyncio.to_thread(checker.extractor.extract, "The server is starting.")
    return problems
