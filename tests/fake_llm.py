"""The fake chat model (:class:`factcheck.testing.llm.FakeModel`) as a route of the fake server.

``fake_model`` answers like a small, gullible model (see factcheck.testing.llm):
a verdict when asked for ``"factuality"`` (FALSE for what it knows to be false,
for claims saying "not" or "never", or when a passage says "never"), one claim
per sentence when asked for ``"claims"``, prose otherwise; it obeys
"ignore previous instructions" found outside fenced blocks. ``model_route``
builds a route for any :class:`FakeModel`, quirks included.
"""

from __future__ import annotations

from factcheck.testing.http import Request, Response
from factcheck.testing.llm import PASSAGE, FakeModel, chat_completion, model_route

SELF_ANSWER = PASSAGE

__all__ = ["SELF_ANSWER", "completion", "fake_model", "model_route"]


def completion(
    content: str | None, model: str = "fake-model", prompt_tokens: int = 100, completion_tokens: int = 20, **kw: object
) -> dict:
    """An OpenAI chat.completion object."""
    return chat_completion(content, model, prompt_tokens, completion_tokens, **kw)  # type: ignore[arg-type]


def fake_model(request: Request) -> Response:
    """Answer one chat-completions request in the fenced style, as the default fake model."""
    return model_route(FakeModel(style="fenced"))(request)
