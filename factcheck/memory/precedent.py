"""Precedents: past cases as evidence, and the offline verifier that reads them.

A case of the experience memory reaches a check as an :class:`~factcheck.Evidence` passage of the ``memory``
source: its text is the past claim, its title says who ruled it what and when (with the reviewer's note), and
its ``url`` (``factcheck-memory:<id>/<label>``) names the case and its label, so the verdict it lends can
always be traced to its source and ``factcheck memory forget <id>`` removes it.

The label of the nearest past claim is no verdict on a new one: SciFact is full of twins that say the opposite
(a drug "increases" / "decreases" a risk), and copying the nearest label is right less often than a coin
(docs/learning.md). So :class:`PrecedentVerifier` lends a verdict only through what the shipped NLI model reads
between the two claims:

- the same claim (equal once case, spacing and the final full stop are folded) has the ruling itself: the NLI model
  reads a text against itself unreliably (it reads about one SciFact claim in three against itself as REFUTES);
- a past claim ruled TRUE that entails the new one makes it TRUE; one that contradicts it makes it FALSE;
- a past claim ruled FALSE that the new one entails makes it FALSE (it says at least as much as a false claim);
  one it contradicts makes it TRUE, weighed by ``negation_weight``: two claims that contradict each other can
  both be false ("X is 5", "X is 7"), but a twin that negates a false claim is true;
- a contradiction counts only where the two claims say opposite things in words: a negation on one side, an
  antonym, another number or direction (:func:`factcheck.verifiers.lexical.contradiction_cues`). The model
  reads a paraphrase as a contradiction at times (0.82 for a paraphrase of a TRUE correction, issue 39): a
  paraphrase lends its ruling through entailment or nothing, never the opposite ruling.

Anything else (an unrelated or merely similar past claim) lends nothing, and the agent abstains.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.agent import normalise_claim
from factcheck.embed import embedder_digest, load_embedder
from factcheck.options import setting
from factcheck.plugin import Verifier, hookimpl
from factcheck.precedents import precedent_of
from factcheck.types import Assessment, Claim, Evidence
from factcheck.usage import record_call
from factcheck.verifiers.lexical import contradiction_cues
from factcheck.verifiers.nli import REFUTES, SHIPPED_MODEL, SUPPORTS, load_model, model_digest


@dataclass(frozen=True)
class Relation:
    """How a past claim bears on the new one: the verdict it lends, how strongly (``p``: the NLI probability of
    the relation, weighed), and the case."""

    verdict: bool
    p: float
    similarity: float
    evidence: Evidence
    ruled: bool  # the past claim's label: TRUE
    reading: str


def relations(claim: str, precedents: Sequence[tuple[Evidence, bool]], negation_weight: float) -> list[Relation]:
    """What each precedent lends the claim (see the module's rules), strongest first."""
    model = load_model(SHIPPED_MODEL)
    pasts = [e.text for e, _ in precedents]
    # The model reads (hypothesis, premise): does the past claim say the new one? does the new one say the past?
    forward = model.probabilities([(claim, past) for past in pasts])
    backward = model.probabilities([(past, claim) for past in pasts])
    record_call("nli:pairs", 2 * len(pasts))
    cosines = load_embedder().similarities(claim, pasts)
    found = []
    asked = normalise_claim(claim)
    for (item, true), fwd, bwd, cosine in zip(precedents, forward, backward, cosines, strict=True):
        if normalise_claim(item.text) == asked:  # the same claim: the model is no judge of a text against itself
            found.append(Relation(true, 1.0, float(cosine), item, true, "is the same claim as"))
            continue
        # A contradiction is read only where the two claims say opposite things in words (a negation, an
        # antonym, another number or direction): the model reads a paraphrase as a contradiction at times.
        opposed = bool(contradiction_cues(claim, item.text))
        if true:  # the past claim holds: what it entails holds, what it contradicts does not
            options = [(True, fwd[SUPPORTS], "entails")]
            options += [(False, fwd[REFUTES], "contradicts")] if opposed else []
        else:  # the past claim is false: what entails it is false; what contradicts it is (usually) true
            options = [(False, bwd[SUPPORTS], "is entailed by")]
            options += (
                [(True, negation_weight * max(fwd[REFUTES], bwd[REFUTES]), "is contradicted by")] if opposed else []
            )
        verdict, p, reading = max(options, key=lambda option: option[1])
        found.append(Relation(verdict, float(p), float(cosine), item, true, reading))
    return sorted(found, key=lambda r: -r.p * r.similarity)


@dataclass(frozen=True)
class PrecedentVerifier(Verifier):
    """Judges a claim by the precedents the ``memory`` source found (see the module). Options:
    ``min_similarity`` (a past claim less close in meaning lends nothing), ``min_relation`` (nor one whose
    relation to the claim the NLI model reads less surely than this), ``negation_weight`` (a false past claim
    the new one contradicts counts this much of that reading), ``confidence_scale`` (the verdict's confidence
    is the relation's probability times this: a precedent is one reviewer's word on another claim)."""

    name = "precedent"
    reads_precedents = True
    languages = frozenset({"en"})  # the shipped NLI model reads English pairs
    reuse_judgments = False  # the memory changes with every correction
    # Chosen on SciFact train claims alone (scripts/measure_memory.py tune: the best net vote; docs/learning.md).
    min_similarity: float = setting(0.6, minimum=-1, maximum=1)
    min_relation: float = setting(0.5, minimum=0, maximum=1)
    negation_weight: float = setting(0.8, minimum=0, maximum=1)
    confidence_scale: float = setting(0.8, minimum=0, maximum=1, min_open=True)

    def cache_version(self) -> str:
        return f"{model_digest(SHIPPED_MODEL)}-{embedder_digest()[:16]}"

    async def prepare(self) -> None:
        await asyncio.to_thread(load_model, SHIPPED_MODEL)
        await asyncio.to_thread(load_embedder)

    def lending(self, found: Sequence[Relation]) -> list[Relation]:
        """The relations that may lend a verdict: close enough in meaning, read surely enough; strongest first."""
        return [r for r in found if r.similarity >= self.min_similarity and r.p >= self.min_relation]

    def assess(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        precedents = [(e, case[1]) for e in evidence if (case := precedent_of(e)) is not None]
        if not precedents:
            return Assessment(None, 0.0, "no precedent in the experience memory")
        found = relations(claim.text, precedents, self.negation_weight)
        lending = self.lending(found)
        if not lending:
            best = found[0]
            return Assessment(
                None,
                0.0,
                f"no precedent bears on this claim: the closest past claim (similarity {best.similarity:.2f}) "
                f'{best.reading} it with p={best.p:.2f} only: "{best.evidence.text[:160]}"',
                evidence=tuple(r.evidence for r in found),
            )
        best = lending[0]
        verdict, ruled = ("TRUE" if best.verdict else "FALSE"), ("TRUE" if best.ruled else "FALSE")
        rationale = (
            f"{verdict} by precedent: a past claim ruled {ruled} {best.reading} this "
            f'one (p={best.p:.2f}, similarity {best.similarity:.2f}): "{best.evidence.text[:200]}" '
            f"({best.evidence.title})"
        )
        ordered = (best.evidence, *(r.evidence for r in found if r.evidence is not best.evidence))
        return Assessment(best.verdict, round(best.p * self.confidence_scale, 4), rationale, evidence=ordered)

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        return await asyncio.to_thread(self.assess, claim, evidence)


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(PrecedentVerifier())
