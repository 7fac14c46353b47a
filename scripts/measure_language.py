"""How often the language guard refuses English claims, and how often it catches short German and French ones.

Reads the English claims of ../shared/data (or FACTCHECK_SHARED_DATA), fixed lists of short German
and French claims written for this script (the rule was designed on them), and sentences in five
languages written after the rule was chosen; prints the refusals of an English-only verifier.
The figures are quoted in docs/configuration.md ("Languages").

    python scripts/measure_language.py
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from factcheck.language import detect
from factcheck.paths import shared_data_dir

ENGLISH = frozenset({"en"})
# (file, field, rows read): every English claim set of the shared data, capped where it is large
SETS = (
    ("scifact/claims_train.jsonl", "claim", None),
    ("scifact/claims_dev.jsonl", "claim", None),
    ("fever/paper_dev.jsonl", "claim", None),
    ("fm2/dataset/dev.jsonl", "text", None),
    ("vitaminc/vitaminc_real/test.jsonl", "claim", 10000),
    ("liar/valid.jsonl", "statement", None),
    ("healthver/dev.jsonl", "claim", None),
    ("ito_mafc/xfact_subset747.jsonl", "claim", None),
    ("ito_mafc/feverous_dev_claims7870.jsonl", "claim", None),
)
GERMAN = (
    "Der Eiffelturm steht in Berlin.",
    "Die Erde ist rund.",
    "Rauchen verursacht Lungenkrebs.",
    "Impfungen verursachen Autismus.",
    "Berlin ist die Hauptstadt von Deutschland.",
    "Der Mond besteht aus Käse.",
    "Wasser kocht bei 100 Grad.",
    "Goethe wurde in Frankfurt geboren.",
    "Statine senken das LDL-Cholesterin.",
    "Übergewicht erhöht das Risiko für Typ-2-Diabetes nicht.",
    "Die Sonne ist ein Stern.",
    "Albert Einstein erhielt 1921 den Nobelpreis für Physik.",
    "Kaffee ist gesund.",
    "Hunde sind Säugetiere.",
    "Das Auto wurde in Deutschland erfunden.",
)
FRENCH = (
    "La tour Eiffel est à Berlin.",
    "La Terre est ronde.",
    "Le tabac provoque le cancer du poumon.",
    "Les vaccins provoquent l'autisme.",
    "Paris est la capitale de la France.",
    "La Lune est faite de fromage.",
    "L'eau bout à 100 degrés.",
    "Victor Hugo est né à Besançon.",
    "Les statines réduisent le cholestérol LDL.",
    "L'obésité n'augmente pas le risque de diabète de type 2.",
    "Le Soleil est une étoile.",
    "Marie Curie a reçu deux prix Nobel.",
    "Le café est bon pour la santé.",
    "Les chiens sont des mammifères.",
    "La voiture a été inventée en France.",
)


# Written after the rule was chosen on the lists above, to measure it on sentences it was not designed on.
HELD_OUT = {
    "German": (
        "Der Rhein fließt durch Köln.",
        "Bananen enthalten viel Kalium.",
        "Mozart starb in Wien.",
        "Die Zugspitze ist der höchste Berg Deutschlands.",
        "Antibiotika helfen nicht gegen Viren.",
        "Der Zweite Weltkrieg endete 1945.",
        "Zucker verursacht Karies.",
        "Bier wird aus Hopfen gebraut.",
        "Die Mauer fiel im November 1989.",
        "Grüner Tee senkt den Blutdruck.",
        "Katzen schlafen viel.",
        "Das Herz hat vier Kammern.",
        "Insulin wird in der Bauchspeicheldrüse gebildet.",
        "Hamburg hat einen großen Hafen.",
        "Vitamin C verhindert Erkältungen.",
    ),
    "French": (
        "Le Rhône traverse Lyon.",
        "Les bananes contiennent du potassium.",
        "Napoléon est mort à Sainte-Hélène.",
        "Le mont Blanc culmine à 4808 mètres.",
        "Les antibiotiques ne soignent pas les virus.",
        "La Révolution française a commencé en 1789.",
        "Le sucre provoque des caries.",
        "Le vin est fait avec du raisin.",
        "Marseille est un grand port.",
        "Le thé vert fait baisser la tension.",
        "Les chats dorment beaucoup.",
        "Le cœur a quatre cavités.",
        "L'insuline est produite par le pancréas.",
        "Bordeaux se trouve en Gironde.",
        "La vitamine C empêche les rhumes.",
    ),
    "Spanish": (
        "El sol es una estrella.",
        "Madrid es la capital de España.",
        "Las vacunas causan autismo.",
        "El agua hierve a cien grados.",
        "Cervantes escribió el Quijote.",
    ),
    "Italian": (
        "Il sole è una stella.",
        "Roma è la capitale d'Italia.",
        "I vaccini causano l'autismo.",
        "Leonardo dipinse la Gioconda.",
        "Il caffè fa bene alla salute.",
    ),
    "Dutch": (
        "De zon is een ster.",
        "Amsterdam is de hoofdstad van Nederland.",
        "Vaccins veroorzaken autisme.",
        "Rembrandt schilderde de Nachtwacht.",
        "Koffie is gezond.",
    ),
}


def english_claims(data: Path) -> Iterator[str]:
    for relative, key, cap in SETS:
        with (data / relative).open(encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                if cap is not None and number >= cap:
                    break
                yield json.loads(line)[key]


def refused(text: str) -> bool:
    detection = detect(text)
    return detection is not None and detection.unreadable_by(ENGLISH)


def main() -> None:
    claims = list(english_claims(shared_data_dir()))
    start = time.perf_counter()
    wrong = [claim for claim in claims if refused(claim)]
    per_claim_ms = (time.perf_counter() - start) / len(claims) * 1000
    print(f"English claims refused: {len(wrong)} of {len(claims)} ({per_claim_ms:.3f} ms a claim, model loaded)")
    for claim in wrong:
        print(f"  {claim}")
    for name, sentences in (("German", GERMAN), ("French", FRENCH)):
        pairs = [f"{sentences[i]} {sentences[(i + 1) % len(sentences)]}" for i in range(len(sentences))]
        one, two = sum(map(refused, sentences)), sum(map(refused, pairs))
        print(f"{name}: {one} of {len(sentences)} one-sentence texts refused, {two} of {len(pairs)} two-sentence ones")
    for name, sentences in HELD_OUT.items():
        missed = [sentence for sentence in sentences if not refused(sentence)]
        pairs = [f"{sentences[i]} {sentences[(i + 1) % len(sentences)]}" for i in range(len(sentences))]
        print(
            f"{name} (held out): {len(sentences) - len(missed)} of {len(sentences)} one-sentence texts refused,"
            f" {sum(map(refused, pairs))} of {len(pairs)} two-sentence ones"
        )
        for sentence in missed:
            print(f"  missed: {sentence}")


if __name__ == "__main__":
    main()
