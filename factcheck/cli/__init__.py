"""The ``factcheck`` command line: the group, its entry point, and the built-in commands' registration.

Built-in commands register through the ``register_commands`` hook like any
plugin's; this package's own (``check``, ``extract``, ``score``, ``eval``, ``calibrate``, ``plugins``,
``memory``) live in modules of their own, and the flags that every checking command shares in
:mod:`factcheck.cli.flags`. Errors raised on purpose (:class:`FactcheckError`)
print as one line and exit 1; ``FACTCHECK_RAISE_ERRORS=1`` shows the traceback
instead. Click's usage errors exit 2, as does a profile none of whose agents has its API key
(:mod:`factcheck.cli.keys`); ``check --fail-on`` adds 3, 4 and 5
(:data:`factcheck.cli.check.FAIL_STATUS`); Ctrl-C exits 130 in every command, with one line saying
what was kept (:mod:`factcheck.cli.interrupted`). Warnings of factcheck's own (a plugin
refused) print as one ``warning: ...`` line.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable
from typing import Any

import click

from factcheck.cli.interrupted import interrupted, is_interrupt
from factcheck.errors import FactcheckError
from factcheck.plugin import hookimpl
from factcheck.switches import raise_errors_requested, switched


class SuggestingGroup(click.Group):
    """A group that answers a mistyped command with the closest ones: "No such command 'chek'. Did you mean
    'check'?" (exit 2, as every usage error)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=2, cutoff=0.6)
            if close:
                ctx.fail(f"No such command {name!r}. Did you mean {' or '.join(repr(c) for c in close)}?")
        return super().resolve_command(ctx, args)


class FactcheckGroup(SuggestingGroup):
    """A group whose commands come from the plugin registry, and that prints domain errors as one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from factcheck.registry import get_commands

        return sorted(get_commands())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from factcheck.registry import get_commands

        return get_commands().get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        with switched():  # the CLI's front door: FACTCHECK_RAISE_ERRORS and the like, read for this command
            try:
                return super().invoke(ctx)
            except FactcheckError as exc:
                if raise_errors_requested():
                    raise
                raise click.ClickException(str(exc)) from None
            except (KeyboardInterrupt, click.exceptions.Abort) as exc:
                if not is_interrupt(exc):  # a question answered "no" (confirm(abort=True)): click's own "Aborted!"
                    raise
                raise interrupted(ctx) from None


@click.group(cls=FactcheckGroup)
@click.version_option(package_name="factcheck-agents")
def cli() -> None:
    """Evidence-based, multi-agent fact-checking."""


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    # Imported here, not above: the command modules import factcheck.cli.flags, hence this package half built.
    from factcheck.cli.calibrate import calibrate
    from factcheck.cli.check import check
    from factcheck.cli.eval import eval_command, import_mafc
    from factcheck.cli.extract import extract
    from factcheck.cli.memory import feedback, memory
    from factcheck.cli.plugins import plugins
    from factcheck.cli.score import score

    for command in (check, extract, score, eval_command, import_mafc, calibrate, plugins, feedback, memory):
        register(command)


ShowWarning = Callable[..., None]  # the signature of warnings.showwarning


def one_line_warnings(python_way: ShowWarning) -> ShowWarning:
    """A ``warnings.showwarning`` that shows factcheck's own warnings (a refused plugin, an unwritable
    cache) as one ``warning: ...`` line on standard error, with no source path, and any other warning
    ``python_way``."""
    from factcheck.registry import PluginWarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        text = str(message)
        if issubclass(category, PluginWarning) or text.startswith("factcheck: "):
            click.echo(f"warning: {text.removeprefix('factcheck: ')}", err=True)
        else:
            python_way(message, category, filename, lineno, file, line)

    return show


def main() -> None:
    """Console-script entry point."""
    warnings.showwarning = one_line_warnings(warnings.showwarning)
    cli()
