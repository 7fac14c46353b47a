"""Whether a sentence is about a claim, not only on its topic.

A sentence can share a claim's topic words and say nothing about it: "Insulin lowers blood glucose." and a
sentence on insulin secretion in knockout mice share *insulin*, and "Colonoscopy screening reduces colorectal
cancer mortality." and "Colonoscopy use increased from 2000 to 2010." share *colonoscopy*. A verdict needs a
sentence that names the claim's **subject** and something of its **relation**, what the claim says of the
subject: its verb or the words the verb governs (its object, complement or agent).

The claim is parsed once with the shipped spaCy model (the one the extractor uses); the test on a sentence is
on stems (the same stems as the word test of the relevance gate), so it costs nothing per sentence. It is a
necessary condition, not a sufficient one: a sentence naming both can still be about something else, which is
the model's to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from factcheck.verifiers.lexical import content_stems

SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass"})
ARGUMENT_TAGS = frozenset({"NOUN", "PROPN", "NUM", "ADJ", "X"})
# Stems of nouns that say what kind of relation a claim states, not what it is about.
GENERIC = frozenset(
    "risk effect level rate number use type case result form role part way amount chanc likelihood incid "
    "caus develop factor treatment therapi patient peopl person individu".split()
)


@dataclass(frozen=True)
class ClaimParts:
    """A claim's content stems split into its subject's and the rest (the relation: the verb and what it
    governs). Either may be empty (a claim with no parse, or nothing but a subject): then it asks nothing."""

    subject: frozenset[str]
    relation: frozenset[str]
    subject_words: str = ""  # the subject as written, for a reason a reader can follow
    relation_words: str = ""
    at_least: int = 1  # how many of the relation's stems a sentence must hold (2 where the parse found no verb)
    arguments: frozenset[str] = frozenset()  # the relation's own nouns and modifiers, generic ones left out

    def missing(self, text: str, own: str | None = None) -> str | None:
        """What ``text`` lacks to be about the claim ("the claim's subject (Insulin)"), or None when it names the
        subject and something of the relation. ``own`` is what the sentence itself says where ``text`` reads it
        after its antecedent: the antecedent may name the subject ("It" is the tower), not the relation."""
        stems = content_stems(text)
        if self.subject and not self.subject & stems:
            return f"the claim's subject ({self.subject_words})"
        if own is not None:
            stems = content_stems(own)
        if self.arguments:
            if not self.arguments & stems:
                return f"what the claim says of its subject ({self.relation_words})"
            return None
        if self.relation and len(self.relation & stems) < min(self.at_least, len(self.relation)):
            return f"what the claim says of its subject ({self.relation_words})"
        return None


@lru_cache(maxsize=4096)
def claim_parts(claim: str) -> ClaimParts:
    """The claim's subject and relation, from its dependency parse: the subject is the subtree of the main
    verb's subject (the first noun chunk where the parse has none), the relation every other content word.
    The parse is the extractor's pipeline's (:func:`factcheck.extractors.sentence.parse`: safe from the worker
    threads that judge claims while texts are parsed, and one pipeline loaded, not two)."""
    from factcheck.extractors.sentence import load_pipeline, parse

    (doc,) = parse(load_pipeline("auto"), [claim])
    stems = frozenset(content_stems(claim))
    roots = [sentence.root for sentence in doc.sents]
    if not roots or roots[0].pos_ not in ("VERB", "AUX"):
        # A parse with no verb at its root ("Insulin lowers blood glucose." read as a noun phrase, headed by
        # "glucose"): no subject to trust, so two of the claim's words instead.
        return ClaimParts(frozenset(), stems, "", claim.strip().rstrip("."), at_least=2)
    subject_tokens = []
    for sentence in doc.sents:
        root = sentence.root
        for child in root.children:
            if child.dep_ in SUBJECTS:
                subject_tokens = list(child.subtree)
                break
        if not subject_tokens and root.dep_ in SUBJECTS:
            subject_tokens = list(root.subtree)
        break
    if not subject_tokens and doc.has_annotation("DEP"):
        chunks = list(doc.noun_chunks)
        subject_tokens = list(chunks[0]) if chunks else []
    subject_text = " ".join(token.text for token in subject_tokens)
    subject = frozenset(content_stems(subject_text)) & stems
    relation = stems - subject
    in_subject = {token.i for token in subject_tokens}
    relation_text = " ".join(t.text for t in doc if t.i not in in_subject and not t.is_punct)
    # What the relation is about: its nouns, names, numbers and modifiers ("heart attacks", "the liver",
    # "LDL"), not its verb, which a sentence may say in other words ("lowers", "reduces"), and not the
    # generic nouns every claim of a kind shares ("the risk of", "the level of").
    named = " ".join(t.text for t in doc if t.i not in in_subject and t.pos_ in ARGUMENT_TAGS)
    arguments = (frozenset(content_stems(named)) & relation) - GENERIC
    return ClaimParts(subject, relation, subject_text.strip(), relation_text.strip(), arguments=arguments)
