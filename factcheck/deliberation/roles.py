"""The deliberation roles played offline: :class:`VerifierRoles` (the interface: ``floor.Roles``).

Offline there is no model to argue with, so each role is what retrieval and a verifier can do:

- the devil's advocate searches for the claim's contrast (:func:`~factcheck.deliberation.queries.contrast`)
  in every asked agent's source, deeper than the first round and past what was seen, and presents the
  passage its verifier reads as the strongest counter-evidence; it never gives a verdict;
- the collaborator's source (the next most trusted agent's) retrieves what the leader has not seen, and
  the expert searches every source for the claim's key terms: their passages are the hints (offline both
  come down to "more evidence");
- the leader revises by re-reading the pooled evidence with its verifier; the decision-maker does the same
  over every agent's evidence and every critique, under the name ``arbiter``.

The model-backed roles (``roles = "llm"``) live in :mod:`factcheck.deliberation.llm_roles`.
"""

from __future__ import annotations

from factcheck.deliberation.floor import Floor, Roles
from factcheck.deliberation.queries import contrast, key_terms
from factcheck.plugin import Action
from factcheck.plugin.deliberator import ARBITER, step_of
from factcheck.types import Critique, DeliberationStep


class VerifierRoles(Roles):
    """The roles played by retrieval and the agents' own verifiers (see the module docstring). Their rulings
    re-read with the same verifiers, so one overturns a verdict only on a passage the first round did not read."""

    same_reader = True

    async def challenge(self, floor: Floor, action: Action) -> DeliberationStep:
        state = floor.state()
        queries = contrast(floor.claim.text, state.leading)
        found = await floor.retrieve_each(floor.sources_asked(), queries, deeper=True)
        inputs = (f"judgment:{floor.leader}",)
        if not found:
            critique = Critique("no counter-evidence found beyond what the agents read", query=queries[0])
            return step_of(action, floor.leader_verifier(), critique=critique, query=" | ".join(queries), inputs=inputs)
        reading = await floor.read(floor.leader, found)
        against = reading.factuality is not None and reading.factuality != state.leading
        if against:
            critique = Critique(
                f"counter-evidence: {reading.rationale}",
                counter=(reading.evidence or tuple(found))[:1],
                query=queries[0],
            )
        else:
            critique = Critique(
                f"the contrast search found nothing against the leading verdict ({len(found)} passages read)",
                query=queries[0],
            )
        return step_of(
            action, floor.leader_verifier(), critique=critique, query=" | ".join(queries), evidence=found, inputs=inputs
        )

    async def support(self, floor: Floor, action: Action) -> DeliberationStep:
        if action.role == "collaborator" and (helper := floor.collaborator()) is not None:
            queries = floor.claim.search_queries()
            found = await floor.retrieve(helper, queries, deeper=False)
            actor = helper
        else:
            queries = (key_terms(floor.claim.text),)
            found = await floor.retrieve_each(floor.sources_asked(every=True), queries, deeper=True)
            actor = "every source"
        hints = tuple(f"{e.title or e.source}: {e.text[:200]}" for e in found[:3])
        critique = Critique("", hints=hints or ("nothing the leader has not read",))
        return step_of(action, actor, critique=critique, query=" | ".join(queries), evidence=found)

    async def revise(self, floor: Floor, action: Action) -> DeliberationStep:
        pooled = floor.pooled()
        judgment = await floor.rejudge(floor.leader, pooled, as_agent=floor.leader)
        return step_of(
            action,
            floor.leader,
            judgment=judgment,
            inputs=floor.ids(pooled),
            relied_on=floor.ids(judgment.evidence[:1]),
            replaces=floor.leader,
        )

    async def arbitrate(self, floor: Floor, action: Action) -> DeliberationStep:
        pooled = floor.pooled(every=True)
        judgment = await floor.rejudge(floor.leader, pooled, as_agent=ARBITER)
        inputs = tuple(f"judgment:{name}" for name in floor.held) + floor.critique_ids() + floor.ids(pooled)
        return step_of(
            action,
            floor.leader_verifier(),
            judgment=judgment,
            inputs=inputs,
            relied_on=floor.ids(judgment.evidence[:1]),
        )
