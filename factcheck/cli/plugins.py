"""``factcheck plugins``: what each installed plugin registered, as JSON."""

from __future__ import annotations

import json

import click


@click.command(short_help="List installed plugins and what each registered, as JSON.")
@click.option("--all", "show_all", is_flag=True, help="Include the built-in plugins.")
def plugins(show_all: bool) -> None:
    """List installed plugins and what each registered, as JSON."""
    from factcheck.registry import list_plugins

    click.echo(json.dumps(list_plugins(include_builtins=show_all), indent=2))
