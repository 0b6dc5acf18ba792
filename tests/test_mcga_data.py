"""Loading MCGA's release layout: row checks, path safety, archive extraction, the shipped sample."""

import io
import json
import tarfile

import numpy as np
import pytest
import soundfile

from mcga import data


def write_wav(path, seconds=1.0, rate=16000):
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, np.zeros(int(seconds * rate), dtype=np.float32), rate)


def write_task(folder, task, rows, raw_lines=()):
    lines = [json.dumps(r, ensure_ascii=False) for r in rows] + list(raw_lines)
    (folder / f"MCGA_{task}_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def data_dir(tmp_path):
    folder = tmp_path / "data"
    write_wav(folder / "upload" / "a.wav")
    write_wav(folder / "upload" / "b.wav")
    return folder


def asr_row(row_id, audio):
    return {"id": row_id, "asr": "床前明月光", "audio": audio, "genre": "诗", "dynasty": "唐", "split": "test"}


def test_rows_get_absolute_audio_paths_inside_the_data_folder(data_dir):
    write_task(data_dir, "asr", [asr_row(1, "upload/a.wav"), asr_row("x2", "upload/b.wav")])
    rows = data.load_task_rows("asr", data_dir=data_dir)
    assert [r["id"] for r in rows] == ["1", "x2"]
    assert rows[0]["audio_path"] == str((data_dir / "upload" / "a.wav").resolve())
    assert rows[0]["audio"] == "upload/a.wav"


def test_data_folder_comes_from_the_environment(data_dir, monkeypatch):
    write_task(data_dir, "asr", [asr_row("only", "upload/a.wav")])
    monkeypatch.setenv("MCGA_DATA_DIR", str(data_dir))
    assert [r["id"] for r in data.load_task_rows("asr")] == ["only"]


@pytest.mark.parametrize(
    "audio, message",
    [
        ("../outside.wav", "escapes the data folder"),
        ("upload/../../outside.wav", "escapes the data folder"),
        ("/etc/passwd", "is absolute"),
        ("upload/missing.wav", "does not exist"),
    ],
)
def test_bad_audio_paths_are_errors_naming_the_row(data_dir, audio, message):
    write_wav(data_dir.parent / "outside.wav")
    write_task(data_dir, "asr", [asr_row("good", "upload/a.wav"), asr_row("bad-7", audio)])
    with pytest.raises(data.MCGADataError, match=rf"MCGA_asr_test.jsonl:2 \(id 'bad-7'\).*{message}"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_symlink_leaving_the_data_folder_is_rejected(data_dir):
    write_wav(data_dir.parent / "elsewhere.wav")
    (data_dir / "upload" / "link.wav").symlink_to(data_dir.parent / "elsewhere.wav")
    write_task(data_dir, "asr", [asr_row("l", "upload/link.wav")])
    with pytest.raises(data.MCGADataError, match="escapes the data folder"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_unreadable_audio_is_an_error_naming_row_and_path(data_dir):
    (data_dir / "upload" / "broken.wav").write_bytes(b"RIFF not really a wav")
    write_task(data_dir, "asr", [asr_row("br", "upload/broken.wav")])
    with pytest.raises(data.MCGADataError, match=r"id 'br'.*broken.wav is not readable audio"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_malformed_jsonl_line_names_file_and_line(data_dir):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav")], raw_lines=['{"id": "2", "asr": '])
    with pytest.raises(data.MCGADataError, match=r"MCGA_asr_test.jsonl:2: not valid JSON"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_missing_gold_field_and_duplicate_id_are_errors(data_dir):
    row = asr_row("1", "upload/a.wav")
    write_task(data_dir, "sqa", [{**row, "sqa": "作者是谁？", "sqa_a": ""}])
    with pytest.raises(data.MCGADataError, match=r"missing or empty field\(s\) \['sqa_a'\]"):
        data.load_task_rows("sqa", data_dir=data_dir)
    write_task(data_dir, "asr", [row, {**row, "audio": "upload/b.wav"}])
    with pytest.raises(data.MCGADataError, match="duplicate id, first seen on line 1"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_shipped_sample_has_two_clips_per_genre_and_real_labels():
    rows = data.load_task_rows("asr", data_dir=data.SAMPLE_DATA_DIR)
    genres = [r["genre"] for r in rows]
    assert {g: genres.count(g) for g in set(genres)} == {"诗": 2, "词": 2, "曲": 2, "赋": 2, "文": 2}
    assert {r["source"]: r["dynasty"] for r in rows}["李白《静夜思》"] == "唐"
    for task in ("sqa", "su", "sr"):
        assert len(data.load_task_rows(task, data_dir=data.SAMPLE_DATA_DIR)) >= 3
    assert all(r[f"{t}_a"] in "ABCD" for t in ("su", "sr") for r in data.load_task_rows(t, data_dir=data.SAMPLE_DATA_DIR))


def make_tar(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                payload = b"x"
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))


@pytest.mark.parametrize(
    "name, kind, message",
    [("../evil.txt", "file", "outside"), ("/abs/evil.txt", "file", "outside"), ("data/link", "symlink", "is a link")],
)
def test_safe_extract_refuses_escaping_members_before_writing_anything(tmp_path, name, kind, message):
    archive = tmp_path / "a.tar.gz"
    make_tar(archive, [("data/ok.txt", "file"), (name, kind)])
    with pytest.raises(data.MCGADataError, match=message):
        data.safe_extract_tar(archive, tmp_path / "out")
    assert not (tmp_path / "out" / "data" / "ok.txt").exists()


def test_download_extracts_the_hub_archive_and_records_its_revision(tmp_path, monkeypatch):
    # The hub is unreachable here: stand in for hf_hub_download with a local archive in the hub cache layout.
    source = tmp_path / "src" / "data"
    write_wav(source / "upload" / "a.wav")
    write_task(source, "asr", [asr_row("h1", "upload/a.wav")])
    snapshot = tmp_path / "cache" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    with tarfile.open(snapshot / "MCGA_test.tar.gz", "w:gz") as tar:
        tar.add(source, arcname="data")
    calls = []

    def fake_download(**kwargs):
        calls.append(kwargs)
        return str(snapshot / "MCGA_test.tar.gz")

    monkeypatch.setattr("huggingface_hub.hf_hub_download", fake_download)
    data_dir = data.download_test_release(tmp_path / "mcga", revision="abc123")
    assert calls == [{"repo_id": "yxdu/MCGA", "filename": "MCGA_test.tar.gz", "repo_type": "dataset", "revision": "abc123"}]
    assert [r["id"] for r in data.load_task_rows("asr", data_dir=data_dir)] == ["h1"]
    assert json.loads((tmp_path / "mcga" / "SOURCE.json").read_text())["revision"] == "abc123"


def test_official_runner_rows_map_to_tasks_by_output_field_and_file_mode():
    assert data.official_runner_prediction({"id": 3, "asr": "x", "asr_r": "y"}, "Qwen_audio.jsonl") == ("mcga_asr", "3", "y")
    assert data.official_runner_prediction({"id": "q", "sqa_a_r": None}, "m_text.jsonl") == ("mcga_sqa_text", "q", "")
    assert data.official_runner_prediction({"id": "q"}, "m_audio.jsonl") is None


def test_check_command_reports_each_task_file(data_dir, capsys):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav")])
    write_task(data_dir, "su", [{**asr_row("s", "upload/../../x.wav"), "su": "q", "su_a": "A"}])
    assert data.main(["check", str(data_dir)]) == 1
    captured = capsys.readouterr()
    assert "asr: 1 rows OK" in captured.out and "su: ERROR" in captured.err and "escapes the data folder" in captured.err


def test_mixed_field_types_are_a_clear_error(data_dir, monkeypatch):
    from lmms_eval_tasks.mcga import hooks

    write_task(data_dir, "asr", [{**asr_row("1", "upload/a.wav"), "time": 3.5}, {**asr_row("2", "upload/b.wav"), "time": "three"}])
    monkeypatch.setenv("MCGA_DATA_DIR", str(data_dir))
    with pytest.raises(data.MCGADataError, match="MCGA_asr_test.jsonl: a field has mixed value types"):
        hooks.mcga_asr_docs(None)
