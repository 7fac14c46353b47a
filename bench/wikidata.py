"""The wikidata agent on the entity probe (issue 44), against a fake Wikibase serving the probe's statements.

Each claim of ``bench/probes/wikidata/claims.jsonl`` is checked as written (no extraction), one claim a check,
with the judgment cache off, against :class:`factcheck.testing.wikibase.FakeWikibase` serving
``bench/probes/wikidata/entities.json`` on 127.0.0.1. A claim with an ``as_of`` date is checked as of it
(``--as-of``). It prints:

- **Wikidata's own judgments** (the ``wikidata`` agent alone): precision of FALSE (of the claims it judged
  FALSE, the share that are false), precision of TRUE, and coverage (the share it judged at all), overall
  and by kind of value (item, time, quantity), and how many of the ``as_of`` claims it got right;
- **the ``wiki`` profile** with and without the ``wikidata`` agent: the share of claims whose label is right.
  The ``wikipedia`` agent is pointed at the same fake, which serves no pages: what it would add is not
  measured here;
- **requests** a claim sends to the fake (median and most), the median time a claim, and the requests
  of the claims about no entity (``no-entity.jsonl``: at most one is the promise; none is what they cost).

    python bench/wikidata.py [--limit N] [--ids wd-001,wd-002] [--show-wrong]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "bench" / "probes" / "wikidata"
sys.path.insert(0, str(ROOT))

from factcheck import Claim, Label, load_settings  # noqa: E402
from factcheck.build import build_checker  # noqa: E402
from factcheck.testing.wikibase import FakeWikibase  # noqa: E402


def read_claims(probe: Path, name: str) -> list[dict[str, Any]]:
    with (probe / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def checker(endpoint: str, agents: tuple[str, ...]) -> Any:
    settings = load_settings(
        env={},
        profile="wiki",
        only_agents=agents,
        source_options={"wikidata": {"api_url": endpoint}, "wikipedia": {"api_url": endpoint}},
        cache={"enabled": False},
    )
    return build_checker(settings)


def run(fake: FakeWikibase, rows: list[dict[str, Any]], agents: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each claim checked by ``agents``: the wikidata agent's factuality, the claim's label, requests, seconds."""
    check = checker(fake.endpoint, agents)
    results = []
    for row in rows:
        before = len(fake.calls())
        start = time.perf_counter()
        as_of = row.get("as_of")
        if as_of and len(as_of) == 4:  # a year: as of its middle
            as_of = f"{as_of}-06-30"
        verdict = check.check(row["claim"], claims=[Claim(id=row["id"], text=row["claim"])], as_of=as_of)
        seconds = time.perf_counter() - start
        (claim,) = verdict.claims
        judged = {j.agent: j for j in claim.judgments}
        wikidata = judged.get("wikidata")
        results.append(
            {
                "row": row,
                "factuality": wikidata.factuality if wikidata is not None else None,
                "rationale": wikidata.rationale if wikidata is not None else "",
                "label": claim.label,
                "requests": len(fake.calls()) - before,
                "seconds": seconds,
            }
        )
    return results


def own_figures(results: list[dict[str, Any]]) -> str:
    said_true = [r for r in results if r["factuality"] is True]
    said_false = [r for r in results if r["factuality"] is False]
    right_true = sum(1 for r in said_true if r["row"]["label"] is True)
    right_false = sum(1 for r in said_false if r["row"]["label"] is False)
    judged = len(said_true) + len(said_false)

    def share(part: int, whole: int) -> str:
        return f"{part / whole:.3f} ({part}/{whole})" if whole else "n/a (0/0)"

    return (
        f"precision of FALSE {share(right_false, len(said_false))},"
        f" precision of TRUE {share(right_true, len(said_true))}, coverage {share(judged, len(results))}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="the first N claims only")
    parser.add_argument("--ids", default="", help="only these claim ids (comma list)")
    parser.add_argument("--show-wrong", action="store_true", help="print each wrong or abstained claim")
    parser.add_argument("--probe", type=Path, default=PROBE, help="the probe's folder (claims and entities)")
    parser.add_argument("--skip-profile", action="store_true", help="only Wikidata's own judgments")
    args = parser.parse_args()
    rows = read_claims(args.probe, "claims.jsonl")
    if args.ids:
        wanted = set(args.ids.split(","))
        rows = [r for r in rows if r["id"] in wanted]
    rows = rows[: args.limit] if args.limit else rows
    no_entity = read_claims(args.probe, "no-entity.jsonl")
    fake = FakeWikibase.from_file(args.probe / "entities.json")
    with fake:
        results = run(fake, rows, ("wikidata",))
        print(f"Wikidata's own judgments on {len(rows)} entity claims (bench/probes/wikidata):")
        print(f"  all: {own_figures(results)}")
        for kind in ("item", "time", "quantity"):
            part = [r for r in results if r["row"]["kind"] == kind]
            if part:
                print(f"  {kind}: {own_figures(part)}")
        dated = [r for r in results if r["row"].get("as_of")]
        right = sum(1 for r in dated if r["factuality"] is r["row"]["label"])
        print(f"  with --as-of: {right}/{len(dated)} right, {sum(r['factuality'] is None for r in dated)} abstained")
        requests = [r["requests"] for r in results]
        print(
            f"  requests a claim: median {statistics.median(requests):g}, most {max(requests)};"
            f" time a claim: median {statistics.median(r['seconds'] for r in results) * 1000:.0f} ms"
        )
        if args.show_wrong:
            for r in results:
                if r["factuality"] is not r["row"]["label"]:
                    state = "abstained" if r["factuality"] is None else "WRONG"
                    print(f"    {r['row']['id']} {state}: {r['row']['claim']} -> {r['rationale'][:200]}")
        other = run(fake, no_entity, ("wikidata",))
        spent = Counter(r["requests"] for r in other)
        print(f"  claims about no entity: {len(other)}, requests each: {dict(sorted(spent.items()))}")
        if args.skip_profile:
            return
        for agents, name in ((("wikipedia", "wikidata"), "with wikidata"), (("wikipedia",), "without wikidata")):
            labelled = run(fake, rows, agents)
            gold = {True: Label.TRUE, False: Label.FALSE}
            right = sum(1 for r in labelled if r["label"] == gold[r["row"]["label"]])
            print(f"--profile wiki {name}: label right {right / len(labelled):.3f} ({right}/{len(labelled)})")


if __name__ == "__main__":
    main()
