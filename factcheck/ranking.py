"""Hybrid ranking: words (BM25) and meaning (sentence embeddings), fused by reciprocal rank.

The ``corpus`` source ranks its indexed passages this way (:mod:`factcheck.sources.corpus`), and the
passages of a page read behind a search result or of a Wikipedia page are chosen this way
(:func:`rank_passages`, through :func:`factcheck.pages.select_passages`). Reciprocal-rank fusion
(Cormack, Clarke and Buettcher, SIGIR 2009) adds ``1 / (k + rank)`` over the rankings that hold an item:
it needs no scale shared by the two scores, and an item both rankings place high wins.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RRF_K = 60  # the constant of Cormack et al.
# A passage chosen by meaning alone must be at least this close to the claim (cosine): boilerplate (a cookie
# banner, a menu) is never that close to anything, and shares no word with the claim either.
MIN_PASSAGE_SIMILARITY = 0.3
MEANING_POOL = 48  # the most passages of one page embedded to rank by meaning


def reciprocal_rank_fusion(rankings: Sequence[Sequence[tuple[int, float]]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Items ranked by the sum of ``1 / (k + rank)`` over the rankings that hold them (rank 0 first), best
    first; ties by item number. Each ranking is ``(item, score)`` pairs, best first (the scores are unused)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, (item, _) in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))


def by_words(texts: Sequence[str], query: str) -> list[tuple[int, float]]:
    """BM25 over ``texts`` (stemmed, English stop words dropped): (text number, score), best first, only
    those sharing a word with ``query``."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")  # one per call: pages are ranked in worker threads at once
    query_tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
    if not texts or not query_tokens or not query_tokens[0]:
        return []
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(list(texts), stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False
    )
    ids, scores = retriever.retrieve(query_tokens, k=len(texts), show_progress=False, n_threads=1)
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


def by_meaning(texts: Sequence[str], query: str, floor: float = MIN_PASSAGE_SIMILARITY) -> list[tuple[int, float]]:
    """``texts`` by the cosine of their embeddings with the query's: (text number, cosine), best first, only
    those at least ``floor`` close."""
    from factcheck.embed import load_embedder

    if not texts:
        return []
    cosines = load_embedder().similarities(query, texts)
    order = np.argsort(-cosines, kind="stable")
    return [(int(i), float(cosines[i])) for i in order if cosines[i] >= floor]


def rank_passages(passages: Sequence[str], queries: Sequence[str], pool: int = MEANING_POOL) -> list[int]:
    """The passages that bear on the claim, best first (their numbers): BM25 against the claim and its
    queries, fused with the ranking by meaning against the claim (``queries[0]``). A passage that neither
    shares a word with them nor comes :data:`MIN_PASSAGE_SIMILARITY` close in meaning is never ranked.

    A page of more than ``pool`` passages (a long Wikipedia article) is ranked by meaning only among its
    ``pool`` best by words, so that one page costs at most ``pool`` embeddings (about 20 ms each on 2 cores)."""
    if not passages or not queries:
        return []
    words = by_words(passages, " ".join(queries))
    candidates = list(range(len(passages))) if len(passages) <= pool else [i for i, _ in words[:pool]]
    meaning = [(candidates[i], c) for i, c in by_meaning([passages[i] for i in candidates], queries[0])]
    return [item for item, _ in reciprocal_rank_fusion([words, meaning])]
