"""MMAC's part of ``audio-bench-report``: the paper's Table 2 and its two central figures from lmms-eval results.

Tables (one row per model run, then the paper's rows with their source and a "Δ run − paper" row):

- ``mmac_main`` (paper Table 2): category-macro Accuracy, Precision, Coverage (the ``mmac`` group's values, or
  the equal-weight mean of the six category tasks when all six ran);
- ``mmac_categories``: each category's three values, one row per run and category (no paper rows);
- ``mmac_dimensions``: Accuracy per dimension (n = valid judged samples), from each task's ``dimensions``.

Figures: Coverage vs Precision per run with the paper's models (the paper's central trade-off; a run without both
category-macro values is not drawn, and the caption names it with the reason), and a heatmap
of Accuracy per dimension and run (values printed in each cell, grey scale). Reads metric names only
(``accuracy``, ``precision``, ``coverage``, ``dimensions``, ``judge_failed``); needs no lmms-eval.
"""

from __future__ import annotations

from audio_bench_report.plots import MARKERS, pyplot, safe_label, save
from audio_bench_report.runs import Run, is_number
from audio_bench_report.tables import (
    Cell,
    Column,
    Context,
    Plot,
    Row,
    Section,
    Table,
    assemble,
    off_range,
    health,
    load_published,
    metric_cell,
    ordered,
)
from mmac.schema import CATEGORIES

BENCHMARK = "MMAC"
METRICS = ("accuracy", "precision", "coverage")


def _tasks() -> list[str]:
    return [f"mmac_{category}" for category in CATEGORIES]


def headline_metrics(task: str) -> tuple[str, ...]:
    """Accuracy, Precision and Coverage for the six category tasks and the group ``mmac``; ``()`` otherwise."""
    return METRICS if task == "mmac" or task in _tasks() else ()


def metric_scale(metric: str) -> str | None:
    """The scale of an MMAC figure: Accuracy, Precision and Coverage are percent (``"%"``, 0-100; paper Sec. 3)."""
    return "%" if metric.split("_", 1)[0] in ("accuracy", "precision", "coverage") else None


def documented_range(metric: str) -> tuple[float, float] | None:
    """The range an MMAC figure has by its documented scale: Accuracy, Precision and Coverage (category, category-macro
    and per dimension) 0-100 percent, each judge score being ``score / scale`` of the rubric's ``0..scale`` (paper Sec.
    3.2; mmac/rubric.json); None for other metrics. A figure outside it is flagged, never changed."""
    return (0, 100) if metric.removesuffix("_strict") in METRICS else None


def overall(run: Run, metric: str, published: dict, context: Context) -> Cell:
    """Category-macro value: the ``mmac`` group's, else the mean of the six category tasks (all six needed)."""
    states = [health(run, t, published, context) for t in _tasks()]
    marks = ordered(m for s in states if s for m in s.marks())
    notes = [n for s in states if s for n in s.explanations()]
    if run.get("mmac") is not None and run.get("mmac").metrics.get(metric) is not None:
        cell = metric_cell(run, "mmac", metric, published, context)
        cell.marks, cell.notes, cell.n = ordered([*cell.marks, *marks]), cell.notes + notes, None
        return cell
    values = [run.get(t).number(metric) if run.get(t) else None for t in _tasks()]
    if any(v is None for v in values):
        missing = [t for t, v in zip(_tasks(), values) if v is None]
        return Cell(text="–", notes=[f"category-macro needs all six categories; missing or not computed: {', '.join(missing)}"] if len(missing) < len(values) else [])
    return Cell(value=sum(values) / len(values), marks=marks, notes=notes)


def main_table(runs: list[Run], published: dict, context: Context) -> Table:
    """Paper Table 2: the category-macro Accuracy / Precision / Coverage (the per-category values are in
    :func:`categories_table`, one row per run and category, so neither table is wider than a page)."""
    columns = [Column(m, f"{m.capitalize()}↑", digits=2) for m in METRICS]
    cells = [{m: overall(run, m, published, context) for m in METRICS} for run in runs]
    table = Table("mmac_main", "MMAC main results (paper Table 2): category-macro Accuracy / Precision / Coverage", columns)
    table.notes = [("Percent. Accuracy = mean score with omissions 0; Precision = mean score over mentioned samples; Coverage = share mentioned. "
                    "Category-macro: the six categories weighted equally (per category: the next table). Judge failures are left out of every denominator (mark J)."),
                   ("Documents: each category is its own set of clips (the paper's macro over categories, not a same-document figure); the category-macro "
                    "covers the documents of the six categories, each category's n in the next table, and carries their L/I/F marks.")]  # fmt: skip
    return assemble(table, runs, cells, published, context)


def categories_table(runs: list[Run], published: dict, context: Context) -> Table:
    """Accuracy (with n) / Precision / Coverage per category: one row per run and category (the paper reports no
    per-category values, so there are no reference rows)."""
    columns = [Column(m, f"{m.capitalize()}↑", digits=1, show_n=(m == "accuracy")) for m in METRICS]
    table = Table("mmac_categories", "MMAC per category: Accuracy / Precision / Coverage (one row per run and category)", columns)
    for run in runs:
        for category in CATEGORIES:
            if run.get(f"mmac_{category}") is None:
                continue
            row = {metric: metric_cell(run, f"mmac_{category}", metric, published, context, judged=True) for metric in METRICS}
            table.rows.append(Row(run.label, "run", row, category))
    table.notes = ["Percent; n = documents of the run in this category. The category-macro values of the table above are the mean of these six rows."]
    return table


def dimension_values(run: Run) -> dict[str, dict]:
    """``{dimension: {coverage, precision, accuracy, valid, ...}}`` merged over the run's MMAC tasks."""
    merged = {}
    for task in _tasks():
        result = run.get(task)
        breakdown = result.metrics.get("dimensions") if result else None
        if isinstance(breakdown, dict):
            merged.update({d: v for d, v in breakdown.items() if isinstance(v, dict)})
    return merged


def _dimension_order(runs: list[Run]) -> list[str]:
    known = [d for dims in CATEGORIES.values() for d in dims]
    extra = sorted({d for run in runs for d in dimension_values(run) if d not in known})
    return known + extra


def dimensions_table(runs: list[Run], published: dict, context: Context) -> Table:
    order = _dimension_order(runs)
    columns = [Column(d, d.replace("_", " "), digits=1, show_n=True) for d in order]
    cells = []
    for run in runs:
        values = dimension_values(run)
        row = {}
        for dimension in order:
            entry = values.get(dimension)
            if entry is None:
                row[dimension] = Cell(text="–")
                continue
            accuracy = entry.get("accuracy")
            marks = (["J"] if entry.get("judge_failed") else []) + (["E"] if entry.get("generation_failed") or entry.get("omitted_without_call") else [])
            notes = [f"{dimension}: {k} = {entry[k]}" for k in ("judge_failed", "generation_failed", "omitted_without_call", "out_of_scale") if entry.get(k)]
            flagged = off_range("mmac", "accuracy", accuracy)
            if flagged:
                marks.append("R")
                notes.append(f"{dimension}: {flagged}")
            row[dimension] = Cell(value=float(accuracy) if is_number(accuracy) else None, text="–", n=entry.get("valid"), marks=marks, notes=notes)
        cells.append(row)
    table = Table("mmac_dimensions", "MMAC Accuracy per dimension (n = validly judged samples)", columns)
    table.notes = ["Per-dimension values are not in the paper's accessible text: no reference rows."]
    return assemble(table, runs, cells, published, context)


def not_drawn(runs: list[Run], published: dict, context: Context) -> list[str]:
    """``"<run>: <why>"`` for each run the Coverage/Precision figure leaves out (no category-macro Coverage or
    Precision: a category missing, not computed or judged by no call)."""
    out = []
    for run in runs:
        cells = {m: overall(run, m, published, context) for m in ("coverage", "precision")}
        missing = [m for m, cell in cells.items() if cell.value is None]
        if missing:
            why = next((note for cell in cells.values() for note in cell.notes if cell.value is None), "")
            out.append(f"{run.label}: no category-macro {' or '.join(missing)}" + (f" ({why})" if why else " (no MMAC category task has a value)"))
    return out


def _tradeoff_plot(runs: list[Run], published: dict, context: Context):
    def draw(stem):
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(5.6, 4.2))
        paper = sorted((r for r in published["rows"] if "mmac_main" in r["tables"]), key=lambda r: r["values"]["coverage"])
        for index, row in enumerate(paper):  # neighbours by Coverage get their labels above / below the point in turn
            x, y = row["values"]["coverage"], row["values"]["precision"]
            ax.scatter(x, y, marker=MARKERS[index % len(MARKERS)], facecolors="white", edgecolors="0.4", s=36)
            ax.annotate(safe_label(row["model"]), (x, y), xytext=(4, 4 if index % 2 == 0 else -9), textcoords="offset points", fontsize=6, color="0.35")
        for index, run in enumerate(runs):
            c, p = overall(run, "coverage", published, context), overall(run, "precision", published, context)
            if c.value is None or p.value is None:
                continue
            ax.scatter(c.value, p.value, marker=MARKERS[index % len(MARKERS)], color="black", s=48)
            marks = f" [{','.join(c.marks)}]" if c.marks else ""
            ax.annotate(safe_label(run.label) + marks, (c.value, p.value), xytext=(5, -3), textcoords="offset points", fontsize=7, fontweight="bold")
        ax.set_xlabel("Coverage (%) →  mentions more")
        ax.set_ylabel("Precision (%) →  more correct when it mentions")
        ax.set_title("MMAC: Coverage vs Precision (filled: runs; hollow: paper Table 2)", fontsize=9)
        return save(fig, stem)

    return draw


def _heatmap_plot(runs: list[Run]):
    def draw(stem):
        plt = pyplot()
        order = _dimension_order(runs)
        matrix = [[dimension_values(run).get(d, {}).get("accuracy") for d in order] for run in runs]
        fig, ax = plt.subplots(figsize=(0.55 * len(order) + 2.5, 0.45 * len(runs) + 1.6))
        shown = [[v if is_number(v) else float("nan") for v in row] for row in matrix]
        image = ax.imshow(shown, cmap="Greys", vmin=0, vmax=100, aspect="auto")
        fig.colorbar(image, ax=ax, fraction=0.025, pad=0.01, label="%")
        from matplotlib.patches import Rectangle

        for y, row in enumerate(matrix):
            for x, value in enumerate(row):
                if not is_number(value):  # no value: hatched, never drawn as 0
                    ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.5", linewidth=0))
                ax.text(x, y, "n/a" if not is_number(value) else f"{value:.0f}", ha="center", va="center", fontsize=6,
                        color="white" if is_number(value) and value > 60 else "black")  # fmt: skip
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([d.replace("_", " ") for d in order], rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(runs)))
        ax.set_yticklabels([safe_label(r.label) for r in runs], fontsize=7)
        ax.set_title("MMAC Accuracy (%) per dimension", fontsize=9)
        return save(fig, stem)

    return draw


def build(runs: list[Run], context: Context) -> Section | None:
    """The MMAC section for the runs that hold at least one ``mmac_*`` task, or ``None``."""
    runs = [run for run in runs if any(run.get(t) for t in _tasks())]
    if not runs:
        return None
    published = load_published("mmac")
    section = Section(BENCHMARK, f"MMAC ({published['paper']}, arXiv {published['arxiv']})")
    section.tables += [main_table(runs, published, context), categories_table(runs, published, context), dimensions_table(runs, published, context)]
    left_out = not_drawn(runs, published, context)
    caption = "MMAC Coverage vs Precision per run (filled) and the paper's models (hollow, Table 2)." + (f" Not drawn: {'; '.join(left_out)}." if left_out else "")
    section.plots += [Plot("mmac_coverage_precision", caption, _tradeoff_plot(runs, published, context)),
                      Plot("mmac_dimension_heatmap", "MMAC Accuracy per dimension and run (grey scale, value printed).", _heatmap_plot(runs))]  # fmt: skip
    section.notes += [published["note"], f"Full test-set sizes: {published['test_set_size_source']}."]
    return section
