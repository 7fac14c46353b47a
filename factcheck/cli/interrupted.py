"""Ctrl-C in any command: exit status 130 and one line saying what was kept.

The ``factcheck`` group catches the ``KeyboardInterrupt`` (:class:`factcheck.cli.FactcheckGroup`), so
every command, a plugin's too, ends the same way: ``interrupted: nothing was written`` unless the
command said what a stop at that point leaves behind with :func:`keeps` (``batch``: how many
documents its output holds; ``check``: that nothing was printed and what the cache stored).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a process Ctrl-C stopped
_KEPT = "factcheck.interrupted.kept"  # the click context's meta key (meta is shared by a command and its group)


def keeps(what: str | Callable[[], str]) -> None:
    """Say what Ctrl-C from now on leaves behind (``"12 of 40 documents in out.jsonl"``), or a function
    that says it when the interrupt comes. Outside a click command it does nothing."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_KEPT] = what


def interrupted(ctx: click.Context) -> click.exceptions.Exit:
    """Print the one ``interrupted: ...`` line for ``ctx``'s command; the exit (status 130) to raise."""
    what = ctx.meta.get(_KEPT, "nothing was written")
    try:
        said = what() if callable(what) else what
    except Exception as exc:  # counting what was kept must not hide that the command was interrupted
        said = f"what was kept is unknown ({type(exc).__name__}: {exc})"
    if sys.stderr.isatty():  # the terminal's "^C" (after a question, say) ends no line
        click.echo(err=True)
    click.echo(f"interrupted: {said}", err=True)
    return click.exceptions.Exit(EXIT_INTERRUPTED)


def is_interrupt(exc: BaseException) -> bool:
    """``exc`` is Ctrl-C: a ``KeyboardInterrupt``, or the ``Abort`` click raises for one at a prompt."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, click.exceptions.Abort) and isinstance(exc.__context__, KeyboardInterrupt)
