"""A claim's relation matched with an entity's own properties by meaning, where the table has none.

The table of :mod:`factcheck.wikidata.relations` knows the common relations. For another ("Mercury orbits
the Sun", "Pluto was discovered in 1930"), the entity's properties that hold a value of the claimed kind
are read with their labels and aliases (Wikidata's aliases are how people say them: "orbits" is an alias of
*parent astronomical body*), and the claim's relation words are compared with each name by the shipped
embedder (:func:`factcheck.embed.load_embedder`, offline). The property of the most similar name is the
claim's when it reaches :data:`MIN_SIMILARITY` and leads the next property by :data:`MARGIN`; otherwise none
is, and the agent gives no judgment.

A property found so is never taken for single-valued: it can make a claim TRUE, never FALSE.
"""

from __future__ import annotations

from collections.abc import Sequence

# Looked at on 14 relation phrases against 30 property labels, labels alone: the right label scored 0.34 to
# 0.84 ("orbits" and *parent astronomical body* only 0.38), a wrong one up to 0.47. So a label reaches 0.6
# only when it says the relation ("has a diameter of": *diameter*, 0.83); an alias that is the claim's own
# word ("orbits") does the rest. Not tuned on a set: a conservative bar, as a match can only confirm.
MIN_SIMILARITY = 0.6
MARGIN = 0.05


def best_property(phrase: str, names: Sequence[tuple[str, str]]) -> tuple[str, float] | None:
    """The property (id) among ``names`` (``(property id, a label or alias)``) whose name is most similar to
    ``phrase``, with its similarity, when it is at least :data:`MIN_SIMILARITY` and :data:`MARGIN` above
    the next property's best; else ``None``."""
    if not phrase or not names:
        return None
    from factcheck.embed import load_embedder

    similarities = load_embedder().similarities(phrase, [name for _, name in names])
    best: dict[str, float] = {}
    for (prop, _), similarity in zip(names, similarities, strict=True):
        best[prop] = max(best.get(prop, -1.0), float(similarity))
    ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
    top, score = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else -1.0
    return (top, score) if score >= MIN_SIMILARITY and score - runner_up >= MARGIN else None
