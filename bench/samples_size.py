"""Bytes per document of the samples file (``*_samples_<task>.jsonl``): the diagnostics record once, not nine times.

Rows: the 1,000 release-shaped rows of ``tests/release_shaped_mcga.py`` for ``mcga_su`` (one-letter answers, noisy)
and ``mcga_asr`` (transcripts). Each document is scored by the real hook (``mcga_process_results``) and written by
lmms-eval's real samples writer (``EvaluationTracker.save_results_samples``) twice, in one process:

- ``before``: the sample records as lmms-eval logs them (each counter metric holding a copy of the diagnostics record);
- ``now``: the same records through :func:`audio_bench_core.responses.samples_with_diagnostics_once`, the step the
  plugin's writer adds (the record once under ``diagnostics``, each counter as the document's count).

A sample record is built as lmms-eval's evaluator builds it (doc_id, doc, target, arguments, resps, filtered_resps,
doc_hash, then the metrics). Figure: bytes per document now / before for ``mcga_su`` (goal <= 1/3). Also checks that
every counter summed over the written documents equals the task's figure (nothing a reader uses is lost).

Usage: ``python -m bench.samples_size``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from bench._timing import figure, header

GOAL = 1 / 3


def _logged_samples(task: str) -> list[dict]:
    from lmms_eval_tasks.mcga import hooks
    from mcga import data
    from tests.release_shaped_mcga import OUTPUT_FIELD, release_rows

    samples = []
    for doc_id, row in enumerate(release_rows()[task]):
        doc = {**row, "audio_path": f"/data/{row['audio']}", data.DOC_KEY_FIELD: row["audio"], hooks.TASK_FIELD: task, hooks.MODE_FIELD: "audio"}
        output = row[OUTPUT_FIELD[task]]
        metrics = hooks.mcga_process_results(doc, [output])
        saved_doc = {k: v for k, v in doc.items() if k != OUTPUT_FIELD[task]}
        samples.append({
            "doc_id": doc_id, "doc": saved_doc, "target": hooks.mcga_doc_to_target(doc), "arguments": [hooks.mcga_doc_to_text(doc)],
            "resps": [[output]], "filtered_resps": [output], "token_counts": [None],
            "doc_hash": hashlib.sha256(json.dumps(saved_doc, ensure_ascii=False).encode()).hexdigest(), **metrics,
        })  # fmt: skip
    return samples


def _written_bytes(samples: list[dict], folder: Path) -> tuple[int, list[dict]]:
    """Bytes lmms-eval's own samples writer writes for ``samples`` (no plugin wrapper), and the records read back."""
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    writer = getattr(EvaluationTracker.save_results_samples, "__wrapped__", EvaluationTracker.save_results_samples)
    tracker = EvaluationTracker(output_path=str(folder))
    tracker.general_config_tracker.model_name_sanitized = "bench"
    tracker.date_id = "bench"
    writer(tracker, "task", [dict(s) for s in samples])
    [path] = folder.rglob("*_samples_task.jsonl")
    text = path.read_bytes()
    path.unlink()
    return len(text), [json.loads(line) for line in text.decode("utf-8").splitlines()]


def main() -> int:
    from loguru import logger

    from audio_bench_core import responses

    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    header("samples file: bytes per document, diagnostics once vs nine times")
    ok, su_ratio = True, None
    with tempfile.TemporaryDirectory() as tmp:
        for task in ("su", "asr"):
            samples = _logged_samples(task)
            before, _ = _written_bytes(samples, Path(tmp))
            now, written = _written_bytes(responses.samples_with_diagnostics_once(samples), Path(tmp))
            n = len(samples)
            records = [s[responses.DIAGNOSTIC_METRICS[0]] for s in samples]
            same = all(sum(w[m] for w in written) == getattr(responses, f"agg_{m}")(records) for m in responses.DIAGNOSTIC_METRICS)
            kept = all(responses.diagnostics_of(w) == json.loads(json.dumps(r)) for w, r in zip(written, records))
            ok = ok and same and kept
            print(f"  mcga_{task:<4} {n} documents: before {before / n:8.0f} bytes/doc ({before / 1e6:.2f} MB)   now {now / n:8.0f} bytes/doc ({now / 1e6:.2f} MB)   "
                  f"ratio {now / before:.3f}   counters sum to the task figures: {same}; record kept once: {kept}", flush=True)  # fmt: skip
            if task == "su":
                su_ratio = now / before
    figure("mcga_su bytes per document now / before", su_ratio, f"<= {GOAL:.3f}", su_ratio <= GOAL and ok)
    return 0 if su_ratio <= GOAL and ok else 1


if __name__ == "__main__":
    sys.exit(main())
