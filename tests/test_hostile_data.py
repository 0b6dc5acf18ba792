"""Hostile data through the real check commands (``mcga-data check``, ``parsa-data check``, ``mmac-data check``):
every kind of bad file is a data error naming the file, the line or row and the field, never a bare exception
(issue 20 items 1, 2, 10, 11; issue 17 item 9).

Inputs are made the way each kind arises: float WAVs holding NaN or ±inf written by soundfile (``subtype="FLOAT"``),
task files saved in Latin-1 by Python's own encoder, a UTF-8 BOM written by ``encoding="utf-8-sig"`` (as Excel and
Notepad save CSV), JSON lines whose gold is an object, ``NaN``, ``true`` or ``Infinity`` (``json.dumps`` writes the
last three for Python values), a path holding NUL, a line of 100,000 ``[``, and MP3 bytes from soundfile's encoder
embedded in parquet with no file name.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow
import pyarrow.parquet
import pytest
import soundfile

from audio_bench_core import audio
from mcga import data as mcga_data
from mmac import data as mmac_data
from parsa import data as parsa_data

NESTED = "[" * 100_000


@pytest.fixture(autouse=True)
def _no_user_settings(monkeypatch, tmp_path):
    for name in ("MCGA_DATA_DIR", "PARSA_DATA_DIR", "PARSA_COLUMN_MAP", "MMAC_DATA_DIR", "MMAC_COLUMN_MAP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path / "cache"))
    audio._audio_file_check_memo.cache_clear()


def tone(seconds=1.0, rate=16000, amplitude=0.1) -> np.ndarray:
    return (amplitude * np.sin(2 * np.pi * 440 * np.arange(int(seconds * rate)) / rate)).astype(np.float32)


def float_wav(path: Path, samples: np.ndarray, rate: int) -> Path:
    """A 32-bit float WAV, the format in which NaN and ±inf can be stored (PCM cannot hold them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, samples, rate, subtype="FLOAT")
    return path


def with_bad_samples(rate: int, value: float, at: float = 0.25) -> np.ndarray:
    samples = tone(rate=rate)
    samples[int(at * rate) : int(at * rate) + 3] = value
    return samples


# ------------------------------------------------------------------------------------------------ MCGA
def mcga_folder(tmp_path: Path, lines: list[str], clips: dict[str, np.ndarray] | None = None, rate=16000) -> Path:
    folder = tmp_path / "mcga"
    for name, samples in (clips or {"upload/a.wav": tone(rate=rate)}).items():
        float_wav(folder / name, samples, rate)
    (folder / "MCGA_asr_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def asr_line(audio_path="upload/a.wav", **fields) -> str:
    return json.dumps({"id": "poem-1", "asr": "床前明月光", "audio": audio_path, **fields}, ensure_ascii=False)


def mcga_check(folder: Path, capsys) -> tuple[int, str, str]:
    code = mcga_data.main(["check", str(folder)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("rate", [16000, 44100])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_mcga_check_refuses_a_float_wav_with_non_finite_samples_naming_file_and_row(tmp_path, capsys, rate, value):
    folder = mcga_folder(tmp_path, [asr_line()], {"upload/a.wav": with_bad_samples(rate, value)}, rate)
    code, out, err = mcga_check(folder, capsys)
    assert code == 1 and "rows OK" not in out
    assert f"MCGA_asr_test.jsonl:1 (id 'poem-1', audio 'upload/a.wav'): field 'audio': audio file {folder / 'upload/a.wav'} is holds 3 non-finite samples (NaN or ±inf) of {rate}, the first at 0.250 s" in err


def test_non_finite_audio_is_refused_at_load_time_too_and_by_the_array_hand_off(tmp_path):
    folder = mcga_folder(tmp_path, [asr_line()], {"upload/a.wav": with_bad_samples(44100, np.nan)}, 44100)
    with pytest.raises(mcga_data.MCGADataError, match=r"MCGA_asr_test.jsonl:1 \(id 'poem-1'.*non-finite samples"):
        mcga_data.load_task_rows("asr", data_dir=folder)
    # a clip that turned bad after the load check is named by the hand-off, not by soxr deep inside a model
    with pytest.raises(OSError, match=r"a.wav holds non-finite samples"):
        audio.load_audio_array(str(folder / "upload/a.wav"))


def test_silent_and_clipped_clips_pass_the_check_as_warnings_with_counts(tmp_path, capsys, caplog):
    clipped = np.clip(tone(amplitude=3.0), -1.0, 1.0)  # a tone driven 10 dB past full scale: about 80 % of samples at the rail
    clips = {"upload/a.wav": tone(), "upload/silent.wav": np.zeros(16000, dtype=np.float32), "upload/clipped.wav": clipped}
    lines = [asr_line(), asr_line("upload/silent.wav", id="poem-2"), asr_line("upload/clipped.wav", id="poem-3")]
    folder = mcga_folder(tmp_path, lines, clips)
    code, out, _ = mcga_check(folder, capsys)
    at_rail = int(np.count_nonzero(np.abs(clipped) >= audio.CLIP_LEVEL))
    assert code == 0
    assert "asr: 3 rows OK (3 distinct ids; documents keyed by audio path; 2 with audio warnings, listed below)" in out
    assert "MCGA_asr_test.jsonl:2 (id 'poem-2', audio 'upload/silent.wav'): audio all silent (peak amplitude 0 of full scale 1, over 1.00 s)" in out
    assert f"MCGA_asr_test.jsonl:3 (id 'poem-3', audio 'upload/clipped.wav'): audio clipped ({at_rail} of 16000 samples, {100 * at_rail / 16000:.1f}%" in out
    with caplog.at_level("WARNING"):
        rows = mcga_data.load_task_rows("asr", data_dir=folder)
    assert len(rows) == 3  # scored as they are
    assert "3 clip(s)" not in caplog.text and "2 clip(s) with audio warnings (1 all silent, 1 clipped), scored as they are" in caplog.text


@pytest.mark.parametrize(
    "line, field, what",
    [
        ('{"id": "poem-1", "asr": {"text": "床前明月光"}, "audio": "upload/a.wav"}', "asr", "must be a string, got an object"),
        ('{"id": "poem-1", "asr": NaN, "audio": "upload/a.wav"}', "asr", "must be a string, got the number nan"),
        ('{"id": "poem-1", "asr": true, "audio": "upload/a.wav"}', "asr", "must be a string, got true"),
        ('{"id": "poem-1", "asr": Infinity, "audio": "upload/a.wav"}', "asr", "must be a string, got the number inf"),
        ('{"id": true, "asr": "床前明月光", "audio": "upload/a.wav"}', "id", "must be a string or an integer, got true"),
        ('{"id": "poem-1", "asr": "床前明月光", "audio": 7}', "audio", "must be a string, got the number 7"),
    ],
)
def test_mcga_gold_of_the_wrong_type_fails_the_check_naming_the_row_and_field(tmp_path, capsys, line, field, what):
    folder = mcga_folder(tmp_path, [asr_line(id="ok-1"), line])
    code, out, err = mcga_check(folder, capsys)
    assert code == 1 and "rows OK" not in out
    assert f"MCGA_asr_test.jsonl:2 (id " in err and f"field {field!r} {what}" in err


def test_mcga_check_names_file_line_and_field_for_nul_latin1_and_deep_nesting(tmp_path, capsys):
    folder = mcga_folder(tmp_path, [asr_line(), asr_line("upload/a\x00.wav", id="nul-1")])
    code, _, err = mcga_check(folder, capsys)
    assert code == 1 and "MCGA_asr_test.jsonl:2 (id 'nul-1', audio 'upload/a\\x00.wav'): field 'audio': the audio path holds the control character U+0000 at position 8" in err

    (folder / "MCGA_asr_test.jsonl").write_bytes((asr_line() + "\n" + asr_line(id="latin-1", source="Chloé") + "\n").encode("utf-8").replace("Chloé".encode("utf-8"), "Chloé".encode("latin-1")))
    code, _, err = mcga_check(folder, capsys)
    assert code == 1 and "MCGA_asr_test.jsonl:2 (id 'latin-1', audio 'upload/a.wav'): field 'source' holds a byte that is not UTF-8 (0xe9)" in err

    (folder / "MCGA_asr_test.jsonl").write_text(asr_line() + "\n" + NESTED + "\n", encoding="utf-8")
    code, _, err = mcga_check(folder, capsys)
    assert code == 1 and "MCGA_asr_test.jsonl:2: not a usable JSON row: nested deeper than Python's JSON reader allows (100001 characters)" in err


def test_mcga_reads_a_task_file_that_starts_with_a_byte_order_mark(tmp_path):
    folder = mcga_folder(tmp_path, [asr_line()])
    path = folder / "MCGA_asr_test.jsonl"
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert [row["id"] for row in mcga_data.load_task_rows("asr", data_dir=folder)] == ["poem-1"]


# ------------------------------------------------------------------------------------------------ PARSA
def parsa_copy(tmp_path: Path, folder: str) -> Path:
    root = tmp_path / "parsa"
    shutil.copytree(parsa_data.SAMPLE_DATA_DIR / folder, root / folder)
    return root


def parsa_check(root: Path, capsys) -> tuple[int, str, str]:
    code = parsa_data.check_command(root)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def rewrite_csv(path: Path, edit, encoding="utf-8") -> None:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    edit(rows)
    with path.open("w", encoding=encoding, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_parsa_check_names_the_row_for_non_finite_audio_nul_paths_latin1_and_deep_nesting(tmp_path, capsys):
    root = parsa_copy(tmp_path, "Entity-Recognition")
    clip = root / "Entity-Recognition" / "Audios" / "ner_02.wav"
    rate = soundfile.info(clip).samplerate
    float_wav(clip, with_bad_samples(rate, np.nan), rate)
    code, _, err = parsa_check(root, capsys)
    assert code == 1 and "Entity-Recognition.csv row 2 (id 'ner_02'): audio file" in err and "ner_02.wav is holds 3 non-finite samples (NaN or ±inf)" in err
    float_wav(clip, tone(rate=rate), rate)

    csv_path = root / "Entity-Recognition" / "Entity-Recognition.csv"
    original = csv_path.read_bytes()
    rewrite_csv(csv_path, lambda rows: rows[2].update(audio="ner_03\x00.wav"))
    code, _, err = parsa_check(root, capsys)
    assert code == 1 and "Entity-Recognition.csv row 3 (id 'ner_03'): the audio path holds the control character U+0000 at position 6" in err
    assert "[column map key ner.columns.audio" in err

    # a Persian CSV saved by a Windows tool in the Arabic code page: Farsi yeh and kaf become the Arabic letters it has
    legacy = original.decode("utf-8").replace("ی", "ي").replace("ک", "ك").encode("cp1256")
    csv_path.write_bytes(legacy)
    code, _, err = parsa_check(root, capsys)
    first = "فردا".encode("cp1256")[0]  # row 1's transcript starts with this byte; the next is not a UTF-8 continuation
    assert code == 1 and f"Entity-Recognition.csv row 1 (id 'ner_01'): column 'transcript' (field 'transcript') holds a byte that is not UTF-8 (0x{first:02x} at character 0)" in err

    csv_path.write_bytes(original)
    rewrite_csv(csv_path, lambda rows: rows[0].update(entities=NESTED))
    code, _, err = parsa_check(root, capsys)
    assert code == 1 and "Entity-Recognition.csv row 1 (id 'ner_01'): entities must be a JSON list of {\"type\", \"span\"} objects, got JSON nested deeper than Python's JSON reader allows (100000 characters)" in err


def test_parsa_boolean_gold_in_parquet_is_refused_not_read_as_the_label_true(tmp_path):
    rows = [{"id": d["id"], "audio": Path(d["audio_path"]).name, "transcript": d["transcript"], "label": d["reference"]} for d in parsa_data.load_task_docs("code_switch")]
    rows[1]["label"] = True  # code_switch's alias table reads the text "true" as a label: a bool must never get there
    root = parsa_copy(tmp_path, "Code-Switching")
    (root / "Code-Switching" / "Code-Switching.csv").unlink()
    # one column cannot mix bool and text in parquet, so the boolean row goes in a file of its own (a release split in shards)
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist([r for r in rows if not isinstance(r["label"], bool)]), root / "Code-Switching" / "part-0.parquet")
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist([r for r in rows if isinstance(r["label"], bool)]), root / "Code-Switching" / "part-1.parquet")
    with pytest.raises(parsa_data.PARSADataError, match=r"part-1.parquet row 1 \(id 'cs_02'\): column 'label' \(field 'reference'\) holds true, not text or a number"):
        parsa_data.load_task_docs("code_switch", root)


def test_parsa_csv_with_a_byte_order_mark_keeps_its_first_column(tmp_path):
    root = parsa_copy(tmp_path, "Code-Switching")
    path = root / "Code-Switching" / "Code-Switching.csv"
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8-sig")
    assert [d["id"] for d in parsa_data.load_task_docs("code_switch", root)] == [d["id"] for d in parsa_data.load_task_docs("code_switch")]


def test_embedded_mp3_bytes_without_a_file_name_are_cached_as_mp3_and_sent_as_wav_data(tmp_path):
    rows = []
    for doc in parsa_data.load_task_docs("asr"):
        samples, rate = soundfile.read(doc["audio_path"], dtype="float32")
        buffer = io.BytesIO()
        soundfile.write(buffer, samples, rate, format="MP3")  # MP3 bytes as an HF Audio struct holds them, no path
        rows.append({"id": doc["id"], "audio": {"bytes": buffer.getvalue(), "path": None}, "transcript": doc["transcript"]})
    root = tmp_path / "parsa"
    root.mkdir()
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), root / "ASR.parquet")
    docs = parsa_data.load_task_docs("asr", root)
    assert all(d["audio_path"].endswith(".mp3") for d in docs)
    uri = audio.audio_data_uri(docs[0]["audio_path"], None)
    header, payload = uri.split(",", 1)
    decoded = base64.b64decode(payload)
    assert header == "data:audio/wav;base64" and decoded[:4] == b"RIFF" and decoded[8:12] == b"WAVE"
    assert audio.container_format(decoded) == "WAV"


def test_data_uri_of_mp3_bytes_behind_a_wav_name_is_wav_bytes(tmp_path):
    clip = tmp_path / "clip.wav"
    soundfile.write(clip, tone(), 16000, format="MP3")  # an MP3 file misnamed .wav
    assert audio.container_format(clip) == "MP3"
    decoded = base64.b64decode(audio.audio_data_uri(str(clip), None).split(",", 1)[1])
    assert decoded[:4] == b"RIFF" and soundfile.info(io.BytesIO(decoded)).format == "WAV"
    real_wav = tmp_path / "real.wav"
    soundfile.write(real_wav, tone(), 16000, subtype="PCM_16")
    assert base64.b64decode(audio.audio_data_uri(str(real_wav), None).split(",", 1)[1]) == real_wav.read_bytes()  # a WAV is sent as it is


# ------------------------------------------------------------------------------------------------ MMAC
def mmac_folder(tmp_path: Path, rows: list[dict], clips: dict[str, np.ndarray] | None = None) -> Path:
    folder = tmp_path / "mmac"
    for name, samples in (clips or {"audio/a.wav": tone()}).items():
        float_wav(folder / name, samples, 16000)
    (folder / "mmac.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return folder


def mmac_row(**fields) -> dict:
    return {"id": "pitch-1", "audio": "audio/a.wav", "category": "paralinguistic", "targets": [{"dimension": "pitch", "label": "high"}], **fields}


def mmac_check(folder: Path, capsys, *extra) -> tuple[int, str, str]:
    code = mmac_data.main(["check", str(folder), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_mmac_check_refuses_non_finite_audio_and_counts_silent_clips(tmp_path, capsys):
    folder = mmac_folder(tmp_path, [mmac_row(), mmac_row(id="pitch-2", audio="audio/b.wav")], {"audio/a.wav": tone(), "audio/b.wav": with_bad_samples(16000, np.inf)})
    code, _, err = mmac_check(folder, capsys)
    assert code == 1 and "mmac.jsonl:2 (id 'pitch-2') field audio:" in err and "b.wav is holds 3 non-finite samples (NaN or ±inf) of 16000, the first at 0.250 s" in err
    float_wav(folder / "audio/b.wav", np.zeros(16000, dtype=np.float32), 16000)
    code, out, _ = mmac_check(folder, capsys)
    assert code == 0 and "2 samples OK" in out and "1 with audio warnings, listed below" in out
    assert "WARNING " in out and "mmac.jsonl:2 (id 'pitch-2'): audio all silent (peak amplitude 0 of full scale 1, over 1.00 s)" in out


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"targets": [{"dimension": "pitch", "label": True}]}, "field targets[0].label: holds true, expected text or an integer or a number"),
        ({"targets": [{"dimension": "pitch", "label": "high", "scale": False}]}, "field targets[0].scale: holds false, expected an integer or a number or text"),
        ({"category": {"name": "paralinguistic"}}, "field category: holds an object, expected text"),
        ({"id": 1.5}, "field id: holds 1.5, expected text or an integer"),
        ({"audio": "audio/a\x00.wav"}, "field audio: the path holds the control character U+0000 at position 7"),
    ],
)
def test_mmac_fields_of_the_wrong_type_fail_the_check_naming_the_row_and_field(tmp_path, capsys, changes, message):
    folder = mmac_folder(tmp_path, [mmac_row(id="ok-1"), mmac_row(**changes)])
    code, _, err = mmac_check(folder, capsys)
    assert code == 1 and "mmac.jsonl:2" in err and message in err, err


def test_mmac_latin1_and_deeply_nested_lines_name_file_line_and_field(tmp_path, capsys):
    folder = mmac_folder(tmp_path, [mmac_row(id="ok-1")])
    text = json.dumps(mmac_row(id="ok-1"), ensure_ascii=False) + "\n" + json.dumps(mmac_row(source="Chloé's recording"), ensure_ascii=False) + "\n"
    (folder / "mmac.jsonl").write_bytes(text.encode("latin-1"))
    code, _, err = mmac_check(folder, capsys)
    assert code == 1 and "mmac.jsonl:2 field source: holds a byte that is not UTF-8 (0xe9)" in err
    (folder / "mmac.jsonl").write_text(json.dumps(mmac_row()) + "\n" + NESTED + "\n", encoding="utf-8")
    code, _, err = mmac_check(folder, capsys)
    assert code == 1 and "mmac.jsonl:2: not a usable JSON row: nested deeper than Python's JSON reader allows (100001 characters)" in err


def test_a_byte_order_mark_does_not_hide_the_category_of_a_flat_mmac_csv(tmp_path, capsys):
    folder = mmac_folder(tmp_path, [])
    (folder / "mmac.jsonl").unlink()
    rows = [{"category": "paralinguistic", "id": "p1", "audio": "audio/a.wav", "dimension": "pitch", "label": "high"},
            {"category": "persona", "id": "p2", "audio": "audio/a.wav", "dimension": "pitch", "label": "low"}]  # fmt: skip
    with (folder / "meta.csv").open("w", encoding="utf-8-sig", newline="") as handle:  # Excel's "CSV UTF-8": BOM first
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    columns = tmp_path / "columns.json"
    columns.write_text(json.dumps({"files": ["*.csv"], "columns": {"targets": None, "dimension": "dimension", "label": "label"}}), encoding="utf-8")
    code, _, err = mmac_check(folder, capsys, "--columns", str(columns))
    assert code == 1 and "meta.csv:3 (id 'p2') field category: persona, but dimension pitch belongs to paralinguistic" in err


# ------------------------------------------------------------------------------------------------ through the CLI
def _cli_fails(cli, env, cwd, tasks) -> str:
    """Run the real CLI on ``tasks`` (the data is refused at load time, before any inference); return its log."""
    import subprocess

    command = [cli, "--tasks", tasks, "--model", "replay", "--model_args", f"predictions={cwd / 'none.jsonl'}", "--verbosity", "DEBUG"]
    (cwd / "none.jsonl").write_text(json.dumps({"task": tasks, "id": "never-reached", "response": ""}) + "\n", encoding="utf-8")
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode != 0, (result.stdout + result.stderr)[-3000:]
    return result.stdout + result.stderr


@pytest.mark.cli
@pytest.mark.parametrize("case", ["nan_44k_mcga", "nul_path_parsa", "latin1_mmac", "nested_line_mcga"])
def test_cli_refuses_bad_data_before_inference_naming_file_row_and_field(lmms_eval_cli, offline_env, tmp_path, case):
    env = {k: v for k, v in offline_env.items() if not k.startswith(("PARSA_", "MMAC_"))}
    if case == "nan_44k_mcga":  # the clip that used to end the run mid-inference ("audio buffer is not finite everywhere")
        folder = mcga_folder(tmp_path, [asr_line(), asr_line("upload/b.wav", id="poem-2")], {"upload/a.wav": tone(rate=44100), "upload/b.wav": with_bad_samples(44100, np.nan)}, 44100)
        log = _cli_fails(lmms_eval_cli, {**env, "MCGA_DATA_DIR": str(folder)}, tmp_path, "mcga_asr")
        assert "MCGA_asr_test.jsonl:2 (id 'poem-2', audio 'upload/b.wav'): field 'audio':" in log and "holds 3 non-finite samples (NaN or ±inf) of 44100" in log
    elif case == "nul_path_parsa":
        root = parsa_copy(tmp_path, "Code-Switching")
        rewrite_csv(root / "Code-Switching" / "Code-Switching.csv", lambda rows: rows[1].update(audio="cs_02\x00.wav"))
        log = _cli_fails(lmms_eval_cli, {**env, "PARSA_DATA_DIR": str(root)}, tmp_path, "parsa_code_switch")
        assert "Code-Switching.csv row 2 (id 'cs_02'): the audio path holds the control character U+0000 at position 5" in log
    elif case == "latin1_mmac":
        folder = mmac_folder(tmp_path, [])
        text = json.dumps(mmac_row(id="ok-1")) + "\n" + json.dumps(mmac_row(category="paralinguistic", source="Chloé's recording"), ensure_ascii=False) + "\n"
        (folder / "mmac.jsonl").write_bytes(text.encode("latin-1"))
        log = _cli_fails(lmms_eval_cli, {**env, "MMAC_DATA_DIR": str(folder)}, tmp_path, "mmac_paralinguistic")
        assert "mmac.jsonl:2 field source: holds a byte that is not UTF-8 (0xe9)" in log
    else:
        folder = mcga_folder(tmp_path, [asr_line(), NESTED])
        log = _cli_fails(lmms_eval_cli, {**env, "MCGA_DATA_DIR": str(folder)}, tmp_path, "mcga_asr")
        assert "MCGA_asr_test.jsonl:2: not a usable JSON row: nested deeper than Python's JSON reader allows (100001 characters)" in log
    assert "RecursionError" not in log and "UnicodeDecodeError" not in log and "embedded null byte" not in log
