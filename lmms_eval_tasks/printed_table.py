"""Keep lmms-eval's printed results table readable for this plugin's tasks; the results JSON is not touched.

What lmms-eval 0.7.3 allows (read from ``lmms_eval/utils.py:make_table`` and ``lmms_eval/__main__.py``):

- Every entry of ``results[task]`` is printed as a row, whatever its type: strings (signatures, provenance,
  "not computed: ..."), dicts (per-genre breakdowns, judge provenance) and lists (CIs) are printed with ``str``.
- There is no task-config option to keep a metric out of the table (``metric_list`` entries take only
  ``metric``, ``aggregation``, ``higher_is_better``); a metric is skipped only when its name ends in
  ``_stderr``/``_stderr_clt``/``_stderr_clustered``/``_expected_accuracy``/``_consensus_accuracy``/
  ``_internal_variance``/``_consistency_rate``, starts with ``paired_``, or its value is an empty container.
  Renaming our metrics to such names would corrupt their meaning, so that route is not taken.
- The table is printed after the results JSON is written (``cli_evaluate`` saves in ``cli_evaluate_single``,
  then calls ``make_table(results)``), and ``make_table`` is looked up as a module global of
  ``lmms_eval.__main__`` (bound by ``from lmms_eval.utils import make_table``).

So the least invasive way is to wrap ``make_table`` once, from the plugin's entry point (which lmms-eval loads
while ``lmms_eval.__main__`` imports ``lmms_eval.evaluator``, before its own ``from lmms_eval.utils import
make_table`` line): the wrapper prints a filtered copy for our tasks only (task names ``<benchmark>_*`` and the
group names of the benchmark folders beside this module) and leaves every other task's rows as lmms-eval prints
them. Numbers stay; a "not computed: ..." string becomes "not computed (see results JSON)"; other strings and
dicts are left out and named in one line under the table, with ``audio-bench-report`` as the way to lay them out.
If lmms-eval changes (no ``make_table``), nothing is wrapped and lmms-eval prints as before.
"""

from __future__ import annotations

import functools
import sys

from lmms_eval_tasks import TASKS_DIR

_MARKER = "_lmms_eval_audio_plugin_table"
NOT_COMPUTED = "not computed (see results JSON)"


def benchmark_names() -> tuple[str, ...]:
    """Benchmark folders beside this module (``mcga``, ``parsa``, ...): each is a group name and a task prefix."""
    return tuple(sorted(p.name for p in TASKS_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name not in ("models",) and not p.name.startswith("_")))


def is_plugin_task(name: str, benchmarks: tuple[str, ...] | None = None) -> bool:
    """True for a task or group of this plugin: ``<benchmark>`` or ``<benchmark>_*``."""
    return any(name == b or name.startswith(f"{b}_") for b in (benchmarks or benchmark_names()))


def _shown(value):
    """The value as the printed table should show it, or ``None`` to leave the row out."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        return NOT_COMPUTED if value.startswith("not computed") else None
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return f"[{value[0]:.4f}, {value[1]:.4f}]"  # a 95% CI
    return None


def readable_results(result_dict: dict, column: str = "results") -> tuple[dict, list[str]]:
    """A copy of ``result_dict`` whose ``column`` entries of plugin tasks keep only printable metrics, and the
    ``metric (task, ...)`` names left out."""
    benchmarks = benchmark_names()
    copy = dict(result_dict)
    entries = {}
    hidden: dict[str, list[str]] = {}
    for task, values in (result_dict.get(column) or {}).items():
        if not isinstance(values, dict) or not is_plugin_task(task, benchmarks):
            entries[task] = values
            continue
        kept = {}
        for key, value in values.items():
            metric = key.partition(",")[0]
            if key == "alias" or "_stderr" in metric or not metric.strip():  # a group row holds " ": " "
                kept[key] = value
                continue
            shown = _shown(value)
            if shown is None:
                hidden.setdefault(metric, []).append(task)
            else:
                kept[key] = shown
        entries[task] = kept
    copy[column] = entries
    names = [f"{metric} ({', '.join(tasks[:3])}{', ...' if len(tasks) > 3 else ''})" for metric, tasks in sorted(hidden.items())]
    return copy, names


def readable_make_table(make_table):
    """``make_table`` wrapped by :func:`readable_results`, with a line naming what was left out."""
    if getattr(make_table, _MARKER, False):
        return make_table

    @functools.wraps(make_table)
    def wrapper(result_dict, column: str = "results", sort_results: bool = False):
        try:
            filtered, hidden = readable_results(result_dict, column)
        except Exception:  # noqa: BLE001 - never lose the table: print it as lmms-eval would
            return make_table(result_dict, column, sort_results)
        table = make_table(filtered, column, sort_results)
        if hidden:
            table += ("\nNot shown above, kept in the results JSON: " + "; ".join(hidden)
                      + ". Tables with breakdowns: audio-bench-report <output_path> --out <folder>\n")  # fmt: skip
        return table

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
