"""The results table lmms-eval prints, made short for this plugin's tasks; the results JSON is not touched.

What lmms-eval 0.7.3 allows (read from ``lmms_eval/utils.py:make_table`` and ``lmms_eval/__main__.py``):

- Every entry of ``results[task]`` is printed as a row, whatever its type: strings (signatures, provenance,
  "not computed: ..."), dicts (per-genre breakdowns, judge provenance) and lists (CIs) are printed with ``str``.
  A PARSA run printed 267 rows for 16 tasks, mostly counters at 0.
- There is no task-config option to keep a metric out of the table, and the table is printed after the results
  JSON is written (``cli_evaluate`` saves in ``cli_evaluate_single``, then calls ``make_table(results)`` and, with
  groups, ``make_table(results, "groups")``); ``make_table`` is looked up as a module global of
  ``lmms_eval.__main__`` (bound by ``from lmms_eval.utils import make_table``).

So the plugin's entry point wraps ``make_table`` once. For this plugin's tasks (task names ``<benchmark>_*`` and
the groups named after the benchmark folders beside this module) it prints one short table instead, with, per
task or group, one row per headline metric:

- the headline metric(s) of the task, as its benchmark declares them (``headline_metrics(task)`` of
  ``<benchmark>/report_layout.py``; a task without a declaration shows its non-integer numbers);
- the scale of each figure beside its name, as the benchmark declares it (``metric_scale(metric)`` of
  ``<benchmark>/report_layout.py``): ``(0-1)`` fraction (PARSA), ``(%)`` percent (MCGA, MMAC), ``(0-100)`` chrF++/BLEU;
- the strict figure beside the official one: the metric named ``<headline>_strict``, or ``<x>_strict`` for
  ``<x>_official``; with 0 items scored it reads "not computed" like its twin (a figure over 0 scored items is
  never a number; the results JSON keeps the strict value);
- ``n``: the items scored (a metric named ``scored``), else the documents of the run;
- the 95% CI where the task reports one (``<headline>_ci95``);
- every other integer-valued metric (a counter: excluded, refused, empty answers, judge failures, whatever a
  task adds) and every ``*_rate`` share, only when it is not 0;
- "not computed" with a numbered reason under the table when a headline is a "not computed: ..." string;
- ``!`` beside a figure outside its documented range (``documented_range(metric)`` of ``<benchmark>/report_layout.py``,
  the same rule as the report's mark R: :func:`audio_bench_report.tables.off_range`), the value unchanged, and why under
  the table;
- under the table, the judge of every judged task (its ``judge`` provenance): the model(s) the server reported with their
  verdict counts, the configured name where it differs, two judges mixed in one figure, and the audit of cached
  verdicts (:func:`audio_bench_core.judge_identity.describe`).

Rows stay under :data:`MAX_WIDTH` characters (the counter cell wraps onto extra rows). Other benchmarks' rows
print as lmms-eval prints them. If lmms-eval changes (no ``make_table``), nothing is wrapped.
"""

from __future__ import annotations

import functools
import importlib
import sys
import textwrap

from audio_bench_core.judge_identity import describe
from audio_bench_report.render import text_table
from audio_bench_report.tables import off_range
from lmms_eval_tasks import TASKS_DIR

_MARKER = "_lmms_eval_audio_plugin_table"
#: Longest printed line (characters) for our table and the notes under it.
MAX_WIDTH = 150
FOOTER = ("Scale beside each metric: (0-1) fraction, (%) percent, (0-100) sacrebleu's chrF++/BLEU. Shown: headline metrics, strict beside official, "
          "n scored, counts not 0. Every metric: the results JSON; tables: audio-bench-report")  # fmt: skip


def benchmark_names() -> tuple[str, ...]:
    """Benchmark folders beside this module (``mcga``, ``parsa``, ...): each is a group name and a task prefix."""
    return tuple(sorted(p.name for p in TASKS_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name not in ("models",) and not p.name.startswith("_")))


def is_plugin_task(name: str, benchmarks: tuple[str, ...] | None = None) -> bool:
    """True for a task or group of this plugin: ``<benchmark>`` or ``<benchmark>_*``."""
    return any(name == b or name.startswith(f"{b}_") for b in (benchmarks or benchmark_names()))


@functools.lru_cache(maxsize=None)
def _headline_function(benchmark: str):
    try:
        return getattr(importlib.import_module(f"{benchmark}.report_layout"), "headline_metrics", None)
    except ImportError:
        return None


def headline_metrics(task: str) -> tuple[str, ...]:
    """The headline metrics ``<benchmark>.report_layout.headline_metrics(task)`` declares; ``()`` when none."""
    function = _headline_function(task.split("_", 1)[0])
    try:
        return tuple(function(task)) if function is not None else ()
    except Exception:  # noqa: BLE001 - a broken declaration must not cost the table: fall back to every number
        return ()


@functools.cache
def _scale_function(benchmark: str):
    try:
        return getattr(importlib.import_module(f"{benchmark}.report_layout"), "metric_scale", None)
    except ImportError:
        return None


def metric_scale(task: str, metric: str) -> str:
    """The scale ``<benchmark>.report_layout.metric_scale(metric)`` declares (``"0-1"`` fraction, ``"%"`` percent,
    ``"0-100"`` sacrebleu's chrF++/BLEU); ``""`` when the benchmark declares none."""
    function = _scale_function(task.split("_", 1)[0])
    try:
        return str(function(metric) or "") if function is not None else ""
    except Exception:  # noqa: BLE001 - a broken declaration must not cost the table
        return ""


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_counter(metric: str, value) -> bool:
    """A count (an ``int`` that is not a bool, e.g. ``excluded``, ``empty_responses``, ``judge_failed``) or a
    share of problem outputs (``*_rate``): printed only when it is not 0."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (metric.endswith("_rate") and _is_number(value))


def strict_twin(metric: str, metrics: dict) -> str | None:
    """The strict variant of ``metric`` reported beside it: ``<metric>_strict``, or ``<x>_strict`` for ``<x>_official``."""
    for name in (f"{metric}_strict", metric[: -len("_official")] + "_strict" if metric.endswith("_official") else ""):
        if name and name in metrics:
            return name
    return None


def _number(value) -> str:
    if isinstance(value, int):
        return str(value)
    return f"{value:.4f}"


def _metrics(entry: dict) -> dict:
    """``{metric: value}`` of one results entry (filter ``none`` preferred; ``alias`` and stderr entries dropped)."""
    chosen: dict[str, tuple[str, object]] = {}
    for key, value in entry.items():
        metric, _, filter_name = key.partition(",")
        if key == "alias" or not metric.strip() or "_stderr" in metric:
            continue
        if metric not in chosen or filter_name == "none":
            chosen[metric] = (filter_name, value)
    return {metric: value for metric, (_, value) in chosen.items()}


def _is_not_computed(value) -> bool:
    return isinstance(value, str) and value.startswith("not computed")


def _not_computed_cell(value: str, where: str, reasons: dict[str, list[str]]) -> str:
    """``not computed (k)``: ``k`` numbers the reason in ``reasons`` (added with ``where`` if new)."""
    reason = value.split(":", 1)[1].strip() if ":" in value else value
    if reason not in reasons:
        reasons[reason] = []
    reasons[reason].append(where)
    return f"not computed ({list(reasons).index(reason) + 1})"


def _strict_cell(metrics: dict, twin: str | None, scored, reasons: dict[str, list[str]], task: str, official=None) -> str:
    """The Strict cell: the twin's number, or "not computed (k)".

    Rule: a figure over 0 scored items is not computed, never a number; so with ``scored`` = 0 the strict twin
    (which counts unscored items as wrong, and would read 0 or a WER of 1) prints "not computed", as its official
    twin does (with its reason), and the results JSON keeps the number. A "not computed: ..." twin is numbered too.
    """
    if not twin:
        return ""
    value = metrics[twin]
    if _is_not_computed(value):
        return _not_computed_cell(value, f"{task} {twin}", reasons)
    if not _is_number(value):
        return ""
    if isinstance(scored, int) and not isinstance(scored, bool) and scored == 0:
        reason = official if _is_not_computed(official) else "not computed: no scored items"
        return _not_computed_cell(reason, f"{task} {twin}", reasons)
    return _number(value)


#: Printed beside a figure outside its documented range.
OFF_RANGE_FLAG = "!"


def _flagged(task: str, metric: str, value, text: str, off_scale: list[str] | None) -> str:
    """``text`` with :data:`OFF_RANGE_FLAG` beside it when ``value`` is outside its documented range (the reason is added
    to ``off_scale``)."""
    why = off_range(task, metric, value) if metric else None
    if why is None:
        return text
    if off_scale is not None:
        off_scale.append(why)
    return f"{text} {OFF_RANGE_FLAG}"


def task_rows(
    task: str, entry: dict, n_samples: dict | None, higher_is_better: dict, reasons: dict[str, list[str]], off_scale: list[str] | None = None
) -> list[list[str]]:
    """The printed rows of one task or group: ``[name, n, metric, official, strict, CI, counts]`` per headline.

    ``reasons`` collects each distinct "not computed" reason with the ``task metric`` names it applies to; ``off_scale``
    (when given) the figures flagged :data:`OFF_RANGE_FLAG` (outside their documented range), one sentence each.
    """
    metrics = _metrics(entry)
    name = str(entry.get("alias", task))
    declared = [m for m in headline_metrics(task) if m in metrics]
    if not declared and not headline_metrics(task):  # an undeclared task: every non-count number is a headline
        declared = [m for m, v in metrics.items() if _is_number(v) and not is_counter(m, v) and not m.endswith("_strict")]
    used = set(declared) | {strict_twin(m, metrics) for m in declared} | {f"{m}_ci95" for m in declared} | {"scored"}
    scored = metrics.get("scored")
    n = scored if isinstance(scored, int) and not isinstance(scored, bool) else (n_samples or {}).get("effective")
    counts = ", ".join(f"{m} {_number(v)}" for m, v in sorted(metrics.items()) if m not in used and is_counter(m, v) and v != 0)
    rows = []
    for metric in declared or [""]:
        value = metrics.get(metric)
        official = ""
        if _is_number(value):
            official = _flagged(task, metric, value, _number(value), off_scale)
        elif _is_not_computed(value):
            official = _not_computed_cell(value, f"{task} {metric}", reasons)
        elif value is not None:
            official = str(value)[:20]
        twin = strict_twin(metric, metrics) if metric else None
        strict = _strict_cell(metrics, twin, scored, reasons, task, value)
        if twin and _is_number(metrics[twin]) and strict == _number(metrics[twin]):  # a number shown, not "not computed"
            strict = _flagged(task, twin, metrics[twin], strict, off_scale)
        ci = metrics.get(f"{metric}_ci95")
        ci_text = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(map(_is_number, ci)) else ""
        arrow = {True: "↑", False: "↓"}.get(higher_is_better.get(metric), "") if metric else ""
        scale = f"({metric_scale(task, metric)})" if metric and metric_scale(task, metric) else ""
        rows.append([name if not rows else "", "" if n is None or rows else str(n), " ".join(part for part in (metric, arrow, scale) if part), official, strict, ci_text, counts if not rows else ""])
    return rows


def plugin_table(result_dict: dict, column: str = "results") -> str:
    """The short table of this plugin's tasks in ``result_dict[column]``, with the notes under it; ``""`` if none."""
    benchmarks = benchmark_names()
    rows: list[list[str]] = []
    reasons: dict[str, list[str]] = {}
    off_scale: list[str] = []
    judges: dict[str, list[str]] = {}
    printed = (result_dict.get("results") or {}) if column != "results" else {}
    for task, entry in (result_dict.get(column) or {}).items():
        if isinstance(entry, dict) and is_plugin_task(task, benchmarks) and task not in printed:  # groups: once, in the results table
            rows += task_rows(task, entry, (result_dict.get("n-samples") or {}).get(task), (result_dict.get("higher_is_better") or {}).get(task) or {}, reasons, off_scale)
            judge = describe(_metrics(entry).get("judge"))
            if judge:
                judges.setdefault(judge, []).append(task)
    if not rows:
        return ""
    headers = ["Tasks" if column == "results" else "Groups", "n", "Metric", "Official", "Strict", "95% CI", "Also counted (not 0)"]
    notes = []
    for index, (reason, where) in enumerate(reasons.items(), 1):
        names = ", ".join(where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "")
        notes += textwrap.wrap(f"({index}) not computed: {reason} [{names}]", width=MAX_WIDTH, subsequent_indent="    ")
    for why in off_scale:
        notes += textwrap.wrap(f"{OFF_RANGE_FLAG} off scale: {why} (the official reading, unchanged; strict leaves off-scale verdicts out)",
                               width=MAX_WIDTH, subsequent_indent="    ")  # fmt: skip
    for judge, tasks in judges.items():
        notes += textwrap.wrap(f"Judge [{', '.join(tasks)}]: {judge}", width=MAX_WIDTH, subsequent_indent="    ")
    return "\n".join([text_table(headers, rows, MAX_WIDTH), *notes, *textwrap.wrap(FOOTER, width=MAX_WIDTH)]) + "\n"


def _without_plugin_tasks(result_dict: dict, column: str) -> dict | None:
    """A copy of ``result_dict`` whose ``column`` holds only other benchmarks' entries; ``None`` when there are none."""
    benchmarks = benchmark_names()
    others = {task: entry for task, entry in (result_dict.get(column) or {}).items() if not is_plugin_task(task, benchmarks)}
    if not others:
        return None
    return {**result_dict, column: others}


def readable_make_table(make_table):
    """``make_table`` printing :func:`plugin_table` for our tasks and lmms-eval's own table for the others."""
    if getattr(make_table, _MARKER, False):
        return make_table

    @functools.wraps(make_table)
    def wrapper(result_dict, column: str = "results", sort_results: bool = False):
        try:
            ours = plugin_table(result_dict, column)
            others = _without_plugin_tasks(result_dict, column)
        except Exception:  # noqa: BLE001 - never lose the table: print it as lmms-eval would
            return make_table(result_dict, column, sort_results)
        if others is not None and len(others[column]) == len(result_dict.get(column) or {}):  # none of ours
            return make_table(result_dict, column, sort_results)
        return "\n".join(part for part in (ours, make_table(others, column, sort_results) if others is not None else "") if part)

    setattr(wrapper, _MARKER, True)
    return wrapper


def install_printed_table_filter() -> bool:
    """Wrap ``lmms_eval.utils.make_table`` (and copies already bound in loaded modules). Idempotent.

    Returns:
        True if the wrapper is in place, False if this lmms-eval has no ``make_table`` (then nothing changes).
    """
    try:
        from lmms_eval import utils
    except ImportError:
        return False
    original = getattr(utils, "make_table", None)
    if not callable(original):
        return False
    wrapped = readable_make_table(original)
    utils.make_table = wrapped
    for name in ("lmms_eval.__main__", "__main__", "lmms_eval.evaluator"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "make_table", None) is original:
            module.make_table = wrapped
    return True
