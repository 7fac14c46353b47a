"""How often a claim's time is resolved as a reader would, on real claims with the date they were made.

Reads the first PolitiFact 2022 claims of the MAFC authors' sample (``ito_mafc/politifact_2022_sample174.jsonl``,
``statement_date``) from ../shared/data (or FACTCHECK_SHARED_DATA), resolves each claim's time against its
statement date with :func:`factcheck.claimtime.with_times`, and compares it with a hand annotation written for
this script (below, by ``source_row``): the first 45 rows, on which the resolver's rules were adjusted, and the
next 35, annotated after the last adjustment and never used to change it; and the first 32 AVeriTeC dev claims
(``averitec/dev.jsonl``, ``claim_date``), annotated the same way, also held out.

The annotation follows what the resolver is meant to read: explicit dates and years, and relative expressions
("now", "recently", "in 27 years", "for eight years") resolved against the statement date. A time a reader
knows only from the world ("as soon as Biden took office") or only from the tense ("Texas is 50th") is
annotated as none. A resolved time is right when its start and end equal the annotation's.

    python scripts/measure_claim_time.py
"""

from __future__ import annotations

import json
from datetime import datetime

from factcheck import Claim
from factcheck.claimtime import reference_time, with_times
from factcheck.paths import shared_data_dir

# source_row -> (start, end) of the time the claim speaks of, or None; (day, day) for "now" on that day.
ANNOTATION: dict[int, tuple[str, str] | None] = {
    0: None,
    1: None,
    3: None,
    4: None,
    5: None,
    6: None,
    7: None,
    8: None,
    9: None,
    13: ("2014-01-01", "2022-12-31"),  # "for eight years", said 1/17/2022
    14: ("1995-01-01", "2022-12-31"),  # "lowest level in 27 years", said 4/11/2022
    15: None,
    18: None,
    20: None,
    21: ("2022-02-17", "2022-02-17"),  # "There are now zero students ..."
    22: None,
    23: None,
    24: None,
    25: ("2022-05-07", "2022-05-07"),  # "recently introduced a bill"
    27: None,
    28: None,
    31: None,
    33: None,
    35: None,
    39: None,
    41: None,
    42: ("2020-01-01", "2020-12-31"),  # "In 2020, when Raphael Warnock ran a campaign ad ..."
    44: None,
    49: None,
    51: None,
    55: None,
    56: None,
    59: None,
    60: ("2022-04-01", "2022-04-30"),  # "in April 2022 compared to April 2020"
    63: ("2021-01-01", "2021-12-31"),  # "job growth in 2021"
    65: None,
    66: None,
    68: None,
    74: None,
    75: None,
    77: None,
    78: None,
    79: None,
    84: None,
    85: None,
}
# Annotated after the resolver's last change (durations, "recently"), to measure it on claims it was not fitted to.
HELD_OUT: dict[int, tuple[str, str] | None] = {
    90: ("2022-03-14", "2022-03-14"),  # "The current spike in gas prices"
    91: None,
    92: None,
    95: None,
    96: ("1917-01-01", "1994-12-31"),  # "From 1917 to 1994"
    99: None,
    100: None,
    102: None,
    103: None,
    104: None,
    105: None,
    106: None,
    108: ("2020-01-01", "2020-12-31"),  # "In 2020, more journalists were killed"
    109: ("1970-01-01", "1970-12-31"),  # "voted to legalize abortion in 1970"
    110: None,
    111: ("2022-01-30", "2022-01-30"),  # "the current Supreme Court"
    113: None,
    114: None,
    117: None,
    121: None,
    122: ("2022-01-17", "2022-01-17"),  # "are now the lowest in the nation"
    123: None,
    124: None,
    130: None,
    131: None,  # "his 1996 ... gold medal": the year names the medal, not when the claim holds
    133: None,
    134: None,
    139: None,
    140: None,
    147: None,
    148: None,
    149: None,
    151: None,
    154: ("2021-01-01", "2022-12-31"),  # "doubled our imports ... in the last year" (the past twelve months)
    155: None,
}


# AVeriTeC dev (CC BY-NC 4.0: evaluation only), the first 32 rows, annotated after the resolver was fixed, against
# their claim_date (day first). All held out.
AVERITEC: dict[int, tuple[str, str] | None] = {
    **dict.fromkeys((0, 1, 2, 3, 4, 5, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 27, 28)),
    **dict.fromkeys((29, 30)),
    6: ("2020-10-30", "2020-10-30"),  # "than there are today"
    8: ("2020-11-03", "2020-11-03"),  # "the count weeks after November 3", said 30-10-2020: the coming one
    9: ("2020-10-30", "2020-10-30"),  # "You see the number today?"
    21: ("2020-01-01", "2020-12-31"),  # "the 2020 presidential elections"
    31: ("2020-10-26", "2020-10-26"),  # "confirmed ... on October 26, 2020"
}


def measure(
    rows: dict[int, dict[str, str]],
    annotation: dict[int, tuple[str, str] | None],
    name: str,
    text: str = "statement",
    said_on: str = "statement_date",
    form: str = "%m/%d/%Y",
) -> None:
    right = dated_right = dated = found = 0
    for row_id, expected in annotation.items():
        row = rows[row_id]
        said = datetime.strptime(row[said_on], form).date().isoformat()
        [claim] = with_times([Claim(str(row_id), row[text])], reference_time(said))
        got = (claim.time.start, claim.time.end) if claim.time else None
        right += got == expected
        dated += expected is not None
        found += got is not None
        dated_right += expected is not None and got == expected
        if got != expected:
            phrase = f' from "{claim.time.phrase}"' if claim.time else ""
            print(f"  row {row_id} ({said}): expected {expected}, got {got}{phrase}: {row[text][:90]}")
    total = len(annotation)
    print(f"{name}: {total} claims; annotated with a time: {dated}; resolved with a time: {found}")
    print(f"  right (time or none): {right}/{total} ({right / total:.2f})")
    print(f"  times right (recall): {dated_right}/{dated}; resolved times right (precision): {dated_right}/{found}")


def main() -> None:
    path = shared_data_dir() / "ito_mafc" / "politifact_2022_sample174.jsonl"
    rows = {row["source_row"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    measure(rows, ANNOTATION, "designed on (first 45 rows)")
    measure(rows, HELD_OUT, "held out (next 35 rows)")
    path = shared_data_dir() / "averitec" / "dev.jsonl"
    rows = {row["row"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    measure(rows, AVERITEC, "AVeriTeC dev, held out (first 32 rows)", "claim", "claim_date", "%d-%m-%Y")


if __name__ == "__main__":
    main()
