"""The ``[llm]`` section's declarations: bounds, help and environment variables of :class:`LLMSettings`.

Declared here, with :func:`~factcheck.options.declare`, because the dataclass's
module is the client's; :func:`~factcheck.llm.client.llm_settings` (the TOML
table), :func:`~factcheck.llm.client.llm_env` (the environment) and
``LLMSettings.__post_init__`` (the range checks) all read these.
"""

from __future__ import annotations

from factcheck.llm.client import LLMSettings
from factcheck.options import Constraint, declare

declare(
    LLMSettings,
    # FACTCHECK_LLM_BASE_URL wins over OPENAI_BASE_URL: the later variable is the more specific.
    base_url=Constraint(env=("OPENAI_BASE_URL", "FACTCHECK_LLM_BASE_URL"), help="OpenAI-compatible endpoint"),
    model=Constraint(env=("FACTCHECK_LLM_MODEL",), help="model name"),
    api_key_env=Constraint(env=("FACTCHECK_LLM_API_KEY_ENV",), help="the variable holding the key"),
    timeout_s=Constraint(minimum=0, min_open=True, unit="seconds", help="per call"),
    max_retries=Constraint(minimum=0, help="more requests after a retryable failure"),
    max_concurrency=Constraint(minimum=1, help="calls in flight per endpoint"),
    json_mode=Constraint(help="ask for response_format json_object"),
    prices=Constraint(help="dollars per million tokens, by model: {input, output}"),
)
