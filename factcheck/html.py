"""Plain text out of HTML: search snippets, lead extracts and rendered wiki sections.

Text from a search API or a wiki is untrusted markup (``<b>``, ``<span class="searchmatch">``,
entities, now and then a script): no tag may reach the evidence or the verifier's prompt.
Two readers of the standard library's :class:`html.parser.HTMLParser`: :func:`strip_html` keeps
all the text of a fragment; :func:`paragraphs_text` keeps the paragraphs of a rendered page, and
:func:`sectioned_text` its section headings too (as ``== History ==`` lines, the way TextExtracts
writes them in plain text).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# An HTML tag (or comment) in text: "<p>", "</b>", "<br/>", "<!--"; not "x < 5" or "a <= b".
TAG = re.compile(r"<(?:/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?|!--[^>]*)>")


class _TextOnly(HTMLParser):
    """Collects the text of an HTML fragment: tags dropped, entities decoded, scripts and styles skipped."""

    _SKIPPED = frozenset({"script", "style"})
    _BREAKS = frozenset({"br", "p", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self.skipping += 1
        elif tag in self._BREAKS:
            self.parts.append(" ")  # "a<br>b" is two words, not "ab"

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED and self.skipping:
            self.skipping -= 1
        elif tag in self._BREAKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def strip_html(fragment: str) -> str:
    """Plain text of an HTML fragment (a search snippet with ``<span class="searchmatch">`` or ``<b>``):
    tags removed, entities decoded, white space collapsed. Text that only looks like a tag
    ("x < 5") is kept as it is."""
    parser = _TextOnly()
    parser.feed(fragment)
    parser.close()
    return " ".join("".join(parser.parts).split())


def has_tags(text: str) -> bool:
    """Whether ``text`` holds an HTML tag or comment (not merely a "<" as in "x < 5")."""
    return TAG.search(text) is not None


class _Paragraphs(HTMLParser):
    """The paragraphs of a rendered section (``action=parse`` HTML) as plain text: tables (infoboxes),
    footnote markers, edit links, styles, hidden notes and the table of contents left out. With
    ``headings``, the section headings (``<h2>`` to ``<h6>``) are kept too."""

    _SKIPPED = frozenset({"table", "style", "script", "sup", "figure", "math"})
    _VOID = frozenset({"br", "img", "hr", "wbr", "input", "meta", "link", "source", "track", "area", "col", "embed"})
    _HEADINGS = frozenset({"h2", "h3", "h4", "h5", "h6"})

    def __init__(self, headings: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.headings = headings
        self.blocks: list[tuple[int, list[str]]] = []  # (heading level, or 0 for a paragraph; its text)
        self.skipping: list[str] = []  # the open tags whose content is left out
        self.in_paragraph = 0
        self.in_heading: str | None = None  # the open heading tag

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._VOID:
            return
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if (
            self.skipping
            or tag in self._SKIPPED
            or "mw-editsection" in classes
            or "toc" in classes  # the table of contents: its "Contents" heading and the headings listed
            or attributes.get("id") == "toc"
            or "display:none" in (attributes.get("style") or "").replace(" ", "")
        ):
            self.skipping.append(tag)
        elif tag == "p" and self.in_heading is None:
            self.in_paragraph += 1
            self.blocks.append((0, []))
        elif self.headings and tag in self._HEADINGS and not self.in_paragraph:
            self.in_heading = tag
            self.blocks.append((int(tag[1]), []))

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
        elif tag == "p" and self.in_paragraph:
            self.in_paragraph -= 1
        elif tag == self.in_heading:
            self.in_heading = None

    def handle_data(self, data: str) -> None:
        if (self.in_paragraph or self.in_heading) and not self.skipping:
            self.blocks[-1][1].append(data)

    def lines(self) -> list[str]:
        """One line per paragraph, and per heading (``== History ==``); empty ones left out."""
        lines = []
        for level, parts in self.blocks:
            text = " ".join("".join(parts).split())
            if text:
                lines.append(f"{'=' * level} {text} {'=' * level}" if level else text)
        return lines


def paragraphs_text(html: str) -> str:
    """The text of the ``<p>`` paragraphs of a rendered page, one line per paragraph (tables, footnote
    markers, edit links, styles and hidden notes left out)."""
    parser = _Paragraphs()
    parser.feed(html)
    parser.close()
    return "\n".join(parser.lines())


def sectioned_text(html: str) -> str:
    """The paragraphs of a rendered page as :func:`paragraphs_text` gives them, with each section heading
    (``<h2>`` to ``<h6>``) on a line of its own as TextExtracts writes it in plain text: ``== History ==``,
    ``=== Origin ===`` (one ``=`` more per level). The table of contents is left out."""
    parser = _Paragraphs(headings=True)
    parser.feed(html)
    parser.close()
    return "\n".join(parser.lines())
