"""A benchmark in the Hugging Face hub's audio layout (as ``lmms-lab-audio/*``): written for upload, recognised when loaded.

Layout (what ``datasets.load_dataset(<repo or a folder named like it>, <config>, split="test")`` reads)::

    README.md                                  dataset card; its YAML header's ``configs`` names each config's files
    <config>/test-00000-of-00001.parquet       one row per document

A row holds the release row's fields as the benchmark's loader checked them; the column :data:`AUDIO_COLUMN` is stored
as the hub stores an ``Audio`` feature, ``struct<bytes: binary, path: string>``: the clip's file bytes unchanged and
its path in the release. The schema's ``huggingface`` metadata names the features; the ``Audio`` feature has no
sampling rate, so ``datasets`` decodes a clip at the file's own rate and nothing is resampled before the task does.

Written with pyarrow only (no ``datasets``, no lmms-eval), so the reader the tests use is not also the writer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

AUDIO_COLUMN = "audio"
SPLIT = "test"


class HubLayoutError(ValueError):
    """Rows that cannot be written in the hub layout; the message names the config and the column."""


def _feature(arrow_type, where: str) -> dict:
    """The ``datasets`` feature (as JSON) of a pyarrow type: text, integer, float, bool, null, or a list of those."""
    import pyarrow as pa

    if pa.types.is_list(arrow_type):
        return {"feature": _feature(arrow_type.value_type, where), "_type": "Sequence"}
    for test, dtype in ((pa.types.is_string, "string"), (pa.types.is_int64, "int64"), (pa.types.is_float64, "float64"), (pa.types.is_boolean, "bool"), (pa.types.is_null, "null")):
        if test(arrow_type):
            return {"dtype": dtype, "_type": "Value"}
    raise HubLayoutError(f"{where}: values of type {arrow_type} have no hub feature here (text, integer, float, bool or a list of those)")


def write_config(out_dir: str | Path, config: str, rows: list[dict], split: str = SPLIT) -> Path:
    """Write one config's parquet file, ``out_dir/<config>/<split>-00000-of-00001.parquet``; returns its path.

    Args:
        rows: the documents in order; each holds :data:`AUDIO_COLUMN` = ``{"bytes": file bytes, "path": str}``. Columns
            are the union of the rows' keys in first-seen order (a key a row lacks is null there).

    Raises:
        HubLayoutError: no rows, a row without audio bytes, or a column whose values have mixed or unsupported types
            (names the config and the column).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        raise HubLayoutError(f"config {config!r}: no rows")
    columns = list(dict.fromkeys(key for row in rows for key in row))
    arrays, features = [], {}
    for column in columns:
        values = [row.get(column) for row in rows]
        where = f"config {config!r}, column {column!r}"
        if column == AUDIO_COLUMN:
            bad = next((n for n, v in enumerate(values, 1) if not (isinstance(v, dict) and isinstance(v.get("bytes"), bytes) and v["bytes"])), None)
            if bad is not None:
                raise HubLayoutError(f"{where}, row {bad}: expected {{'bytes': the audio file's bytes, 'path': str}}")
            arrays.append(pa.array([{"bytes": v["bytes"], "path": v.get("path")} for v in values], pa.struct([("bytes", pa.binary()), ("path", pa.string())])))
            features[column] = {"_type": "Audio"}
            continue
        try:
            array = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise HubLayoutError(f"{where}: values of mixed types across rows ({error})") from None
        features[column] = _feature(array.type, where)
        arrays.append(array)
    schema = pa.schema([pa.field(c, a.type) for c, a in zip(columns, arrays)], metadata={"huggingface": json.dumps({"info": {"features": features}})})
    target = Path(out_dir) / config / f"{split}-00000-of-00001.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), target)
    return target


def write_card(out_dir: str | Path, configs: list[str], text: str, split: str = SPLIT) -> Path:
    """``out_dir/README.md``: a YAML header whose ``configs`` list names each config's files (``<config>/<split>-*``),
    then ``text`` (what the dataset is, its source and licence). Returns its path."""
    header = "".join(f"- config_name: {c}\n  data_files:\n  - split: {split}\n    path: {c}/{split}-*\n" for c in configs)
    target = Path(out_dir) / "README.md"
    target.write_text(f"---\nconfigs:\n{header}---\n\n{text.strip()}\n", encoding="utf-8")
    return target


def write_layout(out_dir: str | Path, configs: list[str], rows_of, card: str, warnings: list[tuple[str, str]]) -> dict[str, int]:
    """Write a whole hub layout into ``out_dir``: each config's rows (``rows_of(config)``, checked before by the
    caller) with :func:`write_config`, then the card (:func:`write_card`); ``warnings`` (``(where, what)`` of audio
    that is kept) are printed to stderr first. Returns ``{config: rows written}``.

    Raises:
        HubLayoutError: as :func:`write_config`.
    """
    for where, warning in warnings:
        print(f"warning: {where}: audio {warning} (kept: the tasks score it)", file=sys.stderr)
    counts = {}
    for config in configs:
        rows = rows_of(config)
        write_config(out_dir, config, rows)
        counts[config] = len(rows)
    write_card(out_dir, list(configs), card)
    return counts


def command(argv: list[str] | None, prog: str, description: str, release_help: str, write, errors: tuple[type[Exception], ...]) -> int:
    """``prog RELEASE_DIR OUT_DIR``: ``write(release_dir, out_dir)`` (returning ``{config: rows}``); exit status 0 when
    written, 1 with one error line when ``write`` raised one of ``errors`` (or :class:`HubLayoutError`)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("release_dir", help=release_help)
    parser.add_argument("out_dir", help="new or empty folder to write the hub layout into")
    args = parser.parse_args(argv)
    try:
        counts = write(args.release_dir, args.out_dir)
    except (*errors, HubLayoutError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out_dir}: " + ", ".join(f"{c} {n} rows" for c, n in counts.items()))
    return 0


def has_audio_feature(dataset, column: str = AUDIO_COLUMN) -> bool:
    """True when ``dataset`` (what lmms-eval loaded) has ``column`` as an HF ``Audio`` feature: the hub layout; a release
    read by a local builder (json, csv) has a path string there."""
    from datasets import Audio

    features = getattr(dataset, "features", None)
    return isinstance(features, dict) and isinstance(features.get(column), Audio)


def undecoded_rows(dataset, column: str = AUDIO_COLUMN):
    """The rows of ``dataset`` with ``column`` as stored, ``{"bytes", "path"}`` (not decoded: the loaders check and
    decode the file bytes themselves, the way they read a release's files)."""
    from datasets import Audio

    return dataset.cast_column(column, Audio(decode=False))
