"""Reading MMAC data: the canonical schema, a column/label mapping for other layouts, and ``mmac-data check``.

The MMAC release (data, judge prompt, code) is not public yet; this module defines the schema in the paper's
terms (arXiv 2607.27109, Sec. 2) and reads any layout that a mapping file (``column_map.json``) can describe,
so the official release is read by configuration, not by rewrite.

**Canonical sample** (one clip; one JSON object per line of ``<data folder>/mmac.jsonl``)::

    {"id": "pitch_high_01",                          # unique string
     "audio": "audio/pitch_high_01.wav",             # relative to the data folder, inside it
     "category": "paralinguistic",                   # one of the 6 categories (mmac.schema.CATEGORIES)
     "targets": [{"dimension": "pitch",              # one or more of the category's dimensions
                  "label": "high (median F0 236 Hz)",  # the reference label the judge compares with
                  "label_type": "graded", "scale": 2}],  # optional; must equal the rubric's for the dimension
     "language": "en", "source": "espeak-ng en-us"}  # optional

Which folder is read: the ``data_dir`` argument, else ``$MMAC_DATA_DIR``, else the shipped sample
(``mmac/sample_data``). Which columns: ``mmac/column_map.json`` merged with the JSON file named by
``$MMAC_COLUMN_MAP`` (see its ``_about``). Label types and scales belong to the dimension (paper Sec. 3.2:
"depending on the label type of each dimension"): the rubric (:mod:`mmac.judging`) fixes them, and a row that
states another is an error, so the judge's scale and the data always agree.

Every sample is checked before any inference: required fields present, ids unique, categories and
dimensions known and consistent, labels non-empty, audio relative, inside the folder and decodable
(:func:`audio_bench_core.audio.audio_file_problem`). Errors name the file, the line/row, the id and the field.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import logging
import math
import os
import sys
from collections import Counter
from pathlib import Path

from mmac.judging import RubricError, load_rubric, rubric_path
from mmac.schema import CATEGORIES, DIMENSION_CATEGORY, LABEL_TYPES, canonical_name

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "MMAC_DATA_DIR"
COLUMN_MAP_ENV = "MMAC_COLUMN_MAP"
SAMPLE_DATA_DIR = Path(__file__).with_name("sample_data")
COLUMN_MAP_FILE = Path(__file__).with_name("column_map.json")
FIELDS = ("id", "audio", "category", "targets", "dimension", "label", "label_type", "scale", "language", "source")


class MMACDataError(ValueError):
    """A data file, row or mapping of MMAC is malformed; the message names the file, row, id and field."""


def _merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else copy.deepcopy(value)
    return merged


def column_map(overrides: str | Path | dict | None = None) -> dict:
    """The shipped ``column_map.json`` merged with ``overrides`` (a dict or JSON file; default ``$MMAC_COLUMN_MAP``).

    Raises:
        MMACDataError: the override file is missing or not a JSON object, or names an unknown field.
    """
    mapping = json.loads(COLUMN_MAP_FILE.read_text(encoding="utf-8"))
    if overrides is None and os.environ.get(COLUMN_MAP_ENV, "").strip():
        overrides = os.environ[COLUMN_MAP_ENV].strip()
    if isinstance(overrides, (str, Path)):
        try:
            overrides = json.loads(Path(overrides).expanduser().read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise MMACDataError(f"column map {overrides}: cannot read it ({error})") from None
        except RecursionError:
            raise MMACDataError(f"column map {overrides}: cannot read it (JSON nested deeper than Python's JSON reader allows)") from None
    if overrides is not None:
        if not isinstance(overrides, dict):
            raise MMACDataError(f"column map override must be a JSON object, got {type(overrides).__name__}")
        mapping = _merge(mapping, overrides)
    unknown = sorted(set(mapping["columns"]) - set(FIELDS))
    if unknown:
        raise MMACDataError(f"column map: unknown field(s) {unknown}; known: {list(FIELDS)}")
    if not mapping["columns"].get("audio"):
        raise MMACDataError("column map: columns.audio must name a column")
    if not mapping["columns"].get("targets") and not (mapping["columns"].get("dimension") and mapping["columns"].get("label")):
        raise MMACDataError("column map: give columns.targets, or columns.dimension and columns.label")
    return mapping


#: What an unset ``$MMAC_DATA_DIR`` reads: ``"sample"`` (the shipped sample: this plugin) or ``"required"`` (no default:
#: the task folder ``lmms-eval-audio-export`` writes, which ships no sample while MMAC's data is not released).
UNSET_DATA_DIR = "sample"


def data_dir_from_env() -> Path:
    """The data folder in use: ``$MMAC_DATA_DIR`` if set, else the shipped sample (:data:`UNSET_DATA_DIR`).

    Raises:
        MMACDataError: the variable is not set and there is no default (``UNSET_DATA_DIR = "required"``).
    """
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    if UNSET_DATA_DIR == "sample":
        return SAMPLE_DATA_DIR
    raise MMACDataError(f"{DATA_DIR_ENV} is not set: MMAC's data is not released, so there is no default; set it to a folder in the schema of the task README (mmac.jsonl and the audio)")


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _plain(value):
    """numpy scalars and arrays (from parquet) -> Python values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


_TOO_DEEP = "nested deeper than Python's JSON reader allows"


def read_rows(path: Path) -> list[tuple[str, dict]]:
    """``[(where, row), ...]`` of one .jsonl / .json / .csv / .parquet file; ``where`` is ``file:line`` or ``file:row N``.

    Text files are read as UTF-8 (a byte-order mark at the start is dropped, so it cannot rename the first CSV
    column); bytes that are not UTF-8 are kept as U+DC80-U+DCFF, so that the row check names the row and field
    holding them (:func:`_check_cells`).

    Raises:
        MMACDataError: unreadable file, bad JSON line (or one nested too deeply to read), a CSV line that cannot be
            parsed, a row that is not an object, unknown extension.
    """
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            rows = []
            with path.open(encoding="utf-8-sig", errors="surrogateescape") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        rows.append((f"{path}:{number}", json.loads(line)))
                    except json.JSONDecodeError as error:
                        raise MMACDataError(f"{path}:{number}: not valid JSON ({error.msg} at column {error.colno})") from None
                    except RecursionError:
                        raise MMACDataError(f"{path}:{number}: not a usable JSON row: {_TOO_DEEP} ({len(line)} characters)") from None
        elif suffix == ".json":
            try:
                value = json.loads(path.read_text(encoding="utf-8-sig", errors="surrogateescape"))
            except json.JSONDecodeError as error:
                raise MMACDataError(f"{path}:{error.lineno}: not valid JSON ({error.msg} at column {error.colno})") from None
            except RecursionError:
                raise MMACDataError(f"{path}: not usable JSON: {_TOO_DEEP}") from None
            if not isinstance(value, list):
                raise MMACDataError(f"{path}: expected a JSON list of objects")
            rows = [(f"{path}:row {number}", row) for number, row in enumerate(value, start=1)]
        elif suffix == ".csv":
            with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
                reader = csv.DictReader(handle)
                rows = []
                try:
                    for row in reader:
                        rows.append((f"{path}:{reader.line_num}", row))  # the row's last physical line (line 1 = header)
                except csv.Error as error:
                    raise MMACDataError(f"{path}:{reader.line_num}: not a readable CSV line ({error})") from None
        elif suffix == ".parquet":
            import pandas

            frame = pandas.read_parquet(path)
            rows = [(f"{path}:row {number}", {k: _plain(v) for k, v in row.items()}) for number, row in enumerate(frame.to_dict("records"), start=1)]
        else:
            raise MMACDataError(f"{path}: unsupported file type {suffix!r} (use .jsonl, .json, .csv or .parquet)")
    except (OSError, UnicodeDecodeError) as error:
        raise MMACDataError(f"{path}: cannot read ({error})") from None
    for where, row in rows:
        if not isinstance(row, dict):
            raise MMACDataError(f"{where}: expected an object, got {type(row).__name__}")
    return rows


#: Per field, the value types a cell may hold (``targets`` is checked entry by entry in :func:`_targets`).
_CELL_TYPES = {"id": (str, int), "scale": (int, float, str), "label": (str, int, float), "targets": (str, list, dict)}


def _check_cells(where: str, row: dict, columns: dict) -> None:
    """Refuse a mapped cell of the wrong type (``true`` read as the label "True", an object as a path ...) or holding
    bytes that were not UTF-8 in the file, naming the row and field. Text fields must be strings; ``id`` a string or
    an integer; ``label`` text or a number; ``scale`` a number; never ``true``/``false``, ±inf or NaN where a value is
    given (a missing value is reported by the field's own check)."""
    for field, column in columns.items():
        if not column or column not in row or _missing(row[column]):
            continue
        _check_value(where, field, _plain(row[column]), _CELL_TYPES.get(field, (str,)))


def _check_value(where: str, field: str, value, types: tuple) -> None:
    if isinstance(value, bool) or not isinstance(value, types) or (isinstance(value, float) and not math.isfinite(value)):
        shown = ("true" if value else "false") if isinstance(value, bool) else {dict: "an object", list: "a list"}.get(type(value), repr(value)[:40])
        raise MMACDataError(f"{where} field {field}: holds {shown}, expected {' or '.join(_TYPE_WORDS[t] for t in types)}")
    from audio_bench_core.audio import first_not_utf8  # the loaders' shared cell checks; importing it does not import lmms-eval

    bad = first_not_utf8(value)
    if bad is not None:
        raise MMACDataError(f"{where} field {field}: holds a byte that is not UTF-8 (0x{ord(bad.group()) - 0xDC00:02x}): the file is not UTF-8 (Latin-1 or another legacy encoding?); re-save it as UTF-8")


_TYPE_WORDS = {str: "text", int: "an integer", float: "a number", list: "a list", dict: "an object"}


def _audio(where: str, root: Path, relative, warnings: list[tuple[str, str]]) -> Path:
    from audio_bench_core.audio import audio_file_check_once, path_text_problem  # once per clip per run; importing it does not import lmms-eval

    problem = path_text_problem(relative)
    if problem:
        raise MMACDataError(f"{where} field audio: the path {problem}")
    if os.path.isabs(relative) or relative.startswith(("/", "\\")) or (len(relative) > 1 and relative[1] == ":"):
        raise MMACDataError(f"{where} field audio: path {relative!r} is absolute; it must be relative to {root}")
    base = root.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise MMACDataError(f"{where} field audio: path {relative!r} escapes the data folder {base}")
    if not path.is_file():
        raise MMACDataError(f"{where} field audio: file {path} does not exist")
    check = audio_file_check_once(path)
    if check.problem:
        raise MMACDataError(f"{where} field audio: {path} is {check.problem}")
    if check.warning:
        warnings.append((where, check.warning))
    return path


def _mapped(raw, table: dict) -> str:
    name = canonical_name(raw)
    return canonical_name(table.get(name, table.get(str(raw), name)))


def _targets(where: str, row: dict, columns: dict, mapping: dict, rubric: dict) -> list[dict]:
    if columns.get("targets"):
        raw = row.get(columns["targets"])
        if _missing(raw):
            raise MMACDataError(f"{where} field targets (column {columns['targets']!r}): missing or empty")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as error:
                raise MMACDataError(f"{where} field targets: not valid JSON ({error.msg})") from None
            except RecursionError:
                raise MMACDataError(f"{where} field targets: not usable JSON: {_TOO_DEEP}") from None
        if isinstance(raw, dict):
            raw = [raw]
        if not isinstance(raw, list) or not raw or not all(isinstance(t, dict) for t in raw):
            raise MMACDataError(f"{where} field targets: expected a non-empty list of objects with dimension and label")
        specs = [(f"targets[{i}].", t.get("dimension"), t.get("label"), t.get("label_type"), t.get("scale")) for i, t in enumerate(raw)]
    else:
        specs = [("", *(row.get(columns[f]) if columns.get(f) else None for f in ("dimension", "label", "label_type", "scale")))]
    targets = []
    for prefix, dimension, label, label_type, scale in specs:
        for name, value, types in (("dimension", dimension, (str,)), ("label", label, _CELL_TYPES["label"]), ("label_type", label_type, (str,)), ("scale", scale, _CELL_TYPES["scale"])):
            if not _missing(value):
                _check_value(where, f"{prefix}{name}", _plain(value), types)
        if _missing(dimension):
            raise MMACDataError(f"{where} field {prefix}dimension: missing or empty")
        name = _mapped(dimension, mapping.get("dimension_map", {}))
        if name not in DIMENSION_CATEGORY:
            raise MMACDataError(f"{where} field {prefix}dimension: {dimension!r} is not an MMAC dimension ({', '.join(DIMENSION_CATEGORY)}); map it in dimension_map")
        if _missing(label) or isinstance(label, (dict, list)):
            raise MMACDataError(f"{where} field {prefix}label: missing, empty or not a single value (dimension {name})")
        expected_type, expected_scale = rubric["dimensions"][name]["label_type"], rubric["dimensions"][name]["scale"]
        if not _missing(label_type):
            kind = _mapped(label_type, mapping.get("label_type_map", {}))
            if kind not in LABEL_TYPES:
                raise MMACDataError(f"{where} field {prefix}label_type: {label_type!r} is not one of {LABEL_TYPES}; map it in label_type_map")
            if kind != expected_type:
                raise MMACDataError(f"{where} field {prefix}label_type: {kind} for {name}, but the rubric ({rubric_path()}) judges {name} as {expected_type}")
        if not _missing(scale):
            try:
                value = float(scale)
            except (TypeError, ValueError):
                raise MMACDataError(f"{where} field {prefix}scale: {scale!r} is not a number") from None
            if value != expected_scale:
                raise MMACDataError(f"{where} field {prefix}scale: {scale!r} for {name}, but the rubric ({rubric_path()}) uses 0..{expected_scale}")
        targets.append({"dimension": name, "label": str(label).strip(), "label_type": expected_type, "scale": expected_scale})
    return targets


def data_files(root: Path, mapping: dict) -> list[Path]:
    """The files under ``root`` that the column map's ``files`` patterns match (``[]`` when ``root`` is no folder)."""
    return sorted({p for pattern in mapping["files"] for p in root.glob(pattern) if p.is_file()}) if root.is_dir() else []


def _suggestion(root: Path, mapping: dict) -> str:
    """" Did you mean <folder>? ..." for the folder near ``root`` holding the most data files
    (:func:`audio_bench_core.data_folders.nearest_data_folder`, the search the three benchmarks share), else what to give."""
    from audio_bench_core.data_folders import nearest_data_folder

    found = nearest_data_folder(root, lambda folder: len(data_files(folder, mapping)))
    if found is None:
        return f" Give the folder holding {' or '.join(mapping['files'])} and the audio it names (or set {DATA_DIR_ENV}; other layouts: {COLUMN_MAP_ENV})."
    count = len(data_files(found, mapping))
    return f" Did you mean {found}? (it holds {count} MMAC data file{'s' if count != 1 else ''}: {', '.join(p.name for p in data_files(found, mapping)[:3])})"


def load_samples(
    data_dir: str | Path | None = None, columns: str | Path | dict | None = None, rubric: str | Path | None = None, warnings: list[tuple[str, str]] | None = None
) -> list[dict]:
    """Read and check every MMAC sample of a data folder.

    Args:
        data_dir: the data folder; default :func:`data_dir_from_env`.
        columns: mapping override (dict or JSON file); default ``$MMAC_COLUMN_MAP``.
        rubric: rubric file; default :func:`mmac.judging.rubric_path`.
        warnings: where to add ``(row, warning)`` for each all-silent or clipped clip (scored as it is); ``None``: they
            are logged in one line (:func:`audio_bench_core.audio.audio_warnings_line`).
    Returns:
        Samples in file order: ``{"id", "audio", "audio_path" (absolute), "category", "targets": [{"dimension",
        "label", "label_type", "scale"}, ...], "language", "source"}`` (language/source "" when absent).
    Raises:
        MMACDataError: see the module docstring (names file, row, id and field).
    """
    root = Path(data_dir).expanduser() if data_dir is not None else data_dir_from_env()
    mapping = column_map(columns)
    try:
        rubric_spec = load_rubric(rubric)
    except RubricError as error:
        raise MMACDataError(str(error)) from None
    cols = mapping["columns"]
    files = data_files(root, mapping)
    if not files:
        origin = DATA_DIR_ENV if os.environ.get(DATA_DIR_ENV, "").strip() and root == data_dir_from_env() else "data folder"
        problem = ("does not exist" if not root.exists() else "is not a folder" if not root.is_dir()
                   else f"holds no data file matching {mapping['files']} (the column map's files)")  # fmt: skip
        raise MMACDataError(f"{origin} {root} {problem}.{_suggestion(root, mapping)}")
    samples: dict[str, dict] = {}
    origin: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for file in files:
        for where, row in read_rows(file):
            _check_cells(where, row, cols)
            audio = row.get(cols["audio"])
            if _missing(audio):
                raise MMACDataError(f"{where} field audio (column {cols['audio']!r}): missing or empty")
            raw_id = row.get(cols["id"]) if cols.get("id") else audio
            if _missing(raw_id):
                raise MMACDataError(f"{where} field id (column {cols['id']!r}): missing or empty")
            sample_id = str(_plain(raw_id)).strip()
            where = f"{where} (id {sample_id!r})"
            targets = _targets(where, row, cols, mapping, rubric_spec)
            categories = {DIMENSION_CATEGORY[t["dimension"]] for t in targets}
            if len(categories) > 1:
                raise MMACDataError(f"{where} field targets: dimensions of several categories {sorted(categories)}; one sample belongs to one category")
            category = categories.pop()
            raw_category = row.get(cols["category"]) if cols.get("category") else None
            if not _missing(raw_category):
                stated = _mapped(raw_category, mapping.get("category_map", {}))
                if stated not in CATEGORIES:
                    raise MMACDataError(f"{where} field category: {raw_category!r} is not an MMAC category ({', '.join(CATEGORIES)}); map it in category_map")
                if stated != category:
                    raise MMACDataError(f"{where} field category: {stated}, but dimension {targets[0]['dimension']} belongs to {category}")
            extra = {f: ("" if not cols.get(f) or _missing(row.get(cols[f])) else str(_plain(row[cols[f]])).strip()) for f in ("language", "source")}
            if sample_id in samples:
                first = samples[sample_id]
                if cols.get("targets"):
                    raise MMACDataError(f"{where}: duplicate id, first at {origin[sample_id]}")
                if first["audio"] != str(audio):
                    raise MMACDataError(f"{where}: id also used at {origin[sample_id]} with another audio file ({first['audio']!r})")
                if first["category"] != category:
                    raise MMACDataError(f"{where}: id also used at {origin[sample_id]} for category {first['category']}")
                repeated = {t["dimension"] for t in first["targets"]} & {t["dimension"] for t in targets}
                if repeated:
                    raise MMACDataError(f"{where}: dimension {sorted(repeated)} given twice for this id (first at {origin[sample_id]})")
                first["targets"].extend(targets)
                continue
            samples[sample_id] = {"id": sample_id, "audio": str(audio), "audio_path": str(_audio(where, root, audio, found)),
                                  "category": category, "targets": targets, **extra}  # fmt: skip
            origin[sample_id] = where
    order = list(DIMENSION_CATEGORY)
    for sample in samples.values():
        sample["targets"].sort(key=lambda t: order.index(t["dimension"]))
    if warnings is not None:
        warnings.extend(found)
    elif found:
        from audio_bench_core.audio import audio_warnings_line

        logger.warning(audio_warnings_line(found, f"MMAC {root}"))
    return list(samples.values())


_CHECKED: dict[tuple, list[dict]] = {}


def _checked_samples(root: Path) -> list[dict]:
    """:func:`load_samples` once per process for the same folder, mapping, rubric and file versions (the six
    tasks of one run share one check of every clip)."""
    mapping, rubric = column_map(), rubric_path()
    files = data_files(root, mapping)
    key = (str(root.resolve()), json.dumps(mapping, sort_keys=True), str(rubric.resolve()), rubric.stat().st_mtime_ns if rubric.is_file() else None,
           tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))  # fmt: skip
    if key not in _CHECKED:
        _CHECKED[key] = load_samples(root)
    return _CHECKED[key]


def load_category(category: str, data_dir: str | Path | None = None) -> list[dict]:
    """The checked samples of one category (all samples of the folder are checked first).

    Raises:
        MMACDataError: unknown category, bad data, or no sample of this category.
    """
    if category not in CATEGORIES:
        raise MMACDataError(f"unknown MMAC category {category!r}; known: {list(CATEGORIES)}")
    root = Path(data_dir).expanduser() if data_dir is not None else data_dir_from_env()
    chosen = [copy.deepcopy(s) for s in _checked_samples(root) if s["category"] == category]
    if not chosen:
        raise MMACDataError(f"{root}: no sample of category {category!r}")
    return chosen


def summary(samples: list[dict]) -> dict:
    """``{category: {dimension: number of samples targeting it}}`` in the paper's order."""
    counts = Counter((s["category"], t["dimension"]) for s in samples for t in s["targets"])
    return {c: {d: counts[(c, d)] for d in dims if counts[(c, d)]} for c, dims in CATEGORIES.items() if any(counts[(c, d)] for d in dims)}


def main(argv: list[str] | None = None) -> int:
    """The ``mmac-data`` command (:func:`_main`); Ctrl-C ends it with one line, exit status 130."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("\nmmac-data interrupted (Ctrl-C): a check writes nothing; run it again.", file=sys.stderr)
        return 130


def _main(argv: list[str] | None = None) -> int:
    """``mmac-data check [DIR] [--columns MAP.json]``: validate a data folder; prints samples per category and dimension."""
    parser = argparse.ArgumentParser(prog="mmac-data", description="Check an MMAC data folder against the schema (mmac/data.py).")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate every sample of a data folder (default $MMAC_DATA_DIR, else the shipped sample)")
    check.add_argument("data_dir", nargs="?", default=None)
    check.add_argument("--columns", default=None, help="column/label mapping JSON (default $MMAC_COLUMN_MAP)")
    args = parser.parse_args(argv)
    root = Path(args.data_dir) if args.data_dir else data_dir_from_env()
    warnings: list[tuple[str, str]] = []
    try:
        samples = load_samples(args.data_dir or None, args.columns, warnings=warnings)
    except MMACDataError as error:
        print(f"mmac-data check: error: {error}", file=sys.stderr)
        return 1
    flagged = f"; {len(warnings)} with audio warnings, listed below" if warnings else ""
    print(f"{root}: {len(samples)} samples OK (rubric {rubric_path()}{flagged})")
    for where, warning in warnings:
        print(f"WARNING {where}: audio {warning}")
    for category, dims in summary(samples).items():
        missing = [d for d in CATEGORIES[category] if d not in dims]
        print(f"  {category}: " + ", ".join(f"{d} {n}" for d, n in dims.items()) + (f" (no sample for {', '.join(missing)})" if missing else ""))
    absent = [c for c in CATEGORIES if c not in summary(samples)]
    if absent:
        print(f"  no sample for categories: {', '.join(absent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
