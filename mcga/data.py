"""Reading MCGA in its release layout, and fetching the official test archive.

Release layout (Hugging Face dataset ``yxdu/MCGA``, archive ``MCGA_test.tar.gz``)::

    data/MCGA_{task}_{split}.jsonl      one JSON object per line (one document)
    data/upload/.../*.wav               audio; the row's ``audio`` field is relative to data/

Which folder is read: the ``data_dir`` argument, else the environment variable ``MCGA_DATA_DIR``, else the
small sample shipped in this package (``mcga/sample_data/data``, see its README).

Every row is checked before anything runs: required fields present and non-empty, ids unique, the audio
path relative and inside the data folder (absolute paths and ``..`` escapes are rejected), and the audio
file present and readable. Errors name the file, the line and the row id.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tarfile
from pathlib import Path

DATA_DIR_ENV = "MCGA_DATA_DIR"
SAMPLE_DATA_DIR = Path(__file__).with_name("sample_data") / "data"
HUB_REPO_ID = "yxdu/MCGA"
HUB_TEST_ARCHIVE = "MCGA_test.tar.gz"

#: Fields every row of a task file must carry (non-empty). ``audio`` is the relative wav path.
REQUIRED_FIELDS = {
    "asr": ("id", "asr", "audio"),
    "s2tt": ("id", "asr", "audio", "s2tt"),
    "sec": ("id", "asr", "audio", "sec_1", "sec_2", "sec_3"),
    "sqa": ("id", "asr", "audio", "sqa", "sqa_a"),
    "su": ("id", "asr", "audio", "su", "su_a"),
    "sr": ("id", "asr", "audio", "sr", "sr_a"),
}


class MCGADataError(ValueError):
    """A data file or row of MCGA is malformed; the message names the file, line and row id."""


def data_dir_from_env() -> Path:
    """The data folder in use: ``$MCGA_DATA_DIR`` if set, else the shipped sample."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(value).expanduser() if value else SAMPLE_DATA_DIR


def task_file(data_dir: Path, task: str, split: str = "test") -> Path:
    """Path of ``MCGA_{task}_{split}.jsonl`` inside ``data_dir``."""
    return Path(data_dir) / f"MCGA_{task}_{split}.jsonl"


def read_jsonl(path: Path) -> list[tuple[int, dict]]:
    """Read a jsonl file into ``[(line_number, row), ...]``, skipping blank lines.

    Raises:
        MCGADataError: the file is missing, or a line is not a JSON object (names file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise MCGADataError(f"{path}: file not found")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise MCGADataError(f"{path}:{line_number}: not valid JSON ({error.msg} at column {error.colno})") from None
            if not isinstance(row, dict):
                raise MCGADataError(f"{path}:{line_number}: expected a JSON object, got {type(row).__name__}")
            rows.append((line_number, row))
    return rows


def resolve_audio_path(data_dir: Path, relative: str, where: str) -> Path:
    """Absolute path of a row's audio file, refusing anything outside ``data_dir``.

    Args:
        data_dir: the folder holding the jsonl files.
        relative: the row's ``audio`` field.
        where: ``"file:line (id ...)"`` used in error messages.

    Raises:
        MCGADataError: absolute path, escape from ``data_dir`` (``..`` or a symlink), missing file, or a file
            that soundfile cannot read.
    """
    if os.path.isabs(relative) or relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise MCGADataError(f"{where}: audio path {relative!r} is absolute; it must be relative to {data_dir}")
    root = Path(data_dir).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise MCGADataError(f"{where}: audio path {relative!r} escapes the data folder {root}")
    if not path.is_file():
        raise MCGADataError(f"{where}: audio file {path} does not exist")
    import soundfile

    try:
        soundfile.info(str(path))
    except Exception as error:  # soundfile raises LibsndfileError/RuntimeError variants
        raise MCGADataError(f"{where}: audio file {path} is not readable audio ({error})") from None
    return path


def load_task_rows(task: str, split: str = "test", data_dir: str | Path | None = None) -> list[dict]:
    """Load and check the rows of one MCGA task file.

    Args:
        task: ``asr``, ``s2tt``, ``sec``, ``sqa``, ``su`` or ``sr``.
        split: ``test`` (released), ``val`` or ``train``.
        data_dir: folder holding ``MCGA_{task}_{split}.jsonl``; default :func:`data_dir_from_env`.

    Returns:
        The rows in file order, each a copy with the extra field ``audio_path`` (absolute path string) and
        ``id`` as a string.

    Raises:
        MCGADataError: see the module docstring.
    """
    if task not in REQUIRED_FIELDS:
        raise MCGADataError(f"unknown MCGA task {task!r}; known: {sorted(REQUIRED_FIELDS)}")
    root = Path(data_dir) if data_dir is not None else data_dir_from_env()
    path = task_file(root, task, split)
    rows, seen = [], {}
    for line_number, row in read_jsonl(path):
        where = f"{path}:{line_number} (id {row.get('id')!r})"
        missing = [f for f in REQUIRED_FIELDS[task] if row.get(f) in (None, "")]
        if missing:
            raise MCGADataError(f"{where}: missing or empty field(s) {missing}")
        row_id = str(row["id"])
        if row_id in seen:
            raise MCGADataError(f"{where}: duplicate id, first seen on line {seen[row_id]}")
        seen[row_id] = line_number
        audio_path = resolve_audio_path(root, str(row["audio"]), where)
        rows.append({**row, "id": row_id, "audio_path": str(audio_path)})
    if not rows:
        raise MCGADataError(f"{path}: no rows")
    return rows


# ------------------------------------------------------------------ official runner's output rows
#: The official runner (``eval/api_mcga.py``) writes each model output into the dataset row under these keys.
OFFICIAL_OUTPUT_FIELDS = {"asr_r": "asr", "s2tt_r": "s2tt", "sec_r": "sec", "sqa_a_r": "sqa", "su_r": "su", "sr_r": "sr"}


def official_runner_prediction(row: dict, file_name: str) -> tuple[str, str, str] | None:
    """``(lmms-eval task name, row id, output)`` of one row written by the official runner, or ``None``.

    The runner writes ``eval/{task}/{model}_{input_mode}.jsonl``; a file name ending in ``_text.jsonl``
    holds text-mode outputs, which belong to our ``mcga_{task}_text`` tasks.
    """
    found = [(key, task) for key, task in OFFICIAL_OUTPUT_FIELDS.items() if key in row]
    if len(found) != 1 or "id" not in row:
        return None
    key, task = found[0]
    suffix = "_text" if Path(file_name).name.endswith("_text.jsonl") else ""
    return f"mcga_{task}{suffix}", str(row["id"]), "" if row[key] is None else str(row[key])


# --------------------------------------------------------------------------------------- hub route
def safe_extract_tar(archive: str | Path, destination: str | Path) -> Path:
    """Extract a tar archive, refusing members that could write outside ``destination``.

    Rejected (before anything is written): absolute names, ``..`` components, symbolic and hard links,
    and device/FIFO members. On Python versions that have it, ``tarfile``'s ``"data"`` filter is applied too.

    Raises:
        MCGADataError: naming the first offending member.
    """
    destination = Path(destination)
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        for member in members:
            name = member.name
            if os.path.isabs(name) or name.startswith(("/", "\\")) or ".." in Path(name).parts:
                raise MCGADataError(f"{archive}: member {name!r} would be written outside {destination}")
            if member.issym() or member.islnk():
                raise MCGADataError(f"{archive}: member {name!r} is a link; links are not extracted")
            if not (member.isfile() or member.isdir()):
                raise MCGADataError(f"{archive}: member {name!r} is not a regular file or folder")
        destination.mkdir(parents=True, exist_ok=True)
        if hasattr(tarfile, "data_filter"):
            tar.extractall(destination, members=members, filter="data")
        else:  # pragma: no cover - Python < 3.10.12 / 3.11.4
            tar.extractall(destination, members=members)
    return destination


def download_test_release(destination: str | Path, revision: str | None = None) -> Path:
    """Download ``MCGA_test.tar.gz`` from the hub dataset ``yxdu/MCGA`` and extract it safely.

    Needs network access to the Hugging Face hub (the dataset licence is CC BY-NC-SA 4.0; accept it on its
    page first if the hub asks). The archive unpacks to ``destination/data``; point ``MCGA_DATA_DIR`` there.

    Args:
        destination: folder to extract into.
        revision: hub revision (commit hash or branch) to pin; default the hub's main branch.

    Returns:
        The ``data`` folder. A file ``SOURCE.json`` beside it records the repo, file and resolved commit.
    """
    from huggingface_hub import hf_hub_download

    archive = hf_hub_download(repo_id=HUB_REPO_ID, filename=HUB_TEST_ARCHIVE, repo_type="dataset", revision=revision)
    destination = Path(destination)
    safe_extract_tar(archive, destination)
    data_dir = destination / "data"
    if not task_file(data_dir, "asr").is_file():
        raise MCGADataError(f"{archive}: extracted, but {task_file(data_dir, 'asr')} is missing; unexpected archive layout")
    commit = Path(archive).parent.name  # hf cache layout: .../snapshots/<commit>/<file>
    (destination / "SOURCE.json").write_text(json.dumps({"repo_id": HUB_REPO_ID, "file": HUB_TEST_ARCHIVE, "revision": commit}, indent=1), encoding="utf-8")
    return data_dir


def main(argv: list[str] | None = None) -> int:
    """``mcga-data``: ``download DEST`` fetches the official test set; ``check [DIR]`` validates a data folder."""
    parser = argparse.ArgumentParser(prog="mcga-data", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    down = sub.add_parser("download", help="download and extract the official test archive from the hub")
    down.add_argument("destination")
    down.add_argument("--revision", default=None)
    check = sub.add_parser("check", help="validate every task file present in a data folder")
    check.add_argument("data_dir", nargs="?", default=None)
    check.add_argument("--split", default="test")
    args = parser.parse_args(argv)
    if args.command == "download":
        data_dir = download_test_release(args.destination, args.revision)
        print(f"extracted to {data_dir}\nexport {DATA_DIR_ENV}={data_dir.resolve()}")
        return 0
    root = Path(args.data_dir) if args.data_dir else data_dir_from_env()
    status = 0
    for task in REQUIRED_FIELDS:
        if task_file(root, task, args.split).is_file():
            try:
                print(f"{task}: {len(load_task_rows(task, args.split, root))} rows OK")
            except MCGADataError as error:
                print(f"{task}: ERROR {error}", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
