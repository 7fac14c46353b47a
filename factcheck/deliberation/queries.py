"""Queries a deliberation searches with: the claim's contrast (to find counter-evidence) and its key terms.

A negated query changes little for word search ("not" is a stop word) and less for meaning: "X raises Y"
and "X does not raise Y" embed almost alike. The contrast query therefore turns the claim's direction
words around (increases -> decreases, higher -> lower), which both rankings do notice, and otherwise asks
for what would refute it ("no effect", "not associated").
"""

from __future__ import annotations

import re

from factcheck.verifiers.lexical import NEGATIONS, STOP_WORDS

_PAIRS = (
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("higher", "lower"),
    ("high", "low"),
    ("more", "fewer"),
    ("raises", "lowers"),
    ("raise", "lower"),
    ("raised", "lowered"),
    ("improves", "worsens"),
    ("improve", "worsen"),
    ("improved", "worsened"),
    ("promotes", "inhibits"),
    ("promote", "inhibit"),
    ("enhances", "impairs"),
    ("enhance", "impair"),
    ("activates", "suppresses"),
    ("activate", "suppress"),
    ("positive", "negative"),
    ("positively", "negatively"),
    ("upregulates", "downregulates"),
    ("upregulated", "downregulated"),
    ("greater", "smaller"),
    ("gain", "loss"),
    ("accelerates", "slows"),
    ("reduces", "increases"),
    ("reduce", "increase"),
    ("reduced", "increased"),
    ("prevents", "causes"),
    ("protects", "harms"),
    ("benefit", "harm"),
    ("effective", "ineffective"),
    ("safe", "unsafe"),
)
OPPOSITE = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS if b not in dict(_PAIRS)}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def turned(text: str) -> str | None:
    """``text`` with its direction words turned around, or ``None`` when it has none."""
    changed = False

    def swap(match: re.Match[str]) -> str:
        nonlocal changed
        word = match.group(0)
        other = OPPOSITE.get(word.lower())
        if other is None:
            return word
        changed = True
        return other.capitalize() if word[0].isupper() else other

    result = _WORD.sub(swap, text)
    return result if changed else None


def negated(text: str) -> bool:
    """Whether ``text`` says "not" (or another negation)."""
    return any(word.lower().strip(",;:") in NEGATIONS for word in text.split())


def affirmed(text: str) -> str:
    """``text`` with its negations taken out: what the opposite verdict on a negative claim would say."""
    return " ".join(w for w in text.rstrip(".!?").split() if w.lower().strip(",;:") not in NEGATIONS)


def contrast(claim: str, leading: bool | None) -> tuple[str, ...]:
    """Queries for evidence against the ``leading`` verdict on ``claim``.

    Against TRUE: the claim with its direction turned around, its negation taken out, or (neither) with
    "no effect" asked for. Against FALSE: what would support the claim, the claim itself (and, for a
    negative claim, also affirmed)."""
    plain = claim.rstrip(".!?")
    if leading is False:
        queries = [plain, affirmed(claim) if negated(claim) else None]
    else:
        queries = [turned(claim), affirmed(claim) if negated(claim) else f"{plain}: no effect"]
    return tuple(dict.fromkeys(q for q in queries if q))


def key_terms(text: str, limit: int = 8) -> str:
    """The claim's content words in order (stop words and negations out), at most ``limit``: a broader query."""
    words = [w for w in _WORD.findall(text) if w.lower() not in STOP_WORDS and w.lower() not in NEGATIONS]
    return " ".join(dict.fromkeys(words[:limit]))
