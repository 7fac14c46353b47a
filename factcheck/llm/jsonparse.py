"""Strict JSON from LLM answers: one JSON object, optionally in a Markdown code fence. Never eval."""

from __future__ import annotations

import json
import re
from typing import Any

from factcheck.errors import LLMError

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object ``text`` holds (a surrounding code fence is tolerated); LLMError otherwise."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise LLMError(f"the model did not answer with JSON ({exc.msg}): {text[:120]!r}") from None
    if not isinstance(value, dict):
        raise LLMError(f"the model answered JSON that is not an object: {text[:120]!r}")
    return value
