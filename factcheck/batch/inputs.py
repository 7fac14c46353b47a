"""What a batch reads: documents from a JSON Lines file, a CSV file, or a folder of files.

Every input is read twice, cheaply: :meth:`Input.ids` first lists the ids (to
count the work, skip what is done and refuse duplicate ids before anything is
checked), then :meth:`Input.documents` streams the documents one at a time, so
a corpus of any size is never held in memory.

- JSON Lines (``.jsonl``, ``.jsonl.gz``, ``.ndjson``): one object per line with
  ``id`` and ``text``; every other field is kept under ``meta``. A line without
  an id is named by its line number.
- CSV (``.csv``, ``.tsv``): the ``--text-column`` (default ``text``) holds the
  text, ``--id-column`` (default ``id`` when there is one, else the row number)
  the id; the other columns go under ``meta``.
- A folder: every ``.txt``, ``.md`` and ``.html`` / ``.htm`` file below it (hidden
  ones skipped), named by its path relative to the folder, its id and in every error about it
  (two ``notes.txt`` in different folders are ``a/notes.txt`` and ``b/notes.txt``). HTML is reduced to
  the page's main text with ``trafilatura`` (``pip install '.[batch]'`` in a checkout).

A document that cannot be read (not UTF-8, no text field, an HTML page with no
main text) is still a document: it carries the ``error`` and is written as failed.
"""

from __future__ import annotations

import csv
import gzip
import io
from abc import ABC, abstractmethod
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from factcheck.errors import ConfigError, InputError
from factcheck.jsonl import read_records
from factcheck.webpage import html_page, require_trafilatura

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True)
class Document:
    """One text to check, with its id and the input's other fields; ``error`` when it could not be read."""

    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def open_input(path: Path, *, text_column: str | None = None, id_column: str | None = None) -> Input:
    """The reader for ``path``, chosen by its kind: a folder, a JSON Lines file or a CSV file."""
    if path.is_dir():
        if text_column or id_column:
            raise ConfigError("--text-column and --id-column apply to JSON Lines and CSV input, not to a folder")
        return FolderInput(path)
    if not path.exists():
        raise InputError(f"no such file or folder: {path}")
    name = path.name.lower()
    if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".json.gz")):
        return JsonlInput(path, text_column or "text", id_column or "id")
    if name.endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
        return CsvInput(path, text_column or "text", id_column)
    raise InputError(f"{path}: give a .jsonl, .csv or .tsv file, or a folder of .txt / .md / .html files")


class Input(ABC):
    """A source of documents, listed by id first and then streamed."""

    path: Path

    @abstractmethod
    def ids(self) -> Iterator[str]:
        """Every document's id, in input order, reading as little as possible."""

    @abstractmethod
    def documents(self, skip: Container[str] = frozenset()) -> Iterator[Document]:
        """Every document whose id is not in ``skip``, in input order."""

    def settings(self) -> dict[str, Any]:
        """How this input is read: part of the settings a resumed run must share."""
        return {}

    def ignored(self) -> list[str]:
        """What the input holds that is not read (a folder's .pdf files), for the run to name."""
        return []

    def scan(self) -> list[str]:
        """The ids, checked for duplicates (two documents with one id would leave one of them unchecked)."""
        ids = list(self.ids())
        seen: set[str] = set()
        for doc_id in ids:
            if doc_id in seen:
                raise InputError(f"{self.path}: the id {doc_id!r} occurs more than once; ids must be unique")
            seen.add(doc_id)
        return ids


def _id_of(value: Any, fallback: int) -> str:
    if value is None or value == "":
        return str(fallback)
    if isinstance(value, dict | list):
        raise InputError(f"an id must be a string or a number, got {value!r}")
    return str(value)


@dataclass
class JsonlInput(Input):
    """JSON Lines: ``text_field`` holds the text, ``id_field`` the id; the rest is ``meta``."""

    path: Path
    text_field: str = "text"
    id_field: str = "id"

    def settings(self) -> dict[str, Any]:
        return {"text_field": self.text_field, "id_field": self.id_field}

    def ids(self) -> Iterator[str]:
        for number, record in read_records(self.path):
            try:
                yield _id_of(record.get(self.id_field), number)
            except InputError as exc:
                raise InputError(f"{self.path}:{number}: {exc}") from None

    def documents(self, skip: Container[str] = frozenset()) -> Iterator[Document]:
        for number, record in read_records(self.path):
            doc_id = _id_of(record.get(self.id_field), number)
            if doc_id in skip:
                continue
            meta = {k: v for k, v in record.items() if k not in (self.id_field, self.text_field)}
            text = record.get(self.text_field)
            if not isinstance(text, str):
                problem = "missing" if text is None else f"not a string ({type(text).__name__})"
                yield Document(doc_id, "", meta, f"line {number}: field {self.text_field!r} is {problem}")
            else:
                yield Document(doc_id, text, meta)


@dataclass
class CsvInput(Input):
    """A CSV (or, for ``.tsv``, tab-separated) file with a header row."""

    path: Path
    text_column: str = "text"
    id_column: str | None = None

    def settings(self) -> dict[str, Any]:
        return {"text_column": self.text_column, "id_column": self.id_column}

    def _rows(self) -> Iterator[tuple[int, str | None, dict[str, str]]]:
        """``(row number, id column, row)`` for each data row; InputError names a missing column."""
        # Article-sized cells exceed csv's 128 KiB default; the limit is process-wide, so only ever raise it.
        csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
        delimiter = "\t" if ".tsv" in self.path.name.lower() else ","
        try:
            with _open_text(self.path) as handle:
                reader = csv.DictReader(handle, delimiter=delimiter)
                columns = reader.fieldnames or []
                if self.text_column not in columns:
                    raise InputError(
                        f"{self.path}: no column {self.text_column!r} (columns: {', '.join(columns) or 'none'}); "
                        "name the text column with --text-column"
                    )
                id_column = self.id_column or ("id" if "id" in columns else None)
                if id_column is not None and id_column not in columns:
                    raise InputError(f"{self.path}: no column {id_column!r} (columns: {', '.join(columns)})")
                for number, row in enumerate(reader, 1):
                    yield number, id_column, row
        except UnicodeDecodeError:
            raise InputError(f"{self.path}: not UTF-8 text") from None
        except csv.Error as exc:
            raise InputError(f"{self.path}: not readable as CSV: {exc}") from None

    def ids(self) -> Iterator[str]:
        for number, id_column, row in self._rows():
            yield _id_of(row.get(id_column) if id_column else None, number)

    def documents(self, skip: Container[str] = frozenset()) -> Iterator[Document]:
        for number, id_column, row in self._rows():
            doc_id = _id_of(row.get(id_column) if id_column else None, number)
            if doc_id in skip:
                continue
            meta = {k: v for k, v in row.items() if k not in (id_column, self.text_column) and k is not None}
            text = row.get(self.text_column)
            if text is None:  # a short row
                yield Document(doc_id, "", meta, f"row {number} has no {self.text_column!r} cell")
            else:
                yield Document(doc_id, text, meta)


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="")


@dataclass
class FolderInput(Input):
    """Every .txt / .md / .html file below ``path``, in sorted order."""

    path: Path

    def files(self) -> Iterator[Path]:
        """The files to read; a symbolic link is followed only when it stays inside the folder
        (a link to ``/etc/passwd`` in a folder of downloaded pages is not read)."""
        root = self.path.resolve()
        for file in self._visible():
            if file.suffix.lower() not in TEXT_SUFFIXES + HTML_SUFFIXES:
                continue
            if not file.resolve().is_relative_to(root):
                continue
            yield file

    def _visible(self) -> Iterator[Path]:
        """Every file below the folder, in sorted order, but hidden ones (``.git``, ``.DS_Store``)."""
        for file in sorted(self.path.rglob("*")):
            relative = file.relative_to(self.path)
            if not any(part.startswith(".") for part in relative.parts) and file.is_file():
                yield file

    def ignored(self) -> list[str]:
        """The files not read because of their suffix (a .pdf, a .docx), relative to the folder."""
        readable = TEXT_SUFFIXES + HTML_SUFFIXES
        return [f.relative_to(self.path).as_posix() for f in self._visible() if f.suffix.lower() not in readable]

    def ids(self) -> Iterator[str]:
        has_html = False
        for file in self.files():
            has_html = has_html or file.suffix.lower() in HTML_SUFFIXES
            yield file.relative_to(self.path).as_posix()
        if has_html:
            require_trafilatura()  # before any work starts, not on the first HTML page half-way through

    def documents(self, skip: Container[str] = frozenset()) -> Iterator[Document]:
        for file in self.files():
            doc_id = file.relative_to(self.path).as_posix()
            if doc_id in skip:  # before reading: resuming a large folder of HTML pages stays cheap
                continue
            meta: dict[str, Any] = {"path": doc_id}
            try:
                raw = file.read_bytes()
            except OSError as exc:
                yield Document(doc_id, "", meta, f"cannot read {doc_id}: {exc.strerror or exc}")
                continue
            if file.suffix.lower() in HTML_SUFFIXES:
                text, title, date = html_page(raw)
                if title:
                    meta["title"] = title
                if date:
                    meta["date"] = date  # the page's publication date: the text is checked as of then
                if not text:
                    yield Document(doc_id, "", meta, f"no main text found in the HTML page {doc_id}")
                    continue
                yield Document(doc_id, text, meta)
                continue
            try:
                yield Document(doc_id, raw.decode("utf-8"), meta)
            except UnicodeDecodeError:
                yield Document(doc_id, "", meta, f"{doc_id} is not UTF-8 text")
