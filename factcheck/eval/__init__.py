"""Evaluation helpers: readers for the data in ``../shared/data``."""
