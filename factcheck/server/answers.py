"""Whole answers kept in memory, so a text checked a moment ago costs a lookup.

The judgment cache (SQLite, per claim) already spares the searches and the
judging of a claim seen before, but a repeated text is still split into
claims, and each judgment read and scored. Here the finished answer of
``/v1/check`` (and of ``/v1/check/stream``, below) is kept, keyed by the
route, the checker's settings (profile, scorer, label rule, deliberation
policy) and the text exactly as sent (claim spans point into it, so two texts
that differ only in spacing are two entries).

A request body answered before, byte for byte, is answered before FastAPI
routes it (:class:`RepeatFirst`): its digest is remembered with the key it was
read as, so a repeat costs a hash and two lookups instead of routing, JSON
parsing and validation. The kept answer is the same one, under the same rules.

A streamed check (``/v1/check/stream``, the browser extension's) is kept as
the events it sent, and a repeat is sent them again at once, its verdict saying
it came from memory.

Only complete answers are kept: not a partial one (the deadline cut it short),
not one where an agent failed (an error, a time-out: the next request should
try again), not one whose deliberation of a claim was cut short (the deadline,
a budget or an error stopped it: the next request should settle it). Entries
expire after ``ttl_s`` so changed evidence reaches callers; at most ``size`` are
kept, least recently used dropped first. The cache is per process: with several
workers each keeps its own (the SQLite judgment cache is the one they share).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factcheck.types import Usage

REQUEST_DIGEST = "factcheck_request"  # the scope state's key for the digest of the request's body (RepeatFirst)

HIT_USAGE = Usage(
    cache_hits={"answer": 1},
    notes=("the same text was checked earlier with the same settings: answered from memory",),
).to_dict()


@dataclass(frozen=True)
class StoredAnswer:
    """An answer ready to send: its body, its claim count, its media type and headers. The body is the answer's
    JSON (usage already saying it came from memory) or, for a stream, its events, the verdict's JSON last."""

    body: bytes
    claims: int
    media_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()

    def with_fields(self, fields: bytes) -> bytes:
        """The body with more top-level fields in its answer (``fields`` is a JSON object, e.g. ``{"url": ...}``):
        they go before the last closing brace, the answer's own, whatever follows it."""
        if fields in (b"", b"{}"):
            return self.body
        end = self.body.rindex(b"}")
        return self.body[:end] + b", " + fields[1:] + self.body[end + 1 :]

    def response(self, fields: bytes = b"") -> Response:
        """The answer to send, with ``fields`` added (:meth:`with_fields`)."""
        return Response(self.with_fields(fields), headers=dict(self.headers), media_type=self.media_type)


class AnswerCache:
    """An LRU map of rendered answers with a time to live."""

    def __init__(self, size: int, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = int(size)
        self.ttl_s = ttl_s
        self.clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, StoredAnswer]] = OrderedDict()
        # A request's digest -> the key its answer is kept under, less the memory's stamp, and its extra fields.
        self._requests: OrderedDict[bytes, tuple[tuple[Hashable, ...], bytes]] = OrderedDict()

    def get(self, key: Hashable) -> StoredAnswer | None:
        """The stored answer for ``key``; ``None`` if absent or expired."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, answer = entry
        if self.clock() - stored_at > self.ttl_s:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return answer

    def put(
        self,
        key: Hashable,
        answer: dict[str, Any],
        render: Callable[[dict[str, Any]], bytes],
        before: bytes = b"",
        media_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> bool:
        """Keep ``answer`` (rendered once by ``render``, with the answer-cache usage) if it is complete; whether it
        was kept. ``before``: what comes before it in the body (a stream's events before its verdict)."""
        if self.size <= 0 or not cacheable(answer):
            return False
        rendered = render({**answer, "usage": HIT_USAGE})
        if b"}" not in rendered:
            return False
        claims = len(answer.get("claims", ()))
        stored = StoredAnswer(before + rendered, claims, media_type, tuple((headers or {}).items()))
        self._entries[key] = (self.clock(), stored)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return True

    def remember(self, request: bytes, key: tuple[Hashable, ...], fields: bytes) -> None:
        """Remember that the request of digest ``request`` (:func:`request_digest`) is answered by the answer
        kept under ``(*key, memory stamp)``, with the extra top-level ``fields``."""
        if self.size <= 0:
            return
        self._requests[request] = (key, fields)
        self._requests.move_to_end(request)
        while len(self._requests) > self.size:
            self._requests.popitem(last=False)

    def repeat(self, request: bytes, memory: str) -> StoredAnswer | None:
        """The kept answer to a request remembered by :meth:`remember`, its fields added; ``None`` if the request
        is new, or its answer expired, dropped, or kept before the memory's stamp moved."""
        remembered = self._requests.get(request)
        if remembered is None:
            return None
        key, fields = remembered
        stored = self.get((*key, memory))
        if stored is None:  # forgotten too, so it keeps no text alive: the route remembers it again
            del self._requests[request]
            return None
        self._requests.move_to_end(request)
        return replace(stored, body=stored.with_fields(fields))

    def __len__(self) -> int:
        return len(self._entries)


def request_digest(scope: Scope, body: bytes) -> bytes:
    """What tells two requests apart for :class:`RepeatFirst`: a digest of their path, their Content-Type and
    their body, byte for byte (two bodies that differ only in spacing are two requests)."""
    content_type = next((value for name, value in scope["headers"] if name.lower() == b"content-type"), b"")
    digest = hashlib.blake2b(scope["path"].encode(), digest_size=16)
    for part in (content_type, body):
        digest.update(b"\0")
        digest.update(part)
    return digest.digest()


class RepeatFirst:
    """ASGI middleware: a ``POST`` to one of ``paths`` whose body was answered before is answered by ``repeat``
    before the app routes it, reads it again and validates it.

    The body is read whole first (through the middleware outside, which limits it) and its digest put in the
    scope's state (``factcheck_request``), where the route finds it to :meth:`AnswerCache.remember` the request.
    ``repeat(scope, digest)`` gives the answer (a refusal included, such as the claim rate limit's 429), or
    ``None``: then the app gets the request as it came, the same messages in the same order, and an error met
    while reading the body (its size or time limit, a body cut off) is raised to it where it met it.
    """

    def __init__(self, app: ASGIApp, paths: frozenset[str], repeat: Callable[[Scope, bytes], Response | None]) -> None:
        self.app = app
        self.paths = paths
        self.repeat = repeat

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        failure: Exception | None = None
        try:
            while not messages or (messages[-1]["type"] == "http.request" and messages[-1].get("more_body", False)):
                messages.append(await receive())
        except Exception as exc:  # the app meets it again, at the same point of the body
            failure = exc
        if failure is None and messages[-1]["type"] == "http.request":
            digest = request_digest(scope, b"".join(message.get("body", b"") for message in messages))
            scope.setdefault("state", {})[REQUEST_DIGEST] = digest
            answer = self.repeat(scope, digest)
            if answer is not None:
                await answer(scope, receive, send)
                return
        await self.app(scope, replayed(messages, failure, receive), send)


def replayed(messages: list[Message], failure: Exception | None, receive: Receive) -> Receive:
    """A ``receive`` that gives ``messages`` again, then raises ``failure`` if there was one, then receives on."""
    pending = list(messages)

    async def again() -> Message:
        if pending:
            return pending.pop(0)
        if failure is not None:
            raise failure
        return await receive()

    return again


# How a claim's ``deliberation.stopped`` begins when the deliberation was cut short, not finished.
CUT_SHORT = ("deadline", "budget", "error")


def cacheable(answer: dict[str, Any]) -> bool:
    """True for an answer worth repeating: complete, no agent failed on any claim, and no claim's
    deliberation was cut short (:data:`CUT_SHORT`)."""
    if answer.get("partial") or not answer.get("claims"):
        return False
    claims = answer.get("claims", ())
    if any(str((claim.get("deliberation") or {}).get("stopped", "")).startswith(CUT_SHORT) for claim in claims):
        return False
    return not any(judgment.get("error") for claim in claims for judgment in claim.get("judgments", ()))
