"""Numbers only, never a raise: what ``lmms-eval-audio-export`` changes so an exported task's results hold numbers
and nulls and none of its aggregations stops the run (issue 28, item 3).

The plugin's own tasks keep their metrics and the adapter that guards them (``lmms_eval_tasks/plugin.py``:
``guard_aggregations``); that adapter is not exported, so the export does two things instead:

- every metric of :data:`NOT_NUMBERS` (and every ``*_ci95`` interval, ``[low, high]``) leaves the exported YAML's
  ``metric_list`` (:func:`numbers_only_yaml`): breakdowns, intervals, signatures and provenance are not figures, and
  ``process_results`` stops returning them (:func:`audio_bench_core.numbers.without_metrics`: lmms-eval would write
  each as ``[]``). Each document's record behind them stays in the logged samples: our hooks give such a metric the
  record a listed metric of the same task gets, or a field of the document (``signature``, ``data_source``); the
  exported README lists them (:func:`readme_section`);
- every aggregation the exported YAML names (a task's ``metric_list``, a group's ``aggregate_metric_list``) is wrapped
  in the exported ``utils.py`` by :func:`audio_bench_core.numbers.numbers_only` (:func:`wrapper_lines`): a number, or
  ``None`` (JSON ``null``) with a warning naming the task, metric and reason; never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from audio_bench_core.responses import FLAGGED_METRIC

#: Metrics whose aggregation gives no number, by name, with what it is (the exported README's list). Every name here
#: is a metric of some task YAML of this plugin (checked by tests/test_upstream_numbers.py), and every metric of
#: every task YAML not listed here gives a number or "not computed" (checked on the exported run by
#: tests/test_upstream_cli.py).
NOT_NUMBERS = {
    "cer_official_by_genre": "MCGA ASR: the official CER (%) per genre (a dict)",
    "cer_official_by_dynasty": "MCGA ASR: the official CER (%) per dynasty (a dict)",
    "n_by_genre": "MCGA ASR: documents per genre (a dict)",
    "n_by_dynasty": "MCGA ASR: documents per dynasty (a dict)",
    "judge": "judged tasks: the judge's provenance (models reported, parameters, prompt hashes, cache hits; a dict)",
    "dimensions": "MMAC: coverage, precision and accuracy per dimension (a dict)",
    "caption_length": "MMAC: caption lengths and coverage/precision per length bucket (a dict)",
    "ci_flags": "PARSA-Bench: why an interval should be read with care (a dict)",
    "signature": "how the task was scored: rules, normaliser, library versions (a text)",
    "data_source": "PARSA-Bench: the data every document came from (a text)",
}
#: Suffix of the PARSA-Bench bootstrap intervals (``wer_median_ci95``: ``[low, high]``), not numbers either.
INTERVAL_SUFFIX = "_ci95"
UTILS_PREFIX = "utils."


def is_number_metric(metric: str) -> bool:
    """False for a metric the export leaves out of ``metric_list`` (:data:`NOT_NUMBERS`, ``*_ci95``)."""
    return metric not in NOT_NUMBERS and not metric.endswith(INTERVAL_SUFFIX)


def _utils_function(aggregation, where: str) -> str | None:
    """The ``utils.py`` function an exported aggregation names (``!function utils.<name>``), or ``None`` for one of
    lmms-eval's own (``mean``, ...).

    Raises:
        ValueError: a ``!function`` outside ``utils.py`` (the export names every hook through it).
    """
    if type(aggregation) is str:  # lmms-eval's registered aggregations ("mean"); a !function is a str subclass
        return None
    if not str(aggregation).startswith(UTILS_PREFIX):
        raise ValueError(f"{where}: aggregation !function {aggregation} is not in utils.py; the export wraps only utils.py's")
    return str(aggregation)[len(UTILS_PREFIX) :]


@dataclass
class Collected:
    """What :func:`numbers_only_yaml` gathers over a benchmark's YAML files for :func:`wrapper_lines`."""

    #: ``{utils.py aggregation: {metric, ...}}`` (a group's aggregation as ``"<group> group"``).
    aggregations: dict[str, set[str]] = field(default_factory=dict)
    #: ``{metric left out: [YAML file, ...]}``.
    dropped: dict[str, list[str]] = field(default_factory=dict)
    #: The ``utils.py`` functions named as ``process_results``.
    process_results: set[str] = field(default_factory=set)
    #: Some YAML lists ``flagged_responses`` (the nine response counts in one: ``upstream_export.flag_responses_once``).
    flagged: bool = False


def numbers_only_yaml(config: dict, path: Path, collected: Collected) -> dict:
    """The exported YAML ``config`` (from :func:`lmms_eval_tasks.upstream_export.export_yaml`) with the metrics that
    are not numbers left out of its ``metric_list``; adds to ``collected`` each kept ``utils.py`` aggregation with the
    metrics it serves, each metric left out with the file it came from, and the ``process_results`` hook.

    Raises:
        ValueError: an aggregation or ``process_results`` ``!function`` not in ``utils.py``, or a ``metric_list`` entry
            without ``metric``; the message names ``path``.
    """
    out = dict(config)
    if "metric_list" in out:
        kept = []
        for entry in out["metric_list"]:
            if not isinstance(entry, dict) or "metric" not in entry:
                raise ValueError(f"{path}: a metric_list entry without 'metric': {entry!r}")
            metric = entry["metric"]
            collected.flagged |= metric == FLAGGED_METRIC
            if not is_number_metric(metric):
                collected.dropped.setdefault(metric, []).append(path.name)
                continue
            function = _utils_function(entry.get("aggregation"), f"{path}: {metric}")
            if function:
                collected.aggregations.setdefault(function, set()).add(metric)
            kept.append(entry)
        out["metric_list"] = kept
    for entry in out.get("aggregate_metric_list") or []:
        function = _utils_function(entry.get("aggregation"), f"{path}: group {out.get('group')}")
        if function:
            collected.aggregations.setdefault(function, set()).add(f"{out.get('group')} group")
    hook = _utils_function(out["process_results"], f"{path}: process_results") if "process_results" in out else None
    if hook:
        collected.process_results.add(hook)
    return out


def wrapper_lines(collected: Collected, numbers_module: str) -> str:
    """The lines the exported ``utils.py`` ends with: each aggregation rebound to its
    :func:`audio_bench_core.numbers.numbers_only` form, each ``process_results`` hook to its
    :func:`audio_bench_core.numbers.without_metrics` form (every metric left out, of any of the benchmark's tasks: a
    key a task does not return costs nothing). ``numbers_module``: that module's exported dotted name."""
    if not collected.aggregations and not collected.process_results:
        return ""
    lines = ["", "", "# Every aggregation the task YAML names gives a number or None (null, with a warning) and never raises.", f"from {numbers_module} import numbers_only, without_metrics", ""]
    for function in sorted(collected.aggregations):
        lines.append(f"{function} = numbers_only({function}, {'/'.join(sorted(collected.aggregations[function]))!r})")
    for function in sorted(collected.process_results):
        lines.append(f"{function} = without_metrics({function}, {tuple(sorted(collected.dropped))!r}{', flagged=True' if collected.flagged else ''})")
    return "\n".join(lines) + "\n"


def readme_section(dropped: dict[str, list[str]]) -> str:
    """The exported README's Results section (its text below the heading): numbers and nulls, the response counts, a
    failed run, and the metrics left out (``dropped``: :data:`NOT_NUMBERS` and ``*_ci95`` names)."""
    lines = [
        "Every figure in the results JSON (`results.<task>`) is a number, or `null` where it is not computed; the log then",
        "has a warning naming the task, the metric and the reason (no judge configured, no scored item, an aggregation that",
        "raised: the shared `numbers.py`). lmms-eval's table prints `null` as `N/A`.",
        "",
        "Each task also counts, in `flagged_responses`, the documents whose response was not a usable answer before scoring:",
        "a failed generation, an empty response, reasoning that never closed, an echoed prompt, a copied format placeholder,",
        "one same answer across many distinct inputs, invalid text replaced, a scoring error, or an answer over 10,000",
        "characters (the shared `responses.py`). The log has one warning per kind, with its share and an example, and each",
        "document's record is in the samples under `flagged_responses`. A task whose responses are mostly failed, empty or",
        "unfinished is a failed run: the log says so (a warning naming the task, the share and the first error), its count",
        "is reported, no score of it means anything, and the other tasks' results are written as usual.",
    ]
    if dropped:
        lines += [
            "",
            "Not among the figures (they are not numbers). With `--log_samples`, each document's record behind them is in the",
            "samples, under a listed metric of the same task (e.g. `cer_official` for the CER breakdowns) or in the `doc`:",
            "",
        ]
        for metric in sorted(dropped):
            lines.append(f"- `{metric}`: {NOT_NUMBERS.get(metric, 'a bootstrap 95% interval `[low, high]`')}.")
    return "\n".join(lines) + "\n"
