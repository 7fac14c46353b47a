"""Helpers for testing factcheck plugins (and factcheck itself).

- :class:`StaticSource` returns the same passages for every claim.
- :class:`ScriptedVerifier` answers from a script: the first rule whose text
  occurs in the claim decides, else the default.
- :func:`registered` registers plugin objects for the duration of a ``with``
  block, so a test sees them through ``get_sources()`` and the CLI.
- :func:`list_plugins` (what ``factcheck plugins`` prints), :func:`reset_plugins`
  (``reload=True`` reads the installed entry points afresh) and :class:`PluginWarning`
  (a plugin skipped or a registration refused) check that an installed plugin is found.

The fakes of services live in submodules: :mod:`factcheck.testing.http` (the one
fake HTTP server: scripted answers on 127.0.0.1) and :mod:`factcheck.testing.llm`
(a fake OpenAI-compatible model served by it).

Example::

    from factcheck import Agent, build_checker
    from factcheck.testing import ScriptedVerifier, StaticSource

    checker = build_checker(agents=[Agent("a", StaticSource(), ScriptedVerifier(rules={"Paris": (True, 0.9)}))])
    assert checker.check("The Eiffel Tower is in Paris.").label == "TRUE"
"""

from factcheck.registry import PluginWarning, list_plugins, reset_plugins
from factcheck.testing.components import ScriptedVerifier, StaticSource
from factcheck.testing.plugins import registered

__all__ = ["PluginWarning", "ScriptedVerifier", "StaticSource", "list_plugins", "registered", "reset_plugins"]
