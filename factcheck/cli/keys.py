"""Stop a check that no agent can take part in for want of API keys, before anything is checked.

Without keys ``--profile paper`` would split the text, skip every agent of every claim for the same
missing key and print an UNVERIFIED verdict; this says so in one line instead, naming the variables
to set and the keyless profile (exit status 2, as for a usage error). When some agents have their
keys, the check goes on: the others are skipped, and the report says why once. A supplementary agent
(``Source.supplementary``: the keyless wikidata agent, which speaks to entity claims only) does not
count as one that can run.
"""

from __future__ import annotations

import asyncio

import click

from factcheck.agent import Agent
from factcheck.config import WEB_KEYS
from factcheck.pipeline import Checker

KEYLESS_PROFILE = "wiki"
EXIT_MISSING_KEYS = 2


class MissingKeysError(click.ClickException):
    """No agent of the check has the API key it needs: one ``Error: ...`` line, exit status 2."""

    exit_code = EXIT_MISSING_KEYS


async def _missing(checker: Checker) -> list[str | None]:
    """The variable each agent of ``checker`` lacks (None: it can run, or is out for another reason), from
    its components' ``prepare()`` as a check runs them, all at once."""

    async def lacks(agent: Agent) -> str | None:
        source, verifier = await asyncio.gather(
            checker.prepare_component(agent.source), checker.prepare_component(agent.verifier)
        )
        if source is not None:
            return checker.missing_key(agent.source)
        return checker.missing_key(agent.verifier) if verifier is not None else None

    # A supplementary agent (the wikidata agent: entity claims only) never keeps a check going on its own.
    core = [agent for agent in checker.agents if not agent.source.supplementary] or list(checker.agents)
    return list(await asyncio.gather(*(lacks(agent) for agent in core)))


def missing_variables(missing: list[str | None]) -> list[str] | None:
    """The variables to set when every agent is out for a missing key (in the agents' order); else None."""
    if not missing or any(variable is None for variable in missing):
        return None
    return list(dict.fromkeys(v for v in missing if v is not None))


def require_keys(checker: Checker) -> None:
    """Raise :class:`MissingKeysError` when every agent of ``checker`` lacks its API key."""
    variables = missing_variables(asyncio.run(_missing(checker)))
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
