"""The fake chat model (:class:`factcheck.testing_llm.FakeModel`) as a route of tests.fakes.FakeServer.

``fake_model`` answers like a small, gullible model (see factcheck.testing_llm):
a verdict when asked for ``"factuality"`` (FALSE for what it knows to be false,
for claims saying "not" or "never", or when a passage says "never"), one claim
per sentence when asked for ``"claims"``, prose otherwise; it obeys
"ignore previous instructions" found outside fenced blocks. ``model_route``
builds a route for any :class:`FakeModel`, quirks included.
"""

from __future__ import annotations

from collections.abc import Callable

from factcheck.testing_llm import PASSAGE, FakeModel, chat_completion
from tests.fakes import Request, Response

SELF_ANSWER = PASSAGE


def completion(
    content: str | None, model: str = "fake-model", prompt_tokens: int = 100, completion_tokens: int = 20, **kw: object
) -> dict:
    """An OpenAI chat.completion object."""
    return chat_completion(content, model, prompt_tokens, completion_tokens, **kw)  # type: ignore[arg-type]


def model_route(model: FakeModel) -> Callable[[Request], Response]:
    """A FakeServer route answering chat-completions requests with ``model``."""

    def route(request: Request) -> Response:
        status, body = model.respond(request.json())
        return Response(body, status=status)

    return route


def fake_model(request: Request) -> Response:
    """Answer one chat-completions request in the fenced style, as the default fake model."""
    return model_route(FakeModel(style="fenced"))(request)
