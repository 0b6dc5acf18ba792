"""How ``audio_bench_report/fonts/*.woff`` were made: subsets of two OFL-1.1 Noto fonts from Debian's packages.

``report.html`` embeds, per page, a subset of these fonts holding only the characters the page uses
(``audio_bench_report/fonts.py``), so Chinese and Persian text reads the same on a machine without CJK or Arabic
fonts. The shipped files are subsets too, to keep the repository small:

- ``NotoSansCJKsc-Regular-subset.woff``: Noto Sans CJK SC Regular (face 2 of ``NotoSansCJK-Regular.ttc``,
  Debian package ``fonts-noto-cjk``), cut to every CJK character in the project's own source and data files that
  can reach a report (MCGA's genre and dynasty names, :data:`CJK_SOURCES`), the CJK Symbols and Punctuation block
  (U+3000-303F) and the full-width forms (U+FF01-FF5E). Other CJK characters (a run label in Chinese, say) come
  from a CJK font of the machine writing the report where it has one; else the report names them in a warning.
- ``NotoSansArabic-Regular-subset.woff``: Noto Sans Arabic Regular (Debian package ``fonts-noto-core``), cut to
  the Arabic blocks used by Persian (U+0600-06FF, U+0750-077F, U+08A0-08FF, presentation forms U+FB50-FDFF and
  U+FE70-FEFF) and the joiners and direction marks U+200C-200F, with its shaping tables (init/medi/fina/isol ...).

Run (fontTools comes with matplotlib), from the repository root::

    apt-get download fonts-noto-cjk fonts-noto-core && for d in fonts-noto-*.deb; do dpkg-deb -x "$d" debfonts; done
    .venv/bin/python scripts/make_report_fonts.py debfonts/usr/share/fonts

Both fonts are under the SIL Open Font License 1.1 (``audio_bench_report/fonts/OFL.txt``); the CJK font's
Reserved Font Name is "Source", which the subsets do not use in their names.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "audio_bench_report" / "fonts"
#: Project files whose CJK characters can reach a report (labels, captions, published notes).
CJK_SOURCES = ("mcga/metrics.py", "mcga/report_layout.py", "mcga/report.py", "mcga/published.json", "audio_bench_report")
CJK_RANGES = ((0x2E80, 0x9FFF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x3FFFF))
ARABIC_RANGES = ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF), (0x200C, 0x200F))


def _in(ranges, ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in ranges)


def project_cjk_characters() -> set[str]:
    """Every CJK character in :data:`CJK_SOURCES` (files, or every ``*.py``/``*.json`` of a folder)."""
    chars: set[str] = set()
    for name in CJK_SOURCES:
        path = ROOT / name
        files = sorted(p for p in path.rglob("*") if p.suffix in (".py", ".json")) if path.is_dir() else [path]
        for file in files:
            chars |= {ch for ch in file.read_text(encoding="utf-8") if _in(CJK_RANGES, ch)}
    return chars


def subset(source: Path, font_number: int, unicodes: list[int], out: Path) -> None:
    from fontTools import subset as ft_subset

    options = ft_subset.Options()
    options.flavor = "woff"  # zlib; needs no brotli
    options.font_number = font_number
    options.name_IDs = ["*"]  # keep the copyright and licence records
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.layout_features = ["*"]  # every shaping feature (Arabic joining forms, marks, ligatures)
    font = ft_subset.load_font(str(source), options, dontLoadGlyphNames=True)
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    ft_subset.save_font(font, str(out), options)
    print(f"{out.relative_to(ROOT)}: {len(unicodes)} code points requested, {out.stat().st_size} bytes")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    fonts = Path(argv[0])
    cjk = fonts / "opentype" / "noto" / "NotoSansCJK-Regular.ttc"
    arabic = fonts / "truetype" / "noto" / "NotoSansArabic-Regular.ttf"
    OUT.mkdir(parents=True, exist_ok=True)
    cjk_points = sorted({ord(ch) for ch in project_cjk_characters()} | set(range(0x3000, 0x3040)) | set(range(0xFF01, 0xFF5F)))
    subset(cjk, 2, cjk_points, OUT / "NotoSansCJKsc-Regular-subset.woff")  # face 2: Noto Sans CJK SC
    arabic_points = sorted({code for low, high in ARABIC_RANGES for code in range(low, high + 1)})
    subset(arabic, 0, arabic_points, OUT / "NotoSansArabic-Regular-subset.woff")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
