"""Reading PARSA-Bench (arXiv 2603.14456) into checked canonical documents, from a local copy or the hub.

Layouts read (per task; the task's folder name and column names come from :func:`column_map`):

- **CSV + audio folder**: ``<root>/<Folder>/<Folder>.csv`` with audio under ``<root>/<Folder>/Audios/``
  (e.g. ``ASR/ASR.csv``, ``Intent-Classification/Intent-Classification.csv``). A row's audio path is relative
  to the task folder, or to its ``Audios/`` folder.
- **parquet**: ``<root>/<Folder>.parquet`` or every ``*.parquet`` below ``<root>/<Folder>/`` (sorted by path,
  concatenated). The audio column is a relative path string (as above, relative to the parquet file's folder)
  or a Hugging Face ``Audio`` struct ``{"bytes": ..., "path": ...}``; embedded bytes are written once to
  ``cache_dir("parsa_audio")`` (``$LMMS_EVAL_AUDIO_PLUGIN_CACHE/parsa_audio``) named by their SHA-1.

Which root is read: the ``data_dir`` argument, else ``$PARSA_DATA_DIR``, else the sample shipped in
``parsa/sample_data`` (CSV layout, see its README). ``PARSA_DATA_DIR=hub`` downloads (once, into the Hugging
Face cache) the gated dataset ``MohammadJRanjbar/PARSA-Bench`` at revision ``$PARSA_HUB_REVISION`` (default
:data:`PARSA_HUB_REVISION`); set it to a commit hash for a reproducible run. The resolved commit is part of
:func:`data_source`, which the lmms-eval tasks report as the metric ``data_source``.

Column names live in one table, ``parsa/column_map.json``; a JSON file named by ``$PARSA_COLUMN_MAP``
overrides any part of it (see :func:`column_map`).

Every row is checked before inference, and the first problem stops the load with the file, the row
number, the row id, the column and the mapping key to override: required column missing or empty, duplicate
id, audio path absolute or escaping the root (``..``, symlinks), audio file missing or unreadable, gold label
not one of the task's labels (``parsa.tasks.TASKS[task].labels``), option number out of range, malformed
option list or entity list.

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
import math
import os
import re
import sys
from pathlib import Path

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


def data_root(data_dir: str | Path | None = None) -> Path:
    """The folder read: ``data_dir``, else ``$PARSA_DATA_DIR`` (``hub``: the downloaded snapshot), else the sample.

    Raises:
        PARSAHubAccessError: see :func:`download_hub_snapshot`.
        PARSADataError: the folder does not exist.
    """
    value = str(data_dir) if data_dir is not None else os.environ.get(DATA_DIR_ENV, "").strip()
    if not value:
        return SAMPLE_DATA_DIR
    if value == HUB_ROOT_VALUE:
        return download_hub_snapshot()
    root = Path(value).expanduser()
    if not root.is_dir():
        raise PARSADataError(f"{DATA_DIR_ENV}={value}: not a folder")
    return root


def data_source(data_dir: str | Path | None = None) -> str:
    """One line naming the data read, e.g. ``sample:parsa/sample_data`` or ``hub:MohammadJRanjbar/PARSA-Bench@<commit>``.

    A local folder written by ``parsa-data download`` adds the hub revision from its ``SOURCE.json``.
    """
    root = data_root(data_dir)
    if root == SAMPLE_DATA_DIR:
        return "sample:parsa/sample_data (synthetic espeak-ng audio; not for measuring models)"
    value = str(data_dir) if data_dir is not None else os.environ.get(DATA_DIR_ENV, "").strip()
    if value == HUB_ROOT_VALUE:
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
    raise PARSADataError(
        f"{task}: no data under {root}: looked for {csv_file}, {single} and {root / folder}/**/*.parquet "
        f"(folder name from the column map key {task}.folder; override it with {COLUMN_MAP_ENV})"
    )


def _read_rows(kind: str, files: list[Path]) -> list[tuple[str, dict]]:
    """``[(where, row), ...]`` with ``where`` = ``"file row N"`` (N 1-based, header not counted)."""
    rows = []
    if kind == "csv":
        import pandas

        [path] = files
        try:
            frame = pandas.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
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


class _Row:
    """One raw row with the context needed for error messages."""

    def __init__(self, task: str, where: str, row: dict, columns: dict):
        self.task, self.where, self.row, self.columns = task, where, row, columns
        id_column = columns.get("id")
        self.label = f"{where} (id {_text(row.get(id_column))!r})" if id_column else where

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


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _audio_path(row: _Row, root: Path, base: Path, audio_dir: str | None) -> Path:
    value = row.value("audio", required=True)
    if isinstance(value, dict):
        if value.get("bytes"):
            return _cached_audio_bytes(value["bytes"], value.get("path") or "")
        value = value.get("path")
        if _is_missing(value):
            raise row.error("audio struct has neither bytes nor a path", "audio")
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
    import soundfile

    try:
        soundfile.info(str(found))
    except Exception as error:  # soundfile raises LibsndfileError/RuntimeError variants
        raise row.error(f"audio file {found} is not readable audio ({error})", "audio") from None
    return found.resolve()


def audio_cache_dir() -> Path:
    """Where embedded parquet audio is written: ``cache_dir("parsa_audio")`` of :mod:`lmms_eval_tasks` (one cache root)."""
    from lmms_eval_tasks import cache_dir  # importing it does not import lmms-eval

    return cache_dir("parsa_audio")


def _cached_audio_bytes(payload: bytes, name: str) -> Path:
    suffix = Path(name).suffix.lower() or ".wav"
    target = audio_cache_dir() / f"{hashlib.sha1(payload).hexdigest()}{suffix}"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        partial.write_bytes(payload)
        os.replace(partial, target)  # atomic: concurrent ranks never see a half-written file
    return target


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
    return values


def _mc_reference(row: _Row, raw: str, options: list[str], form: str) -> str:
    n = len(options)
    if form == "option_text":
        matches = [i for i, option in enumerate(options, start=1) if option == raw]
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
    mapped = label_map.get(raw, raw)
    if mapped in labels:
        return mapped
    from parsa.tasks import label_tables

    aliases = label_tables().get(row.task, {}).get("aliases", {})  # other spellings of a label (parsa/labels.json)
    folded = {" ".join(alias.casefold().split()): label for alias, label in aliases.items()}
    folded.update({" ".join(label.casefold().split()): label for label in labels})
    key = " ".join(str(mapped).casefold().split())
    if key in folded:
        return folded[key]
    raise row.error(
        f"gold label {raw!r} is not one of the task's labels {list(labels)}; map it with {COLUMN_MAP_ENV} "
        f"{{\"{row.task}\": {{\"label_map\": {{\"{raw}\": \"<label>\"}}}}}}",
        "reference",
    )


_MASSIVE_SLOT = re.compile(r"\[\s*([^\[\]:]+?)\s*:\s*([^\[\]]+?)\s*\]")


def _ner_reference(row: _Row, raw, form: str) -> str:
    if form == "massive":  # MASSIVE's annot_utt: "wake me up [time : ساعت هفت] [date : فردا]"
        entities = [{"type": t, "span": s} for t, s in _MASSIVE_SLOT.findall(str(raw))]
        return json.dumps(entities, ensure_ascii=False)
    value = _list_cell(row, raw, "entities must be", '{"type", "span"} objects', "reference")
    entities = []
    for item in value:
        if not (isinstance(item, dict) and isinstance(item.get("type"), str) and isinstance(item.get("span"), str) and item["type"].strip() and item["span"].strip()):
            raise row.error(f"entity {item!r} is not an object with non-empty string 'type' and 'span'", "reference")
        entities.append({"type": item["type"].strip(), "span": item["span"].strip()})
    return json.dumps(entities, ensure_ascii=False)


def _document(row: _Row, spec, mapping: dict, root: Path, base: Path, setting: str, number: int) -> dict:
    kind, form = spec.kind, mapping.get("reference_format")
    if form not in REFERENCE_FORMATS[kind]:
        raise PARSADataError(f"column map key {spec.name}.reference_format is {form!r}; for a {kind} task use one of {list(REFERENCE_FORMATS[kind])}")
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
        unknown = sorted({e["type"] for e in json.loads(reference)} - set(spec.entity_types)) if spec.entity_types else []
        if unknown:
            raise row.error(f"entity type(s) {unknown} are not among the task's entity types (parsa/labels.json ner.entity_types)", "reference")
    else:
        reference = _text(raw)
    audio_path = _audio_path(row, root, base, mapping.get("audio_dir"))
    return {"id": row_id, "task": spec.name, "audio_path": str(audio_path), "transcript": transcript,
            "reference": reference, "question": question, "options": options}  # fmt: skip


def load_task_docs(task: str, data_dir: str | Path | None = None, setting: str = "audio", columns: str | Path | dict | None = None) -> list[dict]:
    """Load and check every row of one task; return canonical documents in file order.

    Args:
        task: short name, a key of ``parsa.tasks.TASKS`` (``asr``, ``vazn``, ...).
        data_dir: root folder, or ``"hub"``; default :func:`data_root` (``$PARSA_DATA_DIR`` or the sample).
        setting: ``audio``, ``text``, ``audio_ref``, ``fewshot`` or ``cot``; ``text``/``audio_ref`` require a
            non-empty transcript in every row.
        columns: column-map overrides (dict or JSON path); default ``$PARSA_COLUMN_MAP``.

    Returns:
        ``[{"id", "task", "audio_path", "transcript", "reference", "question", "options"}, ...]``.

    Raises:
        PARSADataError: unknown task, no data, or a bad row (see the module docstring); PARSAHubAccessError
            for the hub route.
    """
    from parsa.tasks import TASKS

    if task not in TASKS:
        raise PARSADataError(f"unknown PARSA task {task!r}; known: {sorted(TASKS)}")
    spec = TASKS[task]
    mapping = column_map(columns)[task]
    root = data_root(data_dir)
    kind, files = task_files(root, task, mapping)
    docs, seen = [], {}
    for number, (where, raw_row) in enumerate(_read_rows(kind, files), start=1):
        row = _Row(task, where, raw_row, mapping["columns"])
        base = Path(where.rsplit(" row ", 1)[0]).parent
        doc = _document(row, spec, mapping, root, base, setting, number)
        if doc["id"] in seen:
            raise row.error(f"duplicate id {doc['id']!r}, first seen at {seen[doc['id']]}", "id")
        seen[doc["id"]] = where
        docs.append(doc)
    if not docs:
        raise PARSADataError(f"{', '.join(map(str, files))}: no rows for task {task}")
    return docs


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
    status = 0
    from parsa.tasks import TASKS

    for task in TASKS:
        try:
            print(f"{task}: {len(load_task_docs(task, args.data_dir))} rows OK")
        except PARSADataError as error:
            print(f"{task}: ERROR {error}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
