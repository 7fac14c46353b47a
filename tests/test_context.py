"""CheckContext: what one check's components share."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from factcheck.context import CheckContext, current, takes_context, using
from factcheck.usage import UsageRecorder


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
