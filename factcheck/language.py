"""Which language a text is in, offline, and whether a component can read it.

Verifiers and sources declare the languages they read (``languages``, ISO 639-1
codes; ``None`` reads any). Before judging, the pipeline detects the language of
the checked text with py3langid (BSD-3-Clause; its 4.6 MB model ships inside
the package, nothing is downloaded) and an agent that cannot read it abstains
on every claim, naming the language, instead of giving verdicts it cannot know.

A detection is only trusted when the text has enough letters, the readable
languages together are very unlikely, and either the top language is likely or
the text holds its function words ("der", "est") and fewer of the readable
languages' ("the", "was"): short English claims full of foreign names ("Ludwig
van Beethoven was born in Bonn.") must never be refused, and a short German
sentence the detector is unsure of ("Wasser kocht bei 100 Grad.") must be. The
candidates are the languages named below: rare neighbours (Frisian,
Luxembourgish, Walloon) otherwise take the probability of short German and
French sentences. The function words are spaCy's stop-word lists, which ship
with spaCy itself. The thresholds were measured on 34,095 English claims of
the shared evaluation sets and short sentences in other languages
(``scripts/measure_language.py``; docs/configuration.md, "Languages").
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIN_LETTERS = 12  # below this no guess is trusted: "Aspirin helps." scores as Walloon
MIN_CONFIDENCE = 0.6  # the top language's probability, enough on its own
MIN_CONFIDENCE_WITH_WORDS = 0.4  # enough when the text holds the top language's function words
MAX_READABLE = 0.02  # the readable languages' summed probability, at most
WIDE_SCRIPT = 0x2E80  # from here on (CJK, kana, hangul) one character carries about a word: it counts thrice
SURE = 0.9  # a text's language is recorded from this confidence on (or when an agent was refused for it)
# Never guessed: the model takes plain English for Nigerian Pidgin (an English-based creole) when it
# holds dates and names, and for Latin when it holds Roman or scientific names ("Gaius Julius Caesar
# died in 65 BC ."); a text really in either is rare and is then taken for its nearest language.
EXCLUDED = frozenset({"pcm", "la"})

NAMES: Mapping[str, str] = {
    "af": "Afrikaans",
    "ar": "Arabic",
    "bg": "Bulgarian",
    "bn": "Bengali",
    "ca": "Catalan",
    "cs": "Czech",
    "cy": "Welsh",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "eo": "Esperanto",
    "es": "Spanish",
    "et": "Estonian",
    "eu": "Basque",
    "fa": "Persian",
    "fi": "Finnish",
    "fr": "French",
    "ga": "Irish",
    "gl": "Galician",
    "he": "Hebrew",
    "hi": "Hindi",
    "hr": "Croatian",
    "hu": "Hungarian",
    "id": "Indonesian",
    "is": "Icelandic",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "la": "Latin",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "ms": "Malay",
    "nl": "Dutch",
    "nn": "Norwegian Nynorsk",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sk": "Slovak",
    "sl": "Slovenian",
    "sq": "Albanian",
    "sr": "Serbian",
    "sv": "Swedish",
    "sw": "Swahili",
    "th": "Thai",
    "tl": "Tagalog",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "vi": "Vietnamese",
    "zh": "Chinese",
}


def language_name(code: str) -> str:
    """``German (de)``: the English name and the code, or the code alone for a rare language."""
    name = NAMES.get(code)
    return f"{name} ({code})" if name else f"language {code!r}"


def languages_phrase(codes: frozenset[str]) -> str:
    """``English only``, ``English or French``: what a component reads, for messages."""
    names = [NAMES.get(code, code) for code in sorted(codes)]
    return f"{names[0]} only" if len(names) == 1 else " or ".join(names)


@dataclass(frozen=True)
class Detection:
    """The detected language of a text: ``code`` with ``confidence``, and every language's probability."""

    code: str
    confidence: float
    probabilities: Mapping[str, float]
    words: tuple[str, ...] = ()  # the text's words, lower-cased: function words back up an unsure guess

    @property
    def sure(self) -> bool:
        """Whether the top language is likely enough to be recorded as the text's language."""
        return self.confidence >= SURE

    def readable_share(self, languages: frozenset[str]) -> float:
        """The probability that the text is in one of ``languages``."""
        return sum(self.probabilities.get(code, 0.0) for code in languages)

    def unreadable_by(self, languages: frozenset[str] | None) -> bool:
        """True only when the text is surely in none of ``languages`` (``None`` reads any).

        Beyond the probabilities, the function words decide: a text with more of the readable
        languages' own function words than of the detected language's is never refused, and an
        unsure guess (0.4 to 0.6) stands only with at least one function word of its language.
        """
        if languages is None or self.code in languages:
            return False
        if self.confidence < MIN_CONFIDENCE_WITH_WORDS or self.readable_share(languages) > MAX_READABLE:
            return False
        theirs = stop_words(self.code)
        ours = frozenset().union(*(stop_words(code) for code in languages))
        own = sum(1 for word in self.words if word in theirs and word not in ours)
        readable = sum(1 for word in self.words if word in ours and word not in theirs)
        if readable > own:
            return False
        return self.confidence >= MIN_CONFIDENCE or own >= 1

    def note(self) -> str:
        """``German (de, 0.97)``, for a check's notes."""
        return f"{NAMES.get(self.code, self.code)} ({self.code}, {self.confidence:.2f})"


_lock = threading.Lock()  # checks run detection in worker threads; the model is loaded once


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([code for code in identifier.labels if code in NAMES and code not in EXCLUDED])
    return identifier


@functools.cache
def stop_words(code: str) -> frozenset[str]:
    """spaCy's function words of a language (empty where spaCy has none), lower-cased."""
    try:
        module = importlib.import_module(f"spacy.lang.{code}.stop_words")
    except ImportError:
        return frozenset()
    return frozenset(word.lower() for word in module.STOP_WORDS)


_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")  # an apostrophe, straight or curly, inside a word


def _letters(text: str) -> int:
    return sum((3 if ord(ch) >= WIDE_SCRIPT else 1) for ch in text if ch.isalpha())


@functools.lru_cache(maxsize=64)
def detect(text: str) -> Detection | None:
    """The language of ``text``, or ``None`` when it is too short to tell (under 12 letters; CJK count thrice).

    Remembered for the last texts: the server's event stream checks a text claim by claim, and
    each of those checks asks about the same text.
    """
    if _letters(text) < MIN_LETTERS:
        return None
    with _lock:
        ranked = _identifier().rank(text)
    code, confidence = ranked[0]
    # Only the likely languages are kept: the rest add nothing to a readable share.
    probabilities = {lang: float(p) for lang, p in ranked if p >= 1e-4}
    words = tuple(word for word in _WORD.findall(text.lower()) if len(word) > 1)  # "i", "a": in many languages
    return Detection(code=str(code), confidence=round(float(confidence), 4), probabilities=probabilities, words=words)


def refusal(detection: Detection | None, component: str, languages: frozenset[str] | None) -> str | None:
    """Why ``component`` cannot judge a text in the detected language, or ``None`` when it can (or may)."""
    if detection is None or languages is None or not detection.unreadable_by(languages):
        return None
    return f"the text is {language_name(detection.code)}; the {component} reads {languages_phrase(languages)}"
