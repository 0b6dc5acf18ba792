"""``report.html`` reads the same on a machine without CJK or Persian fonts: the fonts it needs are embedded.

Checked two ways on a report made from a results file written here the way lmms-eval writes one (MCGA ASR with
its genre and dynasty breakdowns, so the page has the Chinese headers and figure captions; a run named in
Persian, so it has Persian text):

- glyph coverage: every character of the page is in the cmap of one of the fonts embedded in the page;
- a real headless Chromium (Debian's ``chromium-headless-shell`` or ``chromium``) with a fontconfig that holds
  DejaVu Sans only (a bare server: no CJK font) draws every character of the page, in the page's own CSS and
  fonts, one per cell of a grid; a cell that stays blank or matches the cell of a character no font has (U+E000)
  is a missing glyph. The same grid without the embedded fonts is checked too, so the check is seen to fail
  where it must (the Chinese), and the Persian cells are seen to come from the embedded face. A screenshot of the
  report itself is kept beside the grids for a person to look at.

CI installs the browser (``.ci/run``); without it this test fails under ``CI=true`` and is skipped, with a warning,
elsewhere.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
import shutil
import subprocess
import unicodedata
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest

from audio_bench_report.cli import write_report
from audio_bench_report.tables import Context
from audio_bench_report.webfonts import dejavu_sans

PERSIAN_RUN = "مدل فارسی ۷"  # "Persian model 7", with a Persian digit
GENRES = {"诗": (12.5, 4), "词": (8.25, 3), "曲": (20.0, 1), "赋": (30.0, 1), "文": (5.0, 1)}
DYNASTIES = {"先秦": (9.0, 1), "唐": (12.0, 5), "宋": (7.5, 3), "清": (40.0, 1)}
BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
MISSING_REFERENCE = "\ue000"  # private use: no font has it


def results_file(folder: Path, model_args: str) -> Path:
    """An MCGA ASR results file shaped as lmms-eval 0.7.3 writes it (``<metric>,none`` keys, n-samples, config)."""
    folder.mkdir(parents=True, exist_ok=True)
    asr = {"alias": "mcga_asr", "cer_official,none": 14.2, "cer_strict,none": 16.0, "empty_responses,none": 0,
           "cer_official_by_genre,none": {g: v for g, (v, _) in GENRES.items()}, "n_by_genre,none": {g: n for g, (_, n) in GENRES.items()},
           "cer_official_by_dynasty,none": {d: v for d, (v, _) in DYNASTIES.items()}, "n_by_dynasty,none": {d: n for d, (_, n) in DYNASTIES.items()}}  # fmt: skip
    data = {"results": {"mcga_asr": asr}, "n-samples": {"mcga_asr": {"original": 10, "effective": 10}},
            "config": {"model": "replay", "model_args": model_args, "limit": None}, "date": "20261201_120000", "lmms_eval_version": "0.7.3"}  # fmt: skip
    path = folder / "20261201_120000_results.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def make_report(tmp_path: Path, names: list[str]) -> tuple[Path, dict]:
    runs = []
    for index, _ in enumerate(names):
        results_file(tmp_path / f"run{index}", f"predictions=/data/{PERSIAN_RUN}/answers_{index}.jsonl")
        runs.append(tmp_path / f"run{index}")
    report = write_report(runs, tmp_path / "report", names, Context(system_fonts=False))  # shipped fonts only: the same on every machine
    return tmp_path / "report" / "report.html", report


class _Text(HTMLParser):
    """The text a browser draws: everything outside <style>, <script> and <title>."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("style", "script", "title")

    def handle_endtag(self, tag):
        self._skip -= tag in ("style", "script", "title")

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def drawn_characters(page: str) -> list[str]:
    """Distinct characters of the page's text that need a visible glyph (not spaces, format or combining marks)."""
    parser = _Text()
    parser.feed(page)
    return sorted({ch for ch in "".join(parser.parts) if unicodedata.category(ch) not in ("Zs", "Cc", "Cf", "Mn", "Zl", "Zp")})


def embedded_fonts(page: str) -> dict[str, set[int]]:
    """``{family: code points}`` of every ``@font-face`` data URI in the page (read with fontTools)."""
    from fontTools.ttLib import TTFont

    faces = re.findall(r'@font-face\{font-family:"([^"]+)";src:url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\)', page)
    return {family: set(TTFont(io.BytesIO(base64.b64decode(data))).getBestCmap()) for family, data in faces}


def test_every_character_of_the_page_is_in_an_embedded_font(tmp_path):
    path, report = make_report(tmp_path, [PERSIAN_RUN, "B"])
    page = path.read_text(encoding="utf-8")
    fonts = embedded_fonts(page)
    assert set(fonts) == {"abr-latin", "abr-arabic", "abr-cjk"}
    characters = drawn_characters(page)
    assert {"诗", "赋", "宋", "清", "ف", "ی", "۷"} <= set(characters)  # genre/dynasty headers, captions, the Persian run
    assert [ch for ch in characters if not any(ord(ch) in cmap for cmap in fonts.values())] == []
    assert all(ord(ch) in fonts["abr-cjk"] for ch in "诗词曲赋文唐宋")  # CJK drawn by the CJK face, Persian by the Arabic one
    assert all(ord(ch) in fonts["abr-arabic"] for ch in "مدلفارسی۷")
    assert not [w for w in report["warnings"] if "no embedded font" in w]
    assert 'font-family:"abr-latin","abr-arabic","abr-cjk",' in page
    assert len(page.encode()) < 600_000  # the subsets stay small (six figures are embedded too)


def test_a_character_no_shipped_font_has_is_named_in_a_warning(tmp_path):
    path, report = make_report(tmp_path, ["千问 A"])  # 千 and 问 are not in the shipped CJK subset
    [warning] = [w for w in report["warnings"] if "no embedded font" in w]
    assert warning.endswith("2 character(s), shown only where the reader has a font for them: U+5343 U+95EE")
    assert "U+5343 U+95EE" in path.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------ a real browser
def browser() -> str:
    """The headless Chromium to use (``$REPORT_TEST_BROWSER``, else the first of :data:`BROWSERS` on PATH)."""
    found = os.environ.get("REPORT_TEST_BROWSER") or next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found:
        return found
    message = ("no headless Chromium: the report's font check in a real browser did NOT run. "
               "Install it: apt-get install --no-install-recommends chromium-headless-shell (.ci/run does)")  # fmt: skip
    if os.environ.get("CI"):
        pytest.fail(message)
    warnings.warn(message)
    pytest.skip(message)


def screenshot(url: str, png: Path, size: tuple[int, int], workdir: Path) -> None:
    """One headless Chromium screenshot on a bare server's fonts: a fontconfig holding DejaVu Sans only (what Debian's
    fontconfig brings; copied from matplotlib, so the same everywhere), no CJK font. (With no font at all, Chromium
    aborts in its fallback lookup: ``SkFontMgr_FontConfigInterface ... Not implemented``.)"""
    fonts = workdir / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    shutil.copy(dejavu_sans(), fonts / "DejaVuSans.ttf")
    conf = workdir / "fonts.conf"
    conf.write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><dir>{fonts}</dir>'
                    f"<cachedir>{workdir / 'fccache'}</cachedir></fontconfig>", encoding="utf-8")  # fmt: skip
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1", "--virtual-time-budget=10000",
               f"--user-data-dir={workdir / 'profile'}", f"--window-size={size[0]},{size[1]}", f"--screenshot={png}", url]  # fmt: skip
    env = {**os.environ, "FONTCONFIG_FILE": str(conf), "HOME": str(workdir)}
    for _ in range(3):  # headless Chromium now and then dies at start-up on a loaded machine (SIGTRAP, exit 133)
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
        if png.is_file():
            return
    log = "\n".join(line for line in result.stderr.splitlines() if "dbus" not in line)
    raise AssertionError(f"no screenshot from {command[0]} (exit {result.returncode}): {log[-2000:]}")


CELL, COLUMNS = 40, 24


def glyph_grid(style: str, characters: list[str], path: Path) -> tuple[int, int]:
    """A page drawing each character (then the missing-glyph reference) in its own cell, with the report's CSS."""
    cells = "".join(f"<div>{html.escape(ch)}</div>" for ch in [*characters, MISSING_REFERENCE])
    grid = (f"body{{margin:0}}#g{{display:grid;grid-template-columns:repeat({COLUMNS},{CELL}px);grid-auto-rows:{CELL}px}}"
            f"#g div{{font-size:26px;line-height:{CELL}px;text-align:center;overflow:hidden;color:#000}}")  # fmt: skip
    path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{style}\n{grid}</style></head><body><div id='g'>{cells}</div></body></html>",
                    encoding="utf-8")  # fmt: skip
    rows = (len(characters) + 1 + COLUMNS - 1) // COLUMNS
    return COLUMNS * CELL, rows * CELL


def missing_glyphs(png: Path, characters: list[str]) -> list[str]:
    """Characters whose cell is blank or looks like the cell of :data:`MISSING_REFERENCE` (a no-glyph box)."""
    from PIL import Image, ImageChops

    image = Image.open(png).convert("L")

    def cell(index: int):
        x, y = (index % COLUMNS) * CELL, (index // COLUMNS) * CELL
        return image.crop((x, y, x + CELL, y + CELL))

    reference = cell(len(characters))
    missing = []
    for index, ch in enumerate(characters):
        box = cell(index)
        blank = box.getextrema()[0] > 160  # no dark pixel: nothing drawn
        like_reference = reference.getextrema()[0] <= 160 and ImageChops.difference(box, reference).getbbox() is None
        if blank or like_reference:
            missing.append(ch)
    return missing


def differing_cells(png_a: Path, png_b: Path, characters: list[str], wanted: str) -> set[str]:
    """The characters of ``wanted`` whose grid cells differ between two screenshots of the same grid."""
    from PIL import Image, ImageChops

    a, b = Image.open(png_a).convert("L"), Image.open(png_b).convert("L")
    out = set()
    for index, ch in enumerate(characters):
        if ch in wanted:
            box = ((index % COLUMNS) * CELL, (index // COLUMNS) * CELL, (index % COLUMNS + 1) * CELL, (index // COLUMNS + 1) * CELL)
            if ImageChops.difference(a.crop(box), b.crop(box)).getbbox() is not None:
                out.add(ch)
    return out


def test_headless_chromium_on_a_bare_server_draws_every_character_of_the_report(tmp_path):
    browser()
    path, _ = make_report(tmp_path, [PERSIAN_RUN, "B"])
    page = path.read_text(encoding="utf-8")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    screenshot(path.as_uri(), shots / "report.png", (1400, 2400), tmp_path / "browser")  # for a person to look at
    assert (shots / "report.png").stat().st_size > 20_000
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    characters = drawn_characters(page)
    size = glyph_grid(style, characters, shots / "grid.html")
    screenshot((shots / "grid.html").as_uri(), shots / "grid.png", size, tmp_path / "browser")
    assert missing_glyphs(shots / "grid.png", characters) == []
    # The check fails where it must: without the embedded fonts, this machine shows the Chinese as missing glyphs.
    bare = re.sub(r"@font-face\{[^}]*\}", "", style)
    glyph_grid(bare, characters, shots / "bare.html")
    screenshot((shots / "bare.html").as_uri(), shots / "bare.png", size, tmp_path / "browser")
    missing = missing_glyphs(shots / "bare.png", characters)
    assert {ch for ch in characters if "\u2e80" <= ch <= "\u9fff"} <= set(missing) and "A" not in missing
    # Persian is drawn by the embedded Arabic face, not by the machine's DejaVu Sans (which has Arabic letters too).
    assert differing_cells(shots / "grid.png", shots / "bare.png", characters, "مدلفارسی۷") == set("مدلفارسی۷")


def test_headless_chromium_flags_a_character_no_embedded_font_has(tmp_path):
    browser()
    path, _ = make_report(tmp_path, ["千问 A"])
    page = path.read_text(encoding="utf-8")
    characters = drawn_characters(page)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    size = glyph_grid(style, characters, tmp_path / "grid.html")
    screenshot((tmp_path / "grid.html").as_uri(), tmp_path / "grid.png", size, tmp_path / "browser")
    assert missing_glyphs(tmp_path / "grid.png", characters) == ["千", "问"]
