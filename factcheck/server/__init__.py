"""The HTTP server for browser extensions (``factcheck serve``; needs the ``server`` extra).

- :mod:`factcheck.server.app`: the FastAPI application (:func:`~factcheck.server.app.create_app`);
- :mod:`factcheck.server.stream`: a check as events under a deadline;
- :mod:`factcheck.server.auth`: API keys and rate limits;
- :mod:`factcheck.server.settings`: keys, origins and limits from the environment and flags;
- :mod:`factcheck.server.runner`: running it with uvicorn, in the foreground or in a thread;
- :mod:`factcheck.server.cli`: the ``serve`` command.

Nothing here is imported by ``import factcheck``: the command imports FastAPI only when it runs.
"""
