"""Model runs read from lmms-eval output folders: the newest results per task, the model and its arguments,
document counts, and the health of each task (limit, subset, empty/failed outputs, judge failures, exclusions).

lmms-eval 0.7 writes ``<output_path>/[<model>/]<date>_results.json`` (plus ``<date>_samples_<task>.jsonl`` with
``--log_samples``). A folder may hold several results files (the same command run twice, or one run per task
set); for every task the newest file that holds it wins and the report says which files were passed over.
Files in one folder that name different models or model arguments are separate runs.

Metric values are read by name from ``results[task]["<metric>,<filter>"]`` (filter ``none`` preferred), so new
metrics and changed shapes of existing ones do not break reading; unknown values are kept as they are.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

#: Metric-name suffixes lmms-eval adds beside every metric (standard errors, stability statistics).
_COMPANION_SUFFIXES = ("_stderr", "_stderr_clt", "_stderr_clustered", "_expected_accuracy", "_consensus_accuracy", "_internal_variance", "_consistency_rate")
#: Counts of outputs that were not real answers: empty, failed, placeholders, echoes, degenerate repeats, answers whose
#: scoring raised (excluded; in PARSA also inside ``excluded``), runaway answers over 10,000 characters.
#: Any numeric metric whose name matches is read as such a count (names differ per benchmark and version).
PROBLEM_COUNT = re.compile(
    r"(^|_)(empty|failed_generations|generation_failed|failed_outputs|echo|echoed|placeholder|identical|degenerate|invalid_text|unfinished|scoring_errors|long_answers)",
    re.IGNORECASE,
)
#: Counts of answers read in a special way (shown in the health table's "answers read" column): reasoning that
#: never closed (no final answer; also an E count), several answers with no clear final one, JSON repaired before
#: reading, labels or options outside the task's set, replies the strict reader could not read.
READING_COUNTS = {
    "unfinished_reasoning": "unfinished reasoning",
    "ambiguous_answers": "ambiguous",
    "repaired_json": "repaired JSON",
    "out_of_set_labels": "out-of-set",
    "strict_parse_failures": "strict unread",
}
#: Metrics that are shares (0-1) of degenerate outputs rather than counts.
PROBLEM_SHARE = ("repetition_rate",)


class ReportInputError(ValueError):
    """An output folder or results file the report cannot read; the message names the path and what is wrong."""


def is_number(value) -> bool:
    """True for an int or float that is finite (bool excluded)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class TaskResult:
    """One task of one run.

    Attributes:
        task: lmms-eval task name (``mcga_asr``).
        metrics: ``{metric: value}`` with the filter suffix dropped and lmms-eval's companion entries removed.
        n_effective: documents scored in this run (after ``--limit``), from the results file's ``n-samples``.
        n_original: documents the task's data held.
        file: the results file this task was read from.
        status: the run's own record of a task that did not finish as meant, ``{"status": "failed" | "incomplete",
            "reasons": [str, ...]}`` (``results["lmms_eval_audio_plugin"]["task_status"][task]``, written by
            :func:`lmms_eval_tasks.plugin.record_failures_on_other_tasks`), or ``None``.
    """

    task: str
    metrics: dict
    n_effective: int | None
    n_original: int | None
    file: Path
    status: dict | None = None

    @property
    def n_scored(self) -> int | None:
        """Items behind the task's figures, the ``n`` of every report table and the health table's "scored": the
        task's ``scored`` metric where it reports one (PARSA: excluded and refused items left out), else the
        documents of the run (:attr:`n_effective`)."""
        scored = self.metrics.get("scored")
        return int(scored) if is_number(scored) else self.n_effective

    def number(self, metric: str) -> float | None:
        """The metric as a float, or ``None`` when it is missing or not a number (e.g. "not computed: ...")."""
        value = self.metrics.get(metric)
        return float(value) if is_number(value) else None


@dataclass
class Run:
    """One model run: the tasks of one or more results files of one model with one set of arguments.

    Attributes:
        label: the name shown in tables (``--name`` or ``model`` plus a short form of the arguments).
        model: lmms-eval ``--model``; model_args: ``--model_args`` as recorded.
        folder: the output folder given on the command line.
        limit: ``--limit`` as recorded (``None`` when absent).
        tasks: ``{task: TaskResult}``.
        notes: what the reader should know about how the run was read (files passed over, ...).
        config: the results file's ``config`` block (newest file).
    """

    label: str
    model: str
    model_args: str
    folder: Path
    limit: float | None
    tasks: dict[str, TaskResult]
    notes: list[str] = field(default_factory=list)
    config: dict = field(default_factory=dict)
    lmms_eval_version: str = ""
    date: str = ""

    def get(self, task: str) -> TaskResult | None:
        return self.tasks.get(task)


def _metrics(values: dict) -> dict:
    """``{metric: value}`` of one task's results entry, preferring filter ``none``."""
    chosen: dict[str, tuple[str, object]] = {}
    for key, value in values.items():
        if key == "alias" or "," not in key:
            continue
        metric, _, filter_name = key.partition(",")
        if metric.endswith(_COMPANION_SUFFIXES):
            continue
        if metric not in chosen or filter_name == "none":
            chosen[metric] = (filter_name, value)
    return {metric: value for metric, (_, value) in chosen.items()}


def find_results_files(folder: Path) -> list[Path]:
    """``*_results.json`` files below ``folder`` (or the file itself).

    Raises:
        ReportInputError: the path does not exist or holds no results file.
    """
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise ReportInputError(f"{folder}: no such file or folder")
    files = sorted(folder.rglob("*_results.json"))
    if not files:
        raise ReportInputError(f"{folder}: no lmms-eval *_results.json below this folder (was the run given --output_path?)")
    return files


def _load(file: Path) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportInputError(f"{file}: not a readable lmms-eval results file ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ReportInputError(f"{file}: no 'results' object; not an lmms-eval results file")
    return data


def _sort_key(file: Path, data: dict) -> tuple:
    # lmms-eval names files <YYYYMMDD_HHMMSS>_results.json and records "date"; fall back to mtime.
    return (str(data.get("date") or ""), file.name, file.stat().st_mtime)


def _short_args(model_args: str) -> str:
    """``pretrained=Qwen/Qwen2.5-Omni-7B,device=cuda`` -> ``Qwen2.5-Omni-7B``; otherwise the arguments, shortened."""
    for part in model_args.split(","):
        key, _, value = part.partition("=")
        if key.strip() in ("pretrained", "model", "model_version", "model_name") and value:
            return value.strip().rstrip("/").split("/")[-1]
    return model_args if len(model_args) <= 40 else model_args[:37] + "..."


def read_runs(folder: str | Path, name: str | None = None) -> list[Run]:
    """The runs in one lmms-eval output folder (usually one).

    For every task, the newest results file holding it is used (newest by the recorded ``date``, then the
    file name); each file passed over is named in :attr:`Run.notes`.

    Raises:
        ReportInputError: the folder holds no readable results file, or a task appears twice in one file.
    """
    folder = Path(folder)
    loaded = [(file, _load(file)) for file in find_results_files(folder)]
    groups: dict[tuple[str, str], list[tuple[Path, dict]]] = {}
    for file, data in loaded:
        config = data.get("config") or {}
        groups.setdefault((str(config.get("model", "?")), str(config.get("model_args", ""))), []).append((file, data))
    runs = []
    for (model, model_args), members in groups.items():
        members.sort(key=lambda item: _sort_key(*item), reverse=True)  # newest first
        tasks: dict[str, TaskResult] = {}
        notes: list[str] = []
        for file, data in members:
            n_samples = data.get("n-samples") or {}
            statuses = (data.get("lmms_eval_audio_plugin") or {}).get("task_status") or {}
            for task, values in data["results"].items():
                if not isinstance(values, dict):
                    continue
                if task in tasks:
                    notes.append(f"{task}: {file.name} passed over (a newer file, {tasks[task].file.name}, has this task)")
                    continue
                counts = n_samples.get(task) or {}
                status = statuses.get(task) if isinstance(statuses, dict) and isinstance(statuses.get(task), dict) else None
                tasks[task] = TaskResult(task, _metrics(values), counts.get("effective"), counts.get("original"), file, status)
        newest = members[0][1]
        label = name or (f"{model} ({_short_args(model_args)})" if model_args else model)
        if len(groups) > 1 and name:
            label = f"{name}: {model} ({_short_args(model_args)})"
        config = newest.get("config") or {}
        runs.append(
            Run(label, model, model_args, folder, config.get("limit"), tasks, notes, config,
                str(newest.get("lmms_eval_version", "")), str(newest.get("date", "")))
        )  # fmt: skip
    return runs


# ----------------------------------------------------------------------------------------------- health
@dataclass
class TaskHealth:
    """Why a task's numbers may not be what they seem; each field feeds one mark (see :data:`MARKS`)."""

    limited: str = ""  # L
    subset: str = ""  # S
    problems: list[str] = field(default_factory=list)  # E
    failed_run: str = ""  # F
    incomplete: str = ""  # I
    judge_failed: str = ""  # J
    excluded: str = ""  # X

    def marks(self, judged: bool = True, exclusions: bool = True) -> list[str]:
        marks = []
        if self.failed_run:
            marks.append("F")
        if self.incomplete:
            marks.append("I")
        if self.limited:
            marks.append("L")
        if self.subset:
            marks.append("S")
        if self.problems:
            marks.append("E")
        if judged and self.judge_failed:
            marks.append("J")
        if exclusions and self.excluded:
            marks.append("X")
        return marks

    def explanations(self) -> list[str]:
        return [text for text in (self.failed_run, self.incomplete, self.limited, self.subset, *self.problems, self.judge_failed, self.excluded) if text]


#: What each mark on a cell means (shown under every table, in the HTML page and in docs/report.md).
MARKS = {
    "L": "run with --limit: fewer documents than the task's data holds (not a full result)",
    "S": "fewer documents than the benchmark's full test set (e.g. the shipped sample data): not comparable with published numbers",
    "E": "empty, failed, placeholder, echoed, degenerate or unfinished (reasoning) outputs were counted in this task",
    "F": "failed task: the run marked it failed (its task_status: a failed run by our rule, or an aggregation that raised), or most (over half) of its outputs were empty, failed generations or unfinished reasoning",
    "I": "incomplete task: the run marked it incomplete (its task_status: stopped early on purpose, e.g. a judge budget reached): its figures cover fewer documents than asked for",
    "J": "judge failures: some judge calls failed and were left out of the mean",
    "X": "exclusions above the threshold: excluded + refused items as a share of the documents",
    "N": "not computed (the results file gives the reason, e.g. no judge configured)",
}


#: Counts of a task's judge pass shown beside judge failures (docs/judge.md): verdicts read after the judge's
#: reasoning, replies whose reasoning never closed (already among the judge failures), usable replies not cached,
#: MCGA's strict-reading exclusions and disagreements, and candidates holding prompt-like framing.
JUDGE_COUNTS = {
    "judge_verdicts_after_reasoning": "verdicts after reasoning",
    "judge_unfinished_reasoning": "unfinished reasoning",
    "judge_uncached": "uncached",
    "judge_failed_strict": "failed (strict)",
    "strict_differs": "strict differs",
    "candidate_prompt_framing": "prompt-like candidates",
}


def judge_counts(result: TaskResult) -> dict[str, int]:
    """The non-zero :data:`JUDGE_COUNTS` of a task, by their short names, in that order."""
    values = {short: result.metrics.get(metric) for metric, short in JUDGE_COUNTS.items()}
    return {short: int(value) for short, value in values.items() if is_number(value) and value}


def _judge_failures(result: TaskResult) -> int:
    """Judge failures of a task: ``judge_failed`` if numeric, else the sum over a per-dimension breakdown."""
    value = result.metrics.get("judge_failed")
    if is_number(value):
        return int(value)
    total = 0
    for breakdown in (result.metrics.get("dimensions"),):
        if isinstance(breakdown, dict):
            total += sum(int(d.get("judge_failed", 0)) for d in breakdown.values() if isinstance(d, dict) and is_number(d.get("judge_failed", 0)))
    return total


def task_health(result: TaskResult, full_size: int | None, exclusion_threshold: float) -> TaskHealth:
    """Health of one task of one run. A task the run itself marked failed or incomplete (:attr:`TaskResult.status`)
    gets F or I with the run's reasons; without that record (older results files), F is read from the counts (over
    half of the outputs empty, failed or unfinished).

    Args:
        result: the task's results.
        full_size: documents in the benchmark's full test set (published data), or ``None`` if unknown.
        exclusion_threshold: share (0-1) of excluded + refused documents above which mark X is set.
    """
    health = TaskHealth()
    n, original = result.n_effective, result.n_original
    if n is not None and original is not None and n < original:
        health.limited = f"{result.task}: {n} of {original} documents (--limit)"
    source = result.metrics.get("data_source")
    if full_size and original is not None and original < full_size:
        health.subset = f"{result.task}: the data held {original} documents, the full test set has {full_size}"
    elif isinstance(source, str) and source.startswith("sample:"):
        health.subset = f"{result.task}: {source}"
    failed = 0
    for metric, value in sorted(result.metrics.items()):
        if PROBLEM_COUNT.search(metric) and is_number(value) and value > 0 and not metric.startswith("judge"):
            health.problems.append(f"{result.task}: {metric} = {value:g}")
            if re.search(r"empty|fail|placeholder|unfinished", metric):
                failed = max(failed, value)
        elif metric in PROBLEM_SHARE and is_number(value) and value > 0:
            health.problems.append(f"{result.task}: {metric} = {value:.3g}")
    status = result.status or {}
    reasons = "; ".join(str(r) for r in status.get("reasons") or []) or "no reason recorded"
    if status.get("status") == "failed":  # the run's own record first: a failed task's counts read "not computed" too
        health.failed_run = f"{result.task}: marked failed by the run: {reasons}"
    elif n and failed / n > 0.5:  # results files without a task_status (older runs, other writers): from the counts
        health.failed_run = f"{result.task}: {failed:g} of {n} outputs empty or failed: a failed run"
    if status.get("status") == "incomplete":
        health.incomplete = f"{result.task}: marked incomplete by the run: {reasons}"
    judge_failed = _judge_failures(result)
    if judge_failed:
        health.judge_failed = f"{result.task}: {judge_failed} judge failure(s)"
    excluded = sum(result.number(m) or 0 for m in ("excluded", "refused"))
    if n and excluded / n > exclusion_threshold:
        health.excluded = f"{result.task}: {excluded:g} of {n} items excluded or refused ({excluded / n:.0%} > {exclusion_threshold:.0%})"
    return health
