"""The official MCGA text normaliser for CER (``ChineseCERNormalizer`` in the official ``eval/eval_model.py``).

Steps, applied identically to reference and hypothesis:

1. OpenCC ``t2s`` (traditional to simplified), package ``opencc`` as in the official requirements;
2. full-width digits and Latin letters to half-width (the official explicit table);
3. Whisper's ``BasicTextNormalizer`` (lower-case; drop ``[..]``/``<..>`` and ``(..)`` spans; every Unicode
   mark, symbol or punctuation character becomes a space; NFKC). We use the ``whisper-normalizer`` package,
   a standalone copy of ``whisper.normalizers`` (openai-whisper), instead of openai-whisper itself, which
   would pull in torch/triton only for this function; tests pin it to outputs of the official code;
4. remove all whitespace.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

_FULL_WIDTH = "０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ"
_HALF_WIDTH = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_WIDTH_TABLE = str.maketrans(_FULL_WIDTH, _HALF_WIDTH)
_WHITESPACE = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _t2s():
    import opencc

    return opencc.OpenCC("t2s")


@lru_cache(maxsize=1)
def _whisper_basic():
    from whisper_normalizer.basic import BasicTextNormalizer

    return BasicTextNormalizer()


def normalize_for_cer(text: str | None) -> str:
    """Normalise ``text`` for CER exactly as the official MCGA script does.

    Args:
        text: raw reference or model output; ``None`` or ``""`` give ``""``.

    Returns:
        The normalised string with no whitespace, e.g. ``"舉頭望明月！"`` -> ``"举头望明月"``.
    """
    if not text:
        return ""
    text = _t2s().convert(str(text))
    text = text.translate(_WIDTH_TABLE)
    text = _whisper_basic()(text)
    return _WHITESPACE.sub("", text)


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not-installed"


def normalizer_signature() -> str:
    """A short description of the normaliser and the library versions behind it, for result signatures."""
    return f"norm:t2s(opencc-{_package_version('opencc')})+fullwidth+whisper-basic(whisper-normalizer-{_package_version('whisper-normalizer')})+nospace"
