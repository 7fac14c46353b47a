"""The check: extract claims -> ask the agents (retrieve, then judge) -> deliberate -> score -> label.

:class:`Checker` is its public face (:mod:`~factcheck.pipeline.checker`). One implementation of a check,
:meth:`Checker.stream`, yields its steps (:mod:`factcheck.events`); ``acheck`` and the server consume it.
The Checker holds resolved components only: :func:`factcheck.build_checker` makes one from settings.

Each step has a module of its own, in the order a check takes them (docs/architecture.md, "One check,
start to end"):

- :mod:`~factcheck.pipeline.run`: one check from text to verdict: its state, its deadline, its events;
- :mod:`~factcheck.pipeline.extract`: the claims of the text, with the fallback extractor and the caps;
- :mod:`~factcheck.pipeline.prepare`: the agents' components prepared once, and the agents out of the check;
- :mod:`~factcheck.pipeline.ask`: the agents the routing policy asks on a claim, each retrieving then judging;
- :mod:`~factcheck.pipeline.deliberate`: the floor that settles a claim the first round left open;
- :mod:`~factcheck.pipeline.verdict`: a claim's verdict and the text's, composed from the judgments;
- :mod:`~factcheck.pipeline.components`: what the steps read of their checker.

Which agents answer a claim is the routing policy's choice (``routing``: every agent by default; see
:mod:`factcheck.routing`). Agents and claims run concurrently under one concurrency limit, each agent
call under a time-out. An agent whose source or verifier fails, or that runs out of time, abstains on
that claim with ``error`` set; the check completes.
"""

from factcheck.pipeline.checker import Checker

__all__ = ["Checker"]
