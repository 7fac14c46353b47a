"""Readers for the evaluation data in ``../shared/data`` (one small function per dataset).

Every reader returns a :class:`Dataset`: texts with a gold label, split into the
dataset's own claims (each with its gold label and gold evidence where the data
has them). ``factcheck eval`` checks the texts (``retrieve`` mode) or hands each
claim its gold evidence (``given`` mode, the verifier alone).
"""

from __future__ import annotations

import csv
import inspect
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError, InputError
from factcheck.jsonl import read_records
from factcheck.paths import SHARED_DATA_ENV
from factcheck.types import Evidence, Label


@dataclass(frozen=True)
class GoldClaim:
    """One claim of a dataset text: its gold label (TRUE / FALSE) and gold evidence, where known."""

    text: str
    label: Label | None = None
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class EvalItem:
    """One text to check, with its gold label and the dataset's claims."""

    id: str
    text: str
    gold: Label
    claims: tuple[GoldClaim, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    as_of: str | None = None  # when the claim was made (ISO 8601), where the dataset says: it is checked as of then


@dataclass(frozen=True)
class Dataset:
    """A labelled evaluation set: ``levels`` is 2 (TRUE / FALSE) or 3 (with PARTLY TRUE)."""

    name: str
    levels: int
    items: tuple[EvalItem, ...]
    has_evidence: bool
    description: str

    @property
    def labels(self) -> tuple[Label, ...]:
        """The gold classes, in report order."""
        if self.levels == 2:
            return (Label.TRUE, Label.FALSE)
        return (Label.TRUE, Label.PARTLY_TRUE, Label.FALSE)


Reader = Callable[..., Dataset]
READERS: dict[str, Reader] = {}


def reader(name: str) -> Callable[[Reader], Reader]:
    """Register a dataset reader under ``name``."""

    def decorate(function: Reader) -> Reader:
        READERS[name] = function
        return function

    return decorate


def load_dataset(name: str, data_dir: Path, **options: Any) -> Dataset:
    """Read dataset ``name`` from ``data_dir`` (``../shared/data``); options go to its reader."""
    try:
        read = READERS[name]
    except KeyError:
        raise ConfigError(f"unknown dataset {name!r} (available: {', '.join(sorted(READERS))})") from None
    return read(Path(data_dir), **_check_options(name, read, options))


# --- helpers -------------------------------------------------------------------------------------------------------

GOLD = "gold"  # Evidence.source of every gold passage, so reports can tell it from retrieved evidence
WIKIPEDIA = "https://en.wikipedia.org/wiki/"
WICE_PASSAGE = 8  # sentences per WiCE passage: a page has ~120 lines, too many for one verifier call
_WICE_TITLE = "(meta data) TITLE:"
_SPAN_TAG = re.compile(r"</?span\b[^>]*>")
_PAGE_MARKER = re.compile(r"\[\[(.+?)\]\]")


DATA_HINT = f"give it with --data-dir or {SHARED_DATA_ENV}"


def _data_file(data_dir: Path, relative: str) -> Path:
    """``data_dir / relative``, or InputError naming it: a reader fails at once, not part-way through."""
    path = data_dir / relative
    if not path.is_file():
        raise InputError(f"missing data file {path} (is {data_dir} the shared data folder? {DATA_HINT})")
    return path


def _rows(data_dir: Path, relative: str) -> list[dict[str, Any]]:
    return [record for _, record in read_records(_data_file(data_dir, relative))]


def _map_label(mapping: Mapping[str, Label], value: object, where: str) -> Label:
    try:
        return mapping[str(value)]
    except KeyError:
        raise InputError(f"{where}: unexpected label {value!r} (expected one of {', '.join(mapping)})") from None


def _claim_item(
    item_id: str,
    text: str,
    gold: Label,
    evidence: tuple[Evidence, ...] = (),
    *,
    meta: Mapping[str, Any],
    claim_label: bool = True,
    as_of: str | None = None,
) -> EvalItem:
    """An item whose text is one claim, judged against ``evidence``. ``claim_label``: the claim's gold
    is the text's (two-level sets); False where the dataset labels the text only (PARTLY TRUE, ...)."""
    claim = GoldClaim(text=text, label=gold if claim_label else None, evidence=evidence)
    return EvalItem(item_id, text, gold, (claim,), meta, as_of)


def _day_month_year(value: object) -> str | None:
    """AVeriTeC's ``claim_date`` ("31-10-2020", day first) as ISO 8601, or None."""
    parts = value.split("-") if isinstance(value, str) else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    try:
        return date(int(parts[2]), int(parts[1]), int(parts[0])).isoformat()
    except ValueError:
        return None


def _split_evenly(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` near-equal counts, the earlier parts taking the remainder."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _check_options(name: str, read: Reader, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options checked against the reader's keywords; strings (from the CLI) become the default's type."""
    parameters = dict(inspect.signature(read).parameters)
    parameters.pop("data_dir", None)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(options)  # a reader taking **options checks them itself
    unknown = sorted(set(options) - set(parameters))
    if unknown:
        known = ", ".join(parameters) or "none"
        raise ConfigError(f"dataset {name!r}: unknown option {', '.join(unknown)} (options: {known})")
    checked: dict[str, Any] = {}
    for key, value in options.items():
        default = parameters[key].default
        if isinstance(value, str) and isinstance(default, int) and not isinstance(default, bool):
            try:
                value = int(value.strip())
            except ValueError:
                raise ConfigError(f"dataset {name!r}: option {key} must be an integer, got {value!r}") from None
        if default is not inspect.Parameter.empty and type(value) is not type(default):
            raise ConfigError(f"dataset {name!r}: option {key} must be {type(default).__name__}, got {value!r}")
        checked[key] = value
    return checked


# --- SciFact -------------------------------------------------------------------------------------------------------

_SCIFACT_188 = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}
_SCIFACT_COMPONENT = {"SUPPORT": Label.TRUE, "CONTRADICT": Label.FALSE}
_SCIFACT_MIXED = {"TRUE": Label.TRUE, "FALSE": Label.FALSE, "PARTLY": Label.PARTLY_TRUE}
_SCIFACT_188_FILE = "ito_mafc/scifact_single_dev188.jsonl"


def _scifact_evidence(data_dir: Path) -> dict[int, tuple[Evidence, ...]]:
    """Gold abstracts per SciFact dev claim id: the documents its rationales cite, in the file's order."""
    cited = {
        int(row["id"]): [int(doc_id) for doc_id in row.get("evidence") or {}]
        for row in _rows(data_dir, "scifact/claims_dev.jsonl")
    }
    wanted = {doc_id for doc_ids in cited.values() for doc_id in doc_ids}
    abstracts = {}
    for _, doc in read_records(_data_file(data_dir, "scifact/corpus.jsonl")):
        if doc["doc_id"] in wanted:  # keep only the ~200 cited abstracts of the 5,183
            # Joined as in the shipped corpus (factcheck/data), so gold and retrieved passages read alike.
            abstracts[doc["doc_id"]] = Evidence(source=GOLD, text="\n".join(doc["abstract"]), title=doc["title"])
    missing = wanted - set(abstracts)
    if missing:
        raise InputError(f"scifact/corpus.jsonl lacks cited documents {sorted(missing)[:5]}")
    return {claim_id: tuple(abstracts[d] for d in doc_ids) for claim_id, doc_ids in cited.items()}


def _scifact_claims(data_dir: Path) -> list[tuple[int, str, Label]]:
    """The 188 labelled SciFact dev claims of the MAFC authors: (dev id, claim, label)."""
    path = _data_file(data_dir, _SCIFACT_188_FILE)
    return [
        (int(row["scifact_dev_id"]), row["claim"], _map_label(_SCIFACT_188, row["label"], f"{path}:{line}"))
        for line, row in read_records(path)
    ]


@reader("scifact-binary")
def read_scifact_binary(data_dir: Path) -> Dataset:
    """The 188 SciFact dev claims with a SUPPORT or CONTRADICT verdict, each with its gold abstracts.

    ``ito_mafc/scifact_single_dev188.jsonl``: SUPPORTS -> TRUE (124), REFUTES -> FALSE (64).
    """
    evidence = _scifact_evidence(data_dir)
    items = tuple(
        _claim_item(
            f"scifact-dev-{dev_id}",
            claim,
            label,
            evidence[dev_id],
            meta={"scifact_dev_id": dev_id},
        )
        for dev_id, claim, label in _scifact_claims(data_dir)
    )
    return Dataset(
        name="scifact-binary",
        levels=2,
        items=items,
        has_evidence=True,
        description=f"{_SCIFACT_188_FILE}: SUPPORTS->TRUE, REFUTES->FALSE; gold abstracts from scifact/corpus.jsonl",
    )


@reader("scifact-mixed")
def read_scifact_mixed(data_dir: Path) -> Dataset:
    """The MAFC authors' 99 SciFact-Mixed texts, each four SciFact dev claims.

    ``ito_mafc/scifact_mixed.jsonl``; gold is ``label_from_components`` (4 SUPPORT -> TRUE,
    4 CONTRADICT -> FALSE, 2 + 2 -> PARTLY TRUE), not the source ``label``, which two rows
    get wrong (kept as ``meta["original_label"]``). Each claim is a component with its
    SciFact label (SUPPORT -> TRUE, CONTRADICT -> FALSE) and gold abstracts.
    """
    evidence = _scifact_evidence(data_dir)
    path = _data_file(data_dir, "ito_mafc/scifact_mixed.jsonl")
    items = []
    for line, row in read_records(path):
        where = f"{path}:{line}"
        claims = tuple(
            GoldClaim(
                text=part["scifact_dev_claim"],
                label=_map_label(_SCIFACT_COMPONENT, part["scifact_label"], where),
                evidence=evidence[int(part["scifact_dev_id"])],
            )
            for part in row["components"]
        )
        items.append(
            EvalItem(
                id=f"scifact-mixed-{row['row']}",
                text=row["text"],
                gold=_map_label(_SCIFACT_MIXED, row["label_from_components"], where),
                claims=claims,
                meta={"row": row["row"], "original_label": row["label"]},
            )
        )
    return Dataset(
        name="scifact-mixed",
        levels=3,
        items=tuple(items),
        has_evidence=True,
        description="ito_mafc/scifact_mixed.jsonl: label_from_components TRUE / FALSE / PARTLY->PARTLY TRUE; "
        "4 SciFact claims per text (SUPPORT->TRUE, CONTRADICT->FALSE) with gold abstracts",
    )


_PARTLY_MIXES = (3, 2, 1)  # supported claims of a PARTLY TRUE text: 3/1, 2/2 and 1/3 supported/refuted


def _random_plan(size: int, rng: random.Random) -> list[int]:
    """How many of each text's 4 claims are supported, for ``size`` texts balanced over the 3 labels."""
    true, false, partly = _split_evenly(size, 3)
    plan = [4] * true + [0] * false
    for supported, count in zip(_PARTLY_MIXES, _split_evenly(partly, len(_PARTLY_MIXES)), strict=True):
        plan += [supported] * count
    rng.shuffle(plan)  # interleave the labels, so any prefix of the dataset is a fair sample
    return plan


@reader("scifact-mixed-random")
def read_scifact_mixed_random(data_dir: Path, seed: int = 0, size: int = 99) -> Dataset:
    """Fresh SciFact-Mixed-style texts of 4 claims drawn (seeded) from the 188 labelled dev claims.

    ``size`` texts, a third each: TRUE (4 supported claims), FALSE (4 refuted) and PARTLY TRUE,
    the last split evenly over 3/1, 2/2 and 1/3 supported/refuted (the authors' file has only 2/2).
    A remainder goes to the earlier classes. No claim appears twice in one text; the claim
    order within a text and the text order are shuffled. The same ``seed`` gives the same texts.
    """
    if size < 1:
        raise ConfigError(f"dataset 'scifact-mixed-random': size must be at least 1, got {size}")
    evidence = _scifact_evidence(data_dir)
    pool = _scifact_claims(data_dir)
    supported = [claim for claim in pool if claim[2] is Label.TRUE]
    refuted = [claim for claim in pool if claim[2] is Label.FALSE]
    rng = random.Random(seed)
    items = []
    for i, n_supported in enumerate(_random_plan(size, rng)):
        drawn = rng.sample(supported, n_supported) + rng.sample(refuted, 4 - n_supported)
        rng.shuffle(drawn)
        gold = Label.TRUE if n_supported == 4 else Label.FALSE if n_supported == 0 else Label.PARTLY_TRUE
        items.append(
            EvalItem(
                id=f"scifact-mixed-random-{seed}-{i}",
                text=" ".join(claim for _, claim, _ in drawn),
                gold=gold,
                claims=tuple(GoldClaim(claim, label, evidence[dev_id]) for dev_id, claim, label in drawn),
                meta={
                    "seed": seed,
                    "n_supported": n_supported,
                    "scifact_dev_ids": tuple(dev_id for dev_id, _, _ in drawn),
                },
            )
        )
    return Dataset(
        name="scifact-mixed-random",
        levels=3,
        items=tuple(items),
        has_evidence=True,
        description=f"random 4-claim texts (seed {seed}, {size} texts) from {_SCIFACT_188_FILE}: "
        "4 supported->TRUE, 4 refuted->FALSE, 3/1, 2/2, 1/3->PARTLY TRUE; gold abstracts",
    )


# --- FEVER (SufficientFacts) ---------------------------------------------------------------------------------------

_FEVER = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}


def _fever_evidence(text_orig: str) -> tuple[Evidence, ...]:
    """The original gold evidence of a SufficientFacts row: one passage per ``[[Page title]]`` marker.

    The tags come off first, since a removed span may start before a marker and cover whole sentences.
    """
    text = _SPAN_TAG.sub("", text_orig)
    parts = _PAGE_MARKER.split(text)  # [before, title, sentence, title, sentence, ...]
    return tuple(
        Evidence(source=GOLD, text=sentence.strip(), title=title, url=WIKIPEDIA + title.replace(" ", "_"))
        for title, sentence in zip(parts[1::2], parts[2::2], strict=True)
    )


@reader("fever-binary")
def read_fever_binary(data_dir: Path) -> Dataset:
    """FEVER claims with their original gold evidence text, from SufficientFacts.

    ``fever/fever_sufficient_facts.jsonl``: one item per unique claim (the first row of the
    4 repeated claims), gold ``label_before`` (SUPPORTS -> TRUE, REFUTES -> FALSE). The
    evidence is ``text_orig`` with the removed span put back, one passage per Wikipedia
    sentence. The id counts rows of the file (0-based), so it skips the 4 repeats.
    """
    path = _data_file(data_dir, "fever/fever_sufficient_facts.jsonl")
    items = []
    seen = set()
    for row_number, (line, row) in enumerate(read_records(path)):
        claim = row["claim"]
        if claim in seen:
            continue
        seen.add(claim)
        label = _map_label(_FEVER, row["label_before"], f"{path}:{line}")
        items.append(
            _claim_item(
                f"fever-sf-{row_number}", claim, label, _fever_evidence(row["text_orig"]), meta={"row": row_number}
            )
        )
    return Dataset(
        name="fever-binary",
        levels=2,
        items=tuple(items),
        has_evidence=True,
        description="fever/fever_sufficient_facts.jsonl (unique claims): label_before SUPPORTS->TRUE, "
        "REFUTES->FALSE; gold Wikipedia sentences from text_orig",
    )


# --- HealthVer -----------------------------------------------------------------------------------------------------


@reader("healthver")
def read_healthver(data_dir: Path) -> Dataset:
    """HealthVer dev claims, their claim-evidence pairs aggregated to one verdict per claim.

    ``healthver/dev.jsonl`` (1,917 pairs, 230 claims). Mapping (ours, not the dataset's):
    Supports pairs and no Refutes -> TRUE; Refutes and no Supports -> FALSE; both -> PARTLY TRUE.
    Claims with only Neutral pairs (70 of 230) have no verdict and are left out. The evidence is
    every distinct evidence text of the claim, Neutral ones included, in file order.
    """
    path = _data_file(data_dir, "healthver/dev.jsonl")
    pairs: dict[str, list[dict[str, Any]]] = {}
    for line, row in read_records(path):
        if row["label"] not in ("Supports", "Refutes", "Neutral"):
            raise InputError(f"{path}:{line}: unexpected label {row['label']!r}")
        pairs.setdefault(row["claim"], []).append(row)  # dicts keep first-seen order
    items = []
    for claim, rows in pairs.items():
        labels = {row["label"] for row in rows}
        supports, refutes = "Supports" in labels, "Refutes" in labels
        if not (supports or refutes):
            continue
        gold = Label.PARTLY_TRUE if supports and refutes else Label.TRUE if supports else Label.FALSE
        texts = dict.fromkeys(row["evidence"] for row in rows)  # the same sentence is paired twice at times
        items.append(
            _claim_item(
                f"healthver-{rows[0]['id']}",
                claim,
                gold,
                tuple(Evidence(source=GOLD, text=text) for text in texts),
                meta={"topic_ip": rows[0]["topic_ip"], "question": rows[0]["question"]},
                claim_label=False,
            )
        )
    return Dataset(
        name="healthver",
        levels=3,
        items=tuple(items),
        has_evidence=True,
        description="healthver/dev.jsonl per claim: Supports only->TRUE, Refutes only->FALSE, both->PARTLY TRUE, "
        "Neutral only left out; evidence = the claim's evidence sentences",
    )


# --- WiCE ----------------------------------------------------------------------------------------------------------

_WICE = {"supported": Label.TRUE, "partially_supported": Label.PARTLY_TRUE, "not_supported": Label.FALSE}


def _wice_evidence(sentences: list[str]) -> tuple[Evidence, ...]:
    """The cited page in passages of ``WICE_PASSAGE`` sentences.

    Every line is kept, meta-data lines too, so passage ``k`` holds sentences ``8k .. 8k+7`` and
    the dataset's ``supporting_sentences`` indices still point into it.
    """
    first = sentences[0] if sentences else ""
    title = first.removeprefix(_WICE_TITLE).strip() if first.startswith(_WICE_TITLE) else ""
    return tuple(
        Evidence(source=GOLD, text="\n".join(sentences[start : start + WICE_PASSAGE]), title=title)
        for start in range(0, len(sentences), WICE_PASSAGE)
    )


@reader("wice")
def read_wice(data_dir: Path) -> Dataset:
    """WiCE dev: Wikipedia sentences checked against the web page they cite.

    ``wice/claim_dev.jsonl``: supported -> TRUE, partially_supported -> PARTLY TRUE,
    not_supported -> FALSE. Evidence: the cited page, 8 sentences a passage.
    """
    path = _data_file(data_dir, "wice/claim_dev.jsonl")
    items = []
    for line, row in read_records(path):
        meta = row["meta"]
        items.append(
            _claim_item(
                str(meta["id"]),
                row["claim"],
                _map_label(_WICE, row["label"], f"{path}:{line}"),
                _wice_evidence(row["evidence"]),
                meta={key: meta.get(key) for key in ("claim_title", "claim_section", "claim_context")},
                claim_label=False,
            )
        )
    return Dataset(
        name="wice",
        levels=3,
        items=tuple(items),
        has_evidence=True,
        description="wice/claim_dev.jsonl: supported->TRUE, partially_supported->PARTLY TRUE, not_supported->FALSE; "
        f"cited page in passages of {WICE_PASSAGE} sentences",
    )


# --- AVeriTeC ------------------------------------------------------------------------------------------------------

_AVERITEC = {
    "Supported": Label.TRUE,
    "Refuted": Label.FALSE,
    "Conflicting Evidence/Cherrypicking": Label.PARTLY_TRUE,
}
_AVERITEC_NEE = "Not Enough Evidence"
_URL = re.compile(r"https?://\S+")


def _page_key(url: str) -> str:
    """A URL without its archive.org prefix, scheme, ``www.``, query and trailing slash, to compare pages."""
    url = re.sub(r"^https?://web\.archive\.org/web/[^/]+/", "", url.strip())
    url = re.split(r"[?#]", url, maxsplit=1)[0]
    return re.sub(r"^https?://(www\.)?", "", url).rstrip("/").lower()


def _without_page(text: str, page: str) -> str:
    """``text`` without its links to ``page`` (one answer quotes the verdict article's link)."""
    return _URL.sub(lambda match: "" if _page_key(match.group()) == page else match.group(), text).strip()


def _averitec_evidence(row: Mapping[str, Any]) -> tuple[Evidence, ...]:
    """One passage per question-answer pair.

    An answer sourced from the claim's own fact-checking article (4 in dev) keeps its text but
    loses its URL, and links to that article are cut from the text: the article's address
    alone often gives the verdict away ("no-an-adani-food-silo-has-not-come-up...").
    """
    verdict_page = _page_key(row.get("fact_checking_article") or "")
    evidence = []
    for question in row.get("questions") or ():
        for answer in question.get("answers") or ():
            text = f"Q: {question['question']}\nA: {answer['answer']}"
            if answer.get("boolean_explanation"):
                text += f"\n{answer['boolean_explanation']}"
            if verdict_page:
                text = _without_page(text, verdict_page)
            url = answer.get("source_url") or None
            if url is not None and verdict_page and _page_key(url) == verdict_page:
                url = None
            evidence.append(Evidence(source=GOLD, text=text, url=url))
    return tuple(evidence)


@reader("averitec")
def read_averitec(data_dir: Path) -> Dataset:
    """AVeriTeC dev: real-world claims with question-answer evidence.

    ``averitec/dev.jsonl``: Supported -> TRUE, Refuted -> FALSE, Conflicting Evidence/Cherrypicking
    -> PARTLY TRUE; the 35 Not Enough Evidence claims are left out. ``fact_checking_article``
    (and ``justification``) are never read into the dataset: both reveal the verdict.
    """
    path = _data_file(data_dir, "averitec/dev.jsonl")
    items = []
    for line, row in read_records(path):
        if row["label"] == _AVERITEC_NEE:
            continue
        gold = _map_label(_AVERITEC, row["label"], f"{path}:{line}")
        items.append(
            _claim_item(
                f"averitec-{row['row']}",
                row["claim"],
                gold,
                _averitec_evidence(row),
                meta={
                    "row": row["row"],
                    "original_label": row["label"],
                    "claim_date": row.get("claim_date"),
                    "speaker": row.get("speaker"),
                    "reporting_source": row.get("reporting_source"),
                    "location_ISO_code": row.get("location_ISO_code"),
                },
                claim_label=False,
                as_of=_day_month_year(row.get("claim_date")),  # judged as of when the claim was made
            )
        )
    return Dataset(
        name="averitec",
        levels=3,
        items=tuple(items),
        has_evidence=True,
        description="averitec/dev.jsonl: Supported->TRUE, Refuted->FALSE, Conflicting Evidence/Cherrypicking->"
        "PARTLY TRUE, Not Enough Evidence left out; evidence = QA pairs",
    )


# --- LIAR ----------------------------------------------------------------------------------------------------------

_LIAR = {
    "true": Label.TRUE,
    "mostly-true": Label.TRUE,
    "half-true": Label.PARTLY_TRUE,
    "barely-true": Label.PARTLY_TRUE,
    "false": Label.FALSE,
    "pants-fire": Label.FALSE,
}
_LIAR_SPLITS = ("train", "valid", "test")
# Not the *_counts fields: the speaker's credit history includes the statement itself.
_LIAR_META = ("subject", "speaker", "speaker_job_title", "state_info", "party_affiliation", "context")


@reader("liar")
def read_liar(data_dir: Path, split: str = "valid") -> Dataset:
    """LIAR (PolitiFact) statements, no evidence; ``split`` is train, valid or test.

    ``liar/{split}.jsonl``, six labels to three (our mapping, not the dataset's): true, mostly-true
    -> TRUE; half-true, barely-true -> PARTLY TRUE; false, pants-fire -> FALSE.
    """
    if split not in _LIAR_SPLITS:
        raise ConfigError(f"dataset 'liar': split must be one of {', '.join(_LIAR_SPLITS)}, got {split!r}")
    path = _data_file(data_dir, f"liar/{split}.jsonl")
    items = []
    for line, row in read_records(path):
        liar_id = str(row["id"]).removesuffix(".json")
        items.append(
            _claim_item(
                f"liar-{liar_id}",
                row["statement"],
                _map_label(_LIAR, row["label"], f"{path}:{line}"),
                (),
                meta={"original_label": row["label"], **{key: row.get(key) for key in _LIAR_META}},
                claim_label=False,
            )
        )
    return Dataset(
        name="liar",
        levels=3,
        items=tuple(items),
        has_evidence=False,
        description=f"liar/{split}.jsonl: true, mostly-true->TRUE; half-true, barely-true->PARTLY TRUE; "
        "false, pants-fire->FALSE; no evidence",
    )


# --- Check-COVID ---------------------------------------------------------------------------------------------------

_CHECK_COVID = {"SUPPORT": Label.TRUE, "REFUTE": Label.FALSE}
_CHECK_COVID_NEI = "NOTENOUGHINFO"
_CHECK_COVID_FILES = {
    "dev": ("dev/covidCheck_dev_composed+extracted.json",),
    "test": ("test/covidCheck_test_composed.json", "test/covidCheck_test_extracted.json"),
}


def _split_files(name: str, split: str, files: Mapping[str, tuple[str, ...]], option: str = "split") -> tuple[str, ...]:
    """The files of ``split``, or ConfigError naming the splits there are."""
    if split not in files:
        raise ConfigError(f"dataset {name!r}: {option} must be one of {', '.join(files)}, got {split!r}")
    return files[split]


@reader("check-covid")
def read_check_covid(data_dir: Path, split: str = "dev") -> Dataset:
    """Check-COVID news claims, each with the CORD-19 abstract its evidence sentences come from.

    ``check_covid/Check-COVID/{split}/*.json`` (JSON lines; dev is composed+extracted, 207 claims):
    SUPPORT -> TRUE, REFUTE -> FALSE; NOTENOUGHINFO claims (68 in dev) are left out, as there is no
    such class here. The evidence is the whole cited abstract, as for SciFact, so the verifier must
    find the sentence; composed claims are minimal edits of one another, judged against one abstract.
    """
    base = "check_covid/Check-COVID/"
    abstracts = {
        doc["cord_id"]: Evidence(source=GOLD, text="\n".join(doc["abstract"]), title=doc["title"])
        for doc in _rows(data_dir, base + "corpus.json")
    }
    items = []
    for relative in _split_files("check-covid", split, _CHECK_COVID_FILES):
        path = _data_file(data_dir, base + relative)
        for line, row in read_records(path):
            if row["label"] == _CHECK_COVID_NEI:
                continue
            label = _map_label(_CHECK_COVID, row["label"], f"{path}:{line}")
            if row["cord_id"] not in abstracts:
                raise InputError(f"{path}:{line}: abstract {row['cord_id']!r} is not in corpus.json")
            items.append(
                _claim_item(
                    f"check-covid-{row['id']}",
                    row["claim"],
                    label,
                    (abstracts[row["cord_id"]],),
                    meta={"cord_id": row["cord_id"], "is_auth": row.get("is_auth")},
                )
            )
    return Dataset(
        name="check-covid",
        levels=2,
        items=tuple(items),
        has_evidence=True,
        description=f"check_covid {split} (composed+extracted): SUPPORT->TRUE, REFUTE->FALSE, NOTENOUGHINFO left out; "
        "evidence = the cited CORD-19 abstract",
    )


# --- Fool Me Twice -------------------------------------------------------------------------------------------------

_FM2 = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}
_FM2_SPLITS = {"dev": ("dataset/dev.jsonl",), "test": ("dataset/test.jsonl",)}


def _wikipedia_url(page: str) -> str:
    return WIKIPEDIA + page.replace(" ", "_")


@reader("fm2")
def read_fm2(data_dir: Path, split: str = "dev") -> Dataset:
    """Fool Me Twice: adversarial claims written against a Wikipedia page, with its gold sentences.

    ``fm2/dataset/{split}.jsonl`` (dev 1,169, test 1,380): SUPPORTS -> TRUE, REFUTES -> FALSE.
    The evidence is each ``gold_evidence`` sentence (about 1.3 a claim), titled with the page;
    ``retrieved_evidence`` is not read.
    """
    [relative] = _split_files("fm2", split, _FM2_SPLITS)
    path = _data_file(data_dir, "fm2/" + relative)
    items = []
    for line, row in read_records(path):
        label = _map_label(_FM2, row["label"], f"{path}:{line}")
        page = row["wikipedia_page"]
        evidence = tuple(
            Evidence(source=GOLD, text=gold["text"], title=page, url=_wikipedia_url(page))
            for gold in row["gold_evidence"]
        )
        items.append(
            _claim_item(
                f"fm2-{row['id']}",
                row["text"],
                label,
                evidence,
                meta={"wikipedia_page": page, "category": row.get("category")},
            )
        )
    return Dataset(
        name="fm2",
        levels=2,
        items=tuple(items),
        has_evidence=True,
        description=f"fm2/dataset/{split}.jsonl: SUPPORTS->TRUE, REFUTES->FALSE; evidence = gold Wikipedia sentences",
    )


# --- VitaminC ------------------------------------------------------------------------------------------------------

_VITAMINC = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}
_VITAMINC_NEI = "NOT ENOUGH INFO"
_VITAMINC_PARTS = {"real": ("vitaminc_real/test.jsonl",), "synthetic": ("vitaminc_synthetic/test.jsonl",)}
_FEVER_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-COLON-": ":", "_": " "}


def _fever_title(page: str) -> str:
    """A FEVER page name (``2 Hearts -LRB-Kylie Minogue song-RRB-``) as Wikipedia spells it."""
    for escaped, plain in _FEVER_ESCAPES.items():
        page = page.replace(escaped, plain)
    return re.sub(r"\s+\(", " (", page)


@reader("vitaminc")
def read_vitaminc(data_dir: Path, part: str = "real") -> Dataset:
    """VitaminC contrastive pairs: one claim with the Wikipedia sentence before and after a revision.

    ``vitaminc/vitaminc_{part}/test.jsonl`` (real 31,673 rows, synthetic 19,390; the folder's
    held-out pages already removed): SUPPORTS -> TRUE, REFUTES -> FALSE; NOT ENOUGH INFO rows are
    left out. One item per row, its evidence the row's sentence; rows of one ``case_id`` share a
    claim or an evidence sentence and flip the verdict, so a verifier must read the evidence.
    """
    [relative] = _split_files("vitaminc", part, _VITAMINC_PARTS, option="part")
    path = _data_file(data_dir, "vitaminc/" + relative)
    items = []
    for line, row in read_records(path):
        if row["label"] == _VITAMINC_NEI:
            continue
        label = _map_label(_VITAMINC, row["label"], f"{path}:{line}")
        title = _fever_title(row["page"])
        evidence = (Evidence(source=GOLD, text=row["evidence"], title=title, url=_wikipedia_url(title)),)
        items.append(
            _claim_item(
                f"vitaminc-{row['unique_id']}",
                row["claim"],
                label,
                evidence,
                meta={"case_id": row["case_id"], "page": title},
            )
        )
    return Dataset(
        name="vitaminc",
        levels=2,
        items=tuple(items),
        has_evidence=True,
        description=f"vitaminc/{relative}: SUPPORTS->TRUE, REFUTES->FALSE, NOT ENOUGH INFO left out; "
        "evidence = the row's Wikipedia sentence",
    )


# --- ANLI ----------------------------------------------------------------------------------------------------------

_ANLI = {"e": Label.TRUE, "c": Label.FALSE}
_ANLI_NEUTRAL = "n"
_ANLI_ROUNDS = ("1", "2", "3")
_ANLI_FILE = "anli_dev_annotated/anlizinganli/anli_annot_v0.2/ANLI_analysis_r{round}_dev.csv"


@reader("anli")
def read_anli(data_dir: Path, rounds: str = "1,2,3") -> Dataset:
    """ANLI dev (adversarial NLI) as claims and evidence: evaluation only (CC BY-NC 4.0).

    ``anli_dev_annotated/.../ANLI_analysis_r{1,2,3}_dev.csv``: the statement is the claim and the
    context its one evidence passage; entailment (e) -> TRUE, contradiction (c) -> FALSE, neutral
    rows are left out. ``rounds`` picks rounds, a comma list (``rounds=3``). Never train shipped
    weights on it: the licence is non-commercial.
    """
    wanted = [part.strip() for part in rounds.replace(";", ",").split(",") if part.strip()]
    if not wanted or any(part not in _ANLI_ROUNDS for part in wanted):
        raise ConfigError(f"dataset 'anli': rounds must be a comma list of 1, 2, 3, got {rounds!r}")
    items = []
    for number in dict.fromkeys(wanted):
        path = _data_file(data_dir, _ANLI_FILE.format(round=number))
        with path.open(encoding="utf-8", newline="") as handle:
            for line, row in enumerate(csv.DictReader(handle), 2):  # line 1 is the header
                if row["gold_label"] == _ANLI_NEUTRAL:
                    continue
                label = _map_label(_ANLI, row["gold_label"], f"{path}:{line}")
                claim = row["statement"].strip()
                items.append(
                    _claim_item(
                        f"anli-r{number}-{row['uid']}",
                        claim,
                        label,
                        (Evidence(source=GOLD, text=row["context"].strip()),),
                        meta={"round": int(number), "tags": row.get("tags")},
                    )
                )
    return Dataset(
        name="anli",
        levels=2,
        items=tuple(items),
        has_evidence=True,
        description=f"ANLI dev rounds {','.join(dict.fromkeys(wanted))} (CC BY-NC 4.0, evaluation only): "
        "e->TRUE, c->FALSE, neutral left out; evidence = the context",
    )


# --- Citation-Integrity --------------------------------------------------------------------------------------------

_CITATION_INTEGRITY = {"SUPPORT": Label.TRUE, "REFUTE": Label.FALSE}
_CITATION_SPLITS = {name: (f"claims_{name}.jsonl",) for name in ("dev", "train", "test")}
_CITATION_MARKER = re.compile(r"\s*\[?<\|[a-z_]+\|>\]?")


@reader("citation-integrity")
def read_citation_integrity(data_dir: Path, split: str = "dev") -> Dataset:
    """Citation-Integrity: biomedical citation sentences checked against the article they cite.

    ``citation_integrity/data/citint/claims_{split}.jsonl`` (SciFact format; dev 316 claims):
    an evidence set labelled SUPPORT -> TRUE, REFUTE -> FALSE; claims with no evidence set (NEI,
    24 in dev) or with both labels are left out. Citation markers (``[<|cit|>]``) are cut from the
    claim. The evidence is each cited article's candidate sentences, one passage an article.
    """
    [relative] = _split_files("citation-integrity", split, _CITATION_SPLITS)
    base = "citation_integrity/data/citint/"
    path = _data_file(data_dir, base + relative)
    rows = list(read_records(path))
    cited = {int(doc_id) for _, row in rows for doc_id in row["cited_doc_ids"]}
    articles = {
        int(doc["doc_id"]): Evidence(source=GOLD, text="\n".join(doc["abstract"]), title=doc.get("title") or "")
        for doc in _rows(data_dir, base + "corpus.jsonl")
        if int(doc["doc_id"]) in cited
    }
    items = []
    for line, row in rows:
        labels = {evidence["label"] for sets in row["evidence"].values() for evidence in sets}
        if len(labels) != 1:
            continue
        label = _map_label(_CITATION_INTEGRITY, labels.pop(), f"{path}:{line}")
        claim = _CITATION_MARKER.sub("", row["claim"]).strip()
        missing = [doc_id for doc_id in row["cited_doc_ids"] if int(doc_id) not in articles]
        if missing:
            raise InputError(f"{path}:{line}: cited documents {missing} are not in corpus.jsonl")
        evidence = tuple(articles[int(doc_id)] for doc_id in row["cited_doc_ids"])
        items.append(
            _claim_item(
                f"citation-integrity-{split}-{row['id']}",
                claim,
                label,
                evidence,
                meta={"cited_doc_ids": tuple(row["cited_doc_ids"])},
            )
        )
    return Dataset(
        name="citation-integrity",
        levels=2,
        items=tuple(items),
        has_evidence=True,
        description=f"citation_integrity {relative}: SUPPORT->TRUE, REFUTE->FALSE, no evidence (NEI) left out; "
        "evidence = the cited article's candidate sentences",
    )
