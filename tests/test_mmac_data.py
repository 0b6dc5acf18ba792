"""MMAC data: the shipped sample (all 15 dimensions), schema errors naming file/row/id/field, the column map, and
``mmac-data check``. Bad-data fixtures are written by each test from one shipped clip."""

import json
import shutil
import subprocess
import sys

import pytest

from mmac import data
from mmac.schema import CATEGORIES, DIMENSIONS
from tests.conftest import ROOT

CLIP = data.SAMPLE_DATA_DIR / "audio" / "pitch_low_01.wav"


def test_shipped_sample_covers_all_15_dimensions_of_the_6_categories():
    samples = data.load_samples(data.SAMPLE_DATA_DIR)
    assert len(samples) == 22
    summary = data.summary(samples)
    assert list(summary) == list(CATEGORIES)
    assert sorted(d for dims in summary.values() for d in dims) == sorted(DIMENSIONS)
    persona = next(s for s in samples if s["id"] == "persona_male_adult_01")
    assert persona["targets"] == [{"dimension": "gender", "label": "male", "label_type": "binary", "scale": 1},
                                  {"dimension": "age", "label": "adult", "label_type": "graded", "scale": 2}]  # fmt: skip
    pitch = next(s for s in samples if s["id"] == "pitch_low_01")
    assert pitch["category"] == "paralinguistic" and pitch["audio_path"] == str(CLIP.resolve())
    assert pitch["targets"][0]["label"].startswith("low (median F0 ")
    assert [s["id"] for s in data.load_category("implication", data.SAMPLE_DATA_DIR)] == ["implication_grapes_01", "implication_wilde_01"]


def test_sample_labels_agree_with_their_measurements():
    rows = [json.loads(line) for line in (data.SAMPLE_DATA_DIR / "mmac.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = {row["id"]: row for row in rows}
    assert by_id["pitch_low_01"]["measured"]["median_f0_hz"] < 100 and by_id["pitch_high_01"]["measured"]["median_f0_hz"] > 200  # low / high thresholds
    assert by_id["speed_slow_01"]["measured"]["syllables_per_second"] < 3.5 and by_id["speed_fast_01"]["measured"]["syllables_per_second"] > 5.5
    slow = by_id["speed_slow_01"]["measured"]
    assert slow["syllables_per_second"] == pytest.approx(slow["syllables"] / slow["speech_seconds"], abs=0.01)
    assert by_id["persona_female_01"]["measured"]["median_f0_hz"] > by_id["persona_male_adult_01"]["measured"]["median_f0_hz"]
    assert by_id["timbre_whisper_01"]["measured"]["voiced_frame_share"] < 0.1


def test_mmac_data_check_command_on_the_sample():
    result = subprocess.run([sys.executable, "-m", "mmac.data", "check", str(data.SAMPLE_DATA_DIR)], check=False, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "22 samples OK" in result.stdout
    assert "paralinguistic: emotion 1, accent 2, pitch 2, speed 2, timbre 1, vocal 1" in result.stdout


def _folder(tmp_path, rows, name="mmac.jsonl"):
    (tmp_path / "audio").mkdir(exist_ok=True)
    shutil.copy(CLIP, tmp_path / "audio" / "a.wav")
    (tmp_path / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def _row(**changes):
    row = {"id": "s1", "audio": "audio/a.wav", "category": "paralinguistic", "targets": [{"dimension": "pitch", "label": "low"}]}
    return {**row, **changes}


@pytest.mark.parametrize(
    "rows, message",
    [
        ([_row(targets=[{"dimension": "loudness", "label": "loud"}])], "mmac.jsonl:1 (id 's1') field targets[0].dimension: 'loudness' is not an MMAC dimension"),
        ([_row(targets=[{"dimension": "pitch", "label": " "}])], "(id 's1') field targets[0].label: missing, empty"),
        ([_row(targets=[])], "(id 's1') field targets: expected a non-empty list"),
        ([_row(targets=[{"dimension": "pitch", "label": "low", "label_type": "binary"}])], "field targets[0].label_type: binary for pitch, but the rubric"),
        ([_row(targets=[{"dimension": "gender", "label": "male", "scale": 5}], category="persona")], "field targets[0].scale: 5 for gender, but the rubric"),
        ([_row(category="persona")], "field category: persona, but dimension pitch belongs to paralinguistic"),
        ([_row(category="music")], "field category: 'music' is not an MMAC category"),
        ([_row(targets=[{"dimension": "pitch", "label": "low"}, {"dimension": "gender", "label": "male"}])], "dimensions of several categories"),
        ([_row(audio="../a.wav")], "field audio: path '../a.wav' escapes the data folder"),
        ([_row(audio="/etc/hosts")], "field audio: path '/etc/hosts' is absolute"),
        ([_row(audio="audio/missing.wav")], "field audio: file"),
        ([_row(id="")], "mmac.jsonl:1 field id (column 'id'): missing or empty"),
        ([_row(), _row()], "mmac.jsonl:2 (id 's1'): duplicate id, first at"),
    ],
)
def test_schema_errors_name_file_row_id_and_field(tmp_path, rows, message):
    folder = _folder(tmp_path, rows)
    with pytest.raises(data.MMACDataError) as error:
        data.load_samples(folder)
    assert message in str(error.value)


def test_unreadable_and_empty_audio_are_refused_before_inference(tmp_path):
    folder = _folder(tmp_path, [_row(audio="audio/bad.wav")])
    (folder / "audio" / "bad.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEgarbage")
    with pytest.raises(data.MMACDataError, match=r"\(id 's1'\) field audio: .*bad.wav is not readable audio"):
        data.load_samples(folder)


def test_check_command_reports_bad_data_and_exits_1(tmp_path):
    folder = _folder(tmp_path, [_row(), "not an object"])
    result = subprocess.run([sys.executable, "-m", "mmac.data", "check", str(folder)], check=False, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and "mmac.jsonl:2: expected an object, got str" in result.stderr


def test_a_flat_csv_release_is_read_through_a_column_map(tmp_path):
    # One row per (clip, dimension), other column names, other dimension spellings, no category column.
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "test.csv").write_text(
        "uid,wav,dim,answer,type\n"
        "c1,audio/a.wav,Spk Gender,male,binary\n"
        "c1,audio/a.wav,age,adult,\n"
        "c2,audio/a.wav,Speed Change,speeds up from slow to fast,graded\n",
        encoding="utf-8",
    )
    _folder(tmp_path, [])
    mapping = {"files": ["meta/*.csv"], "columns": {"id": "uid", "audio": "wav", "category": None, "targets": None,
               "dimension": "dim", "label": "answer", "label_type": "type", "language": None, "source": None},
               "dimension_map": {"spk_gender": "gender"}}  # fmt: skip
    samples = data.load_samples(tmp_path, columns=mapping)
    assert [(s["id"], s["category"], [t["dimension"] for t in s["targets"]]) for s in samples] == [
        ("c1", "persona", ["gender", "age"]), ("c2", "dynamic", ["speed_change"])]  # fmt: skip
    assert samples[0]["language"] == "" and samples[0]["targets"][0]["label"] == "male"
    # The same map from a file named by MMAC_COLUMN_MAP, and a conflicting second row for one id.
    path = tmp_path / "map.json"
    path.write_text(json.dumps(mapping), encoding="utf-8")
    with open(tmp_path / "meta" / "test.csv", "a", encoding="utf-8") as handle:
        handle.write("c1,audio/other.wav,pitch,low,\n")
    with pytest.raises(data.MMACDataError, match="test.csv:5 \\(id 'c1'\\): id also used at .*test.csv:2 .* with another audio file"):
        data.load_samples(tmp_path, columns=str(path))


def test_parquet_with_a_targets_column_is_read(tmp_path):
    import pandas

    _folder(tmp_path, [])
    frame = pandas.DataFrame([{"id": "p1", "audio": "audio/a.wav", "category": "Paralinguistic",
                               "targets": json.dumps([{"dimension": "pitch", "label": "low"}]), "language": "en", "source": "x"}])  # fmt: skip
    frame.to_parquet(tmp_path / "test.parquet")
    [sample] = data.load_samples(tmp_path, columns={"files": ["*.parquet"]})
    assert sample["category"] == "paralinguistic" and sample["targets"][0]["dimension"] == "pitch" and sample["language"] == "en"


def test_bad_column_maps_are_refused():
    with pytest.raises(data.MMACDataError, match="unknown field"):
        data.column_map({"columns": {"speaker": "spk"}})
    with pytest.raises(data.MMACDataError, match="give columns.targets, or columns.dimension and columns.label"):
        data.column_map({"columns": {"targets": None}})


@pytest.mark.parametrize("where", ["parent", "inside", "sibling-typo"])
def test_a_folder_one_level_off_names_the_folder_checked_and_the_data_folder(tmp_path, monkeypatch, capsys, where):
    (tmp_path / "MMAC" / "data").mkdir(parents=True)
    real = _folder(tmp_path / "MMAC" / "data", [_row()])
    given = {"parent": tmp_path / "MMAC", "inside": real / "audio", "sibling-typo": tmp_path / "MMAC" / "dta"}[where]
    problem = "does not exist" if where == "sibling-typo" else "holds no data file matching ['mmac.jsonl'] (the column map's files)"
    hint = f"Did you mean {real}? (it holds 1 MMAC data file: mmac.jsonl)"
    assert data.main(["check", str(given)]) == 1  # the check command
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"mmac-data check: error: data folder {given} {problem}. {hint}"
    monkeypatch.setenv(data.DATA_DIR_ENV, str(given))  # the run's path: the tasks load through load_category
    with pytest.raises(data.MMACDataError) as error:
        data.load_category("paralinguistic")
    assert str(error.value) == f"{data.DATA_DIR_ENV} {given} {problem}. {hint}"


def test_unset_data_dir_is_the_sample_here_and_required_in_the_export(monkeypatch):
    monkeypatch.delenv("MMAC_DATA_DIR", raising=False)
    assert data.data_dir_from_env() == data.SAMPLE_DATA_DIR
    monkeypatch.setattr(data, "UNSET_DATA_DIR", "required")  # what lmms-eval-audio-export writes (MMAC is not released)
    with pytest.raises(data.MMACDataError, match="MMAC_DATA_DIR is not set: MMAC's data is not released"):
        data.load_samples()
