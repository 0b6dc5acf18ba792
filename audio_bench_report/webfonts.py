"""Fonts embedded in ``report.html``, so its Chinese and Persian text reads the same on a machine without CJK or
Arabic-script fonts (a bare server, a colleague's laptop): no empty "tofu" boxes.

Per page, every character of the page is given to the first font that has a glyph for it, in this order:

- Arabic-script characters (Persian): ``fonts/NotoSansArabic-Regular-subset.woff`` (shipped, SIL OFL 1.1), with
  its joining and mark tables, so Persian is shaped as in any Persian text;
- CJK characters: ``fonts/NotoSansCJKsc-Regular-subset.woff`` (shipped, SIL OFL 1.1; the project's own CJK
  labels, CJK punctuation and full-width forms; see ``scripts/make_report_fonts.py``);
- everything else: DejaVu Sans, the font matplotlib ships (and draws the figures with);
- what none of these has: a font of the machine writing the report that has it (matplotlib's list of system
  fonts), when ``system_fonts`` is on.

Each font used is cut to its characters (``fontTools.subset``, which comes with matplotlib) and embedded as a
WOFF data URI in one ``@font-face`` rule; the page's ``font-family`` lists those faces first, so the browser
never needs a font of its own. Characters no font covers are returned, and ``audio-bench-report`` names them
in a warning. The demo's page grows by 39 KB (base64).
"""

from __future__ import annotations

import base64
import io
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

FONTS_DIR = Path(__file__).resolve().parent / "fonts"
#: CSS family names of the embedded faces, in the order the page's font-family lists them.
FAMILY_PREFIX = "abr-"
CJK_RANGES = ((0x2E80, 0x9FFF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x3FFFF))
ARABIC_RANGES = ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF), (0x200C, 0x200F))


@dataclass(frozen=True)
class FontSource:
    """A font file (``font_number``: face of a ``.ttc`` collection) and the CSS family name it is embedded as."""

    name: str
    path: Path
    font_number: int = 0


def _in(ranges, ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in ranges)


def dejavu_sans() -> Path:
    """DejaVu Sans as shipped inside matplotlib (``mpl-data/fonts/ttf/DejaVuSans.ttf``)."""
    import matplotlib

    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def shipped_sources() -> dict[str, FontSource]:
    """``{"latin", "arabic", "cjk"}`` font sources: DejaVu Sans and the two shipped Noto subsets."""
    return {
        "latin": FontSource(f"{FAMILY_PREFIX}latin", dejavu_sans()),
        "arabic": FontSource(f"{FAMILY_PREFIX}arabic", FONTS_DIR / "NotoSansArabic-Regular-subset.woff"),
        "cjk": FontSource(f"{FAMILY_PREFIX}cjk", FONTS_DIR / "NotoSansCJKsc-Regular-subset.woff"),
    }


@lru_cache(maxsize=64)
def charmap(path: Path, font_number: int = 0) -> frozenset[int]:
    """The code points ``path`` (face ``font_number``) has glyphs for; empty when it cannot be read."""
    from fontTools.ttLib import TTFont

    try:
        with TTFont(str(path), fontNumber=font_number, lazy=True) as font:
            return frozenset(font.getBestCmap() or {})
    except Exception:  # noqa: BLE001 - an unreadable system font is simply not used
        return frozenset()


@lru_cache(maxsize=1)
def _system_fonts() -> tuple[FontSource, ...]:
    """The machine's fonts (matplotlib's scan of the usual folders), every face of collections, sorted by path."""
    from fontTools.ttLib import TTCollection
    from matplotlib import font_manager

    sources = []
    for index, file in enumerate(sorted(set(font_manager.findSystemFonts()))):
        path = Path(file)
        faces = 1
        if path.suffix.lower() == ".ttc":
            try:
                faces = len(TTCollection(str(path), lazy=True).fonts)
            except Exception:  # noqa: BLE001
                continue
        sources += [FontSource(f"{FAMILY_PREFIX}system{index}-{face}", path, face) for face in range(faces)]
    return tuple(sources)


def _visible(ch: str) -> bool:
    """Characters that need a glyph: not controls, not line breaks (spaces need one: their advance width)."""
    return ch not in "\n\r\t" and unicodedata.category(ch) not in ("Cc",)


def assign(text: str, system_fonts: bool = True) -> tuple[dict[FontSource, str], str]:
    """Which font draws which characters of ``text``.

    Returns:
        ``({source: characters}, uncovered)``: each distinct character needing a glyph under the first font of
        its script's order (see the module docstring) that has it; ``uncovered`` holds those no font has, sorted.
    """
    shipped = shipped_sources()
    orders = {"arabic": ("arabic", "latin", "cjk"), "cjk": ("cjk", "latin", "arabic"), "other": ("latin", "arabic", "cjk")}
    chosen: dict[FontSource, list[str]] = {}
    missing = []
    for ch in sorted({c for c in text if _visible(c)}):
        script = "arabic" if _in(ARABIC_RANGES, ch) else "cjk" if _in(CJK_RANGES, ch) else "other"
        source = next((shipped[k] for k in orders[script] if ord(ch) in charmap(shipped[k].path, shipped[k].font_number)), None)
        if source is None:
            missing.append(ch)
        else:
            chosen.setdefault(source, []).append(ch)
    if missing and system_fonts:
        still = []
        for ch in missing:
            source = next((s for s in _system_fonts() if ord(ch) in charmap(s.path, s.font_number)), None)
            (chosen.setdefault(source, []) if source is not None else still).append(ch)
        missing = still
    return {source: "".join(chars) for source, chars in chosen.items()}, "".join(missing)


def subset_woff(source: FontSource, characters: str) -> bytes:
    """``source`` cut to ``characters`` (plus the glyphs its shaping tables reach), as WOFF bytes."""
    import logging

    from fontTools import subset

    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)  # "FFTM NOT subset": a timestamp table, dropped
    options = subset.Options()
    options.flavor = "woff"
    options.font_number = source.font_number
    options.layout_features = ["*"]
    options.name_IDs = ["*"]  # the copyright and licence records stay in the embedded font
    options.notdef_outline = True
    font = subset.load_font(str(source.path), options, dontLoadGlyphNames=True)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(ch) for ch in characters])
    subsetter.subset(font)
    out = io.BytesIO()
    subset.save_font(font, out, options)
    return out.getvalue()


def unicode_range(characters: str) -> str:
    """CSS ``unicode-range`` of ``characters``: ``U+41-43,U+8BD7``. Browsers pick a face by it (and fetch a face
    only for text it covers), so each character goes to the face it was assigned to."""
    codes = sorted({ord(ch) for ch in characters})
    spans: list[list[int]] = []
    for code in codes:
        if spans and code == spans[-1][1] + 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return ",".join(f"U+{low:X}" if low == high else f"U+{low:X}-{high:X}" for low, high in spans)


def font_faces(text: str, system_fonts: bool = True) -> tuple[str, list[str], str]:
    """CSS for embedding the fonts ``text`` needs.

    Returns:
        ``(css, families, uncovered)``: the ``@font-face`` rules (WOFF data URIs), the family names to put first
        in ``font-family`` (shipped order: Latin, Arabic, CJK, then system fonts), and the characters no font has.
    """
    assigned, uncovered = assign(text, system_fonts)
    order = list(shipped_sources().values())
    sources = sorted(assigned, key=lambda s: (order.index(s) if s in order else len(order), s.name))
    rules = []
    for source in sources:
        data = base64.b64encode(subset_woff(source, assigned[source])).decode("ascii")
        rules.append(f'@font-face{{font-family:"{source.name}";src:url(data:font/woff;base64,{data}) format("woff");'
                     f"unicode-range:{unicode_range(assigned[source])};font-display:block}}")
    return "\n".join(rules), [s.name for s in sources], uncovered

