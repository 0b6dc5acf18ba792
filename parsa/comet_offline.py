"""COMET for the PARSA translation tasks, computed after the run in a separate environment.

``unbabel-comet`` cannot live beside lmms-eval: it pins transformers 4, huggingface-hub 0.x and numpy 1
(see lmms_eval_tasks/parsa/README.md, "COMET"). So the lmms-eval run logs, per translation item, the source, the model's translation,
the reference and whether the item was scored (the ``comet`` record of ``--log_samples``), and this module,
run in a venv that has ``unbabel-comet``, reads those logged samples and computes the COMET system score over
the **scored** items (the paper's exclusion rule), reporting how many were scored and excluded.

Uses only the standard library and ``comet``; it does not import the rest of this project, so
``pip install --no-deps lmms-eval-audio-plugin`` is enough in the COMET venv::

    python -m parsa.comet_offline --model /path/to/wmt22-comet-da/checkpoints/model.ckpt out/parsa/

Prints one JSON object ``{task: {"comet": float 0-1, "scored": n, "excluded_or_refused": m, "checkpoint": path,
"unbabel_comet": version, "samples_file": path, "segments_file": path}}`` and writes, per task, the segment scores
beside the samples file (:func:`segments_path`, ``<date>_comet_<task>.json``) for ``audio-bench-compare``::

    {"format": SEGMENTS_FORMAT, "task", "samples_file": name, "samples_sha256", "checkpoint", "unbabel_comet",
     "system_score": float 0-1 or null, "scored": n, "excluded": n, "refused": n,
     "segments": {doc_id: {"id": the item's data id, "status": "scored"|"excluded"|"refused", "score": float or null}}}

keyed by lmms-eval's ``doc_id`` (the key ``audio-bench-compare`` pairs documents on, with the item ``id`` it checks),
one entry per logged item: a scored item has COMET's segment score (``model.predict(...).scores``, in the order the
items were given), an excluded or refused item ``"score": null`` (the paper's rule: COMET is over the scored items,
so these are out of the system score, as they are out of chrF++/BLEU). ``system_score`` is COMET's own
``system_score``, the mean of the segment scores (unbabel-comet 2.x ``comet/models/base.py`` ``predict``:
``Prediction(scores=scores, system_score=sum(scores) / len(scores))``, Unbabel/COMET e89b8fb, the scores restored
to the input order). ``samples_sha256`` lets the comparison refuse segment scores of another samples file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from audio_bench_core.json_text import json_text

_SAMPLES = re.compile(r"_samples_(?P<task>parsa_s2tt_[a-z_]+)\.jsonl$")
#: ``format`` of a segment-scores file; the comparison reads only this one.
SEGMENTS_FORMAT = "parsa-comet-segments/1"


def segments_path(samples_file: Path) -> Path:
    """``<date>_comet_<task>.json`` beside ``<date>_samples_<task>.jsonl`` (the segment-scores file of that run).

    Raises:
        ValueError: the name is not ``*_samples_<task>.jsonl``.
    """
    samples_file = Path(samples_file)
    if "_samples_" not in samples_file.name or not samples_file.name.endswith(".jsonl"):
        raise ValueError(f"{samples_file}: not a *_samples_<task>.jsonl file")
    stem, _, task = samples_file.name.removesuffix(".jsonl").rpartition("_samples_")
    return samples_file.with_name(f"{stem}_comet_{task}.json")


def sha256_of(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def translation_items(samples_file: Path) -> list[dict]:
    """Every logged item of one samples file, in file order: ``{"doc_id": str, "id": str, "status", "triple":
    {"src", "mt", "ref"} or None}`` (the triple for scored items only).

    Raises:
        ValueError: a line without the ``comet`` record or ``doc_id``, or a ``doc_id`` twice (file and line named).
    """
    items, seen = [], set()
    for line_number, line in enumerate(samples_file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        sample = json.loads(line)
        record = sample.get("comet")
        if not isinstance(record, dict) or "status" not in record:
            raise ValueError(f"{samples_file}:{line_number}: no 'comet' record; log the run with --log_samples (not --predict_only)")
        if sample.get("doc_id") is None:
            raise ValueError(f"{samples_file}:{line_number}: no 'doc_id' (not an lmms-eval samples line)")
        doc_id = str(sample["doc_id"])
        if doc_id in seen:
            raise ValueError(f"{samples_file}:{line_number}: doc_id {doc_id} appears twice")
        seen.add(doc_id)
        scored = record["status"] == "scored"
        triple = {"src": record["source"], "mt": record["prediction"], "ref": record["gold"]} if scored else None
        items.append({"doc_id": doc_id, "id": str(record.get("id", "")), "status": record["status"], "triple": triple})
    return items


def translation_triples(samples_file: Path) -> tuple[list[dict], int]:
    """``([{"src", "mt", "ref"}, ...] of the scored items, number of items not scored)`` of one samples file.

    Raises:
        ValueError: a line without the ``comet`` record (the run was not made with ``--log_samples`` by this
            plugin, or with ``--predict_only``), naming the file and line.
    """
    items = translation_items(samples_file)
    triples = [item["triple"] for item in items if item["triple"] is not None]
    return triples, len(items) - len(triples)


def find_samples_files(paths: list[str]) -> dict[str, Path]:
    """``{task: samples file}`` of the PARSA translation tasks under ``paths`` (files or folders).

    Raises:
        ValueError: no such file, or one task in two files (pass the run you mean).
    """
    found: dict[str, Path] = {}
    for path in map(Path, paths):
        for file in [path] if path.is_file() else sorted(path.rglob("*_samples_parsa_s2tt_*.jsonl")):
            match = _SAMPLES.search(file.name)
            if match is None:
                continue
            if match["task"] in found:
                raise ValueError(f"{match['task']} is in both {found[match['task']]} and {file}; pass one run")
            found[match["task"]] = file
    if not found:
        raise ValueError(f"no *_samples_parsa_s2tt_*.jsonl under {paths}")
    return found


def write_segments(samples_file: Path, task: str, items: list[dict], segment_scores: list[float], system_score: float | None, checkpoint: str,
                   comet_version: str) -> Path:  # fmt: skip
    """Write the segment-scores file (module docstring) of one task; ``segment_scores``: one per scored item of
    ``items`` (:func:`translation_items`), in that order. Returns its path (:func:`segments_path`)."""
    scores = iter(segment_scores)
    segments = {item["doc_id"]: {"id": item["id"], "status": item["status"], "score": next(scores) if item["triple"] is not None else None} for item in items}
    counts = {status: sum(item["status"] == status for item in items) for status in ("scored", "excluded", "refused")}
    path = segments_path(samples_file)
    data = {"format": SEGMENTS_FORMAT, "task": task, "samples_file": samples_file.name, "samples_sha256": sha256_of(samples_file), "checkpoint": checkpoint,
            "unbabel_comet": comet_version, "system_score": system_score, **counts, "segments": segments}  # fmt: skip
    path.write_text(json_text(data, indent=1) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parsa.comet_offline", description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local COMET checkpoint (e.g. wmt22-comet-da/checkpoints/model.ckpt)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--gpus", type=int, default=None, help="default: 1 if torch sees a GPU, else 0")
    parser.add_argument("paths", nargs="+", help="lmms-eval output folder(s) or samples file(s)")
    args = parser.parse_args(argv)
    from comet import load_from_checkpoint

    if args.gpus is None:
        import torch

        args.gpus = 1 if torch.cuda.is_available() else 0
    model = load_from_checkpoint(args.model)
    try:
        comet_version = version("unbabel-comet")
    except PackageNotFoundError:
        comet_version = "unknown"
    report = {}
    for task, file in find_samples_files(args.paths).items():
        items = translation_items(file)
        scored = [item for item in items if item["triple"] is not None]
        score, segment_scores = None, []
        if scored:
            prediction = model.predict([item["triple"] for item in scored], batch_size=args.batch_size, gpus=args.gpus, progress_bar=False)
            score, segment_scores = float(prediction.system_score), [float(s) for s in prediction.scores]
            if len(segment_scores) != len(scored):
                raise ValueError(f"{task}: COMET returned {len(segment_scores)} segment scores for {len(scored)} scored items")
        written = write_segments(file, task, items, segment_scores, score, args.model, comet_version)
        report[task] = {"comet": score, "scored": len(scored), "excluded_or_refused": len(items) - len(scored), "checkpoint": args.model,
                        "unbabel_comet": comet_version, "samples_file": str(file), "segments_file": str(written)}  # fmt: skip
    print(json_text(report, indent=1), end="")  # valid JSON: a NaN is null with its reason
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
