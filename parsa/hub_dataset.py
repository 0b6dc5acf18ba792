"""``RELEASE_DIR OUT_DIR``: PARSA-Bench in the hub's audio layout, one config per task (run with ``python -m``).

RELEASE_DIR is a local copy of the release in a layout :mod:`parsa.data` reads (``<Folder>/<Folder>.csv`` with its
``Audios/``; or parquet). Every task is checked first (:func:`check_release`: every row of every
setting the task runs in, audio decoded); the first problem stops the command with the file, row, id,
column and mapping key, and nothing is written.

OUT_DIR (new or empty) receives the layout of :mod:`audio_bench_core.hub_layout`: one config per task (:data:`CONFIGS`,
the short names of :data:`parsa.tasks.TASKS`: ``asr``, ``s2tt_fa_en``, ... ``music``), split ``test``. Columns: the
release's columns as its files have them (the column map names them, ``parsa/column_map.json`` and
``$PARSA_COLUMN_MAP``, the same when the copy is read), with the audio column an ``Audio`` feature holding the clip's
file bytes unchanged and its path relative to RELEASE_DIR. The exported tasks read it with
``dataset_path: MohammadJRanjbar/PARSA-Bench``, ``dataset_name`` from :data:`HUB_CONFIGS`, through
:func:`parsa.data.rows_from_hub`.

The real hub release is gated; what is public about it: parquet on the hub, config, column and split names unknown, and a
third-party loader showing the CSV + ``Audios/`` layout. This command makes the layout the exported tasks read from a
local copy of it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from audio_bench_core import hub_layout
from parsa import data
from parsa.tasks import TASKS

PROG = f"python -m {__spec__.name if __spec__ else __name__}"
#: The hub configs: one per task.
CONFIGS = tuple(TASKS)
_SUFFIX = {"audio": "", "text": "_text", "audio_ref": "_audio_ref", "fewshot": "_fewshot", "cot": "_cot"}
#: lmms-eval task (every setting) -> hub config (``dataset_name``): a task's settings read its one config.
HUB_CONFIGS = {f"parsa_{task}{_SUFFIX[setting]}": task for task, spec in TASKS.items() for setting in spec.settings}
CARD = f"""# PARSA-Bench (hub audio layout)

PARSA-Bench (Persian speech, paralinguistics and culture; arXiv 2603.14456; {data.HUB_DATASET_URL}) as parquet, one
config per task (split `test`), made by `{PROG}` from a local copy of the release.
Columns: the release's columns; the audio column holds each clip's file unchanged, with its path in the release.
Licence: CC-BY-NC-4.0, as the release.
"""


def hub_rows(release_dir: str | Path, task: str, warnings: list[tuple[str, str]] | None = None) -> list[dict]:
    """The rows of one task as the release holds them (columns as written), checked by :func:`parsa.data.read_task_docs`,
    with the audio column = ``{"bytes": the clip's file bytes, "path": its path relative to release_dir}``.

    Raises:
        PARSADataError: see :func:`parsa.data.read_task_docs`.
    """
    root = Path(release_dir).resolve()
    mapping = data.column_map()[task]
    docs = data.read_task_docs(task, root, warnings=warnings)
    rows = [row for _, row in data._read_rows(*data.task_files(root, task, mapping), mapping["columns"])]
    audio = mapping["columns"]["audio"]
    out = []
    for doc, row in zip(docs, rows, strict=True):  # read_task_docs keeps the files' row order
        clip = Path(doc["audio_path"])
        stored = row.get(audio) if isinstance(row.get(audio), dict) else {}
        path = os.path.relpath(clip, root) if clip.is_relative_to(root) else str(stored.get("path") or clip.name)
        out.append({**{k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in row.items()}, audio: {"bytes": clip.read_bytes(), "path": path}})
    return out


def check_release(release_dir: str | Path) -> list[tuple[str, str]]:
    """Every task of ``release_dir`` checked in every setting it runs in (audio decoded); returns the audio warnings.

    Raises:
        PARSADataError: a task missing or a bad row.
    """
    root = Path(release_dir)
    present = data.check_data_folder(root)
    missing = [task for task in CONFIGS if task not in present]
    if missing:
        raise data.PARSADataError(f"{root}: no data for the task(s) {', '.join(missing)}; the hub layout has every task ({len(CONFIGS)})")
    warnings: list[tuple[str, str]] = []
    for task, spec in TASKS.items():
        docs = data.read_task_docs(task, root, warnings=warnings)
        for setting in spec.settings:
            if setting in ("text", "audio_ref"):
                data.read_task_docs(task, root, setting=setting, warnings=[])
            elif setting == "fewshot":
                data.fewshot_demos(docs)
    return warnings


def write_hub_dataset(release_dir: str | Path, out_dir: str | Path) -> dict[str, int]:
    """Check the release (:func:`check_release`), then write the hub layout into ``out_dir``; returns ``{config: rows}``.

    Raises:
        PARSADataError: a bad release (nothing written), or OUT_DIR exists and is not an empty folder.
        HubLayoutError: a column with values of mixed types across the rows of a task.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise data.PARSADataError(f"output folder {out_dir} exists and is not an empty folder; give a new or empty one")
    warnings = check_release(release_dir)
    return hub_layout.write_layout(out_dir, CONFIGS, lambda config: hub_rows(release_dir, config, []), CARD, warnings)


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring); exit status 0 when written, 1 with one error line otherwise."""
    return hub_layout.command(argv, PROG, __doc__.split("\n\n")[0], "local copy of the release (holding ASR/ASR.csv ...)", write_hub_dataset, (data.PARSADataError,))


if __name__ == "__main__":
    sys.exit(main())
