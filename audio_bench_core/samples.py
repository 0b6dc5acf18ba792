"""Reading lmms-eval's samples files back: per-document values by document, for figures built from several tasks.

lmms-eval 0.7 writes, beside ``<date>_results.json``, one ``<date>_samples_<task>.jsonl`` per task (``--log_samples``):
one JSON object per document, holding each metric's per-document value under the metric's name. A document is
named by its diagnostics record's ``id`` (:func:`audio_bench_core.responses.diagnostics_of`: MCGA's clip key, PARSA's
and MMAC's id), which is the same document in every task reading the same rows (an audio task and its text twin).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from audio_bench_core.responses import diagnostics_of


def samples_file_of(results_file: str | Path, task: str) -> Path | None:
    """The samples file of ``task`` written with ``results_file`` (``<date>_results.json`` ->
    ``<date>_samples_<task>.jsonl`` in the same folder), or ``None`` when there is none (run without ``--log_samples``)."""
    results_file = Path(results_file)
    prefix = results_file.name[: -len("_results.json")] if results_file.name.endswith("_results.json") else None
    if prefix is None:
        return None
    path = results_file.with_name(f"{prefix}_samples_{task}.jsonl")
    return path if path.is_file() else None


def per_document_values(path: str | Path, metrics: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """``{document: {metric: value}}`` from one samples file, for the ``metrics`` whose per-document value is a finite
    number (a document excluded from a metric, e.g. one whose scoring raised, has no value for it).

    Raises:
        ValueError: a line is not JSON, or names no document, or two lines name the same document (file and line named).
    """
    path = Path(path)
    values: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not JSON ({error.msg})") from None
            record = diagnostics_of(sample) if isinstance(sample, dict) else None
            document = record.get("id") if record else None
            if document is None:
                raise ValueError(f"{path}, line {number}: names no document (no diagnostics record with an id)")
            document = str(document)
            if document in values:
                raise ValueError(f"{path}, line {number}: document {document} appears twice")
            values[document] = {
                m: float(sample[m]) for m in metrics
                if isinstance(sample.get(m), (int, float)) and not isinstance(sample.get(m), bool) and math.isfinite(sample[m])
            }  # fmt: skip
    return values


def same_documents(first: tuple[str, Path | None, tuple], second: tuple[str, Path | None, tuple]) -> tuple[int | None, str | None]:
    """Whether two tasks' figures cover the same documents, for a figure built from both (a difference, a ratio).

    Args:
        first, second: ``(task, samples file or None, (documents run, documents in the data))`` (counts ``None`` where
            the results do not say).

    Returns:
        ``(n, None)``: both ran the same ``n`` documents (matched by id from both samples files; without them, both
        ran their whole data of the same size, or ``n`` is ``None`` when no count is known); ``(None, reason)``: they
        did not, and ``reason`` says what each ran and how many they share.

    Raises:
        ValueError: a samples file is unreadable (:func:`per_document_values`).
    """
    (task_a, path_a, (n_a, all_a)), (task_b, path_b, (n_b, all_b)) = first, second
    if path_a is not None and path_b is not None:
        ids_a, ids_b = set(per_document_values(path_a, ())), set(per_document_values(path_b, ()))
        if ids_a == ids_b:
            return len(ids_a), None
        return None, (f"{task_a} and {task_b} ran different documents ({len(ids_a)} and {len(ids_b)}, {len(ids_a & ids_b)} shared, matched by id "
                      "from the samples files): the figure compares one set of documents")  # fmt: skip
    if None in (n_a, n_b):
        return None, None
    if n_a == all_a and n_b == all_b and n_a == n_b:
        return n_a, None
    return None, (f"{task_a} ran {n_a} of {all_a} documents and {task_b} {n_b} of {all_b} (--limit?): the figure needs the same documents on both "
                  "sides; run both with --log_samples (the documents are then matched) or over the same full data")  # fmt: skip
