"""Plain text out of HTML: search snippets, lead extracts and rendered wiki sections.

Text from a search API or a wiki is untrusted markup (``<b>``, ``<span class="searchmatch">``,
entities, now and then a script): no tag may reach the evidence or the verifier's prompt.
Two readers of the standard library's :class:`html.parser.HTMLParser`: :func:`strip_html` keeps
all the text of a fragment; :func:`paragraphs_text` keeps the paragraphs of a rendered page.
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
    footnote markers, edit links, styles and hidden notes left out."""

    _SKIPPED = frozenset({"table", "style", "script", "sup", "figure", "math"})
    _VOID = frozenset({"br", "img", "hr", "wbr", "input", "meta", "link", "source", "track", "area", "col", "embed"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[list[str]] = []
        self.skipping: list[str] = []  # the open tags whose content is left out
        self.in_paragraph = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._VOID:
            return
        classes = dict(attrs).get("class") or ""
        if (
            self.skipping
            or tag in self._SKIPPED
            or "mw-editsection" in classes
            or "display:none" in (dict(attrs).get("style") or "").replace(" ", "")
        ):
            self.skipping.append(tag)
        elif tag == "p":
            self.in_paragraph += 1
            self.paragraphs.append([])

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
        elif tag == "p" and self.in_paragraph:
            self.in_paragraph -= 1

    def handle_data(self, data: str) -> None:
        if self.in_paragraph and not self.skipping:
            self.paragraphs[-1].append(data)


def paragraphs_text(html: str) -> str:
    """The text of the ``<p>`` paragraphs of a rendered page, one line per paragraph (tables, footnote
    markers, edit links, styles and hidden notes left out)."""
    parser = _Paragraphs()
    parser.feed(html)
    parser.close()
    paragraphs = (" ".join("".join(parts).split()) for parts in parser.paragraphs)
    return "\n".join(p for p in paragraphs if p)
