"""``factcheck batch``: check a whole corpus into a resumable JSON Lines file (docs/batch.md).

The pieces: :mod:`~factcheck.batch.inputs` (what is read), :mod:`~factcheck.batch.engine`
(the per-document check, concurrency and budgets), :mod:`~factcheck.batch.output`
(the resumable output file), :mod:`~factcheck.batch.progress` (progress bar and
summary), :mod:`~factcheck.batch.html` (the HTML report) and
:mod:`~factcheck.batch.ray_engine` (the same work on a Ray cluster).
"""
