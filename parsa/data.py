"""Reading PARSA-Bench (arXiv 2603.14456) into checked canonical documents: a local copy of the release
(:func:`read_task_docs`) or the hub layout lmms-eval loaded (:func:`rows_from_hub`).

Layouts read (per task; the task's folder name and column names come from :func:`column_map`):

- **CSV + audio folder**: ``<root>/<Folder>/<Folder>.csv`` with audio under ``<root>/<Folder>/Audios/``
  (e.g. ``ASR/ASR.csv``, ``Intent-Classification/Intent-Classification.csv``). A row's audio path is relative
  to the task folder, or to its ``Audios/`` folder.
- **parquet**: ``<root>/<Folder>.parquet`` or every ``*.parquet`` below ``<root>/<Folder>/`` (sorted by path,
  concatenated). The audio column is a relative path string (as above, relative to the parquet file's folder)
  or a Hugging Face ``Audio`` struct ``{"bytes": ..., "path": ...}``; embedded bytes are written once to
  ``cache_dir("parsa_audio")`` (``$LMMS_EVAL_AUDIO_PLUGIN_CACHE/parsa_audio``) named by their SHA-1.

Column names live in one table, ``parsa/column_map.json``; a JSON file named by ``$PARSA_COLUMN_MAP``
overrides any part of it (see :func:`column_map`).

Every row is checked before inference, and the first problem stops the load with the file, the row
number, the row id, the column and the mapping key to override. The checks cover every way scoring
(:mod:`parsa.scoring`, :mod:`parsa.metrics`, :mod:`parsa.prompts`) can fail on gold data, so a run that starts
cannot crash in scoring:

- rows: required column missing or empty, duplicate id, no rows at all;
- audio: path absolute or escaping the root (``..``, symlinks), file missing, or unusable by
  :func:`audio_bench_core.audio.audio_file_problem` (undecodable, 0 samples, truncated, shorter than 0.1 s; the
  whole file is decoded); embedded parquet bytes the same, the error naming the row and column, not the cache;
- ASR / translation gold: empty after :func:`parsa.normalize.normalize_persian` (punctuation only: WER/CER and
  chrF++/BLEU undefined); a Persian reference (ASR, En->Fa) in another script (wrong column);
  translation source transcript empty (COMET's source);
- classification gold: not one of the task's labels after the same matching as the model's answer
  (``label_map``, then :func:`parsa.parsing.match_label`);
- multiple choice: option count not the task's, an option empty after normalisation or two options equal after
  normalisation (an answer naming it would be ambiguous), gold option number out of range, an ``option_text``
  gold matching no option or several;
- NER gold: not a list of ``{"type", "span"}`` objects, a MASSIVE ``[type : span]`` annotation with unbalanced
  brackets, a type or span empty after normalisation, a type not among the task's entity types;
- settings (checked when that setting is loaded): an empty transcript in ``text``/``audio_ref``,
  fewer than three rows in ``fewshot``.

:func:`check_data_folder` refuses a missing, empty or mis-shaped folder (no task files, e.g. the parent of the
data folder) in one line naming the likely right path (:func:`suggest_data_root`).

Canonical document (one per row; plain JSON-serialisable dict)::

    {"id": str, "task": short name, "audio_path": absolute path str, "transcript": str ("" if none),
     "reference": str (asr: transcript; translation: reference text; classification: canonical label;
                       multiple choice: 1-based option number "1".."N"; ner: JSON list of {"type", "span"}),
     "question": str ("" if none), "options": list[str] ([] if none)}
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import logging
import math
import os
import re
import sys
from pathlib import Path

from audio_bench_core.data_folders import nearest_data_folder

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "PARSA_DATA_DIR"
COLUMN_MAP_ENV = "PARSA_COLUMN_MAP"
HUB_REVISION_ENV = "PARSA_HUB_REVISION"
HUB_REPO_ID = "MohammadJRanjbar/PARSA-Bench"
HUB_DATASET_URL = f"https://huggingface.co/datasets/{HUB_REPO_ID}"
#: Hub revision read when ``PARSA_DATA_DIR=hub``. "main" moves: set ``$PARSA_HUB_REVISION`` to a commit hash
#: for reproducible numbers (the commit actually read is always reported by :func:`data_source`).
PARSA_HUB_REVISION = "main"
HUB_ROOT_VALUE = "hub"
SAMPLE_DATA_DIR = Path(__file__).with_name("sample_data")
COLUMN_MAP_FILE = Path(__file__).with_name("column_map.json")
SOURCE_FILE = "SOURCE.json"
#: Demonstrations per few-shot prompt (paper, appendix "Few-shot and CoT variants": k = 2).
FEWSHOT_K = 2

FIELDS = ("id", "audio", "transcript", "reference", "question", "options")
MAPPING_KEYS = ("folder", "audio_dir", "columns", "reference_format", "label_map")
REFERENCE_FORMATS = {
    "asr": ("text",),
    "translation": ("text",),
    "classification": ("label",),
    "multiple_choice": ("number", "index0", "letter", "option_text"),
    "ner": ("json", "massive"),
}
_HASH_RE = re.compile(r"^[0-9a-f]{40}$")


class PARSADataError(ValueError):
    """PARSA data is missing or malformed; the message names the file, row, id, column and mapping key."""


class PARSAHubAccessError(PARSADataError):
    """The gated hub dataset could not be read (no token, terms not accepted, offline, wrong revision)."""


# ----------------------------------------------------------------------------------------- mapping
def _merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def column_map(overrides: str | Path | dict | None = None) -> dict[str, dict]:
    """The mapping of every task: ``{task: {"folder", "audio_dir", "columns", "reference_format", "label_map"}}``.

    The shipped table ``parsa/column_map.json`` merged with ``overrides`` (a dict or a JSON file path; default
    the file named by ``$PARSA_COLUMN_MAP``, if set). In the overrides, the key ``"*"`` applies to every task,
    then each task's own block; dicts merge key by key (so ``{"asr": {"columns": {"id": "path"}}}`` changes
    one column), other values replace.

    Raises:
        PARSADataError: the override file is missing or not JSON, or names an unknown task or mapping key.
    """
    shipped = json.loads(COLUMN_MAP_FILE.read_text(encoding="utf-8"))
    shipped.pop("_about", None)
    if overrides is None:
        env = os.environ.get(COLUMN_MAP_ENV, "").strip()
        overrides = Path(env).expanduser() if env else {}
    origin = "column map overrides"
    if not isinstance(overrides, dict):
        origin = f"{COLUMN_MAP_ENV} file {overrides}"
        try:
            overrides = json.loads(Path(overrides).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PARSADataError(f"{origin}: file not found") from None
        except json.JSONDecodeError as error:
            raise PARSADataError(f"{origin}: not valid JSON ({error.msg}, line {error.lineno})") from None
        if not isinstance(overrides, dict):
            raise PARSADataError(f"{origin}: expected a JSON object {{task: {{...}}}}")
    overrides = {k: v for k, v in overrides.items() if not k.startswith("_")}
    for task, block in overrides.items():
        if task != "*" and task not in shipped:
            raise PARSADataError(f"{origin}: unknown task {task!r}; tasks: {sorted(shipped)} (or '*' for all)")
        if not isinstance(block, dict):
            raise PARSADataError(f"{origin}: {task!r} must map to an object")
        unknown = sorted(set(block) - set(MAPPING_KEYS))
        if unknown:
            raise PARSADataError(f"{origin}: {task!r} has unknown key(s) {unknown}; known: {list(MAPPING_KEYS)}")
        bad_fields = sorted(set(block.get("columns", {})) - set(FIELDS))
        if bad_fields:
            raise PARSADataError(f"{origin}: {task!r}.columns has unknown field(s) {bad_fields}; fields: {list(FIELDS)}")
    merged = {}
    for task, block in shipped.items():
        block = _merge(block, overrides.get("*", {}))
        merged[task] = _merge(block, overrides.get(task, {}))
    return merged


# -------------------------------------------------------------------------------------- data root
def _hub_revision() -> str:
    return os.environ.get(HUB_REVISION_ENV, "").strip() or PARSA_HUB_REVISION


def download_hub_snapshot(revision: str | None = None, local_dir: str | Path | None = None) -> Path:
    """Download the gated hub dataset (``huggingface_hub.snapshot_download``) and return its folder.

    Args:
        revision: branch, tag or commit; default ``$PARSA_HUB_REVISION`` or :data:`PARSA_HUB_REVISION`.
        local_dir: copy the files there (and write ``SOURCE.json`` with the revision) instead of the HF cache.

    Raises:
        PARSAHubAccessError: the terms are not accepted or no token is set (gated), the repo or revision is not
            found, the hub refused the request, or the hub is unreachable / ``HF_HUB_OFFLINE=1`` with nothing
            cached. The message says what to do.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    revision = revision or _hub_revision()
    where = f"hub dataset {HUB_REPO_ID} at revision {revision!r}"
    access = (f"PARSA-Bench is gated: open {HUB_DATASET_URL} while logged in, accept its terms (CC-BY-NC-4.0), then give this "
              "machine a token: `export HF_TOKEN=hf_...` (or `hf auth login`)")  # fmt: skip
    try:
        folder = snapshot_download(HUB_REPO_ID, repo_type="dataset", revision=revision, local_dir=local_dir)
    except GatedRepoError as error:
        raise PARSAHubAccessError(f"{where}: access denied ({type(error).__name__}). {access}.") from None
    except RevisionNotFoundError:
        raise PARSAHubAccessError(f"{where}: no such revision; set {HUB_REVISION_ENV} to a commit hash of {HUB_DATASET_URL}/commits/main") from None
    except RepositoryNotFoundError as error:
        raise PARSAHubAccessError(f"{where}: not found or not visible with the current token ({type(error).__name__}). {access}.") from None
    except LocalEntryNotFoundError:
        raise PARSAHubAccessError(
            f"{where}: not in the local Hugging Face cache and the hub cannot be reached (offline, or HF_HUB_OFFLINE=1). "
            f"Download it once with network access (`parsa-data download DEST`, then {DATA_DIR_ENV}=DEST), "
            f"or unset HF_HUB_OFFLINE. {access}."
        ) from None
    except HfHubHTTPError as error:
        raise PARSAHubAccessError(f"{where}: the hub refused the request ({error}). {access}.") from None
    folder = Path(folder)
    if local_dir is not None:
        commit = revision if _HASH_RE.match(revision) else _commit_of(folder, revision)
        (folder / SOURCE_FILE).write_text(json.dumps({"repo_id": HUB_REPO_ID, "requested_revision": revision, "revision": commit}, indent=1), encoding="utf-8")
    return folder


def _commit_of(folder: Path, revision: str) -> str:
    """The commit hash of a snapshot folder (HF cache layout ``snapshots/<commit>``), else ``revision``."""
    if _HASH_RE.match(folder.name):
        return folder.name
    try:
        from huggingface_hub import HfApi

        return HfApi().dataset_info(HUB_REPO_ID, revision=revision).sha or revision
    except Exception:  # offline or no access: the requested name is all we know
        return revision


#: What an unset ``$PARSA_DATA_DIR`` reads: ``"sample"`` (the sample shipped beside this module) or ``"hub"`` (as
#: ``PARSA_DATA_DIR=hub``, where no sample is shipped).
def _requested(data_dir: str | Path | None) -> str:
    """``data_dir``, else ``$PARSA_DATA_DIR``, else ``""`` (the sample)."""
    return str(data_dir) if data_dir is not None else os.environ.get(DATA_DIR_ENV, "").strip()


def data_root(data_dir: str | Path | None = None) -> Path:
    """The folder read: ``data_dir``, else ``$PARSA_DATA_DIR`` (``hub``: the downloaded snapshot), else the sample.

    Raises:
        PARSAHubAccessError: see :func:`download_hub_snapshot`.
        PARSADataError: the folder does not exist.
    """
    value = _requested(data_dir)
    if not value:
        return SAMPLE_DATA_DIR
    if value == HUB_ROOT_VALUE:
        return download_hub_snapshot()
    root = Path(value).expanduser()
    origin = f"data folder {value}" if data_dir is not None else f"{DATA_DIR_ENV}={value}"
    if not root.exists():
        raise PARSADataError(f"{origin}: no such folder.{_suggestion_text(root)}")
    if not root.is_dir():
        raise PARSADataError(f"{origin}: is a file, not a folder.{_suggestion_text(root)}")
    return root


def _has_task_data(folder: Path, mapping: dict) -> bool:
    name = mapping["folder"]
    return (folder / name / f"{name}.csv").is_file() or (folder / f"{name}.parquet").is_file() or ((folder / name).is_dir() and any((folder / name).rglob("*.parquet")))


def tasks_present(folder: Path, mappings: dict[str, dict] | None = None) -> list[str]:
    """The tasks whose files (CSV or parquet layout, see :func:`task_files`) are directly under ``folder``."""
    mappings = mappings if mappings is not None else column_map()
    if not folder.is_dir():
        return []
    return [task for task, mapping in mappings.items() if _has_task_data(folder, mapping)]



def suggest_data_root(path: str | Path, levels_up: int = 2, max_depth: int = 4, max_folders: int = 2000) -> Path | None:
    """The folder near ``path`` holding the most PARSA task folders (:func:`nearest_data_folder`), or ``None``."""
    mappings = column_map()
    return nearest_data_folder(path, lambda folder: len(tasks_present(folder, mappings)), levels_up, max_depth, max_folders)


def _suggestion_text(path: Path) -> str:
    found = suggest_data_root(path)
    if found is None:
        return f" Give the folder written by `parsa-data download DEST` (it holds task folders such as ASR/ASR.csv), or {DATA_DIR_ENV}=hub."
    return f" Did you mean {found}? (it holds {len(tasks_present(found))} PARSA task folders)"


def check_data_folder(root: Path) -> list[str]:
    """The tasks present under ``root``; raises when there are none (an empty or mis-shaped folder).

    Raises:
        PARSADataError: ``root`` holds no task's files (one line: what was looked for, and the likely right path
            from :func:`suggest_data_root`).
    """
    present = tasks_present(root)
    if present:
        return present
    try:
        empty = not any(root.iterdir())
    except OSError:
        empty = False
    what = "is empty" if empty else "holds no PARSA-Bench task data (looked for <Folder>/<Folder>.csv, <Folder>.parquet or <Folder>/**/*.parquet, e.g. ASR/ASR.csv)"
    raise PARSADataError(f"{root}: {what}.{_suggestion_text(root)}")


def data_source(data_dir: str | Path | None = None) -> str:
    """One line naming the data read, e.g. ``sample:parsa/sample_data`` or ``hub:MohammadJRanjbar/PARSA-Bench@<commit>``.

    A local folder holding a ``SOURCE.json`` (written by a download into a folder) adds the hub revision from it.
    """
    root = data_root(data_dir)
    if root == SAMPLE_DATA_DIR:
        return "sample:parsa/sample_data (synthetic espeak-ng audio; not for measuring models)"
    if _requested(data_dir) == HUB_ROOT_VALUE:
        return f"hub:{HUB_REPO_ID}@{_commit_of(root, _hub_revision())} (requested {_hub_revision()})"
    source = root / SOURCE_FILE
    if source.is_file():
        try:
            recorded = json.loads(source.read_text(encoding="utf-8"))
            return f"local:{root.resolve()} (from hub:{recorded.get('repo_id')}@{recorded.get('revision')})"
        except (json.JSONDecodeError, AttributeError):
            pass
    return f"local:{root.resolve()}"


# ------------------------------------------------------------------------------------ reading rows
def task_files(root: Path, task: str, mapping: dict) -> tuple[str, list[Path]]:
    """``("csv", [file])`` or ``("parquet", [files...])`` for one task under ``root``.

    Raises:
        PARSADataError: neither layout is present (the message lists the places looked at).
    """
    folder = mapping["folder"]
    csv_file = root / folder / f"{folder}.csv"
    if csv_file.is_file():
        return "csv", [csv_file]
    single = root / f"{folder}.parquet"
    if single.is_file():
        return "parquet", [single]
    many = sorted((root / folder).rglob("*.parquet")) if (root / folder).is_dir() else []
    if many:
        return "parquet", many
    hint = "" if tasks_present(root) else _suggestion_text(root)
    raise PARSADataError(
        f"{task}: no data under {root}: looked for {csv_file}, {single} and {root / folder}/**/*.parquet "
        f"(folder name from the column map key {task}.folder; override it with {COLUMN_MAP_ENV}).{hint}"
    )


def _not_utf8_error(path: Path, columns: dict) -> PARSADataError:
    """The data error for a CSV file that is not UTF-8, naming the first row, column and field holding a byte that is
    not (the file read again with each bad byte kept as U+DC80-U+DCFF, only to find it)."""
    import csv
    import io

    from audio_bench_core.audio import NOT_UTF8, first_not_utf8  # the loaders' shared cell checks

    fields = {name: field for field, spec in columns.items() for name in (spec if isinstance(spec, list) else [spec]) if name}
    text = path.read_bytes().decode("utf-8-sig", errors="surrogateescape")
    for number, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=1):
        for column, value in row.items():
            bad = first_not_utf8(value) if isinstance(column, str) else None
            if bad:
                ident = row.get(columns.get("id") or "") or ""
                field = f" (field {fields[column]!r})" if column in fields else ""
                return PARSADataError(
                    f"{path} row {number} (id {NOT_UTF8.sub('?', ident)!r}): column {column!r}{field} holds a byte that is not UTF-8 "
                    f"(0x{ord(bad.group()) - 0xDC00:02x} at character {bad.start()}): the file is not UTF-8 (Windows-1256, Latin-1 or another "
                    "legacy encoding?); re-save it as UTF-8"
                )
    return PARSADataError(f"{path}: not a UTF-8 file (a byte that is not UTF-8 outside any cell, e.g. in the header); re-save it as UTF-8")


def _read_rows(kind: str, files: list[Path], columns: dict) -> list[tuple[str, dict]]:
    """``[(where, row), ...]`` with ``where`` = ``"file row N"`` (N 1-based, header not counted); ``columns`` (the
    column map's ``columns``) names the field in a data error."""
    rows = []
    if kind == "csv":
        import pandas

        [path] = files
        try:  # utf-8-sig: a byte-order mark would otherwise rename the first column
            frame = pandas.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise _not_utf8_error(path, columns) from None
        except Exception as error:  # pandas raises several parser error types
            raise PARSADataError(f"{path}: not a readable UTF-8 CSV file ({error})") from None
        rows += [(f"{path} row {i}", row) for i, row in enumerate(frame.to_dict(orient="records"), start=1)]
        return rows
    import pyarrow.parquet

    for path in files:
        try:
            table = pyarrow.parquet.read_table(path)
        except Exception as error:  # pyarrow raises ArrowInvalid/OSError variants
            raise PARSADataError(f"{path}: not a readable parquet file ({error})") from None
        rows += [(f"{path} row {i}", row) for i, row in enumerate(table.to_pylist(), start=1)]
    return rows


def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _text(value) -> str:
    return "" if _is_missing(value) else str(value).strip()


#: Fields whose cell may hold a list or an object (parquet): options, NER entities, the HF ``Audio`` struct.
_STRUCTURED_FIELDS = {"options": (list,), "reference": (list,), "audio": (dict,)}


class _Row:
    """One raw row with the context needed for error messages."""

    def __init__(self, task: str, where: str, row: dict, columns: dict):
        self.task, self.where, self.row, self.columns = task, where, row, columns
        id_column = columns.get("id")
        self.label = f"{where} (id {_text(row.get(id_column))!r})" if id_column else where
        self.audio_warning: str | None = None

    def check_cells(self) -> None:
        """Refuse a mapped cell whose type scoring would misread.

        A cell must be text or a number (a list for ``options``/``reference``, an object for ``audio``, as parquet holds
        them); never ``true``/``false`` (``True`` would be read as the text "True", e.g. a code_switch label), never
        ±inf. (Text that was not UTF-8 in a CSV file is refused when the file is read, :func:`_not_utf8_error`.)

        Raises:
            PARSADataError: naming the row, the column and the field.
        """
        for field, spec in self.columns.items():
            for name in spec if isinstance(spec, list) else [spec]:
                if name is None or name not in self.row:
                    continue
                value = _plain(self.row[name])
                allowed = _STRUCTURED_FIELDS.get(field, ())
                if isinstance(value, bool) or not isinstance(value, (str, int, float, type(None), *allowed)):
                    raise self.error(f"column {name!r} (field {field!r}) holds {_type_name(value)}, not text or a number", field)
                if isinstance(value, float) and math.isinf(value):
                    raise self.error(f"column {name!r} (field {field!r}) holds {value!r}, not text or a finite number", field)

    def error(self, message: str, field: str | None = None) -> PARSADataError:
        hint = ""
        if field is not None:
            hint = f" [column map key {self.task}.columns.{field}; override with {COLUMN_MAP_ENV}]"
        return PARSADataError(f"{self.label}: {message}{hint}")

    def column(self, field: str, required: bool) -> str | None:
        """The column name for ``field``; ``None`` when the mapping has none and the field is optional."""
        name = self.columns.get(field)
        if name is None:
            if required:
                raise self.error(f"the task needs a {field!r} column but the column map sets none", field)
            return None
        if name not in self.row:
            raise self.error(f"column {name!r} (field {field!r}) is missing; the file has columns {sorted(self.row)}", field)
        return name

    def value(self, field: str, required: bool):
        name = self.column(field, required)
        if name is None:
            return None
        value = self.row[name]
        if required and _is_missing(value) and not isinstance(value, dict):
            raise self.error(f"column {name!r} (field {field!r}) is empty", field)
        return value


def _plain(value):
    """numpy scalars and arrays (parquet) -> Python values."""
    return value.tolist() if hasattr(value, "tolist") else value


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _audio_path(row: _Row, root: Path, base: Path, audio_dir: str | None) -> Path:
    from audio_bench_core.audio import path_text_problem

    value = row.value("audio", required=True)
    if isinstance(value, dict):
        if value.get("bytes"):
            return _checked_audio_bytes(row, value["bytes"], str(value.get("path") or ""))
        value = value.get("path")
        if _is_missing(value):
            raise row.error("audio struct has neither bytes nor a path", "audio")
    problem = path_text_problem(value.strip() if isinstance(value, str) else value)
    if problem:
        raise row.error(f"the audio path {problem}", "audio")
    relative = str(value).strip()
    if os.path.isabs(relative) or relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise row.error(f"audio path {relative!r} is absolute; it must be relative to {base}", "audio")
    candidates = [base / relative] + ([base / audio_dir / relative] if audio_dir else [])
    for candidate in candidates:
        if not _inside(candidate, root):
            raise row.error(f"audio path {relative!r} escapes the data folder {root.resolve()}", "audio")
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise row.error(f"audio file {relative!r} not found (looked at {', '.join(str(c) for c in candidates)})", "audio")
    check = audio_check(found)
    if check.problem:
        raise row.error(f"audio file {found} is {check.problem}", "audio")
    row.audio_warning = check.warning
    return found.resolve()


def audio_check(path: str | Path):
    """What :func:`audio_bench_core.audio.audio_file_check` finds in the audio file at ``path`` (the whole file is decoded;
    problem: unreadable, empty/0-sample, truncated, shorter than ``audio_bench_core.audio.MIN_AUDIO_SECONDS``, NaN or
    ±inf samples; warning: all silent or clipped), remembered per (path, size, mtime) so the several settings of a
    task loaded in one run decode each file once (:func:`audio_bench_core.audio.audio_file_check_once`)."""
    from audio_bench_core.audio import audio_file_check_once  # importing it does not import lmms-eval

    return audio_file_check_once(path)


def audio_problem(path: str | Path) -> str | None:
    """The ``problem`` of :func:`audio_check`: why the audio file at ``path`` cannot be used, or ``None``."""
    return audio_check(path).problem


def audio_cache_dir() -> Path:
    """Where embedded parquet audio is written: ``cache_dir("parsa_audio")`` of :mod:`audio_bench_core` (one cache root)."""
    from audio_bench_core import cache_dir  # importing it does not import lmms-eval

    return cache_dir("parsa_audio")


def _checked_audio_bytes(row: _Row, payload: bytes, name: str) -> Path:
    """Embedded audio bytes written to the cache and decoded; a bad payload is a data error naming the row and
    the audio column (not the cache file, which is removed)."""
    column = row.columns.get("audio")
    try:
        target = _cached_audio_bytes(bytes(payload), name)
    except (OSError, TypeError) as error:
        raise row.error(f"embedded audio bytes in column {column!r} (file name {name!r}) could not be written to the audio cache ({error})", "audio") from None
    check = audio_check(target)
    if check.problem:
        target.unlink(missing_ok=True)
        problem = check.problem.replace(str(target), "<embedded bytes>")
        raise row.error(f"embedded audio bytes in column {column!r} ({len(payload)} bytes, file name {name!r}) are {problem}", "audio")
    row.audio_warning = check.warning
    return target


def _cached_audio_bytes(payload: bytes, name: str) -> Path:
    """Embedded bytes written once to :func:`audio_cache_dir` (:func:`audio_bench_core.audio.audio_bytes_file`: named by
    their SHA-1 and the container their bytes hold; MP3 bytes with no name, or under a ``.wav`` name, become ``<sha1>.mp3``)."""
    from audio_bench_core.audio import audio_bytes_file

    return audio_bytes_file(payload, name, audio_cache_dir())


def _list_cell(row: _Row, raw, rule: str, items: str, key: str) -> list:
    """A cell holding a list: JSON text (CSV), a numpy array or a list (parquet).

    Raises:
        PARSADataError: ``"<rule> a JSON list of <items>, got ..."`` (or ``a list of``), naming the row and ``key``.
    """
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise row.error(f"{rule} a JSON list of {items}, got {raw[:60]!r}", key) from None
        except RecursionError:
            raise row.error(f"{rule} a JSON list of {items}, got JSON nested deeper than Python's JSON reader allows ({len(raw)} characters)", key) from None
    if hasattr(raw, "tolist"):
        raw = raw.tolist()
    if not isinstance(raw, list):
        raise row.error(f"{rule} a list of {items}, got {type(raw).__name__}", key)
    return raw


def _options(row: _Row) -> list[str]:
    spec = row.columns.get("options")
    if spec is None:
        raise row.error("the task is multiple choice but the column map sets no 'options' column", "options")
    if isinstance(spec, list):
        values = []
        for name in spec:
            if name not in row.row:
                raise row.error(f"option column {name!r} is missing; the file has columns {sorted(row.row)}", "options")
            values.append(_text(row.row[name]))
        while values and not values[-1]:
            values.pop()  # fewer options than columns: trailing blanks
    else:
        values = [_text(v) for v in _list_cell(row, row.value("options", required=True), f"column {spec!r} must hold", "option texts", "options")]
    if len(values) < 2 or not all(values):
        raise row.error(f"needs at least 2 non-empty options, got {values}", "options")
    from parsa.normalize import normalize_persian

    keys = [normalize_persian(v) for v in values]
    for number, (value, key) in enumerate(zip(values, keys), start=1):
        if not key:
            raise row.error(f"option {number} {value!r} is empty after Persian normalisation (punctuation only): no answer can name it", "options")
        if keys.index(key) + 1 != number:
            raise row.error(f"options {keys.index(key) + 1} and {number} ({values[keys.index(key)]!r}, {value!r}) are the same text after Persian normalisation: an answer naming it is ambiguous", "options")
    return values


def _mc_reference(row: _Row, raw: str, options: list[str], form: str) -> str:
    n = len(options)
    if form == "option_text":
        from parsa.normalize import normalize_persian

        matches = [i for i, option in enumerate(options, start=1) if normalize_persian(option) == normalize_persian(raw)]
        if len(matches) != 1:
            raise row.error(f"gold answer {raw!r} matches {len(matches)} of the options {options}; expected exactly one", "reference")
        return str(matches[0])
    if form == "letter":
        letters = [chr(ord("A") + i) for i in range(n)]
        if raw.upper() not in letters:
            raise row.error(f"gold answer {raw!r} is not an option letter {letters[0]}-{letters[-1]}", "reference")
        return str(letters.index(raw.upper()) + 1)
    try:
        number = int(float(raw)) if re.fullmatch(r"\d+(\.0+)?", raw) else None
    except ValueError:
        number = None
    if number is None:
        raise row.error(f"gold answer {raw!r} is not an option number (reference_format {form!r})", "reference")
    number += 1 if form == "index0" else 0
    if not 1 <= number <= n:
        first, last = (0, n - 1) if form == "index0" else (1, n)
        raise row.error(f"gold option {raw!r} is out of range: the row has {n} options, numbered {first}-{last}", "reference")
    return str(number)


def _canonical_label(row: _Row, raw: str, labels: tuple[str, ...], label_map: dict) -> str:
    """The canonical label of a gold cell: ``label_map`` first, then the same matching as a model's answer
    (:func:`parsa.parsing.match_label`: :func:`parsa.normalize.label_key` of the label or an alias of
    ``parsa/labels.json``), so gold and predictions are compared after one normalisation."""
    mapped = label_map.get(raw, raw)
    if mapped in labels:
        return mapped
    from parsa.parsing import match_label

    label = match_label(row.task, str(mapped))
    if label is not None:
        return label
    raise row.error(
        f"gold label {raw!r} is not one of the task's labels {list(labels)}; map it with {COLUMN_MAP_ENV} "
        f"{{\"{row.task}\": {{\"label_map\": {{\"{raw}\": \"<label>\"}}}}}}",
        "reference",
    )


_MASSIVE_SLOT = re.compile(r"\[\s*([^\[\]:]+?)\s*:\s*([^\[\]]+?)\s*\]")


def _ner_reference(row: _Row, raw, form: str) -> str:
    from parsa.normalize import label_key, normalize_persian

    if form == "massive":  # MASSIVE's annot_utt: "wake me up [time : ساعت هفت] [date : فردا]"
        text = str(raw)
        found = _MASSIVE_SLOT.findall(text)
        if text.count("[") != len(found) or text.count("]") != len(found):
            raise row.error(f"MASSIVE annotation {text[:80]!r} has {text.count('[')} '[' and {text.count(']')} ']' but {len(found)} well-formed [type : span] slots", "reference")
        entities = [{"type": t.strip(), "span": s.strip()} for t, s in found]
    else:
        value = _list_cell(row, raw, "entities must be", '{"type", "span"} objects', "reference")
        entities = []
        for item in value:
            if not (isinstance(item, dict) and isinstance(item.get("type"), str) and isinstance(item.get("span"), str) and item["type"].strip() and item["span"].strip()):
                raise row.error(f"entity {item!r} is not an object with non-empty string 'type' and 'span'", "reference")
            entities.append({"type": item["type"].strip(), "span": item["span"].strip()})
    for entity in entities:  # scored on label_key(type) and normalize_persian(span): both must keep something
        if not label_key(entity["type"]) or not normalize_persian(entity["span"]):
            raise row.error(f"entity {entity} has a type or span that is empty after normalisation (punctuation only): it can never be matched", "reference")
    return json.dumps(entities, ensure_ascii=False)


def _check_text_reference(row: _Row, spec, reference: str) -> None:
    """ASR and translation gold: WER/CER (``parsa.metrics``) and the Persian-target chrF++/BLEU compare
    :func:`parsa.normalize.normalize_persian` texts, so the reference must keep a word after normalisation; a
    Persian reference (ASR, En->Fa) written in letters must hold Persian script (else the column map points at the
    wrong column); a digits-only reference (``۱۴۰۲``) is accepted."""
    from parsa.normalize import normalize_persian
    from parsa.parsing import has_persian_script

    what = "transcript" if spec.kind == "asr" else "reference translation"
    if not normalize_persian(reference):
        raise row.error(f"the {what} {reference!r} is empty after Persian normalisation (punctuation or symbols only): {'WER/CER are' if spec.kind == 'asr' else 'chrF++/BLEU are'} undefined", "reference")
    if spec.target_language == "fa" and not has_persian_script(reference) and any(ch.isalpha() for ch in reference):
        raise row.error(f"the {what} {reference[:60]!r} holds no Persian script (is the column map pointing at the right column?)", "reference")


def _document(row: _Row, spec, mapping: dict, root: Path, base: Path, setting: str, number: int) -> dict:
    kind, form = spec.kind, mapping.get("reference_format")
    if form not in REFERENCE_FORMATS[kind]:
        raise PARSADataError(f"column map key {spec.name}.reference_format is {form!r}; for a {kind} task use one of {list(REFERENCE_FORMATS[kind])}")
    row.check_cells()
    row_id = _text(row.value("id", required=True)) if row.columns.get("id") else str(number)
    needs_transcript = kind == "asr" or kind == "translation" or setting in ("text", "audio_ref")
    transcript_column = row.column("transcript", required=needs_transcript)
    transcript = _text(row.row[transcript_column]) if transcript_column else ""
    if needs_transcript and not transcript:
        raise row.error(f"the transcript is required (task kind {kind}, setting {setting}) but is empty", "transcript")
    question = _text(row.value("question", required=False))
    options = _options(row) if kind == "multiple_choice" else []
    if options and spec.n_options and len(options) != spec.n_options:
        raise row.error(f"has {len(options)} options; the task has {spec.n_options} (parsa.tasks.TASKS[{spec.name!r}].n_options)", "options")
    raw = row.value("reference", required=True)
    if kind == "multiple_choice":
        reference = _mc_reference(row, _text(raw), options, form)
    elif kind == "classification":
        reference = _canonical_label(row, _text(raw), tuple(spec.labels), mapping.get("label_map") or {})
    elif kind == "ner":
        reference = _ner_reference(row, raw, form)
        from parsa.normalize import label_key

        known = {label_key(t) for t in spec.entity_types}
        unknown = sorted({e["type"] for e in json.loads(reference) if label_key(e["type"]) not in known}) if spec.entity_types else []
        if unknown:
            raise row.error(f"entity type(s) {unknown} are not among the task's entity types (parsa/labels.json ner.entity_types)", "reference")
    else:
        reference = _text(raw)
        _check_text_reference(row, spec, reference)
    audio_path = _audio_path(row, root, base, mapping.get("audio_dir"))
    return {"id": row_id, "task": spec.name, "audio_path": str(audio_path), "transcript": transcript,
            "reference": reference, "question": question, "options": options}  # fmt: skip


def load_task_docs(
    task: str, data_dir: str | Path | None = None, setting: str = "audio", columns: str | Path | dict | None = None, warnings: list[tuple[str, str]] | None = None
) -> list[dict]:
    """:func:`read_task_docs` of the folder :func:`data_root` resolves: ``data_dir``, else ``$PARSA_DATA_DIR``, else the
    sample shipped in ``parsa/sample_data`` (CSV layout, see its README). ``PARSA_DATA_DIR=hub`` downloads (once, into
    the Hugging Face cache) the gated dataset ``MohammadJRanjbar/PARSA-Bench`` at revision ``$PARSA_HUB_REVISION``
    (default :data:`PARSA_HUB_REVISION`); set it to a commit hash for a reproducible run. The resolved commit is part of
    :func:`data_source`, which the plugin's tasks report as the metric ``data_source``.

    Raises:
        PARSADataError: as :func:`read_task_docs`, or no such folder; PARSAHubAccessError for the hub route.
    """
    return read_task_docs(task, data_root(data_dir), setting, columns, warnings)


def read_task_docs(task: str, root: Path, setting: str = "audio", columns: str | Path | dict | None = None, warnings: list[tuple[str, str]] | None = None) -> list[dict]:
    """Load and check every row of one task of the release folder ``root``; return canonical documents in file order.

    Args:
        task: short name, a key of ``parsa.tasks.TASKS`` (``asr``, ``vazn``, ...).
        root: the folder holding the task folders (``ASR/ASR.csv``, ...) or parquet files.
        setting: ``audio``, ``text``, ``audio_ref``, ``fewshot`` or ``cot``; ``text``/``audio_ref`` require a
            non-empty transcript in every row.
        columns: column-map overrides (dict or JSON path); default ``$PARSA_COLUMN_MAP``.
        warnings: where to add ``(row, warning)`` for each all-silent or clipped clip (scored as it is); ``None``: they
            are logged in one line (:func:`audio_bench_core.audio.audio_warnings_line`).

    Returns:
        ``[{"id", "task", "audio_path", "transcript", "reference", "question", "options"}, ...]``.

    Raises:
        PARSADataError: unknown task, no data, or a bad row (see the module docstring).
    """
    from parsa.tasks import TASKS

    if task not in TASKS:
        raise PARSADataError(f"unknown PARSA task {task!r}; known: {sorted(TASKS)}")
    mapping = column_map(columns)[task]
    kind, files = task_files(root, task, mapping)
    rows = [(where, Path(where.rsplit(" row ", 1)[0]).parent, row) for where, row in _read_rows(kind, files, mapping["columns"])]
    return _checked_documents(task, mapping, rows, root, setting, warnings, ", ".join(map(str, files)))


def _checked_documents(task: str, mapping: dict, rows: list[tuple[str, Path, dict]], root: Path, setting: str, warnings: list[tuple[str, str]] | None, what: str) -> list[dict]:
    """The canonical documents of ``rows`` (``(where, folder its audio paths are relative to, raw row)``), each checked
    (:func:`_document`), ids unique; the audio warnings added to ``warnings`` or logged in one line.

    Raises:
        PARSADataError: a bad row, a duplicate id, or no rows (``what`` names the files read).
    """
    from parsa.tasks import TASKS

    docs, seen, found = [], {}, []
    for number, (where, base, raw_row) in enumerate(rows, start=1):
        row = _Row(task, where, raw_row, mapping["columns"])
        doc = _document(row, TASKS[task], mapping, root, base, setting, number)
        if doc["id"] in seen:
            raise row.error(f"duplicate id {doc['id']!r}, first seen at {seen[doc['id']]}", "id")
        seen[doc["id"]] = where
        docs.append(doc)
        if row.audio_warning:
            found.append((row.label, row.audio_warning))
    if not docs:
        raise PARSADataError(f"{what}: no rows for task {task}")
    if warnings is not None:
        warnings.extend(found)
    elif found:
        from audio_bench_core.audio import audio_warnings_line

        logger.warning(audio_warnings_line(found, f"PARSA {task}"))
    return docs


#: ``data_source`` of documents read from the hub layout (:func:`rows_from_hub`).
HUB_LAYOUT_SOURCE = f"hub:{HUB_REPO_ID} (hub layout, as lmms-eval loaded it)"


def rows_from_hub(dataset, task: str, setting: str = "audio", columns: str | Path | dict | None = None, warnings: list[tuple[str, str]] | None = None) -> list[dict]:
    """The canonical documents of one task from what lmms-eval loaded in the hub layout (config ``task``, split ``test``,
    written by :mod:`parsa.hub_dataset`): the release's rows and columns, read through the same column map, with the
    audio column an ``Audio`` feature holding the clip's bytes.

    Every check of :func:`read_task_docs` runs on each row; the clip bytes are the parquet route's embedded bytes
    (written once to :func:`audio_cache_dir`, named by SHA-1, and checked there: that file is the ``audio_path``).

    Args:
        dataset: a ``datasets.Dataset`` whose audio column (column map ``<task>.columns.audio``) is an ``Audio`` feature.
        setting, columns, warnings: as for :func:`read_task_docs`.

    Raises:
        PARSADataError: naming the config, the row (1-based), its id, the column and the mapping key.
    """
    from audio_bench_core.hub_layout import has_audio_feature, undecoded_rows
    from parsa.tasks import TASKS

    if task not in TASKS:
        raise PARSADataError(f"unknown PARSA task {task!r}; known: {sorted(TASKS)}")
    mapping = column_map(columns)[task]
    audio, what = mapping["columns"]["audio"], f"hub dataset {HUB_REPO_ID} config {task!r}"
    if not has_audio_feature(dataset, audio):
        raise PARSADataError(f"{what}: no Audio column {audio!r} (columns: {list(getattr(dataset, 'column_names', []))}); not the hub layout of parsa.hub_dataset")
    rows = []
    for number, row in enumerate(undecoded_rows(dataset, audio), start=1):
        if not (row.get(audio) or {}).get("bytes"):
            raise _Row(task, f"{what} row {number}", row, mapping["columns"]).error(f"column {audio!r} holds no audio bytes", "audio")
        rows.append((f"{what} row {number}", Path("."), row))
    return _checked_documents(task, mapping, rows, Path("."), setting, warnings, what)


# ---------------------------------------------------------------------------------------- few-shot
def fewshot_demos(docs: list[dict], k: int = FEWSHOT_K) -> dict[str, list[dict]]:
    """``{query id: [k demonstration documents]}``, a deterministic leave-one-out choice from the same task.

    The paper prepends k = 2 demonstrations (appendix, "Few-shot and CoT variants") but does not say where
    they come from. Here they are drawn from the task's own documents, never the query itself: the other
    documents ordered by SHA-1 of ``"<query id>\\x00<other id>"``, first ``k`` taken. The choice depends only
    on the ids, not on row order or process count, and differs from query to query.

    Raises:
        PARSADataError: fewer than ``k + 1`` documents.
    """
    if len(docs) < k + 1:
        raise PARSADataError(f"few-shot needs at least {k + 1} documents per task (k={k} demonstrations + the query), got {len(docs)}")

    def order(query_id: str, other: dict) -> str:
        return hashlib.sha1(f"{query_id}\x00{other['id']}".encode()).hexdigest()

    return {doc["id"]: [copy.deepcopy(o) for o in sorted((o for o in docs if o["id"] != doc["id"]), key=lambda o: order(doc["id"], o))[:k]] for doc in docs}


# --------------------------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    """The ``parsa-data`` command (:func:`_main`); Ctrl-C ends it with one line, exit status 130."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("\nparsa-data interrupted (Ctrl-C): a check writes nothing; a download keeps what the Hugging Face cache holds and resumes from it when run again.", file=sys.stderr)
        return 130


def _main(argv: list[str] | None = None) -> int:
    """``parsa-data`` (or ``python -m parsa.data``): ``download DEST [--revision R]`` fetches the gated dataset; ``check [DIR]`` checks every task."""
    parser = argparse.ArgumentParser(prog="parsa-data", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    down = sub.add_parser("download", help=f"download {HUB_REPO_ID} (gated: accept its terms, set HF_TOKEN)")
    down.add_argument("destination")
    down.add_argument("--revision", default=None, help=f"commit hash to pin (default ${HUB_REVISION_ENV} or {PARSA_HUB_REVISION!r})")
    check = sub.add_parser("check", help="load and check every task found in a data folder")
    check.add_argument("data_dir", nargs="?", default=None)
    args = parser.parse_args(argv)
    if args.command == "download":
        try:
            folder = download_hub_snapshot(args.revision, local_dir=args.destination)
        except PARSAHubAccessError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"downloaded to {folder}\nexport {DATA_DIR_ENV}={Path(folder).resolve()}")
        return 0
    return check_command(args.data_dir)


def check_command(data_dir: str | Path | None = None) -> int:
    """``parsa-data check``: load every task of ``data_dir`` in every setting it runs in; return the exit status.

    A missing, empty or mis-shaped folder (no task files: e.g. the parent of the data folder) is one error line
    naming the likely right path, exit 1. Otherwise one line per task (``<task>: N rows OK`` or ``<task>: ERROR
    <file, row, id, column and what is wrong>``), then, if any task failed, a last line counting them, exit 1.
    Every check of :func:`load_task_docs` runs (audio decoded, gold validated as scoring will read it), plus the
    setting-specific ones: a transcript in every row for ``_text``/``_audio_ref``, three or more rows for ``_fewshot``.
    """
    from parsa.tasks import TASKS

    try:
        root = data_root(data_dir)
        check_data_folder(root)
    except PARSADataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    failed = []
    for task, spec in TASKS.items():
        warnings: list[tuple[str, str]] = []
        try:
            docs = load_task_docs(task, root, warnings=warnings)
            for setting in spec.settings:
                if setting in ("text", "audio_ref"):
                    try:
                        load_task_docs(task, root, setting=setting, warnings=[])  # audio decoding is remembered: cheap; warnings listed once
                    except PARSADataError as error:
                        raise PARSADataError(f"setting {setting} (task parsa_{task}_{setting}): {error}") from None
                elif setting == "fewshot":
                    try:
                        fewshot_demos(docs)
                    except PARSADataError as error:
                        raise PARSADataError(f"setting fewshot (task parsa_{task}_fewshot): {error}") from None
            flagged = f"; {len(warnings)} with audio warnings, listed below" if warnings else ""
            print(f"{task}: {len(docs)} rows OK{flagged}")
            for where, warning in warnings:
                print(f"{task}: WARNING {where}: audio {warning}")
        except PARSADataError as error:
            print(f"{task}: ERROR {error}", file=sys.stderr)
            failed.append(task)
    if failed:
        print(f"error: {len(failed)} of {len(TASKS)} PARSA tasks failed the check under {root}: {', '.join(failed)} (details above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
