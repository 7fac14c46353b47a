"""Who judged a check, over what, and what a reader should be warned of: a verdict's ``judged_by``.

The offline default searches only the shipped SciFact abstracts, so a claim about anything but
biomedicine is judged against unrelated papers (or not at all). A verdict says so where it is read:
each agent names the corpus it searches and that corpus's domain, and ``caution`` is one sentence
naming the domain and what to use instead. A source that searches a fixed collection says what it is
with ``describe_corpus() -> (name, domain or None)`` (the built-in ``corpus`` source does); a user's
own corpus has no known domain, and no caution: its owner knows what it holds, and the agent's
``corpus`` already names it.
"""

from __future__ import annotations

from collections.abc import Iterable

from factcheck.plugin import Source, Verifier
from factcheck.types import JudgedBy, JudgingAgent

ADVICE = "for general pages use --profile wiki (keyless) or --profile paper (with keys)"
FIELDS = {"biomedical": "biomedicine"}  # a corpus's domain as the field a claim may lie outside of


def judging_agent(name: str, source: Source, verifier: Verifier) -> JudgingAgent:
    """``name``'s entry in ``judged_by``: its source and verifier, and the corpus the source searches, if any."""
    corpus: str | None = None
    domain: str | None = None
    describe = getattr(source, "describe_corpus", None)
    if callable(describe):
        described = describe()
        if isinstance(described, tuple) and len(described) == 2:
            corpus, domain = (str(x) if x is not None else None for x in described)
    return JudgingAgent(name=name, source=source.name, verifier=verifier.name, corpus=corpus, domain=domain)


def caution(agents: tuple[JudgingAgent, ...]) -> str | None:
    """One sentence for the reader when agents search only a corpus of a known domain; ``None`` otherwise."""
    narrow = [a for a in agents if a.corpus is not None and a.domain is not None]
    if not narrow:
        return None
    corpora = " and ".join(dict.fromkeys(str(a.corpus) for a in narrow))
    fields = " and ".join(dict.fromkeys(FIELDS.get(str(a.domain), f"the {a.domain} domain") for a in narrow))
    if len(narrow) == len(agents):
        return (
            f"Judged only against {corpora}: a claim outside {fields} gets a verdict from unrelated "
            f"passages or none; {ADVICE}."
        )
    names = ", ".join(a.name for a in narrow)
    return (
        f"Agent {names} searches only {corpora}: on a claim outside {fields} its verdict comes from "
        "unrelated passages or none."
    )


def judged_by(profile: str | None, agents: Iterable[tuple[str, Source, Verifier]]) -> JudgedBy:
    """The ``judged_by`` of checks made by ``agents`` (name, source, verifier) of ``profile``."""
    judging = tuple(judging_agent(name, source, verifier) for name, source, verifier in agents)
    return JudgedBy(profile=profile, agents=judging, caution=caution(judging))
