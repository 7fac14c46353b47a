"""The ``[memory]`` table: the opt-in experience memory, and how its precedents reach a check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from factcheck.options import check_fields, coerce_section, setting

MEMORY_AGENT = "memory"


@dataclass(frozen=True)
class MemorySettings:
    """Where the memory lives and how it lends precedents. No ``path``: no memory, and no file is created."""

    SECTION: ClassVar[str] = "[memory]"

    path: str | None = setting(None, env="FACTCHECK_MEMORY", help="SQLite file of corrections (opt-in).")
    require: int = setting(1, minimum=1, help="distinct reviewers who must agree on a label before it is lent")
    top_k: int = setting(3, minimum=1, help="past cases retrieved per claim")
    retriever: str = setting("bm25", help="memory retriever: bm25 or hybrid (or a plugin's)")
    # The memory agent's verifier; unset: precedent (offline NLI reading of the two claims), or llm where the
    # profile's verifier is llm, so that LLM judges read the precedents.
    verifier: str | None = setting(None, help="the memory agent's verifier (precedent, llm)")
    learn_trust: bool = setting(False, help="update the trust file from each correction (PAMAS eq. 15)")
    trust: str | None = setting(None, help="the trust file learn_trust updates")
    rate: float = setting(0.1, minimum=0, maximum=1, help="learn_trust's eq. 15 learning rate")

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def enabled(self) -> bool:
        return bool(self.path)

    def source_options(self) -> dict[str, Any]:
        """The ``memory`` source's options."""
        return {"path": self.path or "", "require": self.require, "top_k": self.top_k, "retriever": self.retriever}


def memory_settings(options: Any) -> MemorySettings:
    """The ``[memory]`` table (a mapping) read and checked."""
    return coerce_section(MemorySettings, options)


__all__ = ["MEMORY_AGENT", "MemorySettings", "memory_settings"]
