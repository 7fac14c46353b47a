"""The main text of a web page: trafilatura, for batch's HTML inputs and the pages behind search results.

Optional: trafilatura is the ``batch`` extra (``pip install '.[batch]'`` in a checkout). A caller that
needs it checks first with :func:`require_trafilatura`, which names the install command.
"""

from __future__ import annotations

from typing import Any

from factcheck.errors import ConfigError

BATCH_EXTRA = "pip install '.[batch]' in a checkout"


def require_trafilatura() -> None:
    """Fail with the install command when HTML input meets an installation without ``trafilatura``,
    and with what went wrong when it is installed but cannot be imported."""
    try:
        import trafilatura  # noqa: F401
    except ImportError as exc:
        if exc.name == "trafilatura":
            raise ConfigError(f"reading HTML pages needs trafilatura: {BATCH_EXTRA}") from None
        # Installing the extra again would change nothing: name what actually failed.
        raise ConfigError(
            f"reading HTML pages needs trafilatura, which is installed but cannot be imported: {_import_failure(exc)}"
        ) from None


def _import_failure(exc: ImportError) -> str:
    """What failed while importing a package: a module that is not installed, else the module
    that raised (found in the traceback) and its message."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return f"{exc.name} is not installed ({exc})"
    raising = None
    tb = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__")
        if isinstance(module, str) and not module.startswith(("importlib", "factcheck.")):
            raising = module  # the innermost frame outside the import machinery and this module
        tb = tb.tb_next
    return f"importing {raising or exc.name or 'it'} failed: {exc}"


def html_main_text(page: bytes | str) -> tuple[str, str | None]:
    """The main text of an HTML page (navigation, ads and footers dropped) and its title."""
    text, title, _ = html_page(page)
    return text, title


def _headings(body: Any) -> dict[str, int]:
    """The text of each heading in trafilatura's XML body (``<head rend="h2">``) and its level (2)."""
    found: dict[str, int] = {}
    for head in body.iter("head") if body is not None and hasattr(body, "iter") else ():
        text = " ".join("".join(head.itertext()).split())
        rend = str(head.get("rend") or "")
        if text:
            found.setdefault(text, int(rend[1]) if len(rend) == 2 and rend[0] == "h" and rend[1].isdigit() else 1)
    return found


def html_page(page: bytes | str) -> tuple[str, str | None, str | None]:
    """The main text of an HTML page (navigation, ads and footers dropped), its title and its publication
    date (from the page's metadata, ``YYYY-MM-DD``; ``None`` when it gives none).

    trafilatura returns one paragraph per line; paragraphs are separated by a
    blank line here so a heading never runs into the sentence after it, and
    headings are marked as Markdown marks them (``# Title``).
    """
    require_trafilatura()
    import trafilatura

    extracted = trafilatura.bare_extraction(
        page,
        with_metadata=True,
        include_comments=False,
        include_tables=False,
        # The date the page states (its metadata, a time element): never one guessed from "Copyright 2024".
        date_extraction_params={"extensive_search": False, "original_date": True},
    )
    if extracted is None:
        return "", None, None

    def field(name: str) -> Any:
        return extracted.get(name) if isinstance(extracted, dict) else getattr(extracted, name, None)

    headings = _headings(field("body"))
    paragraphs = [line.strip() for line in (field("text") or "").splitlines() if line.strip()]
    # A heading is written as Markdown writes it ("## Side effects"), so that the extractor skips it as it
    # skips a Markdown file's: the page's <h1>-<h6> are no claims.
    paragraphs = [f"{'#' * headings[line]} {line}" if line in headings else line for line in paragraphs]
    date = field("date")
    return "\n\n".join(paragraphs), field("title") or None, date if isinstance(date, str) and date else None
