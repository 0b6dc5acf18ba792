"""Aggregations that give a number or ``None`` and never raise: the form the exported tasks use in plain lmms-eval.

lmms-eval writes whatever a task's aggregation returns into ``results[task]`` of the results JSON, and an exception
in any aggregation ends the evaluation before any task's results are written. A task's ``utils.py`` wraps each
aggregation its YAML names in :func:`numbers_only`, which returns:

- a finite ``int`` or ``float`` as it is (a numpy scalar as the Python number);
- ``None`` (JSON ``null``: lmms-eval prints it as ``N/A``; ``NaN`` is not JSON) for a figure that is not computed,
  with one warning in the log naming the task, the metric and the reason: a ``"not computed: <reason>"`` text (no
  judge configured, no scored item, ...), a number that is not finite (NaN, ±inf: undefined), any other value (a
  dict, list or text: such metrics belong in the log or the samples, not among the figures), or an exception of the
  aggregation (its type and message);
- for a failed run (:class:`audio_bench_core.responses.FailedRunError`) raised by a count aggregation that takes
  ``check`` (:func:`audio_bench_core.responses.agg_failed_generations` and the other two response counts), the count
  itself, computed with ``check=False``: a failed task is reported by its numbers and the warning.

:func:`without_metrics` keeps the per-document values of metrics the YAML does not list out of the results.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers

from loguru import logger

from audio_bench_core.responses import DIAGNOSTIC_METRICS, FLAGGED_METRIC, FailedRunError

NOT_COMPUTED_PREFIX = "not computed: "


def _task_of(items) -> str:
    """The task name an aggregation's items carry (``item["task"]`` of the first dict item), or ``"?"``."""
    first = items[0] if isinstance(items, (list, tuple)) and items else None
    return str(first.get("task") or "?") if isinstance(first, dict) else "?"


def as_number(value, where: str):
    """``value`` if it is a finite number (``bool`` excluded; numpy scalars as Python numbers), else ``None`` with one
    warning saying why, prefixed by ``where`` (e.g. ``"mcga_s2tt llm_b"``)."""
    if isinstance(value, numbers.Number) and not isinstance(value, (bool, complex)):
        number = value.item() if hasattr(value, "item") else value
        if isinstance(number, int) or math.isfinite(number):
            return number
        logger.warning(f"{where}: not computed: undefined here (the aggregation gave {number}); written as null")
        return None
    if isinstance(value, str) and value.startswith(NOT_COMPUTED_PREFIX):
        logger.warning(f"{where}: {value}; written as null")
        return None
    logger.warning(f"{where}: not computed: the aggregation gave a {type(value).__name__}, not a number; written as null")
    return None


def numbers_only(function, metric: str):
    """``function`` (an lmms-eval aggregation of ``metric``: ``function(items)``, a group's ``function(values, sizes,
    weight_by_size)``, or one taking ``args``) returning a number or ``None``, never raising (module docstring).

    The wrapper keeps ``function``'s signature (``functools.wraps``), which lmms-eval inspects for an ``args``
    parameter. The task named in warnings is the first item's ``task`` field where the items carry one.
    """
    takes_check = "check" in inspect.signature(function).parameters

    @functools.wraps(function)
    def aggregate(items, *args, **kwargs):
        where = f"{_task_of(items)} {metric}"
        try:
            try:
                value = function(items, *args, **kwargs)
            except FailedRunError as error:
                if not takes_check:
                    raise
                logger.warning(f"{where}: {' '.join(str(error).split())} (the count is reported; the task's scores mean nothing)")
                value = function(items, *args, check=False, **kwargs)
        except FailedRunError as error:
            logger.warning(f"{where}: not computed: {' '.join(str(error).split())}; written as null")
            return None
        except Exception as error:  # noqa: BLE001 - one aggregation's failure must cost only its figure, never the run
            logger.opt(exception=error).warning(f"{where}: not computed: the aggregation raised {type(error).__name__}: {' '.join(str(error).split())}; written as null")
            return None
        return as_number(value, where)

    return aggregate


def without_metrics(process_results, metrics, flagged: bool = False):
    """``process_results`` (an lmms-eval hook: ``process_results(doc, results) -> {metric: per-document value}``)
    returning its dict without the keys in ``metrics``: the metrics a task's YAML does not list. lmms-eval writes a
    per-document value that has no aggregation into the results as ``[]`` (with an ``[]`` stderr), so such a value must
    not be returned. ``flagged``: the YAML lists the one response count ``flagged_responses`` in place of the nine of
    :data:`audio_bench_core.responses.DIAGNOSTIC_METRICS`, whose (one, shared) per-document record it gets."""
    left_out = frozenset(metrics) | (frozenset(DIAGNOSTIC_METRICS) if flagged else frozenset())

    @functools.wraps(process_results)
    def process(doc, results, *args, **kwargs):
        values = process_results(doc, results, *args, **kwargs)
        kept = {key: value for key, value in values.items() if key not in left_out}
        if flagged and DIAGNOSTIC_METRICS[0] in values:
            kept[FLAGGED_METRIC] = values[DIAGNOSTIC_METRICS[0]]
        return kept

    return process
