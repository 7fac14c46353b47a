"""How far each agent can be trusted, learned from labelled, recorded judgments.

``factcheck calibrate`` writes a trust file; the ``pamas`` scorer and trust
routing read it. Per agent it holds the accuracy of its non-abstaining
judgments, its abstention rate, and two weights:

- ``log_odds = log(acc / (1 - acc))`` (Laplace-smoothed accuracy): the optimal
  weight of an independent voter with that accuracy (Nitzan & Paroush, 1982);
  clamped at 0, so an agent worse than chance is ignored rather than inverted;
- ``pamas``: the PAMAS trust update (papers/000, eq. 15), run over the samples
  in order from alpha = 1: ``alpha <- (1 - a) alpha + a (r + acc)``, with ``r``
  1 when the agent was right on the sample and 0 when wrong (no LLM reflection),
  ``acc`` its accuracy so far, and learning rate ``a``.

An agent the file does not know gets weight 1.

Trust that learns from mistakes (PAMAS Algorithm 1, targeted correction): ``learn_trust(...,
update="errors", epochs=N)`` runs eq. 15 over ``N`` passes, but on a sample only when the team got it
wrong. The team is the trust-weighted ``pamas`` vote with the eq. 15 weights learned so far (the
coordinator's confidence memory votes, as in the paper's forward pass). The paper updates "only
agents responsible for erroneous judgments": the team, whose decision was wrong, revises its
confidence in each subordinate. Here that means each agent that gave a verdict on the sample gets
eq. 15 with ``r`` 1 if it was right and 0 if wrong, so the agents that carried the wrong decision
lose weight and those outvoted while right gain it. Abstainers are left alone, since they gave no
judgment to blame. The historical accuracy term counts every sample the forward passes have seen,
not only the errors (the paper's "historical accuracy on validation data"). The counts ``judged``,
``correct`` and ``abstained`` describe the data and are counted once, whatever the passes. The first
pass reads the samples in file order, so one pass of ``update="all"`` is the one-pass fit above;
each later pass reads them in an order shuffled with ``seed``, so a fit is reproducible.
:func:`update_trust_file` applies the same rule online, to one correction at a time.

Besides ``schema`` and ``agents``, a trust file may hold other top-level objects. ``factcheck
calibrate --gate`` adds ``"gate"``: the deliberation gates' fitted thresholds per policy
(:func:`gate_thresholds`). ``factcheck calibrate`` adds ``"team"``: the team's shape and the
recommended agents (:mod:`factcheck.eval.team`, :func:`recommended_agents`). :meth:`Trust.from_dict`
reads only ``agents``, so a reader of trust alone ignores them. :meth:`Trust.save` keeps them, and
every write replaces the file atomically.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError, InputError
from factcheck.types import Judgment, TextVerdict
from factcheck.vote import pamas_score, parse_groups

TRUST_SCHEMA = "factcheck-trust/1"
WEIGHTINGS = ("log_odds", "pamas")
GATE = "gate"  # the optional key of the fitted deliberation gate thresholds (factcheck calibrate --gate)
TEAM = "team"  # the optional key of the team's shape and recommended agents (factcheck calibrate)
UPDATES = ("all", "errors")  # eq. 15 on every sample, or only where the team was wrong (targeted correction)
NEW_FILE_MODE = 0o644  # a trust file written fresh; a replaced one keeps its mode


@dataclass(frozen=True)
class AgentTrust:
    """What the labelled data says about one agent."""

    judged: int
    correct: int
    abstained: int
    pamas: float

    @property
    def accuracy(self) -> float:
        """Laplace-smoothed accuracy of the agent's verdicts: (correct + 1) / (judged + 2)."""
        return (self.correct + 1) / (self.judged + 2)

    @property
    def abstention(self) -> float:
        """Share of claims on which the agent gave no verdict."""
        total = self.judged + self.abstained
        return self.abstained / total if total else 0.0

    @property
    def log_odds(self) -> float:
        """``max(0, log(acc / (1 - acc)))``."""
        return max(0.0, math.log(self.accuracy / (1 - self.accuracy)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "judged": self.judged,
            "correct": self.correct,
            "abstained": self.abstained,
            "accuracy": round(self.accuracy, 6),
            "abstention": round(self.abstention, 6),
            "log_odds": round(self.log_odds, 6),
            "pamas": self.pamas,
        }


@dataclass(frozen=True)
class Trust:
    """Trust of every agent seen in the labelled data."""

    agents: Mapping[str, AgentTrust] = field(default_factory=dict)

    def weight(self, agent: str, weighting: str = "log_odds") -> float:
        """The agent's weight under ``weighting`` (``log_odds`` or ``pamas``); 1 for an unknown agent."""
        if weighting not in WEIGHTINGS:
            raise ConfigError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
        known = self.agents.get(agent)
        if known is None:
            return 1.0
        return known.log_odds if weighting == "log_odds" else known.pamas

    def to_dict(self) -> dict[str, Any]:
        return {"schema": TRUST_SCHEMA, "agents": {name: t.to_dict() for name, t in self.agents.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trust:
        if data.get("schema") != TRUST_SCHEMA:
            raise InputError(f"not a trust file (schema {data.get('schema')!r}, expected {TRUST_SCHEMA!r})")
        try:
            agents = {
                str(name): AgentTrust(int(t["judged"]), int(t["correct"]), int(t["abstained"]), float(t["pamas"]))
                for name, t in dict(data["agents"]).items()
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed trust file: {exc}") from None
        return cls(agents)

    def save(self, path: str | Path, extra: Mapping[str, Any] | None = None) -> None:
        """Write the trust file atomically. Other top-level objects the file at ``path`` already holds
        (``"gate"``, ``"team"``, or anything another tool put there) are kept, so a rewrite of the agents
        does not silently drop a fit made by another command. ``extra`` adds or replaces objects, and a
        ``None`` value removes one. ``schema`` and ``agents`` are this trust's own and cannot be given."""
        reserved = {"schema", "agents"} & set(extra or {})
        if reserved:
            raise ValueError(f"extra cannot set {', '.join(sorted(reserved))}: they are the trust's own")
        file = Path(path)
        data = self.to_dict()
        for key, value in {**_other_objects(file), **(extra or {})}.items():
            if value is not None:
                data[key] = value
        write_json_atomic(file, data)

    @classmethod
    def load(cls, path: str | Path) -> Trust:
        try:
            text = Path(path).read_text(encoding="utf-8")
            if not text.strip():
                raise InputError(f"{path} is empty: write a trust file with `factcheck calibrate`")
            return cls.from_dict(json.loads(text))
        except FileNotFoundError:
            raise ConfigError(f"trust file not found: {path}") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON ({exc.msg})") from None


def write_json_atomic(path: str | Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file in the same folder and ``os.replace``.

    A reader (the ``pamas`` scorer re-reads the file when it changes) sees the old file or the new one,
    never half of one. A crash leaves no temporary file behind. The replaced file keeps its mode; a new
    one gets ``NEW_FILE_MODE``, since :mod:`tempfile` would make it private. The folder is created when
    missing."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = file.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    fd, temporary = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, file)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _other_objects(file: Path) -> dict[str, Any]:
    """The top-level objects of the trust file at ``file`` besides ``schema`` and ``agents``; none when
    there is no file, or it is not a readable trust file (then it is overwritten, as it always was)."""
    try:
        data = _trust_file(file)
    except (ConfigError, InputError, OSError, UnicodeDecodeError):
        return {}
    return {k: v for k, v in data.items() if k not in ("schema", "agents")}


def _trust_file(path: str | Path) -> dict[str, Any]:
    """The whole trust file at ``path`` as JSON (a clear error when it is missing or is not one)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"trust file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("schema") != TRUST_SCHEMA:
        raise InputError(f"{path}: not a trust file (expected schema {TRUST_SCHEMA!r})")
    return data


def gate_thresholds(path: str | Path) -> dict[str, dict[str, float]]:
    """The deliberation gate thresholds ``factcheck calibrate --gate`` fitted, as each policy's options by
    policy name (``{"lase": {"tau_conf": 0.86}, "ecmr": {"tau_confidence": 0.71}}``), for
    ``policy.configure(**thresholds[policy.name])``; empty when the trust file has no ``"gate"`` object."""
    gate = _trust_file(path).get(GATE)
    if gate is None:
        return {}
    try:
        return {
            str(name): {str(k): float(v) for k, v in dict(fit["options"]).items()}
            for name, fit in dict(gate["policies"]).items()
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: malformed gate object: {exc}") from None


def recommended_agents(path: str | Path) -> tuple[str, ...]:
    """The recommended agent set in routing order (most trusted first), from the trust file's ``"team"``
    object that ``factcheck calibrate`` writes (:class:`factcheck.eval.team.TeamShape`): the agents its
    topology adaptation keeps (PAMAS eq. 12-13), for ``--agents recommended``."""
    team = _trust_file(path).get(TEAM)
    if team is None:
        raise ConfigError(
            f"{path} has no recommended team: run `factcheck calibrate JUDGMENTS.jsonl --out {path}` "
            "on labelled recorded checks to write one"
        )
    recommended = team.get("recommended") if isinstance(team, dict) else None
    if not isinstance(recommended, list) or not recommended or not all(isinstance(a, str) for a in recommended):
        raise InputError(f"{path}: malformed team object: 'recommended' must be a non-empty list of agent names")
    return tuple(recommended)


def claim_cases(records: Sequence[Mapping[str, Any]]) -> list[tuple[int, tuple[Judgment, ...], bool]]:
    """``(record index, judgments, claim is TRUE)`` for every claim with a TRUE / FALSE gold label.

    A claim's gold is its own ``gold`` field, else (for a one-claim text) the text's ``gold``.
    """
    cases = []
    for index, record in enumerate(records):
        verdict = TextVerdict.from_dict(record)
        raw_claims = record.get("claims") or []
        for raw, claim in zip(raw_claims, verdict.claims, strict=True):
            gold = raw.get("gold") or (record.get("gold") if len(raw_claims) == 1 else None)
            if gold in ("TRUE", "FALSE"):
                cases.append((index, claim.judgments, gold == "TRUE"))
    return cases


def fold_of_records(n: int, folds: int, seed: int = 0) -> list[int]:
    """The cross-validation fold of each of ``n`` records: shuffled with ``seed``, then dealt round-robin."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    fold = [0] * n
    for position, record in enumerate(order):
        fold[record] = position % folds
    return fold


Case = tuple[int, tuple[Judgment, ...], bool]  # (record index, judgments, claim is TRUE): claim_cases' rows


@dataclass(frozen=True)
class TrustFit:
    """A trust fit and what its passes did: per pass, how many labelled claims the team (the ``pamas``
    vote with the eq. 15 weights as they stood) got wrong, and how many eq. 15 updates were made."""

    trust: Trust
    claims: int
    update: str
    errors: tuple[int, ...]
    updates: tuple[int, ...]


def team_right(votes: Sequence[Judgment], alpha: Mapping[str, float], truth: bool, groups: str = "") -> bool:
    """Whether the trust-weighted ``pamas`` vote (weights ``alpha``, 1 for an agent it lacks; scored as the
    ``pamas`` scorer scores, TRUE above 0.5) gets the claim right; ``votes`` are non-abstaining."""
    return (pamas_score(votes, alpha, parse_groups(groups), False) > 0.5) == truth


def epoch_order(n: int, epoch: int, seed: int = 0) -> list[int]:
    """The order a pass reads ``n`` samples in: the first (``epoch`` 0) in file order, so that one pass is
    the one-pass fit; each later one shuffled, from ``seed`` and the pass, so that fits are reproducible."""
    order = list(range(n))
    if epoch:
        random.Random(f"{seed}/{epoch}").shuffle(order)
    return order


def _check_learning(epochs: int, update: str) -> None:
    if update not in UPDATES:
        raise ConfigError(f"trust update must be one of {', '.join(UPDATES)}, got {update!r}")
    if epochs < 1:
        raise ConfigError(f"epochs must be at least 1, got {epochs}")


def _eq15(alpha: float, right: bool, correct: int, judged: int, rate: float) -> float:
    """PAMAS eq. 15 with the reflection term ``r`` 1 if right else 0 and the historical accuracy term the
    Laplace-smoothed ``(correct + 1) / (judged + 2)`` (this sample counted)."""
    return (1 - rate) * alpha + rate * (float(right) + (correct + 1) / (judged + 2))


def fit_trust(
    records: Sequence[Mapping[str, Any]],
    *,
    rate: float = 0.1,
    epochs: int = 1,
    update: str = "all",
    seed: int = 0,
    groups: str = "",
) -> TrustFit:
    """Trust learned from labelled, recorded checks, with what each pass did (the module docstring has
    the rules). ``update="all"`` runs eq. 15 on every sample; ``"errors"`` only on those the team got
    wrong. ``groups`` are the team vote's ``pamas`` coordinator groups."""
    _check_learning(epochs, update)
    cases = claim_cases(records)
    counts: dict[str, list[int]] = {}  # agent -> [judged, correct, abstained], the data's, counted once
    for _, judgments, truth in cases:
        for j in judgments:
            row = counts.setdefault(j.agent, [0, 0, 0])
            if j.factuality is None:
                row[2] += 1
            else:
                row[0] += 1
                row[1] += j.factuality == truth
    alpha: dict[str, float] = {}
    seen: dict[str, list[int]] = {}  # agent -> [judged, correct] over every sample the passes have read
    errors: list[int] = []
    updates: list[int] = []
    for epoch in range(epochs):
        wrong = updated = 0
        for position in epoch_order(len(cases), epoch, seed):
            _, judgments, truth = cases[position]
            votes = [j for j in judgments if j.factuality is not None]
            if not votes:
                continue
            team_wrong = not team_right(votes, alpha, truth, groups)
            wrong += team_wrong
            for j in votes:
                right = j.factuality == truth
                history = seen.setdefault(j.agent, [0, 0])
                history[0] += 1
                history[1] += right
                if update == "all" or team_wrong:
                    alpha[j.agent] = _eq15(alpha.get(j.agent, 1.0), right, history[1], history[0], rate)
                    updated += 1
        errors.append(wrong)
        updates.append(updated)
    trust = Trust({a: AgentTrust(c[0], c[1], c[2], alpha.get(a, 1.0)) for a, c in counts.items()})
    return TrustFit(trust, len(cases), update, tuple(errors), tuple(updates))


def learn_trust(
    records: Sequence[Mapping[str, Any]],
    *,
    rate: float = 0.1,
    epochs: int = 1,
    update: str = "all",
    seed: int = 0,
    groups: str = "",
) -> Trust:
    """Trust learned from labelled, recorded checks (the eval harness's ``judgments.jsonl``). By default
    one pass of eq. 15 over every sample; ``update="errors"`` and ``epochs`` run PAMAS's targeted
    correction instead (:func:`fit_trust`)."""
    return fit_trust(records, rate=rate, epochs=epochs, update=update, seed=seed, groups=groups).trust


def _truth(value: bool | str) -> bool:
    if isinstance(value, bool):
        return value
    label = str(value).strip().upper()
    if label not in ("TRUE", "FALSE"):
        raise InputError(f"a correction's true label must be TRUE or FALSE, got {value!r}")
    return label == "TRUE"


@dataclass(frozen=True)
class TrustUpdate:
    """What one correction did to a trust file: the trust written, whether the team's vote had been
    right (``None``: no agent gave a verdict), and the agents whose eq. 15 weight changed."""

    trust: Trust
    team_right: bool | None
    updated: tuple[str, ...]


def correct_trust(
    trust: Trust, judgments: Iterable[Judgment], truth: bool | str, *, rate: float = 0.1, groups: str = ""
) -> TrustUpdate:
    """``trust`` after one labelled claim, by the errors-only rule of :func:`fit_trust`: the claim is
    counted in every agent's ``judged`` / ``correct`` / ``abstained``, and only when the team's vote
    (the ``pamas`` vote with the eq. 15 weights) was wrong is each voting agent's weight moved by eq. 15."""
    right_label = _truth(truth)
    judgments = tuple(judgments)
    votes = [j for j in judgments if j.factuality is not None]
    team = team_right(votes, {a: t.pamas for a, t in trust.agents.items()}, right_label, groups) if votes else None
    agents = dict(trust.agents)
    updated = []
    for j in judgments:
        old = agents.get(j.agent, AgentTrust(0, 0, 0, 1.0))
        if j.factuality is None:
            agents[j.agent] = AgentTrust(old.judged, old.correct, old.abstained + 1, old.pamas)
            continue
        right = j.factuality == right_label
        judged, correct = old.judged + 1, old.correct + right
        alpha = old.pamas
        if team is False:
            alpha = _eq15(alpha, right, correct, judged, rate)
            updated.append(j.agent)
        agents[j.agent] = AgentTrust(judged, correct, old.abstained, alpha)
    return TrustUpdate(Trust(agents), team, tuple(updated))


def update_trust_file(
    path: str | Path, judgments: Iterable[Judgment], truth: bool | str, *, rate: float = 0.1, groups: str = ""
) -> TrustUpdate:
    """Learn from one correction online: the judgments a claim got and its true label (``True`` /
    ``False``, or ``"TRUE"`` / ``"FALSE"``).

    The rule is :func:`correct_trust`'s, the errors-only rule of ``factcheck calibrate --update
    errors``. The claim always counts in the agents' accuracy. The eq. 15 weights (``pamas``) move only
    when the trust-weighted team vote got the claim wrong: then each voting agent's weight moves, up if
    it was right, down if it was wrong. A claim the team already gets right teaches nothing new.
    ``rate`` is eq. 15's learning rate and ``groups`` the vote's ``pamas`` coordinator groups.

    The file is created when missing. Its other objects (``"gate"``, ``"team"``) are kept. The new file
    replaces the old one atomically, so a reader or a crash never sees half a file, and the read, change
    and replace hold a lock on a sidecar file (:func:`locked`), so two processes correcting at once lose
    neither update.
    """
    file = Path(path)
    with locked(file):
        trust = Trust.load(file) if file.exists() else Trust()
        correction = correct_trust(trust, judgments, truth, rate=rate, groups=groups)
        correction.trust.save(file)
    return correction


@contextlib.contextmanager
def locked(file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``file``'s sidecar (``trust.json.lock``) while it is read, changed and
    replaced, so that two processes (``factcheck serve --workers N``) updating it at once lose neither
    update. Where the platform has no ``fcntl`` (Windows), only the atomic replace protects the file."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on the platforms CI runs
        yield
        return
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file.with_name(file.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
