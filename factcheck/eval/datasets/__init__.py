"""Readers for the evaluation data in ``../shared/data``, one module per dataset family.

Every reader returns a :class:`Dataset`: texts with a gold label, split into the
dataset's own claims (each with its gold label and gold evidence where the data
has them). ``factcheck eval`` checks the texts (``retrieve`` mode) or hands each
claim its gold evidence (``given`` mode, the verifier alone).

The readers are plugins: each family module registers its own through the
``register_datasets`` hook, and :func:`load_dataset` finds a third party's the
same way (docs/plugins.md). :mod:`~factcheck.eval.datasets.core` holds the types
and what the readers share.
"""

from factcheck.eval.datasets.anli import read_anli
from factcheck.eval.datasets.averitec import read_averitec
from factcheck.eval.datasets.biomedical import read_check_covid, read_citation_integrity, read_healthver
from factcheck.eval.datasets.core import DATA_HINT, GOLD, READERS, WIKIPEDIA, load_dataset, register_readers
from factcheck.eval.datasets.fever import read_fever_binary, read_fm2, read_vitaminc
from factcheck.eval.datasets.liar import read_liar
from factcheck.eval.datasets.scifact import read_scifact_binary, read_scifact_mixed, read_scifact_mixed_random
from factcheck.eval.datasets.wice import WICE_PASSAGE, read_wice
from factcheck.plugin import Dataset, DatasetReader, EvalItem, GoldClaim
from factcheck.plugin.dataset import Reader

__all__ = [
    "DATA_HINT",
    "GOLD",
    "READERS",
    "WICE_PASSAGE",
    "WIKIPEDIA",
    "Dataset",
    "DatasetReader",
    "EvalItem",
    "GoldClaim",
    "Reader",
    "load_dataset",
    "read_anli",
    "read_averitec",
    "read_check_covid",
    "read_citation_integrity",
    "read_fever_binary",
    "read_fm2",
    "read_healthver",
    "read_liar",
    "read_scifact_binary",
    "read_scifact_mixed",
    "read_scifact_mixed_random",
    "read_vitaminc",
    "read_wice",
    "register_readers",
]
