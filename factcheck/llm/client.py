"""Chat completions through the ``openai`` client, with a cache, a ledger and limits.

Settings come from ``[llm]`` in factcheck.toml, then ``OPENAI_BASE_URL`` /
``FACTCHECK_LLM_BASE_URL``, ``FACTCHECK_LLM_MODEL``, then CLI flags; the
Checker makes them current for the check. A component may override ``model``
or ``base_url`` (a cheap model for extraction, a strong one for judging).

The ``openai`` client does the retrying: ``max_retries`` attempts with
exponential backoff and jitter, honouring ``Retry-After`` on 429 and retrying
5xx and connection errors. Every call has a time-out; calls to one endpoint
share a concurrency limit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from factcheck.cache import cached
from factcheck.errors import ConfigError, LLMError, MissingKeyError
from factcheck.net import host_limit, tls_context
from factcheck.usage import record_llm

OPENAI_URL = "https://api.openai.com/v1"
CLIENT_VERSION = "llm-1"  # part of every cache key: bump when request shaping changes


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to call the model. Prices are US dollars per million tokens."""

    base_url: str = OPENAI_URL
    model: str = "gpt-4o"
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 3
    max_concurrency: int = 8
    prices: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {
            "gpt-4o": {"input": 2.5, "output": 10.0},
            "gpt-4o-mini": {"input": 0.15, "output": 0.6},
        }
    )

    def __post_init__(self) -> None:
        numbers = {
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "max_concurrency": self.max_concurrency,
        }
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in numbers.values()):
            raise ConfigError(f"[llm]: timeout_s, max_retries and max_concurrency must be numbers, got {numbers}")
        if self.timeout_s <= 0 or self.max_retries < 0 or self.max_concurrency < 1:
            raise ConfigError("[llm]: timeout_s must be positive, max_retries at least 0, max_concurrency at least 1")

    def api_key(self) -> str:
        """The key from the environment. A local server needs none; OpenAI itself does."""
        key = os.environ.get(self.api_key_env, "")
        if not key and self.base_url.rstrip("/") == OPENAI_URL:
            raise MissingKeyError(f"no API key for {self.base_url} (set {self.api_key_env})")
        return key or "not-needed"

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """Estimated dollars for one call (0 for a model with no configured price)."""
        price = self.prices.get(model, {})
        return (prompt_tokens * price.get("input", 0.0) + completion_tokens * price.get("output", 0.0)) / 1e6


def llm_env(env: Mapping[str, str]) -> dict[str, str]:
    """``[llm]`` settings from ``OPENAI_BASE_URL`` and ``FACTCHECK_LLM_BASE_URL`` / ``_MODEL`` / ``_API_KEY_ENV``."""
    values = {}
    if env.get("OPENAI_BASE_URL"):
        values["base_url"] = env["OPENAI_BASE_URL"]
    for key in ("base_url", "model", "api_key_env"):
        if env.get(f"FACTCHECK_LLM_{key.upper()}"):
            values[key] = env[f"FACTCHECK_LLM_{key.upper()}"]
    return values


def llm_settings(mapping: Mapping[str, Any] | None = None) -> LLMSettings:
    """LLMSettings from an ``[llm]`` table (the settings loader has already layered env and flags into it)."""
    values = dict(mapping or {})
    known = {f for f in LLMSettings.__dataclass_fields__}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"[llm]: unknown setting {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    try:
        return LLMSettings(**values)
    except TypeError as exc:
        raise ConfigError(f"[llm]: {exc}") from None


current_llm_settings: ContextVar[LLMSettings | None] = ContextVar("factcheck_llm", default=None)


@dataclass(frozen=True)
class LLMAnswer:
    """The text of one completion and its token counts."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


def resolve(model: str | None = None, base_url: str | None = None) -> LLMSettings:
    """The current check's LLM settings, with a component's own ``model`` / ``base_url`` applied."""
    settings = current_llm_settings.get() or llm_settings(llm_env(os.environ))
    return replace(settings, model=model or settings.model, base_url=base_url or settings.base_url)


async def _complete(settings: LLMSettings, messages: Sequence[Mapping[str, str]], temperature: float) -> dict[str, Any]:
    import openai

    client = openai.AsyncOpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key(),
        timeout=settings.timeout_s,
        max_retries=settings.max_retries,
        http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
    )
    try:
        async with host_limit(settings.base_url, settings.max_concurrency):
            response = await client.chat.completions.create(
                model=settings.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=temperature,
            )
    except openai.APITimeoutError:
        raise LLMError(f"LLM at {settings.base_url} timed out after {settings.timeout_s:g}s") from None
    except openai.APIStatusError as exc:
        raise LLMError(f"LLM at {settings.base_url}: HTTP {exc.status_code}") from None
    except openai.APIError as exc:
        raise LLMError(f"LLM at {settings.base_url}: {type(exc).__name__}: {exc}") from None
    finally:
        await client.close()
    if not response.choices or response.choices[0].message.content is None:
        raise LLMError(f"LLM at {settings.base_url} returned no message")
    usage = response.usage
    prompt, completion = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    record_llm(prompt, completion, settings.cost(settings.model, prompt, completion))
    return {"text": response.choices[0].message.content, "prompt_tokens": prompt, "completion_tokens": completion}


async def chat(
    messages: Sequence[Mapping[str, str]],
    *,
    temperature: float = 0.0,
    model: str | None = None,
    base_url: str | None = None,
    sample: int = 0,
    cache_as: Mapping[str, Any] | None = None,
    validate: Callable[[str], object] | None = None,
) -> LLMAnswer:
    """One chat completion. Identical requests are answered from the cache.

    ``sample`` tells apart deliberately repeated requests (several samples at
    temperature 1); ``cache_as`` replaces the messages in the cache key (a prompt
    holding a random fence nonce is cached by what it asks instead); an answer
    ``validate(text)`` rejects is not cached.
    """
    settings = resolve(model, base_url)
    request = {
        "base_url": settings.base_url,
        "model": settings.model,
        "messages": list(messages) if cache_as is None else dict(cache_as),
        "temperature": temperature,
        "sample": sample,
    }
    check = (lambda data: validate(data["text"])) if validate is not None else None
    data = await cached("llm", CLIENT_VERSION, request, lambda: _complete(settings, messages, temperature), check)
    return LLMAnswer(data["text"], data.get("prompt_tokens", 0), data.get("completion_tokens", 0))
