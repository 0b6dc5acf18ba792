"""Persian text normaliser for WER/CER, label matching and NER span matching (no hazm).

The paper (§4.2, §6.1) does not state its normaliser; this one is ours. It is applied identically to reference
and hypothesis. Steps, in order (:data:`NORMALIZER_STEPS`):

1. ``nfkc``: Unicode NFKC (Arabic presentation forms to base letters, e.g. ``ﻻ`` -> ``لا``; full-width Latin to
   ASCII; ``ا`` + hamza above composes to ``أ``, unified in step 2).
2. ``letters``: Arabic letter variants to the Persian letters: ``ي`` U+064A and ``ى`` U+0649 -> ``ی`` U+06CC;
   ``ك`` U+0643 -> ``ک`` U+06A9; ``ة`` U+0629 and ``ۀ`` U+06C0 -> ``ه`` U+0647; ``أ`` ``إ`` ``ٱ`` -> ``ا``;
   ``ؤ`` -> ``و``. ``آ`` and ``ئ`` are kept (distinct in Persian spelling).
3. ``digits``: Persian ``۰-۹`` (U+06F0-U+06F9) and Arabic-Indic ``٠-٩`` (U+0660-U+0669) -> ASCII ``0-9``.
   Numbers written as words stay words (``۵`` vs ``پنج`` still differ).
4. ``diacritics``: remove harakat and other Arabic combining marks U+064B-U+065F, superscript alef U+0670, and
   tatweel U+0640 (so ``کِتاب`` and ``کتـاب`` are ``کتاب``).
5. ``zwnj``: ZWNJ policy: the zero-width non-joiner U+200C becomes a **space**, so ``می‌روم`` = ``می روم`` (models
   write either); other invisible format characters (ZWJ U+200D, ZWSP U+200B, BOM U+FEFF, LRM/RLM U+200E/U+200F,
   bidi embeddings U+202A-U+202E, isolates U+2066-U+2069) are removed. ``میروم`` (joined) stays one word.
6. ``punctuation``: every Unicode punctuation (P*) or symbol (S*) character becomes a space (``،`` ``؛`` ``؟``
   ``«»`` ``.`` ``!`` ...).
7. ``casefold``: Latin letters case-folded (code-switched English words).
8. ``whitespace``: runs of whitespace become one space; leading/trailing spaces removed.
"""

from __future__ import annotations

import re
import unicodedata

NORMALIZER_VERSION = "1"
NORMALIZER_STEPS = ("nfkc", "letters", "digits", "diacritics", "zwnj", "punctuation", "casefold", "whitespace")

_LETTERS = str.maketrans({
    "\u064a": "\u06cc", "\u0649": "\u06cc",  # Arabic yeh, alef maksura -> Persian yeh
    "\u0643": "\u06a9",  # Arabic kaf -> Persian keheh
    "\u0629": "\u0647", "\u06c0": "\u0647",  # teh marbuta, heh with yeh above -> heh
    "\u0623": "\u0627", "\u0625": "\u0627", "\u0671": "\u0627",  # alef with hamza above/below, alef wasla -> alef
    "\u0624": "\u0648",  # waw with hamza -> waw
})
_DIGITS = str.maketrans({**{chr(0x06F0 + i): str(i) for i in range(10)}, **{chr(0x0660 + i): str(i) for i in range(10)}})
_DIACRITICS = re.compile("[\u064b-\u065f\u0670\u0640]")
_ZWNJ = "\u200c"
_INVISIBLE = re.compile("[\u200b\u200d\u200e\u200f\ufeff\u202a-\u202e\u2066-\u2069]")
_WHITESPACE = re.compile(r"\s+")


def to_ascii_digits(text: str) -> str:
    """Persian (``۰-۹``) and Arabic-Indic (``٠-٩``) digits to ASCII; nothing else changes. ``"۳"`` -> ``"3"``."""
    return text.translate(_DIGITS)


def _punctuation_to_space(text: str) -> str:
    return "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)


def normalize_persian(text: str | None) -> str:
    """Normalise ``text`` with the steps of the module docstring (identical for reference and hypothesis).

    Args:
        text: any string; ``None`` gives ``""``.

    Returns:
        The normalised string, words separated by single spaces. Example: ``"كتاب‌هاي  من!"`` -> ``"کتاب های من"``.
    """
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", str(text))
    text = text.translate(_LETTERS)
    text = to_ascii_digits(text)
    text = _DIACRITICS.sub("", text)
    text = _INVISIBLE.sub("", text.replace(_ZWNJ, " "))
    text = _punctuation_to_space(text)
    text = text.casefold()
    return _WHITESPACE.sub(" ", text).strip()


def label_key(text: str | None) -> str:
    """A matching key for labels and aliases: :func:`normalize_persian`, then only letters and digits kept.

    ``"Alarm Set"``, ``"alarm-set"``, ``"ALARM_SET"`` -> ``"alarmset"``; ``"غیر رسمی"`` and ``"غیررسمی"`` ->
    ``"غیررسمی"``.
    """
    return "".join(ch for ch in normalize_persian(text) if ch.isalnum())


def normalizer_signature() -> str:
    """Short description of the normaliser for result signatures, e.g. ``norm:parsa-fa-1(nfkc+letters+...)``."""
    return f"norm:parsa-fa-{NORMALIZER_VERSION}({'+'.join(NORMALIZER_STEPS)};zwnj=space)"
