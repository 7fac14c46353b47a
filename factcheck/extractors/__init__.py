"""Claim extractors. Built-ins: ``sentence`` (spaCy: sentences worth checking, see
:mod:`~factcheck.extractors.checkworthy`, :mod:`~factcheck.extractors.attribution` and
:mod:`~factcheck.extractors.decontext`) and ``llm`` (a prompted model)."""
