"""The ``corpus`` source: hybrid retrieval (BM25 and meaning) over a local document collection.

A corpus is a JSONL file (optionally gzipped) of ``{"id", "title", "text",
"url"?, "date"?}`` records, a folder of ``.txt`` / ``.md`` files, or one such
file. A record's ``date`` (when the document was written: ISO 8601, or as a
search result dates it, "Mar 3, 2021") becomes its evidence's ``published_at``.
Documents are split into passages of whole sentences (at most ``passage_words``
words) and indexed with bm25s; the index is saved under the cache folder, keyed
by a hash of the corpus bytes and the passage settings, so it is built once per
corpus.

Retrieval is hybrid by default (``retrieval = "hybrid"``): the passages BM25 ranks
best and those closest in meaning to the query (the cosine of their sentence
embeddings, :mod:`factcheck.embed`) are fused by reciprocal rank (k = 60, over
each ranking's top 50). On SciFact dev it finds the gold abstract in the top 3
for 87% of the claims, against 84% for BM25 alone (``docs/evidence.md``).
``"bm25"`` and ``"dense"`` use one ranking alone. The passage embeddings of the
shipped corpus are shipped with it; a user's corpus is embedded on first use
(with a progress bar on a terminal), saved under the cache folder beside its
index, keyed by the corpus fingerprint and the encoder's digest, so an edited
corpus or another encoder is embedded afresh.

With no ``path``, the source searches the 5,183 SciFact abstracts shipped in
the package (``factcheck/data/scifact-corpus.jsonl.gz``; ODC-By 1.0, see
``factcheck/data/SCIFACT.md``).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from factcheck.dates import evidence_date
from factcheck.errors import ConfigError, InputError
from factcheck.jsonl import read_records
from factcheck.options import setting
from factcheck.paths import cache_dir
from factcheck.plugin import Source, hookimpl
from factcheck.ranking import MIN_PASSAGE_SIMILARITY, reciprocal_rank_fusion
from factcheck.text import english_stemmer, split_sentences
from factcheck.types import Claim, Evidence
from factcheck.usage import record_cache_hit, record_call

SHIPPED_CORPUS = Path(__file__).resolve().parent.parent / "data" / "scifact-corpus.jsonl.gz"
# The shipped corpus's passage embeddings (float16) and what they were computed from (corpus, encoder, texts).
SHIPPED_EMBEDDINGS = SHIPPED_CORPUS.with_name("scifact-embeddings.npy")
# What a reader is told judged a verdict (``judged_by``): the shipped corpus by name, with its domain.
SHIPPED_CORPUS_NAME = "SciFact abstracts (5,183 biomedical research abstracts)"
SHIPPED_CORPUS_DOMAIN = "biomedical"
INDEX_FORMAT = "bm25s-3"  # bump when passages or tokenisation change (split_sentences too), to invalidate saved indexes
EMBEDDING_FORMAT = "title. text/1"  # bump when the embedded text of a passage changes
RETRIEVALS = ("hybrid", "bm25", "dense")
FUSED_DEPTH = 50  # each ranking's top 50 are fused (factcheck.ranking.reciprocal_rank_fusion)
FOLDER_SUFFIXES = (".txt", ".md")
MARKDOWN_FORMAT = "sections-1"  # bump when a Markdown file's passages change (part of its corpus's fingerprint)


@dataclass(frozen=True)
class Passage:
    """A retrievable unit: whole sentences of one document."""

    doc_id: str
    title: str
    url: str | None
    text: str
    date: str | None = None  # the document's date, read by evidence_date (None: unknown)


def split_passages(text: str, max_words: int) -> list[str]:
    """Group consecutive sentences into passages of at most ``max_words`` words
    (a single longer sentence stays whole)."""
    passages: list[str] = []
    current: list[str] = []
    words = 0
    for sentence in split_sentences(text):
        n = len(sentence.split())
        if current and words + n > max_words:
            passages.append(" ".join(current))
            current, words = [], 0
        current.append(sentence)
        words += n
    if current:
        passages.append(" ".join(current))
    return passages


def _read_corpus_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for number, record in read_records(path):
        if not isinstance(record.get("text"), str):
            raise InputError(f"{path}:{number}: a corpus record needs a string field 'text'")
        yield record


def _folder_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES)


def _file_title(path: Path) -> str:
    return path.stem.replace("_", " ").replace("-", " ")


def markdown_sections(text: str) -> list[tuple[str | None, str]]:
    """A Markdown text as (heading, body) sections, in order: each heading (``#`` to ``######``, or a line
    underlined with ``===`` / ``---``) is a section's title, never a sentence of its text; what comes before the
    first heading has no heading (None). Parsed by markdown-it-py (CommonMark), so a ``#`` line inside a code
    block is text, not a heading."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    headings = [
        (token.map, tokens[i + 1].content.strip())
        for i, token in enumerate(tokens)
        if token.type == "heading_open" and token.map is not None and i + 1 < len(tokens)
    ]
    lines = text.splitlines()
    sections: list[tuple[str | None, str]] = []
    start, title = 0, None
    for (first, last), heading in headings:
        sections.append((title, "\n".join(lines[start:first])))
        start, title = last, heading
    sections.append((title, "\n".join(lines[start:])))
    return [(heading, body) for heading, body in sections if body.strip()]


def _file_passages(file: Path, doc_id: str, max_words: int) -> list[Passage]:
    """A ``.txt`` file's passages, titled by its name; a ``.md`` file's, section by section, each titled by its
    heading (the file's name before the first heading)."""
    text = file.read_text(encoding="utf-8", errors="replace")
    url, name = file.resolve().as_uri(), _file_title(file)
    sections = markdown_sections(text) if file.suffix.lower() == ".md" else [(None, text)]
    return [
        Passage(doc_id, heading or name, url, passage)
        for heading, body in sections
        for passage in split_passages(body, max_words)
    ]


def load_passages(path: Path, max_words: int) -> list[Passage]:
    """Read a corpus file or folder and split it into passages."""
    passages: list[Passage] = []
    if path.is_dir() or path.suffix.lower() in FOLDER_SUFFIXES:
        for file in _folder_files(path) if path.is_dir() else [path]:
            doc_id = file.relative_to(path).as_posix() if path.is_dir() else file.name
            passages.extend(_file_passages(file, doc_id, max_words))
    else:
        for number, record in enumerate(_read_corpus_jsonl(path), 1):
            doc_id = str(record.get("id", number))
            title = str(record.get("title") or "")
            url = record.get("url")
            date = evidence_date(str(record["date"]) if isinstance(record.get("date"), int) else record.get("date"))
            passages.extend(Passage(doc_id, title, url, p, date) for p in split_passages(record["text"], max_words))
    if not passages:
        raise InputError(f"corpus {path} has no text to search")
    return passages


def fingerprint(path: Path, max_words: int) -> str:
    """A hash of the corpus content and the settings that shape its index."""
    digest = hashlib.sha256(f"{INDEX_FORMAT}|{max_words}".encode())
    files = _folder_files(path) if path.is_dir() else [path]
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() if path.is_dir() else b"")
        if file.suffix.lower() == ".md":
            digest.update(MARKDOWN_FORMAT.encode())  # how a Markdown file becomes passages
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:24]


def embedded_text(passage: Passage) -> str:
    """What the encoder reads of a passage: its title (the document it comes from) and its text."""
    return f"{passage.title}. {passage.text}" if passage.title else passage.text


class CorpusIndex:
    """BM25 over a corpus's passages, saved to and loaded from an index folder, and (once
    :meth:`embedded`) the passages' unit embeddings for ranking by meaning."""

    def __init__(self, passages: list[Passage], retriever: Any) -> None:
        self.passages = passages
        self.retriever = retriever
        self.vectors: np.ndarray | None = None

    @classmethod
    def build(cls, passages: list[Passage]) -> CorpusIndex:
        """Index passages (title and text) with BM25."""
        import bm25s

        texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=english_stemmer(), show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(passages, retriever)

    def save(self, folder: Path) -> None:
        """Write the index atomically: build it in a temporary folder, then rename that into place.

        Raises OSError when the cache cannot be written (the caller keeps the index in memory).
        """
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        try:
            self.retriever.save(str(tmp), show_progress=False)
            with gzip.open(tmp / "passages.jsonl.gz", "wt", encoding="utf-8") as handle:
                for p in self.passages:
                    handle.write(json.dumps([p.doc_id, p.title, p.url, p.text, p.date]) + "\n")
            os.replace(tmp, folder)
        finally:
            # Still there if saving failed, or if another process renamed its copy into place first.
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> CorpusIndex:
        """Read an index written by :meth:`save`; ValueError if it is inconsistent."""
        import bm25s

        with gzip.open(folder / "passages.jsonl.gz", "rt", encoding="utf-8") as handle:
            passages = [Passage(*json.loads(line)) for line in handle]
        retriever = bm25s.BM25.load(str(folder))
        if retriever.scores.get("num_docs") != len(passages):
            raise ValueError(f"index in {folder} does not match its passages")
        return cls(passages, retriever)

    def by_words(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` best passages for ``query`` by BM25: (passage number, score), only those that match at all."""
        import bm25s

        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=english_stemmer(), return_ids=False, show_progress=False
        )
        if not tokens or not tokens[0]:
            return []
        k = min(k, len(self.passages))
        ids, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def by_meaning(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` passages closest in meaning to a query's unit ``vector``: (passage number, cosine), only
        those at least :data:`factcheck.ranking.MIN_PASSAGE_SIMILARITY` close."""
        if self.vectors is None:
            raise RuntimeError("the corpus index has no embeddings: open it with embedded=True")
        # Stored as float16 (half the memory and the file), multiplied in float32: numpy has no fast float16
        # product (a float16 one took 6x as long), and float32 cosines rarely tie where float16 ones do.
        cosines = self.vectors @ vector.astype(np.float32)
        k = min(k, len(self.passages))
        best = np.argpartition(-cosines, k - 1)[:k]
        ranked = best[np.argsort(-cosines[best], kind="stable")]
        return [(int(i), float(cosines[i])) for i in ranked if cosines[i] >= MIN_PASSAGE_SIMILARITY]

    def search(
        self, query: str, k: int, retrieval: str = "bm25", vector: np.ndarray | None = None
    ) -> list[tuple[Passage, float]]:
        """The ``k`` best passages for ``query`` with their scores: BM25's, the cosine (``dense``, given the
        query's ``vector``), or the reciprocal-rank fusion of both rankings (``hybrid``)."""
        if retrieval == "bm25" or vector is None:
            return [(self.passages[i], score) for i, score in self.by_words(query, k)]
        if retrieval == "dense":
            return [(self.passages[i], score) for i, score in self.by_meaning(vector, k)]
        return [
            (self.passages[i], score)
            for i, score in reciprocal_rank_fusion(
                [self.by_words(query, FUSED_DEPTH), self.by_meaning(vector, FUSED_DEPTH)]
            )[:k]
        ]


def _stat_signature(path: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times: cheap to read, and they change when the corpus does."""
    files = _folder_files(path) if path.is_dir() else [path]
    return tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)


_indexes: dict[str, CorpusIndex] = {}  # fingerprint -> index
_fingerprints: dict[tuple[Path, int], tuple[tuple[tuple[str, int, int], ...], str]] = {}
_indexes_lock = threading.Lock()


def _cached_fingerprint(path: Path, max_words: int) -> str:
    """:func:`fingerprint`, recomputed only when a file's size or modification time changes."""
    signature = _stat_signature(path)
    known = _fingerprints.get((path, max_words))
    if known is None or known[0] != signature:
        known = (signature, fingerprint(path, max_words))
        _fingerprints[(path, max_words)] = known
    return known[1]


def _load_cached(folder: Path) -> CorpusIndex | None:
    if not (folder / "passages.jsonl.gz").exists():
        return None
    try:
        index = CorpusIndex.load(folder)
    except Exception:  # a damaged or foreign cache entry is rebuilt, never trusted
        shutil.rmtree(folder, ignore_errors=True)
        return None
    record_cache_hit("corpus-index")
    return index


def _save_array(path: Path, array: np.ndarray) -> None:
    """Write ``array`` to ``path`` atomically (a temporary file renamed into place); OSError if it cannot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".npy", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            np.save(out, array)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def embedding_stamp(key: str, digest: str) -> dict[str, Any]:
    """What a set of passage embeddings was computed from: the corpus fingerprint, the encoder, the texts."""
    return {"fingerprint": key, "embedder": digest, "format": EMBEDDING_FORMAT}


def _shipped_embeddings(key: str, digest: str, count: int) -> np.ndarray | None:
    """The embeddings shipped with the SciFact corpus, when they were computed from this very corpus and encoder."""
    stamp = SHIPPED_EMBEDDINGS.with_suffix(".json")
    if not (SHIPPED_EMBEDDINGS.is_file() and stamp.is_file()):
        return None
    if json.loads(stamp.read_text(encoding="utf-8")) != {**embedding_stamp(key, digest), "passages": count}:
        return None
    return np.load(SHIPPED_EMBEDDINGS)  # type: ignore[no-any-return]


def embed_passages(passages: Sequence[Passage], label: str) -> np.ndarray:
    """The passages' unit embeddings (float16), with a progress bar on a terminal: a corpus's first use."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from factcheck.embed import load_embedder

    embedder = load_embedder(threads=0)  # batches of 32 passages, once a corpus: every core (onnxruntime's default)
    console = Console(stderr=True)
    columns = (TextColumn(f"embedding {label}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("embed", total=len(passages))
        vectors = embedder.encode([embedded_text(p) for p in passages], lambda n: progress.advance(task, n))
    return vectors.astype(np.float16)


def _attach_embeddings(index: CorpusIndex, key: str, label: str) -> None:
    """Give ``index`` its passage embeddings: shipped, else saved in the cache, else computed (and saved)."""
    from factcheck.embed import embedder_digest

    digest = embedder_digest()
    vectors = _shipped_embeddings(key, digest, len(index.passages))
    saved = cache_dir() / "corpus-embeddings" / f"{key}-{digest[:16]}.npy"
    if vectors is None and saved.is_file():
        try:
            vectors = np.load(saved)
            if vectors.ndim != 2 or vectors.shape[0] != len(index.passages):
                raise ValueError("not this corpus's embeddings")
            record_cache_hit("corpus-embeddings")
        except (OSError, ValueError, EOFError):  # a damaged or foreign cache entry is recomputed, never trusted
            vectors = None
    if vectors is None:
        record_call("corpus-embeddings:build")
        vectors = embed_passages(index.passages, label)
        try:
            _save_array(saved, vectors)
        except OSError as exc:
            warnings.warn(
                f"factcheck: cannot cache the corpus embeddings in {saved} ({exc.strerror or exc}); "
                "they will be computed again in the next process",
                RuntimeWarning,
                stacklevel=3,
            )
    index.vectors = vectors.astype(np.float32)


def open_index(path: Path, max_words: int, embedded: bool = False) -> CorpusIndex:
    """The index of a corpus: from memory, else from the on-disk cache, else built (and saved if possible);
    ``embedded``: with its passage embeddings too (for ranking by meaning)."""
    with _indexes_lock:
        key = _cached_fingerprint(path, max_words)
        if key in _indexes:
            index = _indexes[key]
            if embedded and index.vectors is None:
                _attach_embeddings(index, key, path.name)
            return index
        folder = cache_dir() / "corpus-index" / key
        loaded = _load_cached(folder)
        if loaded is not None:
            index = loaded
        else:
            record_call("corpus-index:build")
            index = CorpusIndex.build(load_passages(path, max_words))
            try:
                index.save(folder)
            except OSError as exc:
                warnings.warn(
                    f"factcheck: cannot cache the corpus index in {folder} ({exc.strerror or exc}); "
                    "it will be rebuilt in the next process",
                    RuntimeWarning,
                    stacklevel=2,
                )
        if embedded:
            _attach_embeddings(index, key, path.name)
        _indexes[key] = index
        return index


@dataclass(frozen=True)
class CorpusSource(Source):
    """Hybrid search over a local corpus (default: the shipped SciFact abstracts).

    Options: ``path`` (JSONL / JSONL.gz file or folder of .txt / .md),
    ``top_k`` passages per claim, ``passage_words`` (passage size), ``retrieval``
    (``hybrid``: BM25 and meaning fused by reciprocal rank; ``bm25``; ``dense``).
    """

    name = "corpus"
    reuse_judgments = True
    path: str | None = None
    top_k: int = setting(3, minimum=1)
    passage_words: int = setting(120, minimum=1)
    retrieval: str = setting("hybrid", choices=RETRIEVALS)

    def __post_init__(self) -> None:
        super().__post_init__()  # the declared ranges
        if self.path is not None and not Path(self.path).expanduser().exists():
            raise ConfigError(f"corpus: no such file or folder: {self.path}")

    @property
    def corpus_path(self) -> Path:
        """The file or folder searched."""
        return Path(self.path).expanduser() if self.path else SHIPPED_CORPUS

    def describe_corpus(self) -> tuple[str, str | None]:
        """The collection searched, for readers, and its domain: the shipped SciFact abstracts are
        ``biomedical``; a user's own corpus is named by its file or folder name (never its full path,
        which a server would hand every caller), its domain unknown (``None``)."""
        if self.corpus_path.resolve() == SHIPPED_CORPUS:
            return SHIPPED_CORPUS_NAME, SHIPPED_CORPUS_DOMAIN
        return Path(str(self.path)).name or str(self.path), None

    @property
    def embedded(self) -> bool:
        """Whether the retrieval ranks by meaning (and so needs the passage embeddings)."""
        return self.retrieval != "bm25"

    def cache_version(self) -> str:
        """The corpus's content fingerprint (and the encoder's, when ranking by meaning): an edited corpus or
        another encoder is searched afresh, never answered from the cache."""
        version = _cached_fingerprint(self.corpus_path, self.passage_words)
        if self.embedded:
            from factcheck.embed import embedder_digest

            version += "-" + embedder_digest()[:16]
        return version

    async def prepare(self) -> None:
        """Open (or build, or embed) the index before the first claim, so corpus errors surface once, clearly."""
        await asyncio.to_thread(open_index, self.corpus_path, self.passage_words, self.embedded)

    def search(self, claim: Claim) -> list[Evidence]:
        """Synchronous retrieval: the ``top_k`` best passages over all of the claim's queries."""
        index = open_index(self.corpus_path, self.passage_words, self.embedded)
        queries = list(claim.search_queries())
        vectors: list[np.ndarray | None] = [None] * len(queries)
        if self.embedded and queries:
            from factcheck.embed import load_embedder

            vectors = list(load_embedder().encode_each(queries))
        best: dict[tuple[str, str], tuple[Passage, float]] = {}
        for query, vector in zip(queries, vectors, strict=True):
            for passage, score in index.search(query, self.top_k, self.retrieval, vector):
                key = (passage.doc_id, passage.text)
                if key not in best or score > best[key][1]:
                    best[key] = (passage, score)
        ranked = sorted(best.values(), key=lambda item: item[1], reverse=True)[: self.top_k]
        now = datetime.now(UTC).isoformat(timespec="seconds")
        return [
            Evidence(source=self.name, text=p.text, title=p.title, url=p.url, retrieved_at=now, published_at=p.date)
            for p, _ in ranked
        ]

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return await asyncio.to_thread(self.search, claim)


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(CorpusSource())
