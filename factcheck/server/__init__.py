"""The HTTP server for browser extensions (``factcheck serve``; needs the ``server`` extra).

- :mod:`factcheck.server.app`: the FastAPI application (:func:`~factcheck.server.app.create_app`) and its routes;
- :mod:`factcheck.server.middleware`: CORS, the key checked before the body, body limits, error answers, scrubbing;
- :mod:`factcheck.server.pool`: the checkers kept, their warm-up, and which components can run;
- :mod:`factcheck.server.stream`: a check as events under a deadline;
- :mod:`factcheck.server.auth`: API keys and rate limits;
- :mod:`factcheck.server.settings`: keys, origins and limits from the environment and flags;
- :mod:`factcheck.server.runner`: running it with uvicorn, in the foreground or in a thread;
- :mod:`factcheck.server.workers`: ``--workers N``, the settings handed to the worker processes;
- :mod:`factcheck.server.cli`: the ``serve`` command.

Nothing here is imported by ``import factcheck``: the command imports FastAPI only when it runs.
"""
