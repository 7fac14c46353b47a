"""Deliberation: after the first round of judgments, the agents settle a claim their answers left open.

Three source papers say pooling is not where a multi-agent checker stops (``../shared/papers``): LASE's
leader answers alone and is challenged and supported only when unsure (003); ECMR's controller reads the
state of the debate (concentration, independent support, contradiction, budget) and picks the next action
(001); PAMAS's decision-maker rules with every perspective in view (000). A
:class:`factcheck.plugin.Deliberator` is that policy: a plugin registered through ``register_deliberators``.
Its ``gate`` and ``next_action`` are pure functions of a :class:`factcheck.plugin.DeliberationState`, so a
recorded check can be replayed and a gate fitted without running anything; the pipeline's
:class:`~factcheck.deliberation.floor.Floor` carries each action out, records it and charges it.
See docs/deliberation.md.
"""
