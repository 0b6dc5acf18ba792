"""Reading MCGA in its release layout, and fetching the official test archive.

Release layout (Hugging Face dataset ``yxdu/MCGA``, archive ``MCGA_test.tar.gz``)::

    data/MCGA_{task}_{split}.jsonl      one JSON object per line (one document)
    data/upload/.../*.wav               audio; the row's ``audio`` field is relative to data/

Which folder is read: the ``data_dir`` argument, else the environment variable ``MCGA_DATA_DIR``, else the
small sample shipped in this package (``mcga/sample_data/data``, see its README).

A document is one recorded clip, not one text: in the release several speakers read the same text, so
``id`` (the text) repeats within a task file (and SQA asks two questions about one id), while the clip
path ``audio`` is unique. Each row therefore gets the key :data:`DOC_KEY_FIELD` (``doc_key``) = its
``audio`` field as written in the file (e.g. ``upload/Yvqy/124-20251102214649.wav``); replay, logged
samples and judge items identify documents by it. Fields the loader does not use (``source`` = the
speaker, ``time``, ``prompt``, ``check_score``, ...) are kept and play no part in scoring.

Every row is checked before anything runs: required fields present and non-empty, ``audio`` unique in
the file, the gold usable by the official scorer (:func:`gold_problem`), the audio path relative and
inside the data folder (absolute paths and ``..`` escapes are rejected), and the audio file decodable
and not empty or truncated (:func:`lmms_eval_tasks.audio.audio_file_problem`). Errors name the file, the
line, the row id and audio, and the field.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tarfile
from pathlib import Path

DATA_DIR_ENV = "MCGA_DATA_DIR"
SAMPLE_DATA_DIR = Path(__file__).with_name("sample_data") / "data"
HUB_REPO_ID = "yxdu/MCGA"
HUB_TEST_ARCHIVE = "MCGA_test.tar.gz"
#: Field added to every loaded row: the document's unique key (its ``audio`` path as written in the file).
DOC_KEY_FIELD = "doc_key"
#: Option letters of the SU/SR questions; the gold (``su_a``/``sr_a``) must be one of them.
MCQ_LETTERS = "ABCD"

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


class MCGAHubAccessError(MCGADataError):
    """The hub archive could not be fetched (offline, no access, wrong revision); the message is one line."""


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
            that is not usable audio (undecodable, empty, truncated or shorter than
            :data:`lmms_eval_tasks.audio.MIN_AUDIO_SECONDS`; see :func:`lmms_eval_tasks.audio.audio_file_problem`).
    """
    if os.path.isabs(relative) or relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise MCGADataError(f"{where}: audio path {relative!r} is absolute; it must be relative to {data_dir}")
    root = Path(data_dir).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise MCGADataError(f"{where}: audio path {relative!r} escapes the data folder {root}")
    if not path.is_file():
        raise MCGADataError(f"{where}: audio file {path} does not exist")
    from lmms_eval_tasks.audio import audio_file_problem_once  # decoded once per run: the tasks share the clips

    problem = audio_file_problem_once(path)
    if problem is not None:
        raise MCGADataError(f"{where}: field 'audio': audio file {path} is {problem}")
    return path


def gold_problem(task: str, row: dict) -> tuple[str, str] | None:
    """``(field, reason)`` when a row's gold cannot be scored by the official rule, else ``None``.

    - asr, sec: ``asr`` empty after the official CER normalisation (:func:`mcga.normalize.normalize_for_cer`,
      e.g. ``"。！？"``): the official scorer would count every character of a perfect transcript as an
      insertion (asr) or divide by zero (sec's sentence CER).
    - sqa: ``sqa_a`` with no token after the official SQA cleaning (``[^\\w\\s]`` removed, lower-cased,
      split on whitespace): the official F1 then gives 1 only to an empty answer.
    - su, sr: ``su_a``/``sr_a`` not exactly one of :data:`MCQ_LETTERS` after ``strip().upper()`` (the official
      comparison): ``"E"`` or ``"答案A"`` would make every answer wrong or match leniently by accident.
    """
    from mcga.normalize import normalize_for_cer

    if task in ("asr", "sec") and not normalize_for_cer(str(row["asr"])):
        return "asr", f"is empty after the official CER normalisation (OpenCC t2s, full-width to half-width, Whisper BasicTextNormalizer, whitespace removed): {row['asr']!r}"
    if task == "sqa" and not re.sub(r"[^\w\s]", "", str(row["sqa_a"])).lower().split():
        return "sqa_a", f"has no token after the official SQA cleaning (punctuation removed, lower-cased): {row['sqa_a']!r}"
    if task in ("su", "sr"):
        gold = str(row[f"{task}_a"]).strip().upper()
        if len(gold) != 1 or gold not in MCQ_LETTERS:
            return f"{task}_a", f"must be one option letter {'/'.join(MCQ_LETTERS)}, got {row[f'{task}_a']!r}"
    return None


def load_task_rows(task: str, split: str = "test", data_dir: str | Path | None = None) -> list[dict]:
    """Load and check the rows of one MCGA task file.

    Args:
        task: ``asr``, ``s2tt``, ``sec``, ``sqa``, ``su`` or ``sr``.
        split: ``test`` (released), ``val`` or ``train``.
        data_dir: folder holding ``MCGA_{task}_{split}.jsonl``; default :func:`data_dir_from_env`.

    Returns:
        The rows in file order, each a copy with ``id`` as a string and two added fields: ``audio_path``
        (absolute path string) and :data:`DOC_KEY_FIELD` (the unique document key, the ``audio`` field).
        Ids may repeat (one text, several speakers); extra fields are kept unchanged.

    Raises:
        MCGADataError: see the module docstring; the message names file, line, id, audio and field.
    """
    if task not in REQUIRED_FIELDS:
        raise MCGADataError(f"unknown MCGA task {task!r}; known: {sorted(REQUIRED_FIELDS)}")
    root = Path(data_dir) if data_dir is not None else data_dir_from_env()
    path = task_file(root, task, split)
    if not path.is_file():  # a folder one level off: say which folder was checked and where the files are
        check_data_dir(root, split, "data folder" if data_dir is not None or not os.environ.get(DATA_DIR_ENV, "").strip() else DATA_DIR_ENV)
    rows, seen_audio = [], {}
    for line_number, row in read_jsonl(path):
        where = f"{path}:{line_number} (id {row.get('id')!r}, audio {row.get('audio')!r})"
        missing = [f for f in REQUIRED_FIELDS[task] if row.get(f) is None or not str(row.get(f)).strip()]
        if missing:
            raise MCGADataError(f"{where}: missing or empty field(s) {missing}")
        audio = str(row["audio"])
        if audio in seen_audio:
            raise MCGADataError(
                f"{where}: field 'audio': duplicate audio path, first seen on line {seen_audio[audio]}; "
                "each row is one recorded clip, and documents are told apart by their audio path"
            )
        seen_audio[audio] = line_number
        problem = gold_problem(task, row)
        if problem is not None:
            raise MCGADataError(f"{where}: field {problem[0]!r} {problem[1]}")
        audio_path = resolve_audio_path(root, audio, where)
        rows.append({**row, "id": str(row["id"]), "audio_path": str(audio_path), DOC_KEY_FIELD: audio})
    if not rows:
        raise MCGADataError(f"{path}: no rows")
    return rows


# ------------------------------------------------------------------ official runner's output rows
#: The official runner (``eval/api_mcga.py``) writes each model output into the dataset row under these keys.
OFFICIAL_OUTPUT_FIELDS = {"asr_r": "asr", "s2tt_r": "s2tt", "sec_r": "sec", "sqa_a_r": "sqa", "su_r": "su", "sr_r": "sr"}


def official_runner_prediction(row: dict, file_name: str) -> tuple[str, str, str | None, str] | None:
    """``(lmms-eval task name, row id, audio path or None, output)`` of one official-runner row, or ``None``.

    The runner writes ``eval/{task}/{model}_{input_mode}.jsonl``: the dataset row plus one output field. A file
    name ending in ``_text.jsonl`` holds text-mode outputs, which belong to our ``mcga_{task}_text`` tasks.
    The row's ``audio`` (the document key, :data:`DOC_KEY_FIELD`) identifies its document; ``id`` alone does
    not (it repeats across speakers).
    """
    found = [(key, task) for key, task in OFFICIAL_OUTPUT_FIELDS.items() if key in row]
    if len(found) != 1 or "id" not in row:
        return None
    key, task = found[0]
    suffix = "_text" if Path(file_name).name.endswith("_text.jsonl") else ""
    audio = None if row.get("audio") in (None, "") else str(row["audio"])
    return f"mcga_{task}{suffix}", str(row["id"]), audio, "" if row[key] is None else str(row[key])


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

    Raises:
        MCGAHubAccessError: the archive could not be fetched (one-line message with the cause).
        MCGADataError: the archive's layout is not the release's.
    """
    from huggingface_hub import hf_hub_download

    try:
        archive = hf_hub_download(repo_id=HUB_REPO_ID, filename=HUB_TEST_ARCHIVE, repo_type="dataset", revision=revision)
    except Exception as error:  # noqa: BLE001 - offline, gated, unknown revision, HTTP errors: all end the command with one line
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise MCGAHubAccessError(
            f"could not download {HUB_TEST_ARCHIVE} from the hub dataset {HUB_REPO_ID} ({type(error).__name__}: {reason}); "
            "check network access and HF_HUB_OFFLINE, accept the dataset licence on its hub page, or download the archive "
            "by hand and extract it (then run: mcga-data check DIR/data)"
        ) from None
    destination = Path(destination)
    safe_extract_tar(archive, destination)
    data_dir = destination / "data"
    if not task_file(data_dir, "asr").is_file():
        raise MCGADataError(f"{archive}: extracted, but {task_file(data_dir, 'asr')} is missing; unexpected archive layout")
    commit = Path(archive).parent.name  # hf cache layout: .../snapshots/<commit>/<file>
    (destination / "SOURCE.json").write_text(json.dumps({"repo_id": HUB_REPO_ID, "file": HUB_TEST_ARCHIVE, "revision": commit}, indent=1), encoding="utf-8")
    return data_dir


def _task_files(folder: Path, split: str) -> list[Path]:
    return [task_file(folder, task, split) for task in REQUIRED_FIELDS if task_file(folder, task, split).is_file()]


def suggest_data_dir(folder: str | Path, split: str = "test") -> Path | None:
    """The folder near ``folder`` holding the most MCGA task files (``MCGA_<task>_<split>.jsonl``), for "did you
    mean" hints (the search of :func:`parsa.data.nearest_data_folder`, shared by the three benchmarks); ``None``
    if none is found."""
    from parsa.data import nearest_data_folder

    return nearest_data_folder(folder, lambda candidate: len(_task_files(candidate, split)))


def check_data_dir(folder: str | Path, split: str = "test", origin: str = "data folder") -> list[Path]:
    """The task files in ``folder``, or an error when it is missing, not a folder or holds none.

    Args:
        origin: how the folder was given, for the message (``data folder`` or ``MCGA_DATA_DIR``).

    Raises:
        MCGADataError: one line naming the folder checked and what was wrong, with a "did you mean" hint when
            a folder nearby (:func:`suggest_data_dir`) holds task files.
    """
    folder = Path(folder)
    if not folder.exists():
        problem = "does not exist"
    elif not folder.is_dir():
        problem = "is not a folder"
    else:
        files = _task_files(folder, split)
        if files:
            return files
        problem = f"holds no MCGA task file (looked for MCGA_<task>_{split}.jsonl, task one of {', '.join(REQUIRED_FIELDS)})"
    suggestion = suggest_data_dir(folder, split)
    count = len(_task_files(suggestion, split)) if suggestion else 0
    hint = (f" Did you mean {suggestion}? (it holds {count} MCGA task file{'s' if count != 1 else ''})" if suggestion
            else " Give the release's data/ folder, the one holding MCGA_asr_test.jsonl (mcga-data download DEST writes DEST/data).")  # fmt: skip
    raise MCGADataError(f"{origin} {folder} {problem}.{hint}")


def main(argv: list[str] | None = None) -> int:
    """The ``mcga-data`` command (:func:`_main`); Ctrl-C ends it with one line, exit status 130."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("\nmcga-data interrupted (Ctrl-C): a check writes nothing; a download keeps what the Hugging Face cache holds and resumes from it when run again.", file=sys.stderr)
        return 130


def _main(argv: list[str] | None = None) -> int:
    """``mcga-data``: ``download DEST`` fetches the official test set; ``check [DIR]`` validates a data folder.

    Exit status 0 when everything passed, 1 otherwise; each failure is one line on stderr.
    """
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
        try:
            data_dir = download_test_release(args.destination, args.revision)
        except MCGADataError as error:
            print(f"mcga-data download: error: {error}", file=sys.stderr)
            return 1
        print(f"extracted to {data_dir}\nexport {DATA_DIR_ENV}={data_dir.resolve()}")
        return 0
    root = Path(args.data_dir) if args.data_dir else data_dir_from_env()
    try:
        check_data_dir(root, args.split, "data folder" if args.data_dir or not os.environ.get(DATA_DIR_ENV, "").strip() else DATA_DIR_ENV)
    except MCGADataError as error:
        print(f"mcga-data check: error: {error}", file=sys.stderr)
        return 1
    status = 0
    for task in REQUIRED_FIELDS:
        if task_file(root, task, args.split).is_file():
            try:
                rows = load_task_rows(task, args.split, root)
            except MCGADataError as error:
                print(f"{task}: ERROR {error}", file=sys.stderr)
                status = 1
                continue
            texts = len({row["id"] for row in rows})
            print(f"{task}: {len(rows)} rows OK ({texts} distinct ids; documents keyed by audio path)")
    return status


if __name__ == "__main__":
    sys.exit(main())
