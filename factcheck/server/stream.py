"""A check as a sequence of events, under the server's deadline.

The server sends the steps of :meth:`factcheck.Checker.stream` as they come (:mod:`factcheck.events`):

- ``claims``: the extracted claims, before any is judged;
- ``deliberation``: one step of a claim's deliberation (``index``, ``policy``, ``step``), as it is taken,
  before that claim's ``claim`` event; only where a deliberation policy sends the claim past its first round;
- ``claim``: one claim's verdict, as soon as it is done (in completion order);
- ``verdict``: the checked text (``TextVerdict.to_dict()``, ``judged_by`` included) with ``partial``.

When the deadline passes, claims not yet done get an abstaining judgment from
each agent saying so, the verdict is marked ``"partial": true`` and a usage
note says how many claims were cut off; nothing hangs. A component still
preparing is waited for a third of the deadline at most, so the agents that
are ready answer inside it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from factcheck.events import CheckEvent, ClaimsFound
from factcheck.pipeline import Checker

PREPARE_SHARE_OF_DEADLINE = 1 / 3  # how much of the deadline a check may wait for a component's prepare()


async def check_events(
    checker: Checker,
    text: str,
    deadline_s: float,
    *,
    max_claims: int | None = None,
    admit: Callable[[int], None] | None = None,
    as_of: str | None = None,
) -> AsyncGenerator[CheckEvent, None]:
    """Check ``text`` with ``checker`` within ``deadline_s``, yielding its events; the last is always ``verdict``.

    Raises a :class:`~factcheck.FactcheckError` for a problem of settings or input (before or during
    the check). At most ``max_claims`` claims are checked (a note says how many were left out);
    ``admit(number of claims)`` is called before any is judged, and may raise to refuse the check.
    ``as_of`` is when the text was written (ISO 8601; default now).
    """
    steps = checker.stream(
        text,
        as_of=as_of,
        deadline_s=deadline_s,
        max_claims=max_claims,
        max_claims_by="the server's max_claims",
        prepare_wait_s=deadline_s * PREPARE_SHARE_OF_DEADLINE,
    )
    try:
        async for event in steps:
            if isinstance(event, ClaimsFound) and admit is not None:
                admit(len(event.claims))  # before the checker is asked for more: nothing judged yet
            yield event
    finally:
        await steps.aclose()
