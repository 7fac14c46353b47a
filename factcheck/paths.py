"""Where factcheck keeps files between runs, and where it finds the evaluation data."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache folder: ``$FACTCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/factcheck``, else ``~/.cache/factcheck``."""
    explicit = os.environ.get("FACTCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "factcheck"


SHARED_DATA_ENV = "FACTCHECK_SHARED_DATA"


def shared_data_candidates() -> list[Path]:
    """Where the evaluation data may be, in the order looked: ``$FACTCHECK_SHARED_DATA`` alone when
    set, else ``../shared/data`` beside the working directory, then beside this source checkout."""
    explicit = os.environ.get(SHARED_DATA_ENV)
    if explicit:
        return [Path(explicit).expanduser()]
    # The project's layout keeps the data beside the checkout; a command run from elsewhere
    # (a notebook's folder, a sub-folder) still finds it there.
    checkout = Path(__file__).resolve().parent.parent
    return list(dict.fromkeys([Path("..") / "shared" / "data", checkout.parent / "shared" / "data"]))


def shared_data_dir() -> Path:
    """The evaluation data folder: the first of :func:`shared_data_candidates` that exists, else the first."""
    candidates = shared_data_candidates()
    return next((path for path in candidates if path.is_dir()), candidates[0])
