"""Per-document judge scores of a run, for paired comparisons of two runs on the same documents.

The judge runs in a task's aggregation, after lmms-eval has logged the samples, so the samples cannot carry
per-document judge scores. The task hooks :func:`record` them here, keyed by each document's key (the ``key`` of
its per-document item, else its ``id``: the same key the item carries in the logged samples), and an lmms-eval
adapter may write :func:`recorded` into the results file (not into the samples, which stay small). Framework-free,
like :mod:`audio_bench_core.run_status`.

Record shapes (one per judged task; every document the task judged has an entry):

- dimension scores (MCGA S2TT/SEC): ``{"key_field": "key", "dimensions": [name, ...], "official": {doc key:
  [score or null per dimension]}, "strict": {...}}``; ``null`` = judge_failed on that dimension (left out of that
  dimension's mean, as the official script leaves it out); scores on the judge's own scale (S2TT 1-5, SEC-P 0-2 ...);
- outcomes (MMAC): ``{"key_field": "id", "outcomes": {doc key: [[dimension, mentioned, score], ...]}}`` with
  ``mentioned`` true / false / null (judge_failed: left out of every denominator) and ``score`` in [0, 1] (null
  unless mentioned); documents whose generation failed are listed under ``"generation_failed"`` (no outcome).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

_TASKS: dict[str, dict] = {}


def record(task: str, entry: dict) -> None:
    """Keep ``entry`` (one of the module docstring's shapes) as the per-document judge scores of ``task``; a later
    call for the same task replaces it (each aggregation of a task records the same pass)."""
    _TASKS[task] = entry


def recorded() -> dict[str, dict]:
    """``{task: entry}`` of every task recorded since :func:`clear`, in recording order."""
    return dict(_TASKS)


def clear() -> None:
    """Forget every record (at the start of a run)."""
    _TASKS.clear()


def compact(value):
    """A score as JSON keeps it shortest: ``4.0`` -> ``4``; other values unchanged."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def dimension_scores(judged, items: Iterable[dict], dimensions: Sequence[str]) -> dict:
    """The dimension-scores record of one judge pass (module docstring).

    Args:
        judged: the :class:`audio_bench_core.judged_task.JudgedTask` of the pass (its dimensions carry ``keys``).
        items: the per-document items the pass judged (each with ``key`` or ``id``).
        dimensions: the dimension names, in the order of each document's score list.
    Returns:
        ``{"key_field", "dimensions", "official", "strict"}`` (``strict`` only when the pass had a strict reading).
    Raises:
        KeyError: a dimension the pass did not judge.
    """
    items = list(items)
    key_field = "key" if all("key" in item for item in items) else "id"
    keys = [str(item[key_field]) for item in items]
    entry: dict = {"key_field": key_field, "dimensions": list(dimensions)}
    readings = {"official": [judged.dimensions[d] for d in dimensions]}
    if all(judged.dimensions[d].strict is not None for d in dimensions):
        readings["strict"] = [judged.dimensions[d].strict for d in dimensions]
    for reading, per_dimension in readings.items():
        scores = [d.by_key() for d in per_dimension]
        entry[reading] = {key: [compact(s.get(key)) for s in scores] for key in keys}
    return entry
