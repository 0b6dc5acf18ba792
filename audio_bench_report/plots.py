"""Figures shared by the benchmark layouts (matplotlib, Agg backend; PNG at 150 dpi and SVG).

Readable in black and white: every series has its own hatch (bars) or marker (points) and a grey level, with
black edges. Labels are drawn with DejaVu Sans (shipped inside matplotlib); text the font cannot show (CJK) or
cannot shape (Persian, Arabic: matplotlib has no right-to-left shaping) is never drawn as-is: layouts pass
English or transliterated labels, and :func:`safe_label` replaces anything else by its code points, so a figure
never shows empty "tofu" boxes.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--", "**", "||")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
GREYS = ("0.95", "0.65", "0.80", "0.45", "0.90", "0.55", "0.75", "0.35", "0.85", "0.60")


def pyplot():
    """matplotlib's pyplot on the Agg backend with the report's style."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.family": "DejaVu Sans", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                         "hatch.linewidth": 0.6, "svg.fonttype": "path", "svg.hashsalt": "audio-bench-report"})  # fmt: skip
    return plt


@lru_cache(maxsize=1)
def _charmap() -> frozenset[int]:
    from matplotlib import font_manager, ft2font

    path = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"), fallback_to_default=True)
    return frozenset(ft2font.FT2Font(path).get_charmap())


def safe_label(text: str) -> str:
    """``text`` if DejaVu Sans can draw every character left to right, else its characters as ``U+XXXX``.

    Right-to-left letters (Persian, Arabic, Hebrew) count as not drawable: matplotlib would show them
    unjoined and in the wrong order.
    """
    covered = _charmap()

    def drawable(ch: str) -> bool:  # line breaks and spaces are layout, not glyphs
        return ch.isspace() or (ord(ch) in covered and unicodedata.bidirectional(ch) not in ("R", "AL"))

    def escaped(word: str) -> str:  # a word with an undrawable letter: each character on its own, codes for those
        return word if all(map(drawable, word)) else " ".join(ch if drawable(ch) else f"U+{ord(ch):04X}" for ch in word)

    return " ".join(escaped(word) for word in text.split(" "))


def save(fig, stem: Path) -> list[Path]:
    """Write ``<stem>.png`` (150 dpi) and ``<stem>.svg``; close the figure; return both paths."""
    plt = pyplot()
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return paths


def grouped_bars(ax, categories: list[str], series: list[tuple[str, list[float | None], list[tuple[float, float] | None] | None]], *,
                 ylabel: str, value_format: str = "{:.1f}") -> None:  # fmt: skip
    """Bars per category, one bar per series (hatch + grey per series), optional (low, high) error bars.

    ``None`` values leave a gap labelled "n/a" so a missing number is never read as 0.
    """
    count = max(len(series), 1)
    width = 0.8 / count
    for index, (label, values, intervals) in enumerate(series):
        offsets = [i - 0.4 + width * (index + 0.5) for i in range(len(categories))]
        heights = [v if v is not None else 0.0 for v in values]
        bars = ax.bar(offsets, heights, width, label=safe_label(label), color=GREYS[index % len(GREYS)], edgecolor="black",
                      hatch=HATCHES[index % len(HATCHES)], linewidth=0.6)  # fmt: skip
        if intervals:
            for x, v, ci in zip(offsets, values, intervals):
                if v is not None and ci is not None:
                    ax.errorbar(x, v, yerr=[[max(v - ci[0], 0)], [max(ci[1] - v, 0)]], fmt="none", ecolor="black", capsize=2, linewidth=0.8)
        for bar, v in zip(bars, values):
            text = "n/a" if v is None else value_format.format(v)
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=6, rotation=90 if count > 2 else 0,
                        xytext=(0, 1), textcoords="offset points")  # fmt: skip
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([safe_label(c) for c in categories])
    ax.set_ylabel(ylabel)
    if not any(v is not None for _, values, _ in series for v in values):
        nothing_scored(ax)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def nothing_scored(ax, what: str = "no value to draw: nothing was scored (see the health table)") -> None:
    """An axis with no value: a fixed 0-1 range and a note, instead of matplotlib's empty ±0.04 default."""
    ax.set_ylim(0, 1)
    ax.annotate(what, (0.5, 0.5), xycoords="axes fraction", ha="center", va="center", fontsize=8, color="0.3")
