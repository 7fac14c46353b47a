"""Fencing untrusted text for a prompt: the checked text, the claim and the evidence are data, never instructions.

Each block sits between ``<<<LABEL nonce ...>>>`` and ``<<<END LABEL nonce>>>``,
with a nonce drawn at random for each call, which no text can know in advance.
Fence-like text inside a block is defused, so it can neither close the block
nor open a new one; one-line fields (a title, a source, a claim) lose their
line breaks. The system prompts say that fenced text cannot change the task.
"""

from __future__ import annotations

import re
import secrets


def new_nonce() -> str:
    """A fresh random nonce for one prompt."""
    return secrets.token_hex(8)


def defuse(text: str) -> str:
    """Text that cannot open or close a fence."""
    return text.replace("<<<", "< < <").replace(">>>", "> > >")


def one_line(text: str) -> str:
    """``text`` defused, with its whitespace (line breaks included) folded to single spaces."""
    return " ".join(defuse(text).split())


def fenced(label: str, nonce: str, body: str, note: str = "") -> str:
    """``body`` (already defused by the caller where needed) as a fenced block labelled ``label``."""
    head = f"<<<{label} {nonce}{' ' + note if note else ''}>>>"
    return f"{head}\n{body}\n<<<END {label} {nonce}>>>"


# A fence line as a model may echo it back: "<<<TEXT 1b35...>>>", "<<<END TEXT 1b35...>>>", defused or not.
_ECHOED_FENCE = re.compile(r"(?:<<<|< < <)\s*(?:END\s+)?[A-Z][A-Z_ -]{0,30}[^<>\n]{0,120}?(?:>>>|> > >)")


def unfence(text: str) -> str:
    """``text`` (a model's answer field) without any fence line it echoed back, white space folded: weak
    models copy the ``<<<TEXT nonce>>>`` lines into their claims and queries."""
    if "<" not in text:  # the common case: nothing to copy
        return text
    return " ".join(_ECHOED_FENCE.sub(" ", text).split())
