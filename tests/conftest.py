"""Test isolation: no third-party plugins, a private cache folder, and the shared data folder."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from factcheck.registry import reset_plugins

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("FACTCHECK_SHARED_DATA", ROOT.parent / "shared" / "data"))
# Variables that steer the test run itself (set by .ci/run): never set aside. FACTCHECK_SHARED_DATA
# also tells factcheck where the data is, the same folder the tests read.
TEST_RUN_VARIABLES = frozenset(
    {"FACTCHECK_SHARED_DATA", "FACTCHECK_REQUIRE_DATA", "FACTCHECK_REQUIRE_BROWSER", "FACTCHECK_ARTIFACTS"}
)


@pytest.fixture(autouse=True, scope="session")
def _isolated_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Entry points installed on a developer's machine must not change test results, and
    # the corpus index is built into a throwaway cache (once per session, then reused).
    # Every FACTCHECK_* setting of the developer's shell is set aside (a FACTCHECK_SCORER would change results).
    # So are real API keys and endpoints: no test may reach a real service, or pick the paper profile by itself.
    saved = {
        k: v
        for k, v in os.environ.items()
        if (k.startswith(("FACTCHECK_", "OPENAI_")) or k in ("SERPER_API_KEY", "SERPAPI_API_KEY"))
        and k not in TEST_RUN_VARIABLES
    }
    for key in saved:
        del os.environ[key]
    os.environ["FACTCHECK_LOAD_PLUGINS"] = ""
    os.environ["FACTCHECK_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    reset_plugins(reload=True)
    yield
    for key in ("FACTCHECK_LOAD_PLUGINS", "FACTCHECK_CACHE_DIR"):
        os.environ.pop(key, None)
    os.environ.update(saved)
    reset_plugins(reload=True)


@pytest.fixture(autouse=True, scope="session")
def _empty_wikidata(_isolated_session: None) -> Iterator[None]:
    """The wikidata agent of the wiki and paper profiles asks an empty Wikibase on this machine unless a test
    points it elsewhere: it finds no item, so it gives no judgment and no request leaves the machine."""
    from factcheck.testing.wikibase import FakeWikibase

    with FakeWikibase({}) as server:
        os.environ["FACTCHECK_WIKIDATA_URL"] = f"{server.url}/w/api.php"
        yield
        os.environ.pop("FACTCHECK_WIKIDATA_URL", None)


@pytest.fixture(autouse=True, scope="session")
def _no_internet() -> Iterator[None]:
    """Tests never touch the internet: resolving any host but this machine fails loudly."""
    real = socket.getaddrinfo

    def loopback_only(host: object, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in ("localhost", "::1") and not name.startswith("127."):
            raise socket.gaierror(f"tests must not reach the internet (tried to resolve {name!r})")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    socket.getaddrinfo = loopback_only  # type: ignore[assignment]
    yield
    socket.getaddrinfo = real


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests that need it skip where it is absent."""
    if not (SHARED_DATA / "ito_mafc").is_dir():
        if os.environ.get("FACTCHECK_REQUIRE_DATA"):  # CI: the data is always there; never skip silently
            pytest.fail(f"evaluation data not found at {SHARED_DATA}")
        pytest.skip(
            f"evaluation data not found at {SHARED_DATA} (clone beside ../shared, or set FACTCHECK_SHARED_DATA)"
        )
    return SHARED_DATA
