"""``RELEASE_DIR OUT_DIR``: MCGA's release in the hub's audio layout, for upload as ``yxdu/MCGA`` (run with ``python -m``).

RELEASE_DIR is the release's ``data/`` folder (``MCGA_{task}_test.jsonl`` and the wav files under it, as
``MCGA_test.tar.gz`` unpacks). Every row is checked by :func:`mcga.data.read_task_rows`
first; the first bad row stops the command with its file, line, id, audio and field, and nothing is written.

OUT_DIR (new or empty) receives the layout of :mod:`audio_bench_core.hub_layout`: one config per task file
(:data:`CONFIGS`: ``asr``, ``s2tt``, ``sec``, ``sqa``, ``su``, ``sr``), split ``test``. Columns: every field of the
release row as written there (``id`` as text; fields a row lacks are null), with ``audio`` an ``Audio`` feature holding
the wav file's bytes unchanged and its path in the release (``upload/.../x.wav``: the document key). The exported
tasks read it with ``dataset_path: yxdu/MCGA``, ``dataset_name`` from :data:`HUB_CONFIGS`, through
:func:`mcga.data.rows_from_hub`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from audio_bench_core import hub_layout
from mcga import data

PROG = f"python -m {__spec__.name if __spec__ else __name__}"
#: The hub configs: one per task file of the release.
CONFIGS = tuple(data.REQUIRED_FIELDS)
#: lmms-eval task -> hub config (``dataset_name``); the text-mode twins read their audio task's rows.
HUB_CONFIGS = {**{f"mcga_{c}": c for c in CONFIGS}, **{f"mcga_{c}_text": c for c in ("sqa", "su", "sr")}}
CARD = f"""# MCGA test set (hub audio layout)

The test release of MCGA (classical Chinese literature read aloud, arXiv 2601.09270; {data.HUB_TEST_ARCHIVE} of
{data.HUB_REPO_ID}) as parquet, one config per task file (split `test`), made by `{PROG}`.
Columns: the release rows' fields; `audio` holds each wav file unchanged, with its path in the release.
Licence: CC BY-NC-SA 4.0, as the release.
"""


def hub_rows(release_dir: str | Path, task: str, warnings: list[tuple[str, str]] | None = None) -> list[dict]:
    """The checked rows of one task file (:func:`mcga.data.read_task_rows`) as hub rows: the release fields, with
    ``audio`` = ``{"bytes": the wav file's bytes, "path": the row's audio field}``.

    Raises:
        MCGADataError: see :func:`mcga.data.read_task_rows`.
    """
    rows = data.read_task_rows(task, release_dir, "test", warnings)
    added = ("audio_path", data.DOC_KEY_FIELD)
    return [{**{k: v for k, v in row.items() if k not in added}, "audio": {"bytes": Path(row["audio_path"]).read_bytes(), "path": row["audio"]}} for row in rows]


def write_hub_dataset(release_dir: str | Path, out_dir: str | Path) -> dict[str, int]:
    """Check every task file of ``release_dir``, then write the hub layout into ``out_dir``; returns ``{config: rows}``.

    Raises:
        MCGADataError: a task file missing or a bad row (nothing written); OUT_DIR exists and is not an empty folder.
        HubLayoutError: a field with values of mixed types across the rows of a file.
    """
    release_dir, out_dir = Path(release_dir), Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise data.MCGADataError(f"output folder {out_dir} exists and is not an empty folder; give a new or empty one")
    data.check_data_dir(release_dir)
    missing = [str(data.task_file(release_dir, c)) for c in CONFIGS if not data.task_file(release_dir, c).is_file()]
    if missing:
        raise data.MCGADataError(f"{release_dir}: the release's task file(s) {', '.join(missing)} are missing; the hub layout has every task ({', '.join(CONFIGS)})")
    warnings: list[tuple[str, str]] = []
    for config in CONFIGS:  # every file checked before anything is written
        data.read_task_rows(config, release_dir, "test", warnings)
    return hub_layout.write_layout(out_dir, CONFIGS, lambda config: hub_rows(release_dir, config, []), CARD, warnings)


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring); exit status 0 when written, 1 with one error line otherwise."""
    return hub_layout.command(argv, PROG, __doc__.split("\n\n")[0], "the release's data/ folder (holding MCGA_asr_test.jsonl)", write_hub_dataset, (data.MCGADataError,))


if __name__ == "__main__":
    sys.exit(main())
