"""SciFact and the MAFC authors' sets built on it: ``scifact-binary``, ``scifact-mixed`` and
``scifact-mixed-random``, each claim judged against the abstracts its rationales cite."""

from __future__ import annotations

import random
from pathlib import Path

from factcheck.errors import ConfigError, InputError
from factcheck.eval.datasets.core import GOLD, claim_item, data_file, gold_dataset, map_label, register_readers, rows
from factcheck.jsonl import read_records
from factcheck.plugin import Dataset, DatasetReader, EvalItem, GoldClaim
from factcheck.types import Evidence, Label

_SCIFACT_188 = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}
_SCIFACT_COMPONENT = {"SUPPORT": Label.TRUE, "CONTRADICT": Label.FALSE}
_SCIFACT_MIXED = {"TRUE": Label.TRUE, "FALSE": Label.FALSE, "PARTLY": Label.PARTLY_TRUE}
_SCIFACT_188_FILE = "ito_mafc/scifact_single_dev188.jsonl"


def _scifact_evidence(data_dir: Path) -> dict[int, tuple[Evidence, ...]]:
    """Gold abstracts per SciFact dev claim id: the documents its rationales cite, in the file's order."""
    cited = {
        int(row["id"]): [int(doc_id) for doc_id in row.get("evidence") or {}]
        for row in rows(data_dir, "scifact/claims_dev.jsonl")
    }
    wanted = {doc_id for doc_ids in cited.values() for doc_id in doc_ids}
    abstracts = {}
    for _, doc in read_records(data_file(data_dir, "scifact/corpus.jsonl")):
        if doc["doc_id"] in wanted:  # keep only the ~200 cited abstracts of the 5,183
            # Joined as in the shipped corpus (factcheck/data), so gold and retrieved passages read alike.
            abstracts[doc["doc_id"]] = Evidence(source=GOLD, text="\n".join(doc["abstract"]), title=doc["title"])
    missing = wanted - set(abstracts)
    if missing:
        raise InputError(f"scifact/corpus.jsonl lacks cited documents {sorted(missing)[:5]}")
    return {claim_id: tuple(abstracts[d] for d in doc_ids) for claim_id, doc_ids in cited.items()}


def _scifact_claims(data_dir: Path) -> list[tuple[int, str, Label]]:
    """The 188 labelled SciFact dev claims of the MAFC authors: (dev id, claim, label)."""
    path = data_file(data_dir, _SCIFACT_188_FILE)
    return [
        (int(row["scifact_dev_id"]), row["claim"], map_label(_SCIFACT_188, row["label"], f"{path}:{line}"))
        for line, row in read_records(path)
    ]


def read_scifact_binary(data_dir: Path) -> Dataset:
    """The 188 SciFact dev claims with a SUPPORT or CONTRADICT verdict, each with its gold abstracts.

    ``ito_mafc/scifact_single_dev188.jsonl``: SUPPORTS -> TRUE (124), REFUTES -> FALSE (64).
    """
    evidence = _scifact_evidence(data_dir)
    items = [
        claim_item(f"scifact-dev-{dev_id}", claim, label, evidence[dev_id], meta={"scifact_dev_id": dev_id})
        for dev_id, claim, label in _scifact_claims(data_dir)
    ]
    return gold_dataset(
        "scifact-binary",
        2,
        items,
        f"{_SCIFACT_188_FILE}: SUPPORTS->TRUE, REFUTES->FALSE; gold abstracts from scifact/corpus.jsonl",
    )


def read_scifact_mixed(data_dir: Path) -> Dataset:
    """The MAFC authors' 99 SciFact-Mixed texts, each four SciFact dev claims.

    ``ito_mafc/scifact_mixed.jsonl``; gold is ``label_from_components`` (4 SUPPORT -> TRUE,
    4 CONTRADICT -> FALSE, 2 + 2 -> PARTLY TRUE), not the source ``label``, which two rows
    get wrong (kept as ``meta["original_label"]``). Each claim is a component with its
    SciFact label (SUPPORT -> TRUE, CONTRADICT -> FALSE) and gold abstracts.
    """
    evidence = _scifact_evidence(data_dir)
    path = data_file(data_dir, "ito_mafc/scifact_mixed.jsonl")
    items = []
    for line, row in read_records(path):
        where = f"{path}:{line}"
        claims = tuple(
            GoldClaim(
                text=part["scifact_dev_claim"],
                label=map_label(_SCIFACT_COMPONENT, part["scifact_label"], where),
                evidence=evidence[int(part["scifact_dev_id"])],
            )
            for part in row["components"]
        )
        items.append(
            EvalItem(
                id=f"scifact-mixed-{row['row']}",
                text=row["text"],
                gold=map_label(_SCIFACT_MIXED, row["label_from_components"], where),
                claims=claims,
                meta={"row": row["row"], "original_label": row["label"]},
            )
        )
    return gold_dataset(
        "scifact-mixed",
        3,
        items,
        "ito_mafc/scifact_mixed.jsonl: label_from_components TRUE / FALSE / PARTLY->PARTLY TRUE; "
        "4 SciFact claims per text (SUPPORT->TRUE, CONTRADICT->FALSE) with gold abstracts",
    )


_PARTLY_MIXES = (3, 2, 1)  # supported claims of a PARTLY TRUE text: 3/1, 2/2 and 1/3 supported/refuted


def _split_evenly(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` near-equal counts, the earlier parts taking the remainder."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _random_plan(size: int, rng: random.Random) -> list[int]:
    """How many of each text's 4 claims are supported, for ``size`` texts balanced over the 3 labels."""
    true, false, partly = _split_evenly(size, 3)
    plan = [4] * true + [0] * false
    for supported, count in zip(_PARTLY_MIXES, _split_evenly(partly, len(_PARTLY_MIXES)), strict=True):
        plan += [supported] * count
    rng.shuffle(plan)  # interleave the labels, so any prefix of the dataset is a fair sample
    return plan


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
    return gold_dataset(
        "scifact-mixed-random",
        3,
        items,
        f"random 4-claim texts (seed {seed}, {size} texts) from {_SCIFACT_188_FILE}: "
        "4 supported->TRUE, 4 refuted->FALSE, 3/1, 2/2, 1/3->PARTLY TRUE; gold abstracts",
    )


register_datasets = register_readers(
    DatasetReader("scifact-binary", read_scifact_binary),
    DatasetReader("scifact-mixed", read_scifact_mixed),
    DatasetReader("scifact-mixed-random", read_scifact_mixed_random),
)
