"""``python -m factcheck``: the same as the ``factcheck`` command."""

from factcheck.cli import main

main()
