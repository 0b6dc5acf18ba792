"""Writers for :class:`audio_bench_report.tables.Table`: Markdown, CSV, LaTeX (booktabs) and one self-contained HTML page.

Cell text: the number with the column's digits, the marks as a superscript (``12.3<sup>L,S</sup>``), then
``[low, high]`` when the run reports a 95% CI and ``(n=…)`` where the column shows n. CSV keeps full precision
and puts marks, n and CI in their own columns (``<key>``, ``<key>_marks``, ``<key>_n``, ``<key>_ci_low``,
``<key>_ci_high``), so a spreadsheet never parses a mark as part of a number.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import re
import textwrap
import unicodedata
from pathlib import Path

from audio_bench_report import webfonts
from audio_bench_report.tables import ALL_MARKS, Cell, Section, Table

KIND_LABEL = {"run": "run", "published": "paper", "comparison": "Δ"}


def cell_parts(cell: Cell, digits: int, show_n: bool, comparison: bool = False) -> tuple[str, str, str]:
    """(number, marks, suffix) of a cell as shown in Markdown/LaTeX/HTML."""
    if cell.value is None:
        number = cell.text
    else:
        number = f"{cell.value:+.{digits}f}" if comparison else f"{cell.value:.{digits}f}"
    suffix = ""
    if cell.ci is not None:
        suffix += f" [{cell.ci[0]:.{digits}f}, {cell.ci[1]:.{digits}f}]"
    if show_n and cell.n is not None and not comparison:
        suffix += f" (n={cell.n})"
    return number, ",".join(cell.marks), suffix


def markdown(table: Table) -> str:
    """The table as GitHub-flavoured Markdown, with the mark legend and notes below it."""
    header = ["model run / paper", "arguments / source", *[c.header for c in table.columns]]
    lines = [f"### {table.title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in table.rows:
        cells = []
        for column in table.columns:
            cell = row.cells.get(column.key, Cell())
            number, marks, suffix = cell_parts(cell, column.digits, column.show_n, row.kind == "comparison")
            cells.append(number + (f"<sup>{marks}</sup>" if marks else "") + suffix)
        label = f"**{row.label}**" if row.kind == "run" else f"*{row.label}*" if row.kind == "published" else row.label
        lines.append("| " + " | ".join([label, row.detail.replace("|", "\\|"), *[c.replace("|", "\\|") for c in cells]]) + " |")
    lines.append("")
    lines += [f"- {note}" for note in table.notes]
    used = table.marks_used()
    if used:
        lines.append("- Marks: " + "; ".join(f"**{m}** {ALL_MARKS[m]}" for m in used) + ".")
    details = _mark_details(table)
    if details:
        lines.append("- Why: " + "; ".join(details) + ".")
    return "\n".join(lines) + "\n"


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _mark_details(table: Table, limit: int = 12) -> list[str]:
    """Why the table's cells carry marks: each distinct note once, with the rows it applies to
    (``A, B: mcga_asr: the data held 10 documents ...``), at most ``limit`` notes, then how many more.

    Notes saying the same sentence of different tasks (``<task>: <sentence>`` alike but for their numbers, e.g.
    "the data held 2 documents, the full test set has 1000" for six MMAC categories) are stated once, with the
    first task's numbers, then ``likewise <task> (<its numbers>)`` for the others."""
    rows_of: dict[str, list[str]] = {}
    for row in table.rows:
        for cell in row.cells.values():
            for note in cell.notes:
                labels = rows_of.setdefault(note, [])
                if row.label not in labels:
                    labels.append(row.label)
    groups: dict[tuple, list[str]] = {}
    for note, labels in rows_of.items():
        _, separator, sentence = note.partition(": ")
        key = (tuple(labels), _NUMBER.sub("#", sentence)) if separator else (tuple(labels), note)
        groups.setdefault(key, []).append(note)
    seen = []
    for (labels, _), notes in groups.items():
        text = f"{', '.join(labels)}: {notes[0]}"
        if len(notes) > 1:
            others = [n.partition(": ")[0] + (f" ({', '.join(_NUMBER.findall(n.partition(': ')[2]))})" if _NUMBER.search(n.partition(": ")[2]) else "") for n in notes[1:]]
            text += f"; likewise {', '.join(others)}"
        seen.append(text)
    return seen[:limit] + ([f"... {len(seen) - limit} more: see the health table (tables/health.md) for every task"] if len(seen) > limit else [])


def csv_text(table: Table) -> str:
    """The table as CSV: ``kind, label, detail``, then per column its value (full precision), marks, n and CI."""
    has_ci = {c.key for c in table.columns if any(r.cells.get(c.key) and r.cells[c.key].ci for r in table.rows)}
    header = ["kind", "label", "detail"]
    for column in table.columns:
        header += [column.key, f"{column.key}_marks", f"{column.key}_n"] + ([f"{column.key}_ci_low", f"{column.key}_ci_high"] if column.key in has_ci else [])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in table.rows:
        values = [KIND_LABEL[row.kind], row.label, row.detail]
        for column in table.columns:
            cell = row.cells.get(column.key, Cell())
            values += [repr(cell.value) if cell.value is not None else cell.text, " ".join(cell.marks), "" if cell.n is None else cell.n]
            if column.key in has_ci:
                values += [cell.ci[0], cell.ci[1]] if cell.ci else ["", ""]
        writer.writerow(values)
    return out.getvalue()


_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "↑": r"$\uparrow$", "↓": r"$\downarrow$", "Δ": r"$\Delta$", "−": "--"}  # fmt: skip


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def latex(table: Table) -> str:
    """The table as a LaTeX ``table`` with ``booktabs`` rules (``\\usepackage{booktabs}``; CJK headers need ``xeCJK``)."""
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "r" * len(table.columns) + "}", r"\toprule"]
    lines.append(" & ".join(["Model", *[latex_escape(c.header) for c in table.columns]]) + r" \\")
    lines.append(r"\midrule")
    previous = "run"
    for row in table.rows:
        if row.kind != previous:
            lines.append(r"\midrule")
            previous = row.kind
        cells = []
        for column in table.columns:
            number, marks, suffix = cell_parts(row.cells.get(column.key, Cell()), column.digits, column.show_n, row.kind == "comparison")
            cells.append(latex_escape(number) + (rf"\textsuperscript{{{latex_escape(marks)}}}" if marks else "") + latex_escape(suffix))
        lines.append(" & ".join([latex_escape(row.label), *cells]) + r" \\")
    used = table.marks_used()
    legend = "; ".join(f"{m}: {ALL_MARKS[m]}" for m in used)
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(table.title)}{'. Marks: ' + latex_escape(legend) if legend else ''}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def html_table(table: Table) -> str:
    rows = []
    header = "".join(f"<th>{html.escape(h)}</th>" for h in ["model run / paper", "arguments / source", *[c.header for c in table.columns]])
    for row in table.rows:
        cells = []
        for column in table.columns:
            cell = row.cells.get(column.key, Cell())
            number, marks, suffix = cell_parts(cell, column.digits, column.show_n, row.kind == "comparison")
            title = html.escape("; ".join(cell.notes), quote=True)
            cells.append(f'<td title="{title}">{html.escape(number)}' + (f"<sup>{html.escape(marks)}</sup>" if marks else "") + f"{html.escape(suffix)}</td>")
        rows.append(f'<tr class="{row.kind}"><th>{html.escape(row.label)}</th><td class="detail">{html.escape(row.detail)}</td>{"".join(cells)}</tr>')
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in table.notes)
    used = table.marks_used()
    if used:
        notes += "<li>Marks: " + "; ".join(f"<b>{m}</b> {html.escape(ALL_MARKS[m])}" for m in used) + "</li>"
    details = _mark_details(table)
    if details:
        notes += "<li>Why: " + html.escape("; ".join(details)) + "</li>"
    return f'<h3 id="{table.key}">{html.escape(table.title)}</h3>\n<div class="scroll"><table><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>\n<ul class="notes">{notes}</ul>\n'


_CSS = """body{font-family:FONT_STACK;margin:1.5em;max-width:110em}table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
td,th{border:1px solid #999;padding:.2em .45em;text-align:right}th{background:#eee;text-align:left}td.detail{text-align:left;color:#555;max-width:22em;font-size:.85em;overflow-wrap:anywhere}
tr.published th{font-style:italic}tr.comparison{color:#444;background:#f7f7f7}sup{color:#a00;font-weight:bold}ul.notes{font-size:.8em;color:#333}
figure{margin:1em 0}figcaption{font-size:.85em;color:#333}img{max-width:100%;border:1px solid #ccc}.warn{background:#fee;border:1px solid #c00;padding:.5em}
div.scroll{overflow-x:auto}"""


def html_page(title: str, runs_html: str, sections: list[tuple[Section, dict[str, list[Path]]]], warnings: list[str], system_fonts: bool = True) -> tuple[str, str]:
    """One self-contained page: run list, warnings, every table, every figure embedded as a PNG data URI, and the
    fonts its characters need (:mod:`audio_bench_report.webfonts`), so CJK and Persian text never shows as boxes.

    Returns:
        ``(page, uncovered)``: the HTML, and the characters none of the embedded fonts has (normally empty).
    """
    parts = [f"<h1>{html.escape(title)}</h1>", runs_html]
    if warnings:
        parts.append('<div class="warn"><b>Read before using these numbers:</b><ul>' + "".join(f"<li>{html.escape(w)}</li>" for w in warnings) + "</ul></div>")
    parts.append("<h2>Marks</h2><ul>" + "".join(f"<li><b>{html.escape(m)}</b> {html.escape(t)}</li>" for m, t in ALL_MARKS.items()) + "</ul>")
    for section, plot_files in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts += [f"<p>{html.escape(n)}</p>" for n in section.notes]
        parts += [html_table(t) for t in section.tables]
        for plot in section.plots:
            files = plot_files.get(plot.key, [])
            png = next((f for f in files if f.suffix == ".png"), None)
            if png is not None:
                data = base64.b64encode(png.read_bytes()).decode("ascii")
                parts.append(f'<figure><img alt="{html.escape(plot.caption)}" src="data:image/png;base64,{data}"><figcaption>{html.escape(plot.caption)} '
                             f"({html.escape(png.name)}, {html.escape(png.with_suffix('.svg').name)})</figcaption></figure>")  # fmt: skip
    body = "\n".join(parts)
    faces, families, uncovered = webfonts.font_faces(title + body, system_fonts=system_fonts)
    stack = ",".join([*(f'"{f}"' for f in families), "DejaVu Sans", "Arial", "sans-serif"])
    head = f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{faces}\n{_CSS.replace('FONT_STACK', stack)}</style></head><body>"
    return f"{head}\n{body}\n</body></html>", uncovered


def display_width(text: str) -> int:
    """Terminal columns of ``text``: CJK wide and full-width characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def text_table(headers: list[str], rows: list[list[str]], max_width: int = 150) -> str:
    """A Markdown table for a terminal, laid out as lmms-eval prints its own (``|cell  |``), every line at most
    ``max_width`` columns where the other columns allow: the last column's text wraps onto continuation rows."""
    fixed = [max(display_width(r[i]) for r in [headers, *rows]) for i in range(len(headers) - 1)]
    room = max(24, max_width - sum(fixed) - len(headers) - 1)
    wrapped = []
    for row in rows:
        parts = textwrap.wrap(row[-1], width=room, break_on_hyphens=False) if display_width(row[-1]) > room else [row[-1]]
        wrapped.append(row[:-1] + [parts[0] if parts else ""])
        wrapped += [[""] * (len(row) - 1) + [part] for part in parts[1:]]
    widths = [max(display_width(r[i]) for r in [headers, *wrapped]) for i in range(len(headers))]

    def line(cells):
        return "|" + "|".join(c + " " * (w - display_width(c)) for c, w in zip(cells, widths)) + "|"

    return "\n".join([line(headers), "|" + "|".join("-" * w for w in widths) + "|", *map(line, wrapped)])
