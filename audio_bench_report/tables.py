"""Benchmark-neutral tables: cells with marks, document counts and confidence intervals; published reference
rows with their sources; comparison rows (run minus paper, and whether the paper's value lies outside the
run's 95% CI). Each benchmark's ``report_layout`` module builds :class:`Table` objects from these parts.
"""

from __future__ import annotations

import functools
import importlib
import json
from dataclasses import dataclass, field
from importlib import resources

from audio_bench_report.runs import MARKS, Run, TaskHealth, is_number, task_health

#: Comparison-row mark: the published value lies outside the run's 95% confidence interval.
OUTSIDE_CI = "*"
#: Cell mark: the figure lies outside its documented range (e.g. MCGA LLM-C above 100): :func:`off_range`.
OFF_RANGE = "R"
#: Cell mark: the interval shown is flagged by the run's ``ci_flags`` (too few scored items, or a zero-width bootstrap).
CI_FLAGGED = "C"
ALL_MARKS = {
    **MARKS,
    OFF_RANGE: "off scale: the figure lies outside its documented range (e.g. LLM-C above 100): judge verdicts off the rubric's scale went into it; "
               "the official reading is shown as the official code computes it, the strict figure leaves such verdicts out",
    CI_FLAGGED: "the 95% interval shown rests on fewer than 30 scored items, or is a zero-width (degenerate) bootstrap: it claims more certainty than the data give",
    OUTSIDE_CI: "comparison row: the published value lies outside this run's 95% confidence interval",
}


@functools.cache
def _range_function(benchmark: str):
    try:
        return getattr(importlib.import_module(f"{benchmark}.report_layout"), "documented_range", None)
    except ImportError:
        return None


def documented_range(task: str, metric: str) -> tuple[float, float] | None:
    """``(low, high)`` that ``<benchmark>.report_layout.documented_range(metric)`` declares for a figure of ``task``
    (benchmark = the task name's first part); None when it declares none (or the declaration fails)."""
    function = _range_function(task.split("_", 1)[0])
    try:
        found = function(metric) if function is not None else None
    except Exception:  # noqa: BLE001 - a broken declaration must not cost the table
        return None
    return (float(found[0]), float(found[1])) if found is not None else None


def off_range(task: str, metric: str, value) -> str | None:
    """Why ``value`` of ``task``'s ``metric`` is flagged, when it is a number outside its :func:`documented_range`
    (``"mcga_sec llm_c 120 is outside its documented range 0-100"``); None when it lies inside or has no range.
    The printed lmms-eval table and the report both flag from this one rule."""
    bounds = documented_range(task, metric)
    if bounds is None or not is_number(value) or bounds[0] <= value <= bounds[1]:
        return None
    return f"{task} {metric} {value:g} is outside its documented range {bounds[0]:g}-{bounds[1]:g}"


def ordered(marks) -> list[str]:
    """Marks without repeats, in the order of :data:`ALL_MARKS`."""
    marks = set(marks)
    return [m for m in ALL_MARKS if m in marks]


@dataclass
class Cell:
    """One table cell.

    Attributes:
        value: the number shown (``None`` when there is none).
        text: shown instead of a number when ``value`` is ``None`` ("n/c" not computed, "–" no such task).
        marks: letters of :data:`ALL_MARKS`.
        n: documents (or items) behind the value, shown where the column asks for it.
        ci: (low, high) 95% confidence interval in the value's unit, when the run reports one.
        notes: why each mark is there (shown in the HTML page as a tooltip and under the table).
    """

    value: float | None = None
    text: str = "–"
    marks: list[str] = field(default_factory=list)
    n: int | None = None
    ci: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Column:
    """A table column: ``key`` (CSV name and published-value key), ``header``, ``digits`` shown, ``show_n``
    (print the cell's n), ``better`` ("lower"/"higher"/"")."""

    key: str
    header: str
    digits: int = 1
    show_n: bool = False
    better: str = ""


@dataclass
class Row:
    """A table row: a model run, a published reference row (with its source) or a comparison row."""

    label: str
    kind: str  # "run" | "published" | "comparison"
    cells: dict[str, Cell]
    detail: str = ""  # model arguments (run) or the source (published / comparison)


@dataclass
class Table:
    """One output table (``key`` is the file stem: ``<key>.md``, ``.csv``, ``.tex``)."""

    key: str
    title: str
    columns: list[Column]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    latex: bool = True

    def marks_used(self) -> list[str]:
        used = {m for row in self.rows for cell in row.cells.values() for m in cell.marks}
        return [m for m in ALL_MARKS if m in used]


@dataclass
class Plot:
    """A figure: ``draw(path_without_suffix) -> list of written files`` (PNG and SVG), with a caption."""

    key: str
    caption: str
    draw: object


@dataclass
class Section:
    """What one benchmark contributes to the report."""

    benchmark: str
    title: str
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ context
@dataclass
class Context:
    """Options shared by every layout.

    Attributes:
        exclusion_threshold: share (0-1) of excluded + refused items above which a cell is marked X.
        same_model: ``{run label: published model name}`` given by the user (``--same-model``).
        system_fonts: let ``report.html`` embed glyphs the shipped fonts lack from this machine's fonts
            (:mod:`audio_bench_report.webfonts`); off, the page depends on the shipped fonts only.
    """

    exclusion_threshold: float = 0.05
    same_model: dict[str, str] = field(default_factory=dict)
    system_fonts: bool = True


def load_published(package: str) -> dict:
    """``<package>/published.json``: the paper's reference numbers with their sources and the full test-set sizes.

    Raises:
        FileNotFoundError: the package ships no ``published.json``.
    """
    return json.loads(resources.files(package).joinpath("published.json").read_text(encoding="utf-8"))


def health(run: Run, task: str, published: dict, context: Context) -> TaskHealth | None:
    """:func:`audio_bench_report.runs.task_health` with the benchmark's full test-set size, or ``None`` if the run lacks the task."""
    result = run.get(task)
    if result is None:
        return None
    return task_health(result, (published.get("test_set_size") or {}).get(task), context.exclusion_threshold)


def metric_cell(run: Run, task: str, metric: str, published: dict, context: Context, *, judged: bool = False,
                exclusions: bool = False, n_metric: str | None = None, ci_metric: str | None = None, scored_metric: str | None = None) -> Cell:  # fmt: skip
    """The cell of one metric of one task of a run, with the task's marks.

    Args:
        judged: the metric is an LLM-judge score (mark J applies).
        exclusions: the metric is computed over non-excluded items (mark X applies).
        n_metric: a metric holding the cell's n (e.g. ``scored``); default: :attr:`TaskResult.n_scored` (the
            health table's "scored", so both always agree).
        ci_metric: a metric holding a ``[low, high]`` 95% interval.
        scored_metric: a metric counting the items scored (``scored``); when it is 0, a number (a strict figure,
            which counts unscored items as wrong) shows as "n/c": a figure over 0 scored items is not computed.
    """
    result = run.get(task)
    if result is None:
        return Cell(text="–")
    state = health(run, task, published, context)
    value = result.metrics.get(metric)
    cell = Cell(marks=state.marks(judged=judged, exclusions=exclusions), n=result.n_scored, notes=state.explanations())
    if n_metric and is_number(result.metrics.get(n_metric)):
        cell.n = int(result.metrics[n_metric])
    if is_number(value) and scored_metric and result.metrics.get(scored_metric) == 0:
        cell.text, cell.marks = "n/c", [*cell.marks, "N"]
        cell.notes.append(f"{task} {metric}: not computed: no scored items (the results file holds {value:g}, every item counted wrong)")
    elif is_number(value):
        cell.value = float(value)
        flagged = off_range(task, metric, value)
        if flagged:
            cell.marks.append(OFF_RANGE)
            cell.notes.append(f"{flagged} (shown as computed; in a judged figure, verdicts off the rubric's scale went into it, which the strict figure leaves out)")
    elif isinstance(value, str) and value.startswith("not computed"):
        cell.text, cell.marks = "n/c", [*cell.marks, "N"]
        cell.notes.append(f"{task} {metric}: {value}")
    else:
        cell.text = "–" if value is None else "?"
        if value is not None:
            cell.notes.append(f"{task} {metric}: not a number ({str(value)[:80]})")
    ci = result.metrics.get(ci_metric) if ci_metric else None
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(is_number(x) for x in ci):
        cell.ci = (float(ci[0]), float(ci[1]))
        flags = result.metrics.get("ci_flags")
        if isinstance(flags, dict) and flags.get(ci_metric):
            cell.marks.append(CI_FLAGGED)
            cell.notes.append(f"{task} {ci_metric}: {flags[ci_metric]}")
    return cell


def run_row(run: Run, cells: dict[str, Cell]) -> Row:
    return Row(run.label, "run", cells, run.model_args)


def _source(published: dict, row: dict) -> str:
    return f"{published['paper_short']}, arXiv {published['arxiv']}, {row['table']}" + (f"; {row['note']}" if row.get("note") else "")


def published_rows(published: dict, table_key: str, columns: list[Column]) -> list[Row]:
    """The paper's rows for one table: every ``published['rows']`` entry whose ``tables`` names ``table_key``.

    Each row carries its source (paper, arXiv id, table) in :attr:`Row.detail`.
    """
    keys = {c.key for c in columns}
    rows = []
    for row in published.get("rows", []):
        if table_key not in row.get("tables", []):
            continue
        cells = {key: Cell(value=float(v)) if is_number(v) else Cell(text=str(v)) for key, v in row["values"].items() if key in keys}
        rows.append(Row(f"{row['model']} (paper)", "published", cells, _source(published, row)))
    return rows


def matched_model(run: Run, published: dict, context: Context) -> str | None:
    """The published model a run is a run of: ``--same-model`` first, else a published alias found in the
    run's model arguments (case-insensitive), else ``None``."""
    if run.label in context.same_model:
        return context.same_model[run.label]
    haystack = f"{run.model} {run.model_args}".lower()
    for name, spec in (published.get("models") or {}).items():
        if any(alias.lower() in haystack for alias in spec.get("aliases", [])):
            return name
    return None


def comparison_rows(runs: list[Run], published: dict, table_key: str, columns: list[Column], run_rows: list[Row], context: Context) -> list[Row]:
    """For each run of a published model: run minus paper per column, marked :data:`OUTSIDE_CI` when the paper's
    value lies outside the run's 95% CI (where the run reports one)."""
    rows = []
    for run, run_row_ in zip(runs, run_rows):
        model = matched_model(run, published, context)
        if model is None:
            continue
        for row in published.get("rows", []):
            if table_key not in row.get("tables", []) or row["model"] != model:
                continue
            cells = {}
            for column in columns:
                mine, theirs = run_row_.cells.get(column.key), row["values"].get(column.key)
                if mine is None or mine.value is None or not is_number(theirs):
                    continue
                cell = Cell(value=mine.value - float(theirs), marks=[m for m in mine.marks if m in ("L", "S", "F")])
                if mine.ci is not None and not mine.ci[0] <= float(theirs) <= mine.ci[1]:
                    cell.marks.append(OUTSIDE_CI)
                    cell.notes.append(f"paper {theirs} outside the run's 95% CI [{mine.ci[0]:.4g}, {mine.ci[1]:.4g}]")
                cells[column.key] = cell
            if cells:
                rows.append(Row(f"Δ {run.label} − {model} (paper)", "comparison", cells, _source(published, row)))
    return rows


def assemble(table: Table, runs: list[Run], run_cells: list[dict[str, Cell]], published: dict, context: Context, published_key: str | None = None) -> Table:
    """Fill ``table`` with one row per run, the published rows and the comparison rows, in that order."""
    key = published_key or table.key
    run_rows = [run_row(run, cells) for run, cells in zip(runs, run_cells)]
    table.rows = run_rows + published_rows(published, key, table.columns) + comparison_rows(runs, published, key, table.columns, run_rows, context)
    return table
