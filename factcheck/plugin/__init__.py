"""The door for plugin authors: every hook, contract and helper a factcheck plugin implements or calls.

    from dataclasses import dataclass

    import factcheck
    from factcheck.plugin import Source, hookimpl, request_json, setting

    @dataclass(frozen=True)
    class GlossarySource(Source):
        name = "glossary"
        top_k: int = setting(5, minimum=1)

        async def retrieve(self, claim: factcheck.Claim) -> list[factcheck.Evidence]:
            ...

    @hookimpl
    def register_sources(register):
        register(GlossarySource())

The built-in components import these same names from here. The domain types (``Claim``, ``Evidence``,
``Assessment``, ...) and the errors are :mod:`factcheck`'s; the fakes for tests are
:mod:`factcheck.testing`'s. See docs/plugins.md.
"""

from factcheck.cache import cached
from factcheck.context import CheckContext
from factcheck.loops import SYNC_WORKERS
from factcheck.options import setting
from factcheck.plugin.dataset import Dataset, DatasetReader, EvalItem, GoldClaim
from factcheck.plugin.deliberator import Action, DeliberationState, Deliberator, stop, taken
from factcheck.plugin.extractor import ClaimExtractor
from factcheck.plugin.hooks import hookimpl
from factcheck.plugin.http import request_json
from factcheck.plugin.retriever import MemoryRetriever
from factcheck.plugin.scorer import LabelRule, Scorer
from factcheck.plugin.source import Source
from factcheck.plugin.verifier import Verifier
from factcheck.secrets import secret
from factcheck.text import split_sentences
from factcheck.usage import record_cache_hit, record_call, record_llm, record_note, record_search

__all__ = [
    "SYNC_WORKERS",
    "Action",
    "CheckContext",
    "ClaimExtractor",
    "Dataset",
    "DatasetReader",
    "DeliberationState",
    "Deliberator",
    "EvalItem",
    "GoldClaim",
    "LabelRule",
    "MemoryRetriever",
    "Scorer",
    "Source",
    "Verifier",
    "cached",
    "hookimpl",
    "record_cache_hit",
    "record_call",
    "record_llm",
    "record_note",
    "record_search",
    "request_json",
    "secret",
    "setting",
    "split_sentences",
    "stop",
    "taken",
]
