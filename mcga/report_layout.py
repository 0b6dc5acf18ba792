"""MCGA's part of ``audio-bench-report``: the paper's tables and figures from lmms-eval results files.

Tables (one row per model run, then the paper's rows from ``published.json`` with their source, then a
"Δ run − paper" row for a run of a published model):

- ``mcga_main`` (paper Table 3): ASR CER, S2TT LLM-B, SEC LLM-C, SQA F1, SU and SR accuracy, CMC; the official
  metric with our strict variant beside it (CER strict, accuracies strict, CMC over the strict accuracies);
- ``mcga_asr_by_genre`` (Table 4): official CER per genre and in total, n per genre where the run reports it;
- ``mcga_asr_by_dynasty`` (Figure 7): official CER per dynasty;
- ``mcga_judged`` (Tables 6 and 7): the judge dimensions, judge failures, and the judge-free chrF++/BLEU and
  SEC sentence CER;
- ``mcga_cmc`` (Table 8): the audio and text-mode scores behind CMC.

Figures: CER per genre and per dynasty per run (English names; the Chinese ones are in the tables).
This module needs no lmms-eval; it reads metric names, so it keeps working when metrics are added.
"""

from __future__ import annotations

import functools
import re

from audio_bench_core.samples import per_document_values, samples_file_of
from audio_bench_report.plots import grouped_bars, pyplot, save
from audio_bench_report.runs import Run, is_number
from audio_bench_report.tables import (
    Cell,
    Column,
    Context,
    Plot,
    Section,
    Table,
    assemble,
    health,
    load_published,
    metric_cell,
    ordered,
)
from mcga.judging import S2TT_DIMENSIONS, S2TT_SCALE, SEC_DIMENSIONS, SEC_SCALE
from mcga.metrics import DYNASTY_ORDER, GENRE_ORDER
from mcga.report import CMC_TASKS, cmc_documents_line, cmc_over_shared_documents

BENCHMARK = "MCGA"
TASK_PREFIX = "mcga_"
#: English names of the genres (paper Table 4) and dynasties (Figure 7), for figures and column headers.
GENRE_ENGLISH = {"诗": "Shi", "词": "Ci", "曲": "Qu", "赋": "Fu", "文": "Wen"}
DYNASTY_ENGLISH = {"先秦": "Pre-Qin", "汉": "Han", "魏晋": "Wei-Jin", "南北朝": "N.&S. Dyn.", "隋": "Sui", "唐": "Tang",
                   "五代": "Five Dyn.", "宋": "Song", "元": "Yuan", "明": "Ming", "清": "Qing"}  # fmt: skip
#: The metrics a reader looks at first, per task (text-mode twins ``*_text`` share them): the printed lmms-eval table
#: and ``mcga-report`` show these, with the strict twin (``*_strict``) beside each. S2TT and SEC list the judge-free
#: scores too, so a run without a judge still prints a number.
HEADLINE_METRICS = {"mcga_asr": ("cer_official",), "mcga_s2tt": ("llm_b", "chrf_pp", "bleu"), "mcga_sec": ("llm_c", "cer_sentences"),
                    "mcga_sqa": ("f1_official",), "mcga_su": ("acc_official",), "mcga_sr": ("acc_official",)}  # fmt: skip
JUDGED_METRICS = ("llm_b", "llm_bf", "llm_bm", "llm_bs", "llm_c", "sec_p", "sec_g", "sec_s", "llm_b_strict", "llm_c_strict")
CMC_PARTS = (("sqa", "mcga_sqa", "f1_official"), ("qa", "mcga_sqa_text", "f1_official"), ("su", "mcga_su", "acc_official"),
             ("lu", "mcga_su_text", "acc_official"), ("sr", "mcga_sr", "acc_official"), ("lr", "mcga_sr_text", "acc_official"))  # fmt: skip


def headline_metrics(task: str) -> tuple[str, ...]:
    """The headline metrics of an MCGA task (:data:`HEADLINE_METRICS`); ``()`` for groups and unknown names."""
    return HEADLINE_METRICS.get(task.removesuffix("_text"), ())


def metric_scale(metric: str) -> str | None:
    """The scale of an MCGA figure: ``"%"`` (CER, F1, accuracy, CMC in percent, as the official script prints them;
    LLM-B/LLM-C 0-100) or ``"0-100"`` (chrF++ and BLEU, sacrebleu's scale); ``None`` for counts."""
    if metric.startswith(("chrf", "bleu")):
        return "0-100"
    return None if metric in ("scored", "excluded") else "%"


#: The S2TT judge's scale (the official prompts ask for a 1-5 score; LLM-B and its parts are reported ×20: 20-100).
S2TT_JUDGE_SCALE = (1, 5)


def documented_range(metric: str) -> tuple[float, float] | None:
    """The range an MCGA figure has by its documented scale, ``(low, high)`` in the figure's unit, or None (CER, whose
    insertions have no upper bound; counts; CMC, a ratio of two scores).

    - LLM-BF/BM/BS and LLM-B: 20-100 (a 1-5 judge score ×20; MCGA paper and official ``eval/eval_model.py``);
    - SEC-P 0-2, SEC-G 0-3, SEC-S 0-5 (the official SEC prompts' ``[x/N]``), LLM-C 0-100 ((P + G + S) ×10);
    - SQA F1, SU/SR accuracy 0-100 (percent); chrF++ and BLEU 0-100 (sacrebleu).

    The strict twin (``<metric>_strict``) has the same range. The official readings can leave it (a first digit 7 on
    the 1-5 scale, ``[7/5]``): such a figure is flagged beside it in the printed table and the report, never changed.
    """
    base = metric.removesuffix("_strict")
    if base in S2TT_DIMENSIONS or base == "llm_b":
        return (S2TT_JUDGE_SCALE[0] * S2TT_SCALE, S2TT_JUDGE_SCALE[1] * S2TT_SCALE)
    if base in SEC_DIMENSIONS:
        return (0, SEC_DIMENSIONS[base][3])
    if base == "llm_c":
        return (0, sum(spec[3] for spec in SEC_DIMENSIONS.values()) * SEC_SCALE)
    if base in ("f1_official", "acc_official", "acc", "chrf_pp", "bleu"):
        return (0, 100)
    return None


def _group_values(run: Run, metric: str) -> dict[str, tuple[float | None, int | None]]:
    """``{group: (CER, n)}`` from a breakdown metric in any of the shapes the hooks write:
    ``{group: cer}``, ``{group: {"cer": x, "n": k}}``, or ``{group: cer}`` beside a companion ``<metric>_n``
    (or ``n_by_genre`` / ``n_by_dynasty``) holding ``{group: n}``."""
    result = run.get("mcga_asr")
    if result is None or not isinstance(result.metrics.get(metric), dict):
        return {}
    kind = metric.rsplit("_", 1)[-1]  # genre / dynasty
    companion = next((result.metrics[m] for m in (f"{metric}_n", f"n_by_{kind}", f"docs_by_{kind}") if isinstance(result.metrics.get(m), dict)), {})
    out = {}
    for group, value in result.metrics[metric].items():
        n = companion.get(group)
        if isinstance(value, dict):
            n = value.get("n", value.get("docs", n))
            value = next((value[k] for k in ("cer", "cer_official", "value") if k in value), None)
        out[group] = (float(value) if is_number(value) else None, int(n) if is_number(n) else None)
    return out


def _per_document(path: str, mtime: float) -> dict:
    """:func:`audio_bench_core.samples.per_document_values` of one samples file, read once per report (``mtime``
    keys the cache, so a rewritten file is read again)."""
    return per_document_values(path, ("f1_official", "acc_official", "acc_strict"))


_per_document = functools.lru_cache(maxsize=64)(_per_document)


def run_cmc(run: Run) -> dict:
    """CMC of a run over the documents both modes scored: :func:`mcga.report.cmc_over_shared_documents` (the one
    implementation, shared with ``mcga-report``) fed with the run's six tasks, their samples files (found beside each
    task's results file, :func:`audio_bench_core.samples.samples_file_of`; documents matched by id) and their document
    counts (run, in the data). Same return shape; ``error`` says why CMC is refused (no shared document, ``--limit``
    without samples files, a text-mode score of 0, a missing task) or the samples file that could not be read.
    """
    tasks = {task: dict(run.get(task).metrics) for task in CMC_TASKS if run.get(task)}
    per_document, counts = {}, {}
    try:
        for task in tasks:
            result = run.get(task)
            counts[task] = (result.n_effective, result.n_original)
            path = samples_file_of(result.file, task)
            per_document[task] = _per_document(str(path), path.stat().st_mtime) if path else None
    except (OSError, ValueError) as error:  # an unreadable samples file: CMC refused, the reason named
        return {"cmc": None, "cmc_strict": None, "documents": {}, "parts": [], "matched_by": None, "error": str(error)}
    return cmc_over_shared_documents(tasks, per_document, counts)


def _cmc_cell(run: Run, published: dict, context: Context, strict: bool) -> Cell:
    """CMC (official or over the strict accuracies) over the documents both modes scored (:func:`run_cmc`): the value
    with ``n`` = documents per ratio (SQA/QA, SU/LU, SR/LR: e.g. ``6/5/4``) and a note naming them; "n/c" (mark N)
    with the reason when refused."""
    tasks = [task for _, task, _ in CMC_PARTS]
    if not all(run.get(task) for task in tasks):
        missing = [t for t in tasks if not run.get(t)]
        return Cell(text="–", notes=[f"CMC needs {', '.join(missing)} (run --tasks mcga_cmc)"] if len(missing) < len(tasks) else [])
    states = [health(run, t, published, context) for t in tasks]
    cell = Cell(marks=ordered(m for s in states for m in s.marks(judged=False)), notes=[n for s in states for n in s.explanations()])
    cmc = run_cmc(run)
    if cmc["error"]:
        cell.text, cell.marks = "n/c", ordered([*cell.marks, "N"])
        cell.notes.append(f"CMC{' strict' if strict else ''}: not computed: {cmc['error']}")
        return cell
    value = cmc["cmc_strict" if strict else "cmc"]
    if value is None:
        cell.text = "?"
        cell.notes.append(f"CMC{' strict' if strict else ''}: a part is not a number in the results or samples")
        return cell
    cell.value = value
    if all(isinstance(n, int) for n in cmc["documents"].values()):
        cell.n = "/".join(str(n) for n in cmc["documents"].values())
    cell.notes.append(cmc_documents_line(cmc))
    return cell


#: Under every table with a CMC column: what CMC is computed over and what its n means.
CMC_NOTE = ("CMC = (SQA/QA + SU/LU + SR/LR) / 3 × 100 needs the text-mode tasks (--tasks mcga_cmc); each ratio over the documents both modes scored "
            "(matched by document from the samples files; without them only when both modes ran their whole data), n = those documents per ratio "
            "(in the order SQA/QA, SU/LU, SR/LR); refused (n/c, reason named) when the modes share no document.")


def main_table(runs: list[Run], published: dict, context: Context) -> Table:
    columns = [
        Column("asr_cer", "ASR CER↓", better="lower"), Column("asr_cer_strict", "ASR CER strict↓", better="lower"),
        Column("s2tt_llm_b", "S2TT LLM-B↑"), Column("sec_llm_c", "SEC LLM-C↑"), Column("sqa_f1", "SQA F1↑"),
        Column("su_acc", "SU Acc↑"), Column("su_acc_strict", "SU Acc strict↑"), Column("sr_acc", "SR Acc↑"),
        Column("sr_acc_strict", "SR Acc strict↑"), Column("cmc", "CMC↑"), Column("cmc_strict", "CMC strict↑"),
    ]  # fmt: skip
    for column in columns:  # each task's cell carries its n (documents scored); CMC's: documents both modes scored per ratio
        column.show_n = True
    spec = {"asr_cer": ("mcga_asr", "cer_official"), "asr_cer_strict": ("mcga_asr", "cer_strict"), "s2tt_llm_b": ("mcga_s2tt", "llm_b"),
            "sec_llm_c": ("mcga_sec", "llm_c"), "sqa_f1": ("mcga_sqa", "f1_official"), "su_acc": ("mcga_su", "acc_official"),
            "su_acc_strict": ("mcga_su", "acc_strict"), "sr_acc": ("mcga_sr", "acc_official"), "sr_acc_strict": ("mcga_sr", "acc_strict")}  # fmt: skip
    cells = []
    for run in runs:
        row = {key: metric_cell(run, task, metric, published, context, judged=metric in JUDGED_METRICS) for key, (task, metric) in spec.items()}
        row["cmc"], row["cmc_strict"] = _cmc_cell(run, published, context, False), _cmc_cell(run, published, context, True)
        cells.append(row)
    table = Table("mcga_main", "MCGA main results (paper Table 3): official metric, our strict variant beside it", columns)
    table.notes = [("CER, F1 and accuracy in percent; LLM-B and LLM-C 0-100 (LLM judge). 'strict': our stricter rule (lmms_eval_tasks/mcga/README.md). "
                    "n = documents scored (the health table's 'scored (n)')."),
                   CMC_NOTE]  # fmt: skip
    return assemble(table, runs, cells, published, context)


def _breakdown_table(runs, published, context, *, key, title, metric, order, english, prefix, total: bool) -> Table:
    columns = [Column(f"{prefix}_{re.sub('[^a-z]+', '_', english[g].lower()).strip('_')}", f"{english[g]} {g}", show_n=True, better="lower") for g in order]
    keys = {g: c.key for g, c in zip(order, columns)}
    if total:
        columns.append(Column("total", "Total", show_n=True, better="lower"))
    extra_groups = sorted({g for run in runs for g in _group_values(run, metric) if g not in keys})
    for group in extra_groups:  # a group the paper does not list: shown under its own name, never dropped
        keys[group] = f"{prefix}_other_{len(keys)}"
        columns.append(Column(keys[group], group, show_n=True, better="lower"))
    cells = []
    for run in runs:
        state = health(run, "mcga_asr", published, context)
        base = Cell(marks=state.marks(judged=False), notes=state.explanations()) if state else Cell()
        groups = _group_values(run, metric)
        row = {}
        for group, column_key in keys.items():
            if group in groups:
                value, n = groups[group]
                row[column_key] = Cell(value=value, text="?" if value is None else "–", marks=list(base.marks), n=n, notes=list(base.notes))
            else:
                row[column_key] = Cell(text="–")
        if total:
            row["total"] = metric_cell(run, "mcga_asr", "cer_official", published, context)
        cells.append(row)
    table = Table(key, title, columns)
    table.notes = ["Official corpus CER in percent (space-joined characters, as the official script); n = documents in the group where the run reports it."]
    return assemble(table, runs, cells, published, context)


def judged_table(runs: list[Run], published: dict, context: Context) -> Table:
    columns = [Column("llm_bf", "LLM-BF↑"), Column("llm_bm", "LLM-BM↑"), Column("llm_bs", "LLM-BS↑"), Column("llm_b", "LLM-B↑"),
               Column("llm_b_strict", "LLM-B strict↑"), Column("s2tt_judge_failed", "S2TT judge failed", digits=0), Column("chrf_pp", "chrF++↑"), Column("bleu", "BLEU↑"),
               Column("sec_p", "SEC-P (0-2)↑", digits=2), Column("sec_g", "SEC-G (0-3)↑", digits=2), Column("sec_s", "SEC-S (0-5)↑", digits=2),
               Column("llm_c", "LLM-C↑"), Column("llm_c_strict", "LLM-C strict↑"), Column("sec_judge_failed", "SEC judge failed", digits=0),
               Column("cer_sentences", "SEC sentence CER↓", better="lower")]  # fmt: skip
    spec = {"llm_bf": ("mcga_s2tt", "llm_bf"), "llm_bm": ("mcga_s2tt", "llm_bm"), "llm_bs": ("mcga_s2tt", "llm_bs"), "llm_b": ("mcga_s2tt", "llm_b"),
            "llm_b_strict": ("mcga_s2tt", "llm_b_strict"), "llm_c_strict": ("mcga_sec", "llm_c_strict"), "s2tt_judge_failed": ("mcga_s2tt", "judge_failed"), "chrf_pp": ("mcga_s2tt", "chrf_pp"), "bleu": ("mcga_s2tt", "bleu"),
            "sec_p": ("mcga_sec", "sec_p"), "sec_g": ("mcga_sec", "sec_g"), "sec_s": ("mcga_sec", "sec_s"), "llm_c": ("mcga_sec", "llm_c"),
            "sec_judge_failed": ("mcga_sec", "judge_failed"), "cer_sentences": ("mcga_sec", "cer_sentences")}  # fmt: skip
    cells = [{key: metric_cell(run, task, metric, published, context, judged=metric in JUDGED_METRICS) for key, (task, metric) in spec.items()} for run in runs]
    table = Table("mcga_judged", "MCGA S2TT and SEC by judge dimension (paper Tables 6 and 7), judge failures, judge-free scores", columns)
    table.notes = ["LLM-B* ×20 of a 1-5 judge score; SEC-P/G/S raw judge scores; LLM-C = (P+G+S)×10. Judge failures are left out of each mean and counted.",
                   "LLM-B/LLM-C and their parts read each judge reply as the official code does; 'strict': a score counts only when it is the judge's one "
                   "verdict on the rubric (lmms_eval_tasks/mcga/README.md, 'Two readings').",
                   "chrF++/BLEU (sacrebleu, 0-100) against the gold translation and the SEC sentence CER need no judge."]  # fmt: skip
    return assemble(table, runs, cells, published, context)


def cmc_table(runs: list[Run], published: dict, context: Context) -> Table | None:
    if not any(run.get("mcga_sqa_text") or run.get("mcga_su_text") or run.get("mcga_sr_text") for run in runs):
        return None
    columns = [Column(name, header) for name, header in (("sqa", "SQA"), ("qa", "QA (text)"), ("su", "SU"), ("lu", "LU (text)"), ("sr", "SR"), ("lr", "LR (text)"))]
    columns += [Column("cmc", "CMC↑", show_n=True), Column("su_strict", "SU strict"), Column("lu_strict", "LU strict"), Column("sr_strict", "SR strict"),
                Column("lr_strict", "LR strict"), Column("cmc_strict", "CMC strict↑", show_n=True)]  # fmt: skip
    cells = []
    for run in runs:
        row = {name: metric_cell(run, task, metric, published, context) for name, task, metric in CMC_PARTS}
        for name, task, metric in CMC_PARTS[2:]:
            row[f"{name}_strict"] = metric_cell(run, task, "acc_strict", published, context)
        row["cmc"], row["cmc_strict"] = _cmc_cell(run, published, context, False), _cmc_cell(run, published, context, True)
        cells.append(row)
    table = Table("mcga_cmc", "MCGA cross-modal consistency (paper Table 8): audio vs text-mode scores", columns)
    table.notes = [("QA/LU/LR: the same questions with the transcript instead of the audio (mcga_*_text); each task's cell is its own figure, over its own "
                    "documents. The paper's Table 8 values are not in its accessible text."), CMC_NOTE]
    return assemble(table, runs, cells, published, context)


def _breakdown_plot(runs: list[Run], metric: str, order, english, title: str):
    def draw(stem):
        plt = pyplot()
        groups = list(order) + sorted({g for run in runs for g in _group_values(run, metric) if g not in order})
        present = [g for g in groups if any(g in _group_values(run, metric) for run in runs)]
        fig, ax = plt.subplots(figsize=(max(4.5, 0.55 * len(present) * max(1, len(runs)) + 2), 3.4))
        series = [(run.label, [_group_values(run, metric).get(g, (None, None))[0] for g in present], None) for run in runs]
        labels = []
        for g in present:
            ns = [_group_values(run, metric).get(g, (None, None))[1] for run in runs]
            n_text = "/".join("?" if n is None else str(n) for n in ns)
            labels.append(f"{english.get(g, g)}\nn={n_text}" if any(n is not None for n in ns) else english.get(g, g))
        grouped_bars(ax, labels, series, ylabel="official CER (%) ↓")
        ax.set_title(title, fontsize=9)
        return save(fig, stem)

    return draw


def build(runs: list[Run], context: Context) -> Section | None:
    """The MCGA section for the runs that hold at least one ``mcga_*`` task, or ``None``."""
    runs = [run for run in runs if any(task.startswith(TASK_PREFIX) for task in run.tasks)]
    if not runs:
        return None
    published = load_published("mcga")
    section = Section(BENCHMARK, f"MCGA ({published['paper']}, arXiv {published['arxiv']})")
    section.tables.append(main_table(runs, published, context))
    if any(run.get("mcga_asr") for run in runs):
        section.tables.append(_breakdown_table(runs, published, context, key="mcga_asr_by_genre", title="MCGA ASR CER by genre (paper Table 4)",
                                               metric="cer_official_by_genre", order=GENRE_ORDER, english=GENRE_ENGLISH, prefix="genre", total=True))  # fmt: skip
        section.tables.append(_breakdown_table(runs, published, context, key="mcga_asr_by_dynasty", title="MCGA ASR CER by dynasty (paper Figure 7)",
                                               metric="cer_official_by_dynasty", order=DYNASTY_ORDER, english=DYNASTY_ENGLISH, prefix="dynasty", total=False))  # fmt: skip
        section.plots.append(Plot("mcga_cer_by_genre", "MCGA official CER per genre and run (Shi 诗, Ci 词, Qu 曲, Fu 赋, Wen 文); n per group below each label.",
                                  _breakdown_plot(runs, "cer_official_by_genre", GENRE_ORDER, GENRE_ENGLISH, "MCGA ASR: CER by genre")))  # fmt: skip
        section.plots.append(Plot("mcga_cer_by_dynasty", "MCGA official CER per dynasty and run (chronological).",
                                  _breakdown_plot(runs, "cer_official_by_dynasty", DYNASTY_ORDER, DYNASTY_ENGLISH, "MCGA ASR: CER by dynasty")))  # fmt: skip
    if any(run.get("mcga_s2tt") or run.get("mcga_sec") for run in runs):
        section.tables.append(judged_table(runs, published, context))
    cmc = cmc_table(runs, published, context)
    if cmc is not None:
        section.tables.append(cmc)
    section.notes.append(published["note"])
    section.notes.append(f"Full test-set sizes: {published['test_set_size_source']}")
    return section
