"""A fake Wikibase (Wikidata's Action API) on the one fake server, for tests and benchmarks.

:class:`FakeWikibase` holds entities in the JSON shape ``wbgetentities`` returns and answers
``/w/api.php`` as Wikidata does, for the two modules an evidence agent needs:

- ``action=wbsearchentities``: a case- and accent-insensitive prefix search of ``search`` in
  the labels and aliases of ``language`` (English as the fallback), of ``type`` item (default)
  or property. Whole-string matches come before prefix matches, labels before aliases, then
  the more popular entity (an entity's ``"popularity"`` in the data, never served, else its
  number of statements), then the lower id. ``limit`` (default 7) above 50 is cut to 50 with
  the warning MediaWiki sends; ``continue`` pages, and ``search-continue`` says more exist.
- ``action=wbgetentities``: ``ids`` split on ``|``; more than 50 is ``toomanyvalues``, an id
  that is not an entity id ``no-such-entity`` (both HTTP 200 with a ``MediaWiki-API-Error``
  header, as the real API sends them), a well-formed unknown id ``"missing": ""``; ``props``
  and ``languages`` filter what is served.

Switches replay what Wikimedia's servers do to a client: :attr:`FakeWikibase.lag` answers a
request that carries ``maxlag`` below it with the ``maxlag`` error (and ``Retry-After``),
:attr:`FakeWikibase.user_agent_policy` refuses a request with no User-Agent or a library's
bare default (403 text/plain, Wikimedia's own words), :attr:`FakeWikibase.delay_s` slows
every answer; :func:`rate_limited`, :func:`user_agent_refused` and :func:`maxlag_error` are
one-off answers for :meth:`FakeWikibase.queue`. Every request is recorded
(:meth:`FakeWikibase.calls`), so a test can count the requests a claim cost::

    with FakeWikibase.from_file("bench/probes/wikidata/entities.json") as server:
        endpoint = server.url + "/w/api.php"
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from factcheck.testing.http import FakeServer, Request, Response

__all__ = [
    "API_PATH",
    "USER_AGENT_REFUSAL",
    "FakeWikibase",
    "api_error",
    "maxlag_error",
    "rate_limited",
    "user_agent_refused",
]

API_PATH = "/w/api.php"
SEARCH_DEFAULT_LIMIT = 7
SEARCH_MAX_LIMIT = 50  # ApiBase::LIMIT_SML1, what a client without the apihighlimits right gets
GET_MAX_IDS = 50
USAGE = (
    "See https://www.wikidata.org/w/api.php for API usage. Subscribe to the mediawiki-api-announce mailing list at "
    "&lt;https://lists.wikimedia.org/postorius/lists/mediawiki-api-announce.lists.wikimedia.org/&gt; "
    "for notice of API deprecations and breaking changes."
)
SERVED_BY = "mw-api-ext.eqiad.main-7d9f6c8b5-x2k4q"
USER_AGENT_REFUSAL = "Please set a user-agent and respect our robot policy https://w.wiki/4wJS. See also T400119."
ENTITY_ID = re.compile(r"^(?:[QPL][1-9]\d{0,9})$", re.IGNORECASE)
# A library's default agent with nothing else (no tool name, no contact): what Wikimedia refuses.
BARE_AGENT = re.compile(
    r"^(python-httpx|python-requests|python-urllib|curl|wget|aiohttp|okhttp|go-http-client|java)(/[\w.]*)?$",
    re.IGNORECASE,
)
INFO_KEYS = ("pageid", "ns", "title", "lastrevid", "modified")
TERM_KEYS = ("labels", "descriptions", "aliases")
ALL_PROPS = ("info", "sitelinks", "aliases", "labels", "descriptions", "claims", "datatype")
UNSERVED = ("popularity",)  # kept in the data file for the search order, never in an answer


def api_error(
    code: str, info: str, *, status: int = 200, headers: Mapping[str, str] | None = None, **extra: Any
) -> Response:
    """A MediaWiki API error: HTTP 200 (unless ``status``) with the ``MediaWiki-API-Error`` header."""
    body = {"error": {"code": code, "info": info, **extra, "*": USAGE}, "servedby": SERVED_BY}
    return Response(body, status=status, headers={"MediaWiki-API-Error": code, **(headers or {})})


def maxlag_error(lag: int = 6, *, retry_after: int = 1, host: str = "10.64.16.27") -> Response:
    """The answer to a request whose ``maxlag`` the replicas' lag exceeds.

    The real server sends ``Retry-After: max(maxlag, 5)``; tests default to one second so a
    client honouring it does not slow the suite.
    """
    return api_error(
        "maxlag",
        f"Waiting for {host}: {lag} seconds lagged.",
        headers={"Retry-After": str(retry_after), "X-Database-Lag": str(lag)},
        host=host,
        lag=lag,
        type="db",
    )


def rate_limited(retry_after: int = 1) -> Response:
    """HTTP 429, as Wikimedia's edge answers a client over its request rate."""
    text = "Too many requests. Please respect our robot policy https://w.wiki/4wJS.\n"
    return Response(
        status=429,
        raw=text.encode(),
        headers={"Content-Type": "text/plain; charset=utf-8", "Retry-After": str(retry_after)},
    )


def user_agent_refused() -> Response:
    """HTTP 403 text/plain: Wikimedia's refusal of a request without an identifying User-Agent."""
    return Response(status=403, raw=USER_AGENT_REFUSAL.encode(), headers={"Content-Type": "text/plain; charset=utf-8"})


def fold(text: str) -> str:
    """Lower case without accents, as the search's analyzer compares strings."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def numeric(entity_id: str) -> int:
    """The number of an id (``Q243`` -> 243)."""
    return int(entity_id[1:])


class FakeWikibase:
    """Entities served at ``/w/api.php`` on a :class:`~factcheck.testing.http.FakeServer`.

    ``entities`` maps an id to its entity JSON as ``wbgetentities`` returns it (an optional
    ``"popularity"`` number orders search results and is never served). Use as
    ``with FakeWikibase(...) as server`` (the running server: ``server.url + "/w/api.php"``)
    or call :meth:`start` and :meth:`stop`.
    """

    def __init__(self, entities: Mapping[str, Mapping[str, Any]], *, keep_alive: bool = True) -> None:
        self.entities: dict[str, dict[str, Any]] = {key.upper(): dict(value) for key, value in entities.items()}
        self.lag = 0  # seconds the replicas lag; a request with maxlag below it gets the maxlag error
        self.retry_after = 1  # the Retry-After of a maxlag answer
        self.user_agent_policy = False  # refuse requests without an identifying User-Agent, as Wikimedia does
        self.delay_s = 0.0  # seconds before every answer
        self.server = FakeServer(keep_alive=keep_alive)
        for method in ("GET", "POST"):
            self.server.route(method, API_PATH, self.answer)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> FakeWikibase:
        """Entities from a JSON file: an object of id -> entity (or a ``wbgetentities`` answer)."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(data.get("entities", data) if isinstance(data, dict) else {}, **kwargs)

    @property
    def url(self) -> str:
        """The server's base URL (the endpoint is ``url + "/w/api.php"``)."""
        return self.server.url

    @property
    def endpoint(self) -> str:
        """The API's address."""
        return self.server.url + API_PATH

    def calls(self, path: str = API_PATH) -> list[Request]:
        """The requests received on ``path``."""
        return self.server.calls(path)

    def queue(self, *responses: Response, method: str = "GET") -> None:
        """Serve these responses, in order, before the API's own answers."""
        self.server.queue(method, API_PATH, *responses)

    def start(self) -> FakeServer:
        """Start serving; returns the running server."""
        return self.server.start()

    def stop(self) -> None:
        """Stop serving."""
        self.server.stop()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, request: Request) -> Response:
        """The API's answer to ``request``."""
        response = self._answer(request)
        if self.delay_s:
            response.delay_s = max(response.delay_s, self.delay_s)
        return response

    def _answer(self, request: Request) -> Response:
        if self.user_agent_policy and not self._identified(request):
            return user_agent_refused()
        params = {key: values[-1] for key, values in request.query.items()}
        if request.method == "POST" and request.body:
            params.update({k: v[-1] for k, v in parse_qs(request.body.decode("utf-8", "replace")).items()})
        if "maxlag" in params and self.lag:
            try:
                allowed = int(params["maxlag"])
            except ValueError:
                return api_error("badinteger", f'Invalid value "{params["maxlag"]}" for integer parameter "maxlag".')
            if self.lag > allowed:
                return maxlag_error(self.lag, retry_after=self.retry_after)
        action = params.get("action")
        if action == "wbsearchentities":
            return self.search(params)
        if action == "wbgetentities":
            return self.get_entities(params)
        if action is None:
            return Response(
                status=200,
                raw=b"<!DOCTYPE html><title>MediaWiki API help</title>",
                headers={"Content-Type": "text/html; charset=utf-8"},
            )
        return api_error("badvalue", f'Unrecognized value for parameter "action": {action}.')

    @staticmethod
    def _identified(request: Request) -> bool:
        agent = next((v for k, v in request.headers.items() if k.lower() == "user-agent"), "").strip()
        return bool(agent) and not BARE_AGENT.match(agent)

    # wbsearchentities

    def search(self, params: Mapping[str, str]) -> Response:
        """Answer ``action=wbsearchentities``."""
        for required in ("search", "language"):
            if required not in params:
                return api_error("missingparam", f'The "{required}" parameter must be set.')
        text, language = params["search"], params["language"]
        kind = params.get("type", "item")
        if kind not in ("item", "property", "lexeme", "form", "sense"):
            return api_error("badvalue", f'Unrecognized value for parameter "type": {kind}.')
        warnings: list[str] = []
        try:
            limit = int(params.get("limit", SEARCH_DEFAULT_LIMIT))
            offset = int(params.get("continue", 0))
        except ValueError:
            return api_error("badinteger", 'Invalid value for integer parameter "limit" or "continue".')
        if limit > SEARCH_MAX_LIMIT:
            warnings.append(f'The value "{limit}" for parameter "limit" must be between 1 and {SEARCH_MAX_LIMIT}.')
            limit = SEARCH_MAX_LIMIT
        limit = max(limit, 1)
        display = params.get("uselang", language)
        hits = sorted(
            (
                hit
                for entity in self.entities.values()
                if entity.get("type") == kind
                for hit in [self._match(entity, text, language)]
                if hit
            ),
            key=lambda hit: hit[0],
        )
        page = hits[offset : offset + limit]
        body: dict[str, Any] = {
            "searchinfo": {"search": text},
            "search": [self._result(entity, match, display) for _, entity, match in page],
        }
        if offset + limit < len(hits):
            body["search-continue"] = offset + limit
        if warnings:
            body = {"warnings": {"wbsearchentities": {"*": "\n".join(warnings)}}, **body}
        body["success"] = 1
        return Response(body)

    def _match(
        self, entity: Mapping[str, Any], text: str, language: str
    ) -> tuple[tuple[int, int, float, int], Mapping[str, Any], dict[str, str]] | None:
        wanted = fold(text).strip()
        if not wanted:
            return None
        best: tuple[tuple[int, int], dict[str, str]] | None = None
        for lang in dict.fromkeys((language, "en")):
            terms: list[tuple[str, str]] = []
            if lang in entity.get("labels", {}):
                terms.append(("label", entity["labels"][lang]["value"]))
            terms += [("alias", a["value"]) for a in entity.get("aliases", {}).get(lang, [])]
            for kind, value in terms:
                folded = fold(value)
                if not folded.startswith(wanted):
                    continue
                rank = (0 if folded == wanted else 1, 0 if kind == "label" else 1)
                if best is None or rank < best[0]:
                    best = (rank, {"type": kind, "language": lang, "text": value})
            if best is not None:
                break  # the fallback language is searched only when the asked one has no match
        if best is None:
            return None
        popularity = float(entity.get("popularity", len([s for ss in entity.get("claims", {}).values() for s in ss])))
        return (best[0][0], best[0][1], -popularity, numeric(entity["id"])), entity, best[1]

    def _result(self, entity: Mapping[str, Any], match: dict[str, str], language: str) -> dict[str, Any]:
        entity_id = entity["id"]
        title = entity_id if entity["type"] == "item" else f"Property:{entity_id}"
        result: dict[str, Any] = {
            "id": entity_id,
            "title": title,
            "pageid": entity.get("pageid", self._pageid(entity_id)),
            "repository": "wikidata",
            "url": f"//www.wikidata.org/wiki/{title}",
            "concepturi": f"http://www.wikidata.org/entity/{entity_id}",
        }
        if entity["type"] == "property" and "datatype" in entity:
            result["datatype"] = entity["datatype"]
        label = self._term(entity, "labels", language)
        description = self._term(entity, "descriptions", language)
        display: dict[str, Any] = {}
        if label:
            result["label"] = label["value"]
            display["label"] = {"value": label["value"], "language": label["language"]}
        if description:
            result["description"] = description["value"]
            display["description"] = {"value": description["value"], "language": description["language"]}
        result["display"] = display
        result["match"] = match
        if match["type"] == "alias":
            result["aliases"] = [match["text"]]
        return result

    @staticmethod
    def _term(entity: Mapping[str, Any], key: str, language: str) -> Mapping[str, str] | None:
        terms = entity.get(key, {})
        found: Mapping[str, str] | None = terms.get(language) or terms.get("en")
        return found

    @staticmethod
    def _pageid(entity_id: str) -> int:
        # Made up but stable: real page ids are unrelated to entity ids.
        return numeric(entity_id) * 7 + (1_000_000 if entity_id[0] == "P" else 100)

    # wbgetentities

    def get_entities(self, params: Mapping[str, str]) -> Response:
        """Answer ``action=wbgetentities``."""
        if not params.get("ids"):
            return api_error(
                "param-missing",
                'Either provide the item "ids" or pairs of "sites" and "titles" for corresponding pages',
            )
        ids = list(dict.fromkeys(i.strip() for i in params["ids"].split("|")))
        if len(ids) > GET_MAX_IDS:
            return api_error(
                "toomanyvalues",
                f'Too many values supplied for parameter "ids". The limit is {GET_MAX_IDS}.',
                limit=GET_MAX_IDS,
                lowlimit=GET_MAX_IDS,
                highlimit=500,
            )
        for entity_id in ids:
            if not ENTITY_ID.match(entity_id):
                return api_error(
                    "no-such-entity",
                    f'Could not find an entity with the ID "{entity_id}".',
                    id=entity_id,
                    messages=[
                        {
                            "name": "wikibase-api-no-such-entity",
                            "parameters": [entity_id],
                            "html": {"*": "Could not find an entity with the ID."},
                        }
                    ],
                )
        props = set(params.get("props", "|".join(ALL_PROPS)).split("|"))
        languages = set(params["languages"].split("|")) if params.get("languages") else None
        entities: dict[str, Any] = {}
        for entity_id in (i.upper() for i in ids):
            entity = self.entities.get(entity_id)
            entities[entity_id] = (
                {"id": entity_id, "missing": ""} if entity is None else self._served(entity, props, languages)
            )
        return Response({"entities": entities, "success": 1})

    def _served(self, entity: Mapping[str, Any], props: set[str], languages: set[str] | None) -> dict[str, Any]:
        served = {k: copy.deepcopy(v) for k, v in entity.items() if k not in UNSERVED}
        if "info" in props:
            served.setdefault("pageid", self._pageid(served["id"]))
            served.setdefault("ns", 0 if served["type"] == "item" else 120)
            served.setdefault("title", served["id"] if served["type"] == "item" else f"Property:{served['id']}")
            served.setdefault("lastrevid", 2_300_000_000 + numeric(served["id"]))
            served.setdefault("modified", "2026-01-15T09:30:00Z")
        else:
            for key in INFO_KEYS:
                served.pop(key, None)
        for key in ("sitelinks", "aliases", "labels", "descriptions", "claims", "datatype"):
            if key not in props:
                served.pop(key, None)
        if "claims" in props:
            served.setdefault("claims", {})
        if "sitelinks" in props:
            served.setdefault("sitelinks", {})
        if languages is not None:
            for key in TERM_KEYS:
                if key in served:
                    served[key] = {lang: value for lang, value in served[key].items() if lang in languages}
        return {key: served[key] for key in self._order(served)}

    @staticmethod
    def _order(served: Mapping[str, Any]) -> list[str]:
        first = ["type", "datatype", "id", *INFO_KEYS, "labels", "descriptions", "aliases", "claims", "sitelinks"]
        return [k for k in first if k in served] + [k for k in served if k not in first]
