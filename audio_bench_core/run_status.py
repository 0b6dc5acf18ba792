"""Which tasks of a run did not finish as meant, and why: one record per task, read by the exit status.

A task is ``failed`` when no figure of it means anything (a failed run by :func:`audio_bench_core.responses.check_failed_run`,
or most generations of another benchmark's task failed with one of our models), or when one of its aggregations
raised; its withheld figures read ``"not computed: <reason>"`` (:func:`withheld`), the other tasks are scored and
written as usual. A task is ``incomplete`` when it stopped early on purpose (a judge budget reached): its figures
cover fewer documents than the run asked for.

Framework-free: an lmms-eval adapter may write :func:`statuses` into the results file and, in a CLI run, exit 1
after every results and samples file is written when any task has a status. Any layer may :func:`mark` a task; the first status of a task is kept
unless a later one is ``failed`` (failed wins), and every distinct reason is kept in order.

Record shape (one per task with a status): ``{"status": "failed" | "incomplete", "reasons": [str, ...]}``.
"""

from __future__ import annotations

FAILED = "failed"
INCOMPLETE = "incomplete"
STATUSES = (FAILED, INCOMPLETE)

_TASKS: dict[str, dict] = {}


def mark(task: str, status: str, reason: str) -> None:
    """Record that ``task`` is ``status`` (:data:`FAILED` or :data:`INCOMPLETE`) because of ``reason`` (one line).

    Raises:
        ValueError: ``status`` is not one of :data:`STATUSES`.
    """
    if status not in STATUSES:
        raise ValueError(f"task status must be one of {', '.join(STATUSES)}, not {status!r}")
    entry = _TASKS.setdefault(task, {"status": status, "reasons": []})
    if status == FAILED:
        entry["status"] = FAILED
    reason = " ".join(str(reason).split())
    if reason not in entry["reasons"]:
        entry["reasons"].append(reason)


def status_of(task: str) -> dict | None:
    """The record of ``task`` (a copy), or ``None`` when it finished as meant."""
    entry = _TASKS.get(task)
    return {"status": entry["status"], "reasons": list(entry["reasons"])} if entry else None


def statuses() -> dict[str, dict]:
    """``{task: record}`` for every task with a status, in the order they were marked (copies)."""
    return {task: status_of(task) for task in _TASKS}


def clear() -> None:
    """Forget every status (at the start of a run)."""
    _TASKS.clear()


def withheld(reason: str) -> str:
    """The value a withheld figure reads in the results: ``"not computed: <reason>"`` (the project's convention for a
    figure that has no value, printed as "not computed" with the reason under the table)."""
    return f"not computed: {' '.join(str(reason).split())}"


def guarded_group_aggregation(group: str):
    """Decorator for a group's aggregation of our tasks (YAML ``aggregate_metric_list: aggregation: !function ...``;
    lmms-eval's ``consolidate_group_results`` calls it as ``function(values, sizes, weight_by_size)``, once per metric,
    after every task's own aggregation and outside the adapter's task guard): an exception there, or a non-finite
    number, costs only that group figure.

    The figure then reads ``"not computed: <group> group aggregation raised <Type>: <message>"`` (or ``"... is
    undefined here (it gave nan)"``), the group is marked :data:`FAILED` with that reason (written to the results'
    ``task_status``; the CLI exits 1 after every file is written), and every task's figures and files are kept.
    Framework-free, so exported hooks can use it.
    """
    import functools
    import math

    from loguru import logger

    def decorate(function):
        @functools.wraps(function)
        def guarded(values, sizes, weight_by_size=False):
            try:
                value = function(values, sizes, weight_by_size)
            except Exception as error:  # noqa: BLE001 - one group figure's failure must cost only that figure; recorded, exits 1
                cause = error.__cause__ or error
                reason = f"{group} group aggregation raised {type(cause).__name__}: {' '.join(str(cause).split())}"
                mark(group, FAILED, reason)
                logger.opt(exception=error).error(f"{group}: {reason}; this group figure is not computed, its tasks' figures are kept; the run exits 1")
                return withheld(reason)
            if isinstance(value, float) and not math.isfinite(value):
                return withheld(f"{group} group aggregation is undefined here (it gave {value})")
            return value

        return guarded

    return decorate
