"""Stop a check that no agent can take part in for want of API keys, before anything is checked.

Without keys ``--profile paper`` would split the text, skip every agent of every claim for the same
missing key and print an UNVERIFIED verdict; this says so in one line instead, naming the variables
to set and the keyless profile (exit status 2, as for a usage error). When some agents have their
keys, the check goes on: the others are skipped, and the report says why once.
"""

from __future__ import annotations

import asyncio
import re

import click

from factcheck.config import WEB_KEYS
from factcheck.pipeline import Checker

KEYLESS_PROFILE = "wiki"
EXIT_MISSING_KEYS = 2
# How a missing key is worded where it is raised (factcheck.errors.MissingKeyError): "... (set SERPER_API_KEY)".
_SET_VARIABLE = re.compile(r"^skipped: .*no API key.*\(set ([A-Za-z_][A-Za-z0-9_]*)\)$")


class MissingKeysError(click.ClickException):
    """No agent of the check has the API key it needs: one ``Error: ...`` line, exit status 2."""

    exit_code = EXIT_MISSING_KEYS


async def _reasons(checker: Checker) -> dict[str, str | None]:
    """Why each agent cannot run (None: it can), from its components' ``prepare()``, as a check finds it."""
    reasons: dict[str, str | None] = {}
    for agent in checker.agents:
        reason = await checker.prepare_component(agent.source)
        reasons[agent.name] = reason or await checker.prepare_component(agent.verifier)
    return reasons


def missing_variables(reasons: dict[str, str | None]) -> list[str] | None:
    """The variables to set when every agent is out for a missing key (in the agents' order); else None."""
    variables: list[str] = []
    for reason in reasons.values():
        found = _SET_VARIABLE.match(reason or "")
        if found is None:
            return None
        variables.append(found.group(1))
    return list(dict.fromkeys(variables)) or None


def require_keys(checker: Checker) -> None:
    """Raise :class:`MissingKeysError` when every agent of ``checker`` lacks its API key."""
    variables = missing_variables(asyncio.run(_reasons(checker)))
    if variables is None:
        return
    alternatives = {
        WEB_KEYS["serper"]: f"or {WEB_KEYS['serpapi']}",
        checker.llm.api_key_env: "or a local LLM server: --llm-base-url",
    }
    named = [f"{v} ({alternatives[v]})" if v in alternatives else v for v in variables]
    profile = f"profile {checker.profile}" if checker.profile else "the agents given"
    raise MissingKeysError(
        f"no agent of {profile} can run: each needs an API key that is not set; set {' or '.join(named)}, "
        f"or use --profile {KEYLESS_PROFILE}, which needs none"
    )
