"""Where factcheck keeps files between runs."""

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
