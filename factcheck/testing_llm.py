"""The fake OpenAI-compatible chat model, kept at its old address: it now lives in
:mod:`factcheck.testing.llm`. ``python -m factcheck.testing_llm`` still serves it
(bench/batch.py and docs/batch.md use this name)."""

from factcheck.testing.llm import (
    INJECTION,
    KNOWLEDGE,
    PASSAGE,
    QUIRKS,
    STYLES,
    FakeChatServer,
    FakeModel,
    chat_completion,
    main,
    model_route,
    recall,
)

__all__ = [
    "INJECTION",
    "KNOWLEDGE",
    "PASSAGE",
    "QUIRKS",
    "STYLES",
    "FakeChatServer",
    "FakeModel",
    "chat_completion",
    "main",
    "model_route",
    "recall",
]

if __name__ == "__main__":
    main()
