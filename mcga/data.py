"""Reading MCGA in its release layout (:func:`read_task_rows`) and in the hub layout (:func:`rows_from_hub`).

Release layout (Hugging Face dataset ``yxdu/MCGA``, archive ``MCGA_test.tar.gz``)::

    data/MCGA_{task}_{split}.jsonl      one JSON object per line (one document)
    data/upload/.../*.wav               audio; the row's ``audio`` field is relative to data/

A document is one recorded clip, not one text: in the release several speakers read the same text, so
``id`` (the text) repeats within a task file (and SQA asks two questions about one id), while the clip
path ``audio`` is unique. Each row therefore gets the key :data:`DOC_KEY_FIELD` (``doc_key``) = its
``audio`` field as written in the file (e.g. ``upload/Yvqy/124-20251102214649.wav``); replay, logged
samples and judge items identify documents by it. Fields the loader does not use (``source`` = the
speaker, ``time``, ``prompt``, ``check_score``, ...) are kept and play no part in scoring.

Every row is checked before anything runs: required fields present and non-empty, ``audio`` unique in
the file, the gold usable by the official scorer (:func:`gold_problem`), the audio path relative and
inside the data folder (absolute paths and ``..`` escapes are rejected), and the audio file decodable
and not empty or truncated (:func:`audio_bench_core.audio.audio_file_problem`). Errors name the file, the
line, the row id and audio, and the field.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import tarfile
from pathlib import Path

logger = logging.getLogger(__name__)

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


#: ``MCGA_DATA_DIR=hub``: the test release from the hub, downloaded once (:func:`hub_release_dir`).
HUB_DATA_DIR = "hub"
def data_dir_from_env() -> Path:
    """The data folder in use: ``$MCGA_DATA_DIR`` if set (``hub``: :func:`hub_release_dir`), else the shipped sample.

    Raises:
        MCGAHubAccessError: the hub release is asked for, not extracted yet, and cannot be fetched.
    """
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    if not value:
        return SAMPLE_DATA_DIR
    return hub_release_dir() if value == HUB_DATA_DIR else Path(value).expanduser()


def hub_release_dir() -> Path:
    """``data/`` of the test release (:data:`HUB_TEST_ARCHIVE` of :data:`HUB_REPO_ID`), downloaded and extracted once
    into ``cache_dir("mcga_release")`` by :func:`download_test_release`; later calls read that copy (complete once its
    ``SOURCE.json`` is written, which happens last).

    Raises:
        MCGAHubAccessError: no complete copy yet and the archive cannot be fetched (offline, no access).
    """
    from audio_bench_core import cache_dir

    destination = cache_dir("mcga_release")
    if (destination / "SOURCE.json").is_file():
        return destination / "data"
    return download_test_release(destination)


def task_file(data_dir: Path, task: str, split: str = "test") -> Path:
    """Path of ``MCGA_{task}_{split}.jsonl`` inside ``data_dir``."""
    return Path(data_dir) / f"MCGA_{task}_{split}.jsonl"


def read_jsonl(path: Path) -> list[tuple[int, dict]]:
    """Read a jsonl file into ``[(line_number, row), ...]``, skipping blank lines.

    The file is read as UTF-8 (a byte-order mark at its start is dropped); bytes that are not UTF-8 are kept as
    U+DC80-U+DCFF so that the row check can name the line and field that holds them (:func:`field_problem`).

    Raises:
        MCGADataError: the file is missing, or a line is not a JSON object or is nested too deeply for Python's
            JSON reader (names file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise MCGADataError(f"{path}: file not found")
    rows = []
    with path.open(encoding="utf-8-sig", errors="surrogateescape") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise MCGADataError(f"{path}:{line_number}: not valid JSON ({error.msg} at column {error.colno})") from None
            except RecursionError:
                raise MCGADataError(f"{path}:{line_number}: not a usable JSON row: nested deeper than Python's JSON reader allows ({len(line)} characters)") from None
            if not isinstance(row, dict):
                raise MCGADataError(f"{path}:{line_number}: expected a JSON object, got {type(row).__name__}")
            rows.append((line_number, row))
    return rows


#: Fields that hold text in every task file; ``id`` may also be an integer.
TEXT_FIELDS = ("asr", "audio", "s2tt", "sec_1", "sec_2", "sec_3", "sqa", "sqa_a", "su", "su_a", "sr", "sr_a", "genre", "dynasty", "source")


def field_problem(row: dict) -> tuple[str, str] | None:
    """``(field, reason)`` for the first field of a row whose value has the wrong type, or that holds bytes that are
    not UTF-8, else ``None``.

    Types: the :data:`TEXT_FIELDS` present must be JSON strings (not an object, list, number, ``true``, ``NaN`` or
    ``Infinity``, which Python's JSON reader accepts); ``id`` a string or an integer. Every string in the row, nested
    ones included, must have been valid UTF-8 in the file (:func:`read_jsonl` keeps bad bytes as U+DC80-U+DCFF).
    """
    from audio_bench_core.audio import first_not_utf8  # the loaders' shared cell checks; importing it does not import lmms-eval

    for field, value in row.items():
        if field == "id":
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                return field, f"must be a string or an integer, got {_type_name(value)}"
        elif field in TEXT_FIELDS and value is not None and not isinstance(value, str):
            return field, f"must be a string, got {_type_name(value)}"
        bad = first_not_utf8(value)
        if bad is not None:
            return field, f"holds a byte that is not UTF-8 (0x{ord(bad.group()) - 0xDC00:02x}): the file is not UTF-8 (Latin-1 or another legacy encoding?); re-save it as UTF-8"
    return None


def _type_name(value: object) -> str:
    """``"an object"``, ``"true"``, ``"the number nan"`` ...: a JSON value's type as the file spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


def resolve_audio_path(data_dir: Path, relative: str, where: str, warnings: list[tuple[str, str]] | None = None) -> Path:
    """Absolute path of a row's audio file, refusing anything outside ``data_dir``.

    Args:
        data_dir: the folder holding the jsonl files.
        relative: the row's ``audio`` field.
        where: ``"file:line (id ...)"`` used in error messages.
        warnings: where to add ``(where, warning)`` for a usable but all-silent or clipped clip
            (:func:`audio_bench_core.audio.audio_file_check`); ``None``: not collected.

    Raises:
        MCGADataError: a path that is not a string or holds a control character (NUL ...), absolute path, escape from ``data_dir`` (``..`` or a symlink), missing file, or a file
            that is not usable audio (undecodable, empty, truncated or shorter than
            :data:`audio_bench_core.audio.MIN_AUDIO_SECONDS`, or holding NaN/±inf samples; see
            :func:`audio_bench_core.audio.audio_file_check`).
    """
    from audio_bench_core.audio import audio_file_check_once, path_text_problem  # decoded once per run: the tasks share the clips

    problem = path_text_problem(relative)
    if problem is not None:
        raise MCGADataError(f"{where}: field 'audio': the audio path {problem}")
    if os.path.isabs(relative) or relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise MCGADataError(f"{where}: audio path {relative!r} is absolute; it must be relative to {data_dir}")
    root = Path(data_dir).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise MCGADataError(f"{where}: audio path {relative!r} escapes the data folder {root}")
    if not path.is_file():
        raise MCGADataError(f"{where}: audio file {path} does not exist")
    check = audio_file_check_once(path)
    if check.problem is not None:
        raise MCGADataError(f"{where}: field 'audio': audio file {path} is {check.problem}")
    if check.warning is not None and warnings is not None:
        warnings.append((where, check.warning))
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


def load_task_rows(task: str, split: str = "test", data_dir: str | Path | None = None, warnings: list[tuple[str, str]] | None = None) -> list[dict]:
    """:func:`read_task_rows` of ``data_dir``, default :func:`data_dir_from_env` (``$MCGA_DATA_DIR``, else the shipped
    sample): the plugin's tasks read the release layout this way when what lmms-eval loaded is not the hub layout.

    Raises:
        MCGADataError: as :func:`read_task_rows`; MCGAHubAccessError for ``MCGA_DATA_DIR=hub`` (:func:`hub_release_dir`).
    """
    if data_dir is not None:
        return read_task_rows(task, data_dir, split, warnings)
    origin = DATA_DIR_ENV if os.environ.get(DATA_DIR_ENV, "").strip() else "data folder"
    return read_task_rows(task, data_dir_from_env(), split, warnings, origin)


def read_task_rows(task: str, data_dir: str | Path, split: str = "test", warnings: list[tuple[str, str]] | None = None, origin: str = "data folder") -> list[dict]:
    """Load and check the rows of one MCGA task file of the release folder ``data_dir``.

    Args:
        task: ``asr``, ``s2tt``, ``sec``, ``sqa``, ``su`` or ``sr``.
        data_dir: folder holding ``MCGA_{task}_{split}.jsonl`` (the release's ``data/``).
        split: ``test`` (released), ``val`` or ``train``.
        warnings: where to add ``(where, warning)`` for each all-silent or clipped clip (scored as it is); ``None``:
            they are logged, counted in one line (:func:`audio_bench_core.audio.audio_warnings_line`).
        origin: what named ``data_dir``, for the error about a folder without the task file (:func:`check_data_dir`).

    Returns:
        The rows in file order, each a copy with ``id`` as a string and two added fields: ``audio_path``
        (absolute path string) and :data:`DOC_KEY_FIELD` (the unique document key, the ``audio`` field).
        Ids may repeat (one text, several speakers); extra fields are kept unchanged.

    Raises:
        MCGADataError: see the module docstring; the message names file, line, id, audio and field.
    """
    if task not in REQUIRED_FIELDS:
        raise MCGADataError(f"unknown MCGA task {task!r}; known: {sorted(REQUIRED_FIELDS)}")
    root = Path(data_dir)
    path = task_file(root, task, split)
    if not path.is_file():  # a folder one level off: say which folder was checked and where the files are
        check_data_dir(root, split, origin)
    rows, seen_audio, found = [], {}, []
    for line_number, row in read_jsonl(path):
        where = f"{path}:{line_number} (id {row.get('id')!r}, audio {row.get('audio')!r})"
        _check_row(task, row, where, seen_audio, f"line {line_number}")
        audio_path = resolve_audio_path(root, str(row["audio"]), where, found)
        rows.append({**row, "id": str(row["id"]), "audio_path": str(audio_path), DOC_KEY_FIELD: str(row["audio"])})
    if not rows:
        raise MCGADataError(f"{path}: no rows")
    return _loaded(rows, found, warnings, f"MCGA {task} ({path})")


def _check_row(task: str, row: dict, where: str, seen_audio: dict[str, str], position: str) -> None:
    """The checks of one row (module docstring) but the audio file's: field types, required fields, a unique audio
    path (``seen_audio``: path -> ``position`` of its first row), a gold the official scorer can use.

    Raises:
        MCGADataError: ``where`` and the field.
    """
    wrong = field_problem(row)
    if wrong is not None:
        raise MCGADataError(f"{where}: field {wrong[0]!r} {wrong[1]}")
    missing = [f for f in REQUIRED_FIELDS[task] if row.get(f) is None or not str(row.get(f)).strip()]
    if missing:
        raise MCGADataError(f"{where}: missing or empty field(s) {missing}")
    audio = str(row["audio"])
    if audio in seen_audio:
        raise MCGADataError(
            f"{where}: field 'audio': duplicate audio path, first seen on {seen_audio[audio]}; "
            "each row is one recorded clip, and documents are told apart by their audio path"
        )
    seen_audio[audio] = position
    problem = gold_problem(task, row)
    if problem is not None:
        raise MCGADataError(f"{where}: field {problem[0]!r} {problem[1]}")


def _loaded(rows: list[dict], found: list[tuple[str, str]], warnings: list[tuple[str, str]] | None, what: str) -> list[dict]:
    """``rows``; the audio warnings ``found`` added to ``warnings``, or logged in one line."""
    if warnings is not None:
        warnings.extend(found)
    else:
        from audio_bench_core.audio import audio_warnings_line

        line = audio_warnings_line(found, what)
        if line:
            logger.warning(line)
    return rows


def rows_from_hub(dataset, task: str, warnings: list[tuple[str, str]] | None = None) -> list[dict]:
    """The rows of one task as lmms-eval loaded them from the hub layout (config ``task`` of :data:`HUB_REPO_ID`, written
    by :mod:`mcga.hub_dataset`), checked and converted to what :func:`read_task_rows` returns for the release.

    Every check of :func:`read_task_rows` runs, on the stored clip bytes instead of a file of the release: the clip is
    written once to ``cache_dir("mcga_audio")`` (:func:`audio_bench_core.audio.audio_bytes_file`, named by its SHA-1)
    and checked there, and that file is the row's ``audio_path``, so the hooks hand models the very bytes the release
    holds. ``audio`` is the clip's path in the release (the ``Audio`` value's ``path``), the document key as there.

    Args:
        dataset: a ``datasets.Dataset`` whose ``audio`` column is an ``Audio`` feature (decoded or not).
        warnings: as for :func:`read_task_rows`.

    Raises:
        MCGADataError: naming the config, the row (1-based), its id and audio path, and the field.
    """
    from audio_bench_core import cache_dir
    from audio_bench_core.audio import audio_bytes_file, audio_file_check_once
    from audio_bench_core.hub_layout import has_audio_feature, undecoded_rows

    if task not in REQUIRED_FIELDS:
        raise MCGADataError(f"unknown MCGA task {task!r}; known: {sorted(REQUIRED_FIELDS)}")
    what = f"hub dataset {HUB_REPO_ID} config {task!r}"
    if not has_audio_feature(dataset):
        raise MCGADataError(f"{what}: no Audio column 'audio' (columns: {list(getattr(dataset, 'column_names', []))}); not the hub layout of mcga.hub_dataset")
    rows, seen_audio, found = [], {}, []
    for number, stored in enumerate(undecoded_rows(dataset), start=1):
        clip = stored.get("audio") or {}
        row = {**stored, "audio": clip.get("path")}
        where = f"{what} row {number} (id {row.get('id')!r}, audio {row['audio']!r})"
        _check_row(task, row, where, seen_audio, f"row {number}")
        if not clip.get("bytes"):
            raise MCGADataError(f"{where}: field 'audio': no audio bytes")
        audio_path = audio_bytes_file(clip["bytes"], row["audio"], cache_dir("mcga_audio"))
        check = audio_file_check_once(audio_path)
        if check.problem is not None:
            raise MCGADataError(f"{where}: field 'audio': the audio bytes ({len(clip['bytes'])}) are {check.problem.replace(str(audio_path), 'the clip')}")
        if check.warning is not None:
            found.append((where, check.warning))
        rows.append({**row, "id": str(row["id"]), "audio_path": str(audio_path), DOC_KEY_FIELD: row["audio"]})
    if not rows:
        raise MCGADataError(f"{what}: no rows")
    return _loaded(rows, found, warnings, what)


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
    mean" hints (the search of :func:`audio_bench_core.data_folders.nearest_data_folder`, shared by the three benchmarks); ``None``
    if none is found."""
    from audio_bench_core.data_folders import nearest_data_folder

    return nearest_data_folder(folder, lambda candidate: len(_task_files(candidate, split)))


def check_data_dir(folder: str | Path, split: str = "test", origin: str = "data folder") -> list[Path]:
    """The task files in ``folder``, or an error when it is missing, not a folder or holds none.

    Args:
        origin: how the folder was given, for the message (``data folder``, or the variable that named it).

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
            warnings: list[tuple[str, str]] = []
            try:
                rows = load_task_rows(task, args.split, root, warnings)
            except MCGADataError as error:
                print(f"{task}: ERROR {error}", file=sys.stderr)
                status = 1
                continue
            texts = len({row["id"] for row in rows})
            flagged = f"; {len(warnings)} with audio warnings, listed below" if warnings else ""
            print(f"{task}: {len(rows)} rows OK ({texts} distinct ids; documents keyed by audio path{flagged})")
            for where, warning in warnings:
                print(f"{task}: WARNING {where}: audio {warning}")
    return status


if __name__ == "__main__":
    sys.exit(main())
