"""The benchmark-neutral "health" part of the report: per run and task, documents scored against the task's
data and the benchmark's full test set, judge failures, exclusions, refusals, empty/failed outputs, the marks
these give and why; and a figure of those counts per task.
"""

from __future__ import annotations

from functools import cache

from audio_bench_core.judge_identity import describe
from audio_bench_report.plots import GREYS, HATCHES, pyplot, safe_label, save
from audio_bench_report.runs import PROBLEM_COUNT, READING_COUNTS, Run, _judge_failures, is_number, judge_counts, task_health
from audio_bench_report.tables import Cell, Column, Context, Plot, Row, Section, Table, load_published


@cache
def full_sizes(package: str) -> dict:
    """``test_set_size`` of ``<package>/published.json``; ``{}`` when the package ships none."""
    try:
        return load_published(package).get("test_set_size") or {}
    except (ModuleNotFoundError, FileNotFoundError, ValueError):
        return {}


def _problem_count(result) -> float:
    return sum(v for m, v in result.metrics.items() if PROBLEM_COUNT.search(m) and is_number(v) and not m.startswith("judge"))


def counts(result) -> dict[str, float]:
    """``{"judge failed", "excluded", "refused", "empty/failed"}`` counts of one task (0 where not reported)."""
    return {"judge failed": _judge_failures(result), "excluded": result.number("excluded") or 0, "refused": result.number("refused") or 0,
            "empty/failed": _problem_count(result)}  # fmt: skip


def reading(result) -> str:
    """The non-zero counts of answers read in a special way (:data:`audio_bench_report.runs.READING_COUNTS`), e.g.
    ``"unfinished reasoning 1, ambiguous 2"``; ``"–"`` when none."""
    parts = [f"{label} {result.number(metric):g}" for metric, label in READING_COUNTS.items() if result.number(metric)]
    return ", ".join(parts) or "–"


def _scored_tasks(run: Run) -> list[str]:
    # groups carry no n-samples entry and (usually) no metrics of their own
    return [t for t, r in sorted(run.tasks.items()) if r.n_effective is not None]


def build(runs: list[Run], context: Context) -> Section:
    columns = [Column("run", "docs run", digits=0), Column("docs", "scored (n)", digits=0), Column("of", "docs in data", digits=0), Column("full", "full test set", digits=0),
               Column("judge_failed", "judge failed", digits=0), Column("judge_counts", "judge counts"), Column("judge_model", "judge model"),
               Column("excluded", "excluded", digits=0), Column("refused", "refused", digits=0),
               Column("empty_failed", "empty/failed/echo/unscorable", digits=0), Column("reading", "answers read"), Column("marks", "marks"),
               Column("why", "why")]  # fmt: skip
    table = Table("health", "Run health per task: documents, judge failures, exclusions, empty or failed outputs", columns, latex=False)
    for run in runs:
        for task in _scored_tasks(run):
            result = run.tasks[task]
            full = full_sizes(task.split("_", 1)[0]).get(task)
            state = task_health(result, full, context.exclusion_threshold)
            count = counts(result)
            row = {"run": Cell(value=result.n_effective), "docs": Cell(value=result.n_scored), "of": Cell(value=result.n_original), "full": Cell(value=full, text="?"),
                   "judge_failed": Cell(value=count["judge failed"]),
                   "judge_counts": Cell(text="; ".join(f"{name} {value}" for name, value in judge_counts(result).items()) or "–"),
                   "judge_model": Cell(text=describe(result.metrics.get("judge")) or "–"),
                   "excluded": Cell(value=count["excluded"]), "refused": Cell(value=count["refused"]),
                   "empty_failed": Cell(value=count["empty/failed"]), "reading": Cell(text=reading(result)),
                   "marks": Cell(text=" ".join(state.marks()) or "–"),
                   "why": Cell(text="; ".join(e.split(": ", 1)[-1] for e in state.explanations()) or "–")}  # fmt: skip
            table.rows.append(Row(run.label, "run", row, task))
    table.notes = [("'docs run': documents of the run (after --limit); 'scored (n)': the items behind the task's figures, the n of every table above "
                    "(PARSA: its 'scored', without excluded and refused items; elsewhere the documents run)."),
                   "'full test set' from the benchmark's published.json ('?' where the paper does not state it). Every mark on a cell of the tables above comes from this row of its task.",
                   "'judge counts': the judge pass's non-zero counts (docs/judge.md): verdicts read after the judge's reasoning, replies whose reasoning never closed "
                   "(among 'judge failed'), replies not cached, MCGA's strict-reading exclusions and disagreements, candidates with prompt-like framing.",
                   ("'judge model': the model(s) the judge server reported for the verdicts behind the task's figures, with their counts, the configured "
                    "name where it differs, MIXED when two judges' verdicts are in one figure, and the audit of cached verdicts (docs/judge.md, 'A changed judge')."),
                   "'answers read': answers with unfinished reasoning (no final answer), several answers with no clear final one, repaired JSON, labels or options outside the task's set, replies the strict MCQ reader could not read.",
                   "'empty/failed/echo/unscorable' sums the task's counts of empty, failed, echoed, placeholder, identical and invalid-text outputs, answers whose "
                   "scoring raised (scoring_errors; PARSA counts these in 'excluded' too) and answers over 10,000 characters (long_answers)."]  # fmt: skip
    section = Section("health", "Run health (all benchmarks)", [table])
    section.plots.append(Plot("judge_failures_and_exclusions", "Judge failures, excluded, refused and empty/failed outputs per task and run (bar end: 'of n' documents).", _plot(runs)))
    return section


#: Statuses a document has at most one of (stacked); empty/failed outputs overlap them (an empty PARSA answer is
#: also excluded), so they are drawn as a narrower bar from 0, never stacked on top.
EXCLUSIVE = ("judge failed", "excluded", "refused")
OVERLAPPING = "empty/failed"


def _plot(runs: list[Run]):
    def draw(stem):
        plt = pyplot()
        tasks = sorted({t for run in runs for t in _scored_tasks(run)})
        fig, axes = plt.subplots(1, len(runs), figsize=(3.4 * len(runs) + 1.6, 0.24 * len(tasks) + 1.5), sharey=True, squeeze=False)
        for ax, run in zip(axes[0], runs):
            left = [0.0] * len(tasks)
            for index, kind in enumerate(EXCLUSIVE):
                values = [counts(run.tasks[t])[kind] if t in run.tasks else 0.0 for t in tasks]
                ax.barh(range(len(tasks)), values, left=left, color=GREYS[index + 1], edgecolor="black", hatch=HATCHES[index + 1], linewidth=0.6, label=kind)
                left = [a + b for a, b in zip(left, values)]
            empty = [counts(run.tasks[t])[OVERLAPPING] if t in run.tasks else 0.0 for t in tasks]
            ax.barh(range(len(tasks)), empty, height=0.3, color="black", edgecolor="black", linewidth=0.6, label=f"{OVERLAPPING} outputs (may also be excluded)")
            ends = [max(a, b) for a, b in zip(left, empty)]
            for y, task in enumerate(tasks):
                result = run.tasks.get(task)
                ax.annotate("not run" if result is None else f"of {result.n_effective}", (ends[y], y), xytext=(2, 0), textcoords="offset points", va="center", fontsize=6)
            ax.set_title(safe_label(run.label), fontsize=8)
            ax.set_xlabel("documents")
            ax.set_xlim(0, max(max(ends, default=0) * 1.35, 1))
        axes[0][0].set_yticks(range(len(tasks)))
        axes[0][0].set_yticklabels([safe_label(t) for t in tasks], fontsize=7)
        axes[0][0].invert_yaxis()
        axes[0][-1].legend(fontsize=6, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0))  # beside the axes: covers no bar or label
        fig.suptitle("Judge failures, exclusions, refusals and empty/failed outputs per task", fontsize=9)
        return save(fig, stem)

    return draw
