"""The official MCGA text normaliser for CER (``ChineseCERNormalizer`` in the official ``eval/eval_model.py``).

Steps, applied identically to reference and hypothesis:

1. OpenCC ``t2s`` (traditional to simplified), package ``opencc`` as in the official requirements;
2. full-width digits and Latin letters to half-width (the official explicit table);
3. Whisper's ``BasicTextNormalizer`` (lower-case; drop ``[..]``/``<..>`` and ``(..)`` spans; every Unicode
   mark, symbol or punctuation character becomes a space; NFKC). We use the ``whisper-normalizer`` package,
   a standalone copy of ``whisper.normalizers`` (openai-whisper), instead of openai-whisper itself, which
   would pull in torch/triton only for this function (lmms-eval's vendored copy, ``tasks/librispeech/
   whisper_normalizer``, gives the same strings); tests pin it to outputs of the official code;
4. remove all whitespace.

Both normalisers are pure functions of their input string, so their results are memoised per distinct string
(:data:`NORMALISED_CACHE_SIZE` entries, least recently used dropped): the MCGA aggregations (corpus CER, CER by
genre, CER by dynasty, strict CER) read the same 2,000 strings of a 1,000-row task, and each is normalised once.
``clear_normalisation_cache()`` empties the memo (benchmarks use it to time cold runs).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from audio_bench_core.text import nfkc

_FULL_WIDTH = "０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ"
_HALF_WIDTH = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_WIDTH_TABLE = str.maketrans(_FULL_WIDTH, _HALF_WIDTH)
_WHITESPACE = re.compile(r"\s+")
#: Distinct strings whose normalised form is memoised (about 200 bytes each: a few MB at most).
NORMALISED_CACHE_SIZE = 1 << 16


#: Distribution of the ``BasicTextNormalizer`` behind step 3, named with its version in :func:`normalizer_signature`.
WHISPER_BASIC_DISTRIBUTION = "whisper-normalizer"
#: Why OpenCC is needed, in the error raised where it is not installed.
OPENCC_MISSING = (
    "the official MCGA CER converts traditional to simplified characters with OpenCC's t2s tables: pip install opencc "
    "(zhconv, lmms-eval's converter, uses other tables and gives other numbers)"
)


@lru_cache(maxsize=None)
def opencc_converter(config: str):
    """The OpenCC converter of ``config`` (``"t2s"``, ``"jp2t"``, ...), imported on first use.

    Raises:
        ModuleNotFoundError: ``opencc`` is not installed (:data:`OPENCC_MISSING`).
    """
    try:
        import opencc
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(OPENCC_MISSING) from error
    return opencc.OpenCC(config)


def _t2s():
    return opencc_converter("t2s")


@lru_cache(maxsize=1)
def _whisper_basic():
    """Whisper's ``BasicTextNormalizer()`` (whisper-normalizer) as a function, equal to the library's on every string
    (tests check it), in time linear in the text's length.

    The library's ``__call__`` lower-cases, removes ``[...]``/``<...>`` spans (``re.sub(r"[<\\[][^>\\]]*[>\\]]", "",
    s)``) and ``(...)`` spans (``re.sub(r"\\(([^)]+?)\\)", "", s)``), maps symbols to spaces (``clean``) and joins
    whitespace. Two steps are changed, never their output:

    - each span regex runs only on the text up to the last closing character: an opening character with no closing
      one after it can never match, and the library's regex tried each such one to the end of the text (quadratic: a
      reply of 64,000 ``[`` took over 20 s); the rest is appended as it is;
    - ``clean`` (``remove_symbols``: every character of the NFKC form whose Unicode category starts with M, S or P
      becomes a space) is :func:`_remove_symbols`, the same mapping memoised per code point, with a faster NFKC (the
      library's per-character Python loop and NFKC were half of the MCGA scoring time).
    """
    from whisper_normalizer.basic import BasicTextNormalizer

    library = BasicTextNormalizer()
    if library.split_letters:  # pragma: no cover - the official scorer uses the defaults
        raise RuntimeError("whisper-normalizer's BasicTextNormalizer() splits letters by default: its __call__ changed; re-check mcga.normalize")
    brackets, parentheses, spaces = re.compile(r"[<\[][^>\]]*[>\]]"), re.compile(r"\(([^)]+?)\)"), re.compile(r"\s+")

    def up_to_last(pattern: re.Pattern, text: str, last: int) -> str:
        return text if last < 0 else pattern.sub("", text[: last + 1]) + text[last + 1 :]

    def normalise(text: str) -> str:
        text = text.lower()
        text = up_to_last(brackets, text, max(text.rfind(">"), text.rfind("]")))
        text = up_to_last(parentheses, text, text.rfind(")"))
        return spaces.sub(" ", _remove_symbols(text).lower())

    return normalise


class _SymbolsToSpace(dict):
    """``str.translate`` table of whisper's ``remove_symbols``, filled per code point on first sight: a space for
    Unicode categories M*, S*, P*, else the character itself."""

    def __missing__(self, code: int) -> str:
        character = chr(code)
        value = " " if unicodedata.category(character)[0] in "MSP" else character
        self[code] = value
        return value


_SYMBOLS_TO_SPACE = _SymbolsToSpace()


def _remove_symbols(text: str) -> str:
    """``whisper_normalizer.basic.remove_symbols(text)`` (``preserve_marks=False``), as a table look-up. Its NFKC
    is computed as NFC of NFKD (:func:`nfkc`)."""
    return nfkc(text).translate(_SYMBOLS_TO_SPACE)


def normalize_for_cer(text: str | None) -> str:
    """Normalise ``text`` for CER exactly as the official MCGA script does.

    Args:
        text: raw reference or model output; ``None`` or ``""`` give ``""``.

    Returns:
        The normalised string with no whitespace, e.g. ``"舉頭望明月！"`` -> ``"举头望明月"``.
    """
    if not text:
        return ""
    return _normalized_for_cer(str(text))


@lru_cache(maxsize=NORMALISED_CACHE_SIZE)
def _normalized_for_cer(text: str) -> str:
    return _width_basic_nospace(_t2s().convert(text))


@lru_cache(maxsize=NORMALISED_CACHE_SIZE)
def _width_basic_nospace(text: str) -> str:
    """Steps 2-4 (shared by both normalisers, so a string already in simplified script is normalised once)."""
    return _WHITESPACE.sub("", _whisper_basic()(text.translate(_WIDTH_TABLE)))


def clear_normalisation_cache() -> None:
    """Forget every memoised normalised string and the symbol table's entries (results do not change; only the next
    calls are slower)."""
    _normalized_for_cer.cache_clear()
    _width_basic_nospace.cache_clear()
    variant_forms.cache_clear()
    _SYMBOLS_TO_SPACE.clear()


def normalize_for_strict_cer(text: str | None) -> str:
    """The official normaliser without its OpenCC ``t2s`` step (steps 2-4), for the strict CER.

    ``t2s`` rewrites correct simplified characters in context (``乾`` -> ``干`` in ``乾清宫``, ``乾安县``), so the
    strict CER leaves the reference as written and converts only reply characters, see
    :func:`simplify_reply_against_reference`.
    """
    if not text:
        return ""
    return _width_basic_nospace(str(text))


def simplify_reply_against_reference(reply: str, reference: str) -> str:
    """A normalised reply with its traditional and variant characters made those of the reference, never rewriting a
    correct character.

    Rule (strict CER): every reply character that occurs in the reference is kept as it is; every other
    character becomes its OpenCC ``t2s`` form, converted over the whole reply (phrase-aware) when that keeps
    the length, else character by character; a character still not in the reference that is no standard simplified
    character (not in GB 2312) is then folded through OpenCC's variant tables (:func:`variant_forms`: Japanese
    shinjitai, Taiwan and Hong Kong variants, each followed by ``t2s``) when that gives a reference character. The
    reference (MCGA gold is simplified) is not converted.

    So ``夜深乾清宮裏靜`` against ``夜深乾清宫里静`` becomes ``夜深乾清宫里静`` (CER 0), while the wrong
    ``夜深干清宫里静`` stays as it is (``干`` != ``乾``); ``乾燥`` against ``干燥`` becomes ``干燥``; ``徳`` against a
    reference holding ``德`` becomes ``德``. A standard simplified character is never folded (``予`` stays ``予`` against
    ``豫``, though Japanese writes ``予`` for it), and variants OpenCC's tables do not list stay errors (``僊`` for
    ``仙``, ``淸`` for ``清``). A reply character that is both a correct simplified character elsewhere in the
    reference and, here, the traditional form of another reference character (e.g. ``乾`` for ``干`` in a line that
    also contains ``乾隆``) is kept and counts as one substitution: the rule never forgives a character the reference
    does not allow.

    Args:
        reply: a reply already passed through :func:`normalize_for_strict_cer`.
        reference: the reference, normalised the same way.
    """
    if not reply:
        return ""
    converted = _t2s().convert(reply)
    if converted == reply and _all_standard_simplified(reply):  # the usual reply: every character is kept either way
        return reply
    allowed = set(reference)
    if len(converted) != len(reply):
        converted = "".join(_t2s().convert(character) for character in reply)
    out = []
    for original, simple in zip(reply, converted):
        if original in allowed or simple in allowed:
            out.append(original if original in allowed else simple)
        else:
            out.append(next((form for form in variant_forms(original) if form in allowed), simple))
    return "".join(out)


def _all_standard_simplified(text: str) -> bool:
    """True when every character of ``text`` is in GB 2312 (the standard simplified set; ASCII included)."""
    try:
        text.encode("gb2312")
        return True
    except UnicodeEncodeError:
        return False


#: OpenCC configurations whose character tables map a regional or Japanese variant to OpenCC's standard form.
VARIANT_CONFIGS = ("jp2t", "tw2t", "hk2t")


@lru_cache(maxsize=NORMALISED_CACHE_SIZE)
def variant_forms(character: str) -> tuple[str, ...]:
    """The simplified forms OpenCC's variant tables give a character that is no standard simplified character:
    for each of :data:`VARIANT_CONFIGS` (Japanese shinjitai to traditional, Taiwan and Hong Kong variants to OpenCC
    standard) its conversion, then ``t2s``; only one-character results that differ from the input. ``()`` for a
    character in GB 2312 (a standard simplified character is never folded into another one: Japanese writes ``予``
    for ``豫``, ``余`` for ``餘``, and those are different Chinese characters). ``"徳"`` -> ``("德",)``."""
    if _all_standard_simplified(character):
        return ()
    forms = []
    for config in VARIANT_CONFIGS:
        form = _t2s().convert(opencc_converter(config).convert(character))
        if len(form) == 1 and form != character and form not in forms:
            forms.append(form)
    return tuple(forms)


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not-installed"


def normalizer_signature() -> str:
    """A short description of the normalisers and the library versions behind them, for result signatures.

    ``norm:`` is the official one (both sides); ``strict-norm:`` the strict CER's (no ``t2s`` on the reference;
    reply characters not in the reference converted by ``t2s``, :func:`simplify_reply_against_reference`).
    """
    versions = f"opencc-{_package_version('opencc')}"
    basic = f"whisper-basic({WHISPER_BASIC_DISTRIBUTION}-{_package_version(WHISPER_BASIC_DISTRIBUTION)})"
    return (
        f"norm:t2s({versions})+fullwidth+{basic}+nospace|strict-norm:fullwidth+{basic}+nospace+ref-as-written+reply-t2s-except-ref-chars"
        f"+non-gb2312-variants({'/'.join(VARIANT_CONFIGS)})-to-ref-chars"
    )
