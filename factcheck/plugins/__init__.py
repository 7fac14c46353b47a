"""The plugin system: pluggy hooks, entry-point loading and the component registry."""

from factcheck.plugins.hookspecs import hookimpl
from factcheck.plugins.manager import (
    PluginWarning,
    Registry,
    get_commands,
    get_extractors,
    get_label_rules,
    get_plugin_manager,
    get_registry,
    get_scorers,
    get_sources,
    get_verifiers,
    list_plugins,
    reset_plugins,
)

__all__ = [
    "PluginWarning",
    "Registry",
    "get_commands",
    "get_extractors",
    "get_label_rules",
    "get_plugin_manager",
    "get_registry",
    "get_scorers",
    "get_sources",
    "get_verifiers",
    "hookimpl",
    "list_plugins",
    "reset_plugins",
]
