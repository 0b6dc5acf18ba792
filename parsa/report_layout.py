"""PARSA-Bench's part of ``audio-bench-report``: the paper's tables and figures from lmms-eval results files.

Tables:

- ``parsa_main`` (paper Table 2, transposed to one row per model run): the 16 tasks in dimension order, each
  with the paper's headline metric (median WER, COMET, macro-F1, F1-exact, accuracy; fractions 0-1), its 95% CI
  and n = items scored; then the paper's eight models and its chance row with their source, and a
  "Δ run − paper" row for a run of a published model (``*`` where the paper's value lies outside the run's CI);
- ``parsa_detail``: one row per run and task: score, CI, scored / excluded / refused, majority baseline,
  normalised score (score − b)/(1 − b) with its CI, and the strict score (excluded items counted wrong);
- ``parsa_asr`` (Table 3): refusal %, mean and median WER, mean CER, repetition %, WERfix;
- ``parsa_dimensions`` (Figure 3): per dimension, the mean normalised score over the tasks with a baseline;
- ``parsa_settings`` (Table 4 and §6.4-6.5), when a run includes setting variants (``parsa_vazn_text`` ...): the
  headline metric per setting, with the audio − text gap.

Figures: normalised score per task with CI bars grouped by dimension; exclusions and refusals per task.
Labels are English task names (no Persian text is drawn). This module needs no lmms-eval.
"""

from __future__ import annotations

from audio_bench_core.samples import same_documents, samples_file_of
from audio_bench_report.plots import GREYS, HATCHES, nothing_scored, pyplot, safe_label, save
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
    health,
    load_published,
    metric_cell,
    ordered,
)
from parsa.tasks import DIMENSIONS, TASKS

BENCHMARK = "PARSA-Bench"
TASK_PREFIX = "parsa_"
DIMENSION_LABEL = {"speech_understanding": "Speech understanding", "paralinguistic": "Paralinguistic", "cultural": "Persian culture"}
TASK_LABEL = {"asr": "ASR", "s2tt_en_fa": "Trans. En→Fa", "s2tt_fa_en": "Trans. Fa→En", "intent": "Intent", "ner": "NER", "register": "Register",
              "code_switch": "Code-switch", "mcqa": "MCQA", "rc_wiki": "RC Wiki", "rc_tiny": "RC Tiny", "age": "Age", "gender": "Gender",
              "emotion": "Emotion", "vazn": "Metre (vazn)", "sabk": "Style (sabk)", "music": "Music"}  # fmt: skip
METRIC_LABEL = {"wer_median": "WER md.↓", "comet": "COMET", "macro_f1": "F1", "f1_exact": "F1-ex", "accuracy": "Acc"}
#: Table 2 order: dimension by dimension, in the order of ``parsa.tasks.TASKS``.
ORDER = [name for dimension in DIMENSIONS for name, spec in TASKS.items() if spec.dimension == dimension]


def headline_metrics(task: str) -> tuple[str, ...]:
    """The paper's headline metric of a PARSA task in any setting (``parsa_vazn``, ``parsa_vazn_text`` ...), from
    :data:`parsa.tasks.TASKS`, and for translation chrF++ and BLEU too (COMET is scored after the run, so these are
    the figures a run prints); ``()`` for groups and unknown names."""
    name = task.removeprefix(TASK_PREFIX)
    for suffix in sorted(SETTING_SUFFIX.values(), key=len, reverse=True):
        if suffix and name.endswith(suffix) and name[: -len(suffix)] in TASKS:
            name = name[: -len(suffix)]
            break
    if name not in TASKS:
        return ()
    return (TASKS[name].headline_metric, "chrf_pp", "bleu") if TASKS[name].kind == "translation" else (TASKS[name].headline_metric,)


def metric_scale(metric: str) -> str | None:
    """The scale of a PARSA-Bench figure: ``"0-1"`` (fractions, as the paper reports them: WER, CER, COMET, F1,
    accuracy, baselines, shares) except chrF++ and BLEU (``"0-100"``, sacrebleu's scale); ``None`` for counts."""
    if metric.startswith(("chrf", "bleu")):
        return "0-100"
    return None if metric in ("scored", "excluded", "refused") else "0-1"


def _interval(result, metric: str) -> tuple[float, float] | None:
    value = result.metrics.get(f"{metric}_ci95") if result else None
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(is_number(v) for v in value):
        return float(value[0]), float(value[1])
    return None


def normalised(run: Run, task: str) -> tuple[float | None, tuple[float, float] | None, float | None]:
    """(normalised score, its 95% CI, baseline b) of one task: (score − b)/(1 − b) with the headline's CI mapped
    the same way (b is fixed, so the mapping is exact). ``None`` where the task has no baseline."""
    result = run.get(f"{TASK_PREFIX}{task}")
    if result is None:
        return None, None, None
    b = result.number("majority_baseline")
    value = result.number("normalised_score")
    headline = TASKS[task].headline_metric
    score = result.number(headline)
    if b is None or b >= 1:
        return value, None, b
    if value is None and score is not None:
        value = (score - b) / (1 - b)
    ci = _interval(result, headline)
    return value, ((ci[0] - b) / (1 - b), (ci[1] - b) / (1 - b)) if ci else None, b


def main_table(runs: list[Run], published: dict, context: Context) -> Table:
    columns = [Column(t, f"{TASK_LABEL[t]} {METRIC_LABEL.get(TASKS[t].headline_metric, TASKS[t].headline_metric)}", digits=2, show_n=True,
                      better="lower" if TASKS[t].headline_metric.startswith("wer") else "higher") for t in ORDER]  # fmt: skip
    cells = []
    for run in runs:
        row = {}
        for task in ORDER:
            metric = TASKS[task].headline_metric
            row[task] = metric_cell(run, f"{TASK_PREFIX}{task}", metric, published, context, exclusions=True, n_metric="scored", ci_metric=f"{metric}_ci95")
        cells.append(row)
    table = Table("parsa_main", "PARSA-Bench zero-shot audio, headline metric per task (paper Table 2; one row per run)", columns)
    table.notes = ["Fractions 0-1, as the paper. [low, high] = bootstrap 95% CI of the run; n = items scored (excluded and refused items are left out, as in the paper).",
                   "Dimensions: " + "; ".join(f"{DIMENSION_LABEL[d]}: {', '.join(TASK_LABEL[t] for t in ORDER if TASKS[t].dimension == d)}" for d in DIMENSIONS) + "."]  # fmt: skip
    return assemble(table, runs, cells, published, context)


def detail_table(runs: list[Run], published: dict, context: Context) -> Table:
    columns = [Column("score", "score", digits=3), Column("scored", "scored", digits=0), Column("excluded", "excluded", digits=0),
               Column("refused", "refused", digits=0), Column("baseline", "baseline b", digits=3), Column("normalised", "normalised (s−b)/(1−b)", digits=3),
               Column("strict", "strict score", digits=3)]  # fmt: skip
    table = Table("parsa_detail", "PARSA-Bench per task: exclusions, baseline, normalised score, 95% CI (one row per run and task)", columns)
    for run in runs:
        for task in ORDER:
            name = f"{TASK_PREFIX}{task}"
            result = run.get(name)
            if result is None:
                continue
            metric = TASKS[task].headline_metric
            score = metric_cell(run, name, metric, published, context, exclusions=True, n_metric="scored", ci_metric=f"{metric}_ci95")
            state = health(run, name, published, context)
            value, interval, b = normalised(run, task)
            strict_metric = next((m for m in (f"{metric}_strict", "wer_mean_strict" if metric.startswith("wer") else "") if m and m in result.metrics), None)
            row = {
                "score": score,
                "scored": Cell(value=result.number("scored")),
                "excluded": Cell(value=result.number("excluded"), marks=["X"] if state.excluded else []),
                "refused": Cell(value=result.number("refused"), marks=["X"] if state.excluded else []),
                "baseline": Cell(value=b, text="–"),
                "normalised": Cell(value=value, text="–", ci=interval, marks=list(score.marks) if value is not None else []),
                "strict": metric_cell(run, name, strict_metric, published, context, scored_metric="scored") if strict_metric else Cell(text="–"),
            }
            label = f"{DIMENSION_LABEL[TASKS[task].dimension]} / {TASK_LABEL[task]} ({METRIC_LABEL.get(metric, metric)})"
            table.rows.append(Row(run.label, "run", row, label))
    table.notes = [("Fractions 0-1, as the paper. 'strict' counts excluded and refused items as wrong (ours; ASR: refusals as WER 1 in the mean WER); "
                    "with 0 items scored it is n/c, as the score. Normalised score: paper Figure 3; its CI maps the score's CI with the same b."),
                   f"Mark X: excluded + refused above {context.exclusion_threshold:.0%} of the items."]  # fmt: skip
    return table


def asr_table(runs: list[Run], published: dict, context: Context) -> Table:
    columns = [Column("ref_pct", "Ref. %", digits=1), Column("wer_mean", "WER mean↓", digits=2, better="lower"), Column("wer_median", "WER md.↓", digits=2, better="lower"),
               Column("cer_mean", "CER mean↓", digits=2, better="lower"), Column("rep_pct", "Rep. %", digits=1), Column("wer_fix", "WERfix↓", digits=2, better="lower")]  # fmt: skip
    cells = []
    for run in runs:
        row = {}
        for key, metric, scale in (("ref_pct", "refusal_rate", 100), ("wer_mean", "wer_mean", 1), ("wer_median", "wer_median", 1), ("cer_mean", "cer_mean", 1),
                                   ("rep_pct", "repetition_rate", 100), ("wer_fix", "wer_fix", 1)):  # fmt: skip
            cell = metric_cell(run, "parsa_asr", metric, published, context, exclusions=True, n_metric="scored", ci_metric=f"{metric}_ci95")
            if cell.value is not None and scale != 1:
                cell.value *= scale
            row[key] = cell
        cells.append(row)
    table = Table("parsa_asr", "PARSA-Bench ASR (paper Table 3)", columns)
    table.notes = ["Ref. % = share of responses with no Persian script (refusals, excluded from WER/CER); Rep. % = share of scored outputs that are repetition loops; WER/CER fractions."]
    return assemble(table, runs, cells, published, context)


def dimensions_table(runs: list[Run], published: dict, context: Context) -> Table:
    columns = [Column(d, f"{DIMENSION_LABEL[d]}", digits=3) for d in DIMENSIONS]
    cells = []
    for run in runs:
        row = {}
        for dimension in DIMENSIONS:
            tasks = [t for t in ORDER if TASKS[t].dimension == dimension and run.get(f"{TASK_PREFIX}{t}")]
            values = [normalised(run, t)[0] for t in tasks]
            values = [v for v in values if v is not None]
            marks = ordered(m for t in tasks for m in health(run, f"{TASK_PREFIX}{t}", published, context).marks(judged=False))
            row[dimension] = Cell(value=sum(values) / len(values) if values else None, n=len(values), marks=marks)
        cells.append(row)
    table = Table("parsa_dimensions", "PARSA-Bench mean normalised score per dimension (paper Figure 3)", columns)
    table.columns = [Column(d, DIMENSION_LABEL[d], digits=3, show_n=True) for d in DIMENSIONS]
    table.notes = ["Mean of (score − b)/(1 − b) over the tasks of the dimension that have a baseline (n = tasks); 0 = majority baseline, 1 = perfect."]
    return assemble(table, runs, cells, published, context)


#: lmms-eval task-name suffix of each setting (``parsa_vazn_text`` ...), paper §6.3-6.5.
SETTING_SUFFIX = {"audio": "", "text": "_text", "audio_ref": "_audio_ref", "fewshot": "_fewshot", "cot": "_cot"}


def _gap_cell(run: Run, task: str, audio: Cell, text: Cell) -> Cell:
    """Audio − text (paper Table 4) when both settings ran the same documents
    (:func:`audio_bench_core.samples.same_documents`: matched by id from the samples files, or both over their whole
    data); otherwise "n/c" (mark N) with the reason. Each side keeps its own exclusions (the paper's rule per setting)."""
    marks = ordered([*audio.marks, *text.marks])
    if audio.value is None or text.value is None:
        if "n/c" in (audio.text, text.text):  # a side not computed (e.g. a failed run): so is the gap, with its reason
            return Cell(text="n/c", marks=ordered([*marks, "N"]), notes=[f"{task} gap: not computed: a side is not computed"])
        return Cell(text="–")
    sides = []
    for name in (task, f"{task}_text"):
        result = run.get(name)
        sides.append((name, samples_file_of(result.file, name), (result.n_effective, result.n_original)))
    try:
        n, reason = same_documents(*sides)
    except (OSError, ValueError) as error:
        n, reason = None, str(error)
    if reason:
        return Cell(text="n/c", marks=ordered([*marks, "N"]), notes=[f"{task} gap: not computed: {reason}"])
    return Cell(value=audio.value - text.value, marks=marks, n=n)


def settings_table(runs: list[Run], published: dict, context: Context) -> Table | None:
    """Headline metric per setting for every task a run ran in more than the audio setting (paper Table 4: audio vs
    text, gap = audio − text; §6.4-6.5: audio + reference text, few-shot, chain of thought); ``None`` if none did."""
    columns = [Column("audio", "audio", digits=3, show_n=True), Column("text", "text", digits=3, show_n=True), Column("gap", "gap audio − text", digits=3, show_n=True),
               Column("audio_ref", "audio + ref. text", digits=3, show_n=True), Column("fewshot", "few-shot", digits=3, show_n=True),
               Column("cot", "CoT", digits=3, show_n=True)]  # fmt: skip
    table = Table("parsa_settings", "PARSA-Bench settings: audio vs text (paper Table 4), audio + reference text, few-shot, CoT", columns)
    for run in runs:
        for task in ORDER:
            if not any(run.get(f"{TASK_PREFIX}{task}{suffix}") for setting, suffix in SETTING_SUFFIX.items() if setting != "audio"):
                continue
            metric = TASKS[task].headline_metric
            cells = {s: metric_cell(run, f"{TASK_PREFIX}{task}{suffix}", metric, published, context, exclusions=True, n_metric="scored", ci_metric=f"{metric}_ci95")
                     for s, suffix in SETTING_SUFFIX.items()}  # fmt: skip
            cells["gap"] = _gap_cell(run, f"{TASK_PREFIX}{task}", cells["audio"], cells["text"])
            table.rows.append(Row(run.label, "run", cells, f"{TASK_LABEL[task]} ({METRIC_LABEL.get(metric, metric)})"))
    if not table.rows:
        return None
    for row in published.get("rows", []):
        if "parsa_settings" in row.get("tables", []):
            cells = {key: Cell(value=float(value)) for key, value in row["values"].items()}
            source = f"{published['paper_short']}, arXiv {published['arxiv']}, {row['table']}"
            table.rows.append(Row(f"{row['model']} (paper)", "published", cells, f"{TASK_LABEL[row['task']]}; {source}"))
    table.notes = ["Same headline metric as Table 2 in every setting; '–' where the run did not include that setting's task (parsa_<task>_text, _audio_ref, _fewshot, _cot).",
                   ("gap = audio − text only when both settings ran the same documents (matched by id from the samples files, or both over their whole data); "
                    "n = those documents, each setting's score over its own non-excluded items; 'n/c' with the reason otherwise.")]  # fmt: skip
    return table


def _normalised_plot(runs: list[Run]):
    def draw(stem):
        plt = pyplot()
        tasks = [t for t in ORDER if any(normalised(run, t)[2] is not None for run in runs)]
        fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(tasks) * max(1, len(runs)) + 2), 3.8))
        width = 0.8 / max(len(runs), 1)
        for index, run in enumerate(runs):
            xs, ys, lows, highs, missing = [], [], [], [], []
            for position, task in enumerate(tasks):
                value, interval, _ = normalised(run, task)
                x = position - 0.4 + width * (index + 0.5)
                if value is None:
                    missing.append(x)
                    continue
                xs.append(x)
                ys.append(value)
                lows.append(value - interval[0] if interval else 0)
                highs.append(interval[1] - value if interval else 0)
            ax.bar(xs, ys, width, label=safe_label(run.label), color=GREYS[index % len(GREYS)], edgecolor="black", hatch=HATCHES[index % len(HATCHES)], linewidth=0.6)
            ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="black", capsize=2, linewidth=0.8)
            for x in missing:
                ax.annotate("n/a", (x, 0), ha="center", va="bottom", fontsize=6, rotation=90)
        ax.axhline(0, color="black", linewidth=0.8)
        start = 0
        for dimension in DIMENSIONS:
            count = sum(TASKS[t].dimension == dimension for t in tasks)
            if count:
                if start:
                    ax.axvline(start - 0.5, color="black", linestyle=":", linewidth=0.8)
                ax.annotate(DIMENSION_LABEL[dimension], ((start + start + count - 1) / 2, 1.02), xycoords=("data", "axes fraction"), ha="center", fontsize=8)
                start += count
        ax.set_xticks(range(len(tasks)))
        ax.set_xticklabels([TASK_LABEL[t] for t in tasks], rotation=35, ha="right")
        ax.set_ylabel("normalised score (s − b)/(1 − b)")
        if not any(normalised(run, t)[0] is not None for run in runs for t in tasks):
            nothing_scored(ax, "no normalised score to draw: no task with a baseline was scored (see the health table)")
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return save(fig, stem)

    return draw


def build(runs: list[Run], context: Context) -> Section | None:
    """The PARSA-Bench section for the runs that hold at least one ``parsa_*`` task of the main setting, or ``None``."""
    runs = [run for run in runs if any(run.get(f"{TASK_PREFIX}{t}") for t in ORDER)]
    if not runs:
        return None
    published = load_published("parsa")
    section = Section(BENCHMARK, f"PARSA-Bench ({published['paper']}, arXiv {published['arxiv']})")
    section.tables += [main_table(runs, published, context), detail_table(runs, published, context)]
    if any(run.get("parsa_asr") for run in runs):
        section.tables.append(asr_table(runs, published, context))
    section.tables.append(dimensions_table(runs, published, context))
    settings = settings_table(runs, published, context)
    if settings is not None:
        section.tables.append(settings)
    section.plots.append(Plot("parsa_normalised_score", "PARSA-Bench normalised score (s − b)/(1 − b) per task with 95% CI bars, grouped by dimension "
                                                         "(tasks with a majority baseline; ASR, translation and NER have none).", _normalised_plot(runs)))  # fmt: skip
    section.notes += [published["note"], f"Full test-set sizes: {published['test_set_size_source']}."]
    return section
