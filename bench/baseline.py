"""An older commit's code, exported and run with an interpreter that has its dependencies.

Shared by ``bench/server_load.py --baseline REF`` and ``bench/batch.py --baseline REF``:

- :func:`export` writes the tree of a git commit to a folder (``git archive``; nothing is checked out);
- :func:`python_for` names the interpreter to run that tree with. When every requirement of the tree's
  ``pyproject.toml`` (``[project] dependencies``, and the extras asked for) is installed here, that is this
  interpreter. When some are not (4af1622 still imports ``serpapi`` and ``wikipediaapi``, which the project
  has since dropped), it is an overlay venv under ``$XDG_CACHE_HOME/factcheck/bench/`` (else
  ``~/.cache/factcheck/bench/``): its own site-packages holds only the missing requirements (installed with
  pip), and a ``.pth`` file adds this interpreter's site-packages after it, so everything installed here
  is seen too. The overlay is made once and reused by later runs.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import site
import subprocess
import sys
import tomllib
import venv
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READY = ".factcheck-bench-ready"  # written last: an overlay without it was cut short and is made again
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def export(ref: str, folder: Path) -> Path:
    """The tree of git commit ``ref`` written to ``folder`` (``git archive``; the working tree is untouched)."""
    done = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True)
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        raise SystemExit(f"cannot export {ref} with git archive: {reason[-1] if reason else done.returncode}")
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=done.stdout, check=True)
    return folder


def requirements(code: Path, extras: Iterable[str] = ()) -> list[str]:
    """The requirement strings of ``code``'s ``pyproject.toml``: ``[project] dependencies`` and those of
    ``extras`` (none when there is no pyproject.toml)."""
    path = code / "pyproject.toml"
    if not path.is_file():
        return []
    project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    found = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        found += optional.get(extra, [])
    return list(dict.fromkeys(found))


def unmet(wanted: Sequence[str]) -> list[str]:
    """The requirements of ``wanted`` not installed for this interpreter, or installed in a version their
    specifier refuses (versions and markers are read only when ``packaging`` is importable)."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # names only: a requirement is met when a distribution of its name is installed
        return [line for line in wanted if (m := NAME.match(line.strip())) is None or not installed(m.group())]
    missing = []
    for line in wanted:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            missing.append(line)  # let pip say what is wrong with it
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = installed(requirement.name)
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            missing.append(line)
    return missing


def installed(name: str) -> str | None:
    """The version of distribution ``name`` installed for this interpreter, or None."""
    try:
        return importlib.metadata.distribution(name).version
    except importlib.metadata.PackageNotFoundError:
        return None


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/factcheck/bench``, else ``~/.cache/factcheck/bench``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "factcheck" / "bench"


def overlay_folder(missing: Sequence[str]) -> Path:
    """Where the overlay for ``missing`` lives: named by a hash of the requirements and of this interpreter
    (the overlay reads this interpreter's site-packages, so another venv gets an overlay of its own)."""
    key = "\n".join([sys.prefix, sys.version, *sorted(missing)])
    return cache_root() / f"venv-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def site_dirs() -> list[str]:
    """This interpreter's site-packages folders, in the order it reads them."""
    found = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    found += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return [p for p in dict.fromkeys(found) if os.path.isdir(p)]


def python_for(code: Path, extras: Iterable[str] = ()) -> str:
    """The interpreter to run the tree in ``code`` with: this one when it has every requirement of the
    tree, else an overlay venv that adds the missing ones (made once, reused). A failed install exits
    with a message naming the requirements."""
    missing = unmet(requirements(code, extras))
    if not missing:
        return sys.executable
    folder = overlay_folder(missing)
    python = folder / "bin" / "python"
    names = ", ".join(missing)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two benches started at once make the overlay once
        if (folder / READY).is_file() and python.exists():
            print(f"baseline: {names} (not installed here) from the overlay {folder}", file=sys.stderr)
            return str(python)
        try:
            make_overlay(folder, missing)
        except (OSError, subprocess.CalledProcessError) as error:
            detail = getattr(error, "stderr", None) or str(error)
            last = str(detail).strip().splitlines()[-1:] or [""]
            raise SystemExit(f"cannot install {names} for the baseline into {folder}: {last[0]}") from None
    print(f"baseline: installed {names} (not installed here) into the overlay {folder}", file=sys.stderr)
    return str(python)


def make_overlay(folder: Path, missing: Sequence[str]) -> None:
    """A venv in ``folder`` seeing this interpreter's packages, with ``missing`` pip-installed into it."""
    # No pip of its own when this interpreter has one: the .pth below lends it (and everything else here).
    has_pip = importlib.util.find_spec("pip") is not None
    venv.EnvBuilder(clear=True, symlinks=True, with_pip=not has_pip).create(folder)
    python = str(folder / "bin" / "python")
    own = subprocess.run(
        [python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # addsitedir, not a bare path: the .pth files of those folders (editable installs) are read as well.
    lines = [f"import site; site.addsitedir({path!r})" for path in site_dirs() if path != own]
    (Path(own) / "_factcheck_bench_base.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Held to the versions installed here, so the baseline shares today's libraries wherever it can
    # (wikipedia-api's newest release pins its own httpx and click); without them if nothing fits.
    pins = folder / "installed-here.txt"
    pins.write_text("\n".join(installed_here(missing)) + "\n", encoding="utf-8")
    command = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q", *missing]
    if subprocess.run([*command, "-c", str(pins)], capture_output=True, text=True).returncode != 0:
        subprocess.run(command, check=True, capture_output=True, text=True)
    (folder / READY).write_text("\n".join(missing) + "\n", encoding="utf-8")


def installed_here(missing: Sequence[str]) -> list[str]:
    """``name==version`` of every distribution installed here, but those named in ``missing``."""
    skip = {canonical(m.group()) for line in missing if (m := NAME.match(line.strip()))}
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonical(name) not in skip and not dist.version.startswith(("file:", "http")):
            found.setdefault(canonical(name), f"{name}=={dist.version}")
    return sorted(found.values())


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()
