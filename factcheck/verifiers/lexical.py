"""The ``lexical`` verifier: a transparent, rule-based offline baseline.

It is not a language model and does not understand text; it is the floor a
trained verifier must beat, and it explains every verdict in its rationale:

1. Find the evidence sentence that covers most of the claim's content words
   (stemmed, stop words removed). Below ``min_coverage``: abstain, the
   evidence is not about the claim.
2. On that sentence, look for contradiction cues: negation on one side only,
   numbers in the claim that the sentence replaces with others, and opposite
   directions of change (increases vs reduces).
3. Any cue: FALSE; none: TRUE. Confidence grows with coverage.

Evidence is only ever counted, never followed, so text in it cannot steer the verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.options import setting
from factcheck.plugin import Verifier, hookimpl
from factcheck.text import english_stemmer, split_sentences
from factcheck.types import Assessment, Claim, Evidence

_WORD = re.compile(r"[a-z0-9]+(?:[.'-][a-z0-9]+)*")
_NUMBER = re.compile(r"(?<![a-z])\d+(?:[.,]\d+)?%?")

STOP_WORDS = frozenset(
    """a an the and or of in on at to for from by with as is are was were be been being this that these
    those it its their there than then which who whom whose what when where while into onto over under
    about after before between during through per via can could may might must shall should will would
    has have had do does did also such both each other some any all most many much very more less""".split()
)
NEGATIONS = frozenset(
    """not no never none neither nor cannot without lack lacks lacking absent absence fail fails failed
    unable unaffected n't nothing nobody""".split()
)
# Stems of words that state a direction of change.
UP = frozenset(
    """increas higher high rais elev enhanc promot improv augment upregul greater gain boost accelerat""".split()
)
DOWN = frozenset(
    """decreas lower low reduc declin inhibit suppress downregul impair diminish attenu less fewer loss
    slow""".split()
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("n't", " n't"))


def content_stems(text: str) -> set[str]:
    """Stemmed content words of ``text`` (stop words and negations removed)."""
    words = [w for w in _words(text) if w not in STOP_WORDS and w not in NEGATIONS]
    return set(english_stemmer().stemWords(words))


def _negated(text: str) -> bool:
    return any(w in NEGATIONS or w.endswith("n't") for w in _words(text))


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text.lower())}


def _directions(stems: set[str]) -> set[str]:
    found = set()
    if any(s.startswith(tuple(UP)) for s in stems):
        found.add("up")
    if any(s.startswith(tuple(DOWN)) for s in stems):
        found.add("down")
    return found


# Stems of words of opposite meaning, in pairs: one in the claim and the other in the sentence is an antonym cue.
OPPOSITES = (
    ("caus", "prevent"),
    ("protect", "caus"),
    ("protect", "rais"),
    ("benefici", "harm"),
    ("effect", "ineffect"),
    ("safe", "unsaf"),
    ("activ", "inhibit"),
    ("agonist", "antagonist"),
    ("benign", "malign"),
)


def _opposites(claim_stems: set[str], sentence_stems: set[str]) -> list[tuple[str, str]]:
    found = []
    for a, b in OPPOSITES:
        for x, y in ((a, b), (b, a)):
            if x in claim_stems and y in sentence_stems and x not in sentence_stems and y not in claim_stems:
                found.append((x, y))
    return found


def contradiction_cues(claim: str, sentence: str) -> list[str]:
    """The reasons ``sentence`` may contradict ``claim`` (empty: none found): negation on one side only, other
    numbers, an opposite direction of change, or a word of opposite meaning (:data:`OPPOSITES`)."""
    cues = []
    if _negated(claim) != _negated(sentence):
        side = "evidence" if _negated(sentence) else "claim"
        cues.append(f"negation only in the {side}")
    claim_numbers, sentence_numbers = _numbers(claim), _numbers(sentence)
    if claim_numbers and sentence_numbers and not claim_numbers & sentence_numbers:
        cues.append(f"numbers differ ({', '.join(sorted(claim_numbers))} vs {', '.join(sorted(sentence_numbers))})")
    claim_dir = _directions(content_stems(claim) | set(english_stemmer().stemWords(_words(claim))))
    sentence_dir = _directions(set(english_stemmer().stemWords(_words(sentence))))
    if len(claim_dir) == 1 and len(sentence_dir) == 1 and claim_dir != sentence_dir:
        cues.append(f"opposite direction (claim {claim_dir.pop()}, evidence {sentence_dir.pop()})")
    stemmer = english_stemmer()
    for x, y in _opposites(set(stemmer.stemWords(_words(claim))), set(stemmer.stemWords(_words(sentence)))):
        cues.append(f"opposite words (claim {x}-, evidence {y}-)")
    return cues


@dataclass(frozen=True)
class LexicalVerifier(Verifier):
    """Word-overlap baseline with negation, number and direction cues (offline, no model).

    Options: ``min_coverage`` (share of the claim's content words one evidence
    sentence must contain, else abstain), ``max_confidence``.
    """

    name = "lexical"
    languages = frozenset({"en"})  # English stop words, negation and direction cues
    reuse_judgments = True
    min_coverage: float = setting(0.3, minimum=0, maximum=1)
    max_confidence: float = setting(0.9, minimum=0.5, maximum=1)

    def assess(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        """Synchronous judgment (the async :meth:`judge` wraps it)."""
        if not evidence:
            return Assessment(None, 0.0, "no evidence retrieved")
        claim_stems = content_stems(claim.text)
        if not claim_stems:
            return Assessment(None, 0.0, "the claim has no content words to match")
        best_sentence, best_cover, best_item = "", 0.0, evidence[0]
        for item in evidence:
            for sentence in split_sentences(item.text):
                cover = len(claim_stems & content_stems(sentence)) / len(claim_stems)
                if cover > best_cover:
                    best_sentence, best_cover, best_item = sentence, cover, item
        where = f"{best_item.title or best_item.source}"
        if best_cover < self.min_coverage:
            return Assessment(
                None, 0.0, f"no evidence sentence covers enough of the claim (best {best_cover:.0%} in {where})"
            )
        confidence = round(0.5 + (self.max_confidence - 0.5) * best_cover, 4)
        quote = best_sentence if len(best_sentence) <= 200 else best_sentence[:197] + "..."
        cues = contradiction_cues(claim.text, best_sentence)
        if cues:
            return Assessment(False, confidence, f'{"; ".join(cues)}; closest sentence ({where}): "{quote}"')
        return Assessment(True, confidence, f'{best_cover:.0%} of the claim\'s terms in ({where}): "{quote}"')

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        return self.assess(claim, evidence)


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(LexicalVerifier())
