"""CheckContext: what one check's components share."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factcheck.cache import Cache, cache_var
from factcheck.calls import call_plugin
from factcheck.context import CheckContext, current, reference_var, takes_context, using
from factcheck.interrupt import Interrupt, interrupt_var
from factcheck.llm.client import LLMSettings, llm_var
from factcheck.net import Service, service, service_var, use_service
from factcheck.usage import Spending, UsageRecorder, spending_var, usage_var


def test_using_sets_parts_for_a_block_and_nests() -> None:
    first, second = UsageRecorder(), UsageRecorder()
    assert current() == CheckContext()
    with using(usage=first) as outer:
        assert current() is outer and current().usage is first
        with using(usage=second, cache=None):
            assert current().usage is second
        assert current().usage is first
    assert current().usage is None


def test_the_context_follows_tasks_but_a_plain_thread_starts_empty() -> None:
    recorder = UsageRecorder()

    async def read() -> UsageRecorder | None:
        return await asyncio.to_thread(lambda: current().usage)

    with using(usage=recorder):
        assert asyncio.run(read()) is recorder  # asyncio copies the context into tasks and to_thread
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(lambda: current().usage).result() is None  # a bare thread does not


def test_a_method_takes_the_context_only_when_it_names_a_keyword_only_context() -> None:
    class Component:
        def plain(self, claim: str) -> None: ...

        def curious(self, claim: str, *, context: CheckContext) -> None: ...

        def anything(self, *args: object, **kwargs: object) -> None: ...

        def own(self, claim: str, context: list[str]) -> None: ...  # its own positional "context"

    assert takes_context(Component().curious) and not takes_context(Component().plain)
    assert not takes_context(Component().anything)  # **kwargs is not a promise to read one
    assert not takes_context(Component().own)  # filled by the caller's arguments, never by the check


def test_a_context_is_the_variables_of_the_services_together(tmp_path: Path) -> None:
    parts = {
        "usage": UsageRecorder(),
        "spending": Spending(max_llm_calls=3),
        "reference": datetime(2020, 1, 1, tzinfo=UTC),
        "cache": Cache(tmp_path / "cache.sqlite"),
        "llm": LLMSettings(model="small"),
        "service": Service(),
        "interrupt": Interrupt(),
    }
    variables: dict[str, ContextVar[Any]] = {
        "usage": usage_var,
        "spending": spending_var,
        "reference": reference_var,
        "cache": cache_var,
        "llm": llm_var,
        "service": service_var,
        "interrupt": interrupt_var,
    }
    with using(**parts) as context:
        assert {name: var.get() for name, var in variables.items()} == parts  # setting it sets each service's
        other = Service()
        with use_service(other):  # a service sets its own variable, and the context reads it
            assert current().service is other and service() is other and current().usage is parts["usage"]
        assert current() is context

        class Component:
            def sync(self, *, context: CheckContext) -> tuple[CheckContext, CheckContext]:
                return context, current()

            async def coro(self, *, context: CheckContext) -> tuple[CheckContext, CheckContext]:
                return context, current()

        async def both() -> list[tuple[CheckContext, CheckContext]]:
            return [await call_plugin(Component(), "sync"), await call_plugin(Component(), "coro")]

        # Every part follows a call into its package's worker thread and onto its loop.
        assert asyncio.run(both()) == [(context, context), (context, context)]
    assert {name: var.get() for name, var in variables.items()} == dict.fromkeys(variables)
