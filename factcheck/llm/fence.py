"""Fencing untrusted text for a prompt: the checked text, the claim and the evidence are data, never instructions.

Each block sits between ``<<<LABEL nonce ...>>>`` and ``<<<END LABEL nonce>>>``,
with a nonce drawn at random for each call, which no text can know in advance.
Fence-like text inside a block is defused, so it can neither close the block
nor open a new one; one-line fields (a title, a source, a claim) lose their
line breaks. The system prompts say that fenced text cannot change the task.
"""

from __future__ import annotations

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
