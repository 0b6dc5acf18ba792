"""Persian text normaliser for WER/CER, label and option matching, NER spans and translation into Persian (no hazm).

The paper (§4.2, §6.1) does not state its normaliser; this one is ours. It is applied identically to both sides
of every Persian comparison: ASR reference and hypothesis, gold and predicted labels and option texts, gold and
predicted NER spans, and the reference and hypothesis of English->Persian translation (chrF++ and BLEU; the raw
sacrebleu figures are reported beside them as ``chrf_pp_raw``/``bleu_raw``). Its aim: **one word written with a
ZWNJ, joined, or with a space is one word**, and spelling variants that a reader does not see (Arabic or Persian
yeh/kaf, digits, harakat) never cost a point. Steps, in order (:data:`NORMALIZER_STEPS`):

1. ``nfkc``: Unicode NFKC (Arabic presentation forms to base letters, e.g. ``ﻻ`` -> ``لا``; full-width Latin to
   ASCII; ``ا`` + hamza above composes to ``أ``, unified in step 2).
2. ``letters``: Arabic letter variants to the Persian letters: ``ي`` U+064A and ``ى`` U+0649 -> ``ی`` U+06CC;
   ``ك`` U+0643 -> ``ک`` U+06A9; ``ة`` U+0629 and ``ۀ`` U+06C0 -> ``ه`` U+0647; ``أ`` ``إ`` ``ٱ`` -> ``ا``;
   ``ؤ`` -> ``و``. ``آ`` and ``ئ`` are kept (distinct in Persian spelling).
3. ``digits``: Persian ``۰-۹`` (U+06F0-U+06F9) and Arabic-Indic ``٠-٩`` (U+0660-U+0669) -> ASCII ``0-9``.
   Numbers written as words stay words (``۵`` vs ``پنج`` still differ).
4. ``diacritics``: remove harakat and other Arabic combining marks U+064B-U+065F (this includes the ezafe hamza
   U+0654 of ``هٔ``), superscript alef U+0670, and tatweel U+0640 (``کِتـاب`` -> ``کتاب``, ``خانهٔ`` -> ``خانه``).
5. ``ezafe``: the ezafe ``ی`` written as its own piece after a word-final ``ه`` (``خانه‌ی`` with a ZWNJ, ``خانه ی``
   with a space) is dropped, so ``خانه‌ی``, ``خانه ی``, ``خانهٔ``, ``خانۀ`` and ``خانه`` are all ``خانه`` (the ezafe
   is unwritten after other letters, so dropping it is the one consistent spelling). A joined ``هی`` (``ماهی``)
   is a different word and is kept.
6. ``zwnj``: the zero-width non-joiner U+200C is **removed** (the two parts join: ``می‌روم`` -> ``میروم``,
   ``بندر‌ها`` -> ``بندرها``): a ZWNJ never separates two words. Other invisible format characters (ZWJ U+200D,
   ZWSP U+200B, BOM U+FEFF, LRM/RLM U+200E/U+200F, bidi embeddings U+202A-U+202E, isolates U+2066-U+2069) are
   removed too.
7. ``punctuation``: every Unicode punctuation (P*) or symbol (S*) character becomes a space (``،`` ``؛`` ``؟``
   ``«»`` ``.`` ``!`` ...), so a space before ``؟`` or ``،`` makes no difference.
8. ``casefold``: Latin letters case-folded (code-switched English words).
9. ``whitespace``: runs of whitespace become one space; leading/trailing spaces removed.
10. ``affixes``: the bound Persian affixes written as separate words (models and transcribers write ``می روم``,
    ``کتاب ها``, ``بزرگ تر`` for ``می‌روم``, ``کتاب‌ها``, ``بزرگ‌تر``) are joined to their neighbour:
    the prefixes :data:`JOINED_PREFIXES` (``می``, ``نمی``, ``بی``) to the following word, the suffixes
    :data:`JOINED_SUFFIXES` (plural ``ها``/``های``/``هایی`` and ``هایم``... ``هایشان``; possessive and copula
    ``ام``/``ات``/``اش``/``ایم``/``اید``/``اند``/``مان``/``تان``/``شان``; comparative ``تر``/``ترین``) to the preceding
    word, and ``ای`` (indefinite/copula after a silent h: ``خانه ای`` = ``خانه‌ای``) only after a word ending in ``ه``
    (elsewhere a separate ``ای`` is the vocative "O", ``ای ساربان``, and stays a word). Only Persian-script
    neighbours are joined; an affix with no neighbour (first or last word) stays.

    Known cost: a few real words look like affixes (``می`` "wine",
    ``بی`` "without", ``تر`` "wet", ``شان`` "dignity"). They join their neighbour on **both** sides, so
    identical text still scores 0 and text that differs only in ZWNJ/space/joined spelling still matches; the only
    effect is that an error next to such a word is counted on one joined word instead of two.

Examples: ``بندر‌ها شلوغ است`` = ``بندرها شلوغ است`` = ``بندر ها شلوغ است`` -> ``بندرها شلوغ است``;
``كتاب‌هاي  من!`` -> ``کتابهای من``; ``آیا می‌آیی ؟`` -> ``آیا میآیی``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

NORMALIZER_VERSION = "2"
NORMALIZER_STEPS = ("nfkc", "letters", "digits", "diacritics", "ezafe", "zwnj", "punctuation", "casefold", "whitespace", "affixes")
#: Orthographic steps only (no punctuation, case or affix changes): :func:`normalize_orthography`.
ORTHOGRAPHY_STEPS = NORMALIZER_STEPS[:6]
#: Prefixes written as separate words that join the following word (step ``affixes``).
JOINED_PREFIXES = frozenset({"می", "نمی", "بی"})
#: Suffixes written as separate words that join the preceding word (step ``affixes``).
JOINED_SUFFIXES = frozenset({
    "ها", "های", "هایی", "هایم", "هایت", "هایش", "هایمان", "هایتان", "هایشان",
    "ام", "ات", "اش", "ایم", "اید", "اند", "مان", "تان", "شان",
    "تر", "ترین",
})
#: Joins the preceding word only when that word ends in ``ه`` (elsewhere it is the vocative "O").
SUFFIX_AFTER_HEH = "ای"

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
_EZAFE = re.compile("(?<=\u0647)[\u200c ]\u06cc(?!\\w)")  # ه + (ZWNJ | space) + a lone ی


def _has_persian_letter(word: str) -> bool:
    return any("\u0600" <= ch <= "\u06ff" and ch.isalpha() for ch in word)


def to_ascii_digits(text: str) -> str:
    """Persian (``۰-۹``) and Arabic-Indic (``٠-٩``) digits to ASCII; nothing else changes. ``"۳"`` -> ``"3"``."""
    return text.translate(_DIGITS)


def _punctuation_to_space(text: str) -> str:
    return "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)


def normalize_orthography(text: str | None) -> str:
    """Steps 1-6 of the module docstring (NFKC, letters, digits, diacritics, ezafe, ZWNJ and invisibles removed);
    punctuation, case, spacing and separate affixes are left alone. Used where punctuation carries meaning (an
    option answer ``"2."``, ``"گزینهٔ 2)"``). Example: ``"گزینه‌ی ۲)"`` -> ``"گزینه 2)"``; ``None`` gives ``""``."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", str(text))
    text = text.translate(_LETTERS)
    text = to_ascii_digits(text)
    text = _DIACRITICS.sub("", text)
    text = _EZAFE.sub("", text)
    return _INVISIBLE.sub("", text.replace(_ZWNJ, ""))


def join_affixes(words: list[str]) -> list[str]:
    """Step ``affixes``: separate :data:`JOINED_PREFIXES` joined to the next word, :data:`JOINED_SUFFIXES` (and
    ``ای`` after a word ending in ``ه``) to the previous one; only Persian-script neighbours are joined.

    ``["می", "روم"]`` -> ``["میروم"]``; ``["کتاب", "ها", "را"]`` -> ``["کتابها", "را"]``;
    ``["ای", "ساربان"]`` -> unchanged (vocative, no preceding word); ``["خانه", "ای"]`` -> ``["خانهای"]``.
    """
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in JOINED_PREFIXES and index + 1 < len(words) and _has_persian_letter(words[index + 1]):
            word, index = word + words[index + 1], index + 1
        previous = out[-1] if out else ""
        is_suffix = word in JOINED_SUFFIXES or (word == SUFFIX_AFTER_HEH and previous.endswith("\u0647"))
        if is_suffix and previous and _has_persian_letter(previous):
            out[-1] = previous + word
        else:
            out.append(word)
        index += 1
    return out


def normalize_persian(text: str | None) -> str:
    """Normalise ``text`` with the ten steps of the module docstring (identical for both sides of a comparison).

    Args:
        text: any string; ``None`` gives ``""``.

    Returns:
        The normalised string, words separated by single spaces. Examples: ``"كتاب‌هاي  من!"`` -> ``"کتابهای من"``;
        ``"بندر‌ها شلوغ است"``, ``"بندر ها شلوغ است"`` and ``"بندرها شلوغ است"`` -> ``"بندرها شلوغ است"``.
    """
    if not text:
        return ""
    return _normalized_persian(str(text))


#: Distinct strings whose normalised form is memoised (least recently used dropped).
NORMALISED_CACHE_SIZE = 1 << 16


@lru_cache(maxsize=NORMALISED_CACHE_SIZE)
def _normalized_persian(text: str) -> str:
    """:func:`normalize_persian` of a non-empty string, memoised: one item's reference and hypothesis are read by
    WER, CER, WERfix, the loop check and the gold check, and each is normalised once."""
    text = normalize_orthography(text)
    if not text:
        return ""
    text = _punctuation_to_space(text)
    text = text.casefold()
    return " ".join(join_affixes(_WHITESPACE.sub(" ", text).strip().split(" "))) if text.strip() else ""


def clear_normalisation_cache() -> None:
    """Forget every memoised normalised string (results do not change; benchmarks use it to time cold runs)."""
    _normalized_persian.cache_clear()


def label_key(text: str | None) -> str:
    """A matching key for labels and aliases: :func:`normalize_persian`, then only letters and digits kept.

    ``"Alarm Set"``, ``"alarm-set"``, ``"ALARM_SET"`` -> ``"alarmset"``; ``"غیر رسمی"`` and ``"غیررسمی"`` ->
    ``"غیررسمی"``.
    """
    return "".join(ch for ch in normalize_persian(text) if ch.isalnum())


def normalizer_signature() -> str:
    """Short description of the normaliser for result signatures, e.g. ``norm:parsa-fa-2(nfkc+letters+...)``."""
    return f"norm:parsa-fa-{NORMALIZER_VERSION}({'+'.join(NORMALIZER_STEPS)};zwnj=join;ezafe-y=drop;affixes=join)"
