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
"unbabel_comet": version, "samples_file": path}}``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from audio_bench_core.json_text import json_text

_SAMPLES = re.compile(r"_samples_(?P<task>parsa_s2tt_[a-z_]+)\.jsonl$")


def translation_triples(samples_file: Path) -> tuple[list[dict], int]:
    """``([{"src", "mt", "ref"}, ...] of the scored items, number of items not scored)`` of one samples file.

    Raises:
        ValueError: a line without the ``comet`` record (the run was not made with ``--log_samples`` by this
            plugin, or with ``--predict_only``), naming the file and line.
    """
    triples, not_scored = [], 0
    for line_number, line in enumerate(samples_file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line).get("comet")
        if not isinstance(record, dict) or "status" not in record:
            raise ValueError(f"{samples_file}:{line_number}: no 'comet' record; log the run with --log_samples (not --predict_only)")
        if record["status"] == "scored":
            triples.append({"src": record["source"], "mt": record["prediction"], "ref": record["gold"]})
        else:
            not_scored += 1
    return triples, not_scored


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
        triples, not_scored = translation_triples(file)
        score = float(model.predict(triples, batch_size=args.batch_size, gpus=args.gpus, progress_bar=False).system_score) if triples else None
        report[task] = {"comet": score, "scored": len(triples), "excluded_or_refused": not_scored, "checkpoint": args.model,
                        "unbabel_comet": comet_version, "samples_file": str(file)}  # fmt: skip
    print(json_text(report, indent=1), end="")  # valid JSON: a NaN is null with its reason
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
