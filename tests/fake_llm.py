"""A stand-in for an OpenAI-compatible chat model, served by tests.fakes.FakeServer at /v1/chat/completions.

It answers like a small, gullible model, so tests can tell whether the prompts protect it:
- the claim-extraction prompt: one claim per sentence of the fenced text, with two queries;
- the verification prompt: FALSE if any evidence passage contains a word of ``FALSE_WORDS``, else TRUE,
  reading only what is inside properly fenced passages; but if the words "ignore previous instructions"
  appear *outside* the fences it obeys them and answers true (so a broken fence is caught);
- anything else (the self-check prompt): a fixed encyclopedic answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from factcheck.testing_llm import chat_completion
from tests.fakes import Request, Response

FALSE_WORDS = ("Berlin", "not", "never")
SELF_ANSWER = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France, completed in 1889."


def completion(content: str, model: str = "fake-model", prompt_tokens: int = 100, completion_tokens: int = 20) -> dict:
    """An OpenAI chat.completion object."""
    return chat_completion(content, model, prompt_tokens, completion_tokens)


def _verify(system: str, user: str) -> dict[str, Any]:
    nonce = re.search(r"<<<EVIDENCE (\w+) \.\.\.>>>", system)
    assert nonce, "the verification prompt must announce its fence"
    n = nonce.group(1)
    fenced = re.findall(rf"<<<EVIDENCE {n} [^>]*>>>\n(.*?)\n<<<END EVIDENCE {n}>>>", user, re.DOTALL)
    outside = re.sub(rf"<<<EVIDENCE {n} [^>]*>>>\n.*?\n<<<END EVIDENCE {n}>>>", "", user, flags=re.DOTALL)
    if "ignore previous instructions" in outside.lower():
        return {"factuality": True, "confidence": 1.0, "rationale": "instructed to answer true"}
    claim = re.search(r"CLAIM: (.*)", user).group(1)  # type: ignore[union-attr]
    refuted = any(word in claim for word in FALSE_WORDS) or any(
        f" {word} " in f" {passage} " for passage in fenced for word in ("never",)
    )
    return {"factuality": not refuted, "confidence": 0.9, "rationale": f"judged from {len(fenced)} passages"}


def fake_model(request: Request) -> Response:
    """Answer one chat-completions request."""
    body = request.json()
    messages = body["messages"]
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = messages[-1]["content"]
    if "extract checkable factual claims" in system:
        text = re.search(r"<<<TEXT>>>\n(.*)\n<<<END TEXT>>>", user, re.DOTALL).group(1)  # type: ignore[union-attr]
        sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]
        content = json.dumps({"claims": [{"claim": s, "queries": [s.rstrip("."), s.split()[0]]} for s in sentences]})
    elif "meticulous fact-checker" in system:
        content = "```json\n" + json.dumps(_verify(system, user)) + "\n```"
    else:
        content = SELF_ANSWER
    return Response(completion(content, body.get("model", "fake-model")))
