"""Loading MCGA's release layout: row checks, path safety, archive extraction, the shipped sample."""

import io
import json
import tarfile

import numpy as np
import pytest
import soundfile

from mcga import data


def write_wav(path, seconds=1.0, rate=16000):
    """A 440 Hz tone at a tenth of full scale (neither silent nor clipped: no audio warning)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, 0.1 * np.sin(2 * np.pi * 440 * np.arange(int(seconds * rate)) / rate).astype(np.float32), rate)


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
    assert [r["doc_key"] for r in rows] == ["upload/a.wav", "upload/b.wav"]


def test_repeated_ids_are_documents_told_apart_by_audio_and_extra_fields_are_kept(data_dir):
    # Release shape (issue 8): id 345-1 read by two speakers; SQA: one id, two different questions.
    extra = {"prompt": "<|cmn|><|cmn|>", "check_score": 4}
    write_task(data_dir, "asr", [{**asr_row("345-1", "upload/a.wav"), "source": "Yvqy", "time": 19.5, **extra},
                                 {**asr_row("345-1", "upload/b.wav"), "source": "ON44", "time": 21.0, **extra}])  # fmt: skip
    rows = data.load_task_rows("asr", data_dir=data_dir)
    assert [(r["id"], r["doc_key"], r["source"], r["time"], r["check_score"]) for r in rows] == [
        ("345-1", "upload/a.wav", "Yvqy", 19.5, 4), ("345-1", "upload/b.wav", "ON44", 21.0, 4)]  # fmt: skip
    sqa = [{**asr_row("5-2", audio), "sqa": question, "sqa_a": answer} for audio, question, answer in
           (("upload/a.wav", "这个文的题目是什么？", "《千字文》"), ("upload/b.wav", "这个作品的体裁是什么？", "文"))]  # fmt: skip
    write_task(data_dir, "sqa", sqa)
    assert [r["sqa"] for r in data.load_task_rows("sqa", data_dir=data_dir)] == ["这个文的题目是什么？", "这个作品的体裁是什么？"]


def test_duplicate_audio_path_is_an_error_naming_both_lines(data_dir):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav"), asr_row("2", "upload/b.wav"), asr_row("3", "upload/a.wav")])
    with pytest.raises(data.MCGADataError, match=r"MCGA_asr_test.jsonl:3 \(id '3', audio 'upload/a.wav'\): field 'audio': duplicate audio path, first seen on line 1"):
        data.load_task_rows("asr", data_dir=data_dir)


@pytest.mark.parametrize(
    "task, fields, field, message",
    [
        ("asr", {"asr": "。！？"}, "asr", "is empty after the official CER normalisation"),
        ("asr", {"asr": "……  ——"}, "asr", "is empty after the official CER normalisation"),
        ("sec", {"asr": "！", "sec_1": "男声", "sec_2": "悲", "sec_3": "x|y"}, "asr", "is empty after the official CER normalisation"),
        ("sqa", {"sqa": "作者是谁？", "sqa_a": "《》"}, "sqa_a", "has no token after the official SQA cleaning"),
        ("su", {"su": "问题\nA. 甲\nB. 乙\n答案：", "su_a": "E"}, "su_a", "must be one option letter A/B/C/D, got 'E'"),
        ("sr", {"sr": "问题\nA. 甲\nB. 乙\n答案：", "sr_a": "答案A"}, "sr_a", "must be one option letter A/B/C/D, got '答案A'"),
        ("su", {"su": "问题", "su_a": "AB"}, "su_a", "must be one option letter"),
        ("s2tt", {"s2tt": "   "}, None, r"missing or empty field\(s\) \['s2tt'\]"),
    ],
)
def test_unusable_gold_is_a_data_error_naming_file_line_id_and_field(data_dir, task, fields, field, message):
    write_task(data_dir, task, [{**asr_row("ok", "upload/a.wav"), "sqa": "q", "sqa_a": "李白", "su": "q", "su_a": "A", "sr": "q", "sr_a": "B",
                                 "s2tt": "t", "sec_1": "p", "sec_2": "g", "sec_3": "s"},
                                {**asr_row("g-7", "upload/b.wav"), "sqa": "q", "sqa_a": "李白", "su": "q", "su_a": "A", "sr": "q", "sr_a": "B",
                                 "s2tt": "t", "sec_1": "p", "sec_2": "g", "sec_3": "s", **fields}])  # fmt: skip
    where = rf"MCGA_{task}_test.jsonl:2 \(id 'g-7', audio 'upload/b.wav'\): "
    with pytest.raises(data.MCGADataError, match=where + (rf"field '{field}' " if field else "") + message):
        data.load_task_rows(task, data_dir=data_dir)


def test_lower_case_or_padded_gold_letter_is_accepted_as_the_official_rule_reads_it(data_dir):
    write_task(data_dir, "su", [{**asr_row("1", "upload/a.wav"), "su": "q", "su_a": " b "}])
    assert data.load_task_rows("su", data_dir=data_dir)[0]["su_a"] == " b "


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
    with pytest.raises(data.MCGADataError, match=rf"MCGA_asr_test.jsonl:2 \(id 'bad-7', audio '.*'\).*{message}"):
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
    with pytest.raises(data.MCGADataError, match=r"id 'br'.*field 'audio': audio file .*broken.wav is not readable audio"):
        data.load_task_rows("asr", data_dir=data_dir)


def _truncated_wav(path):
    write_wav(path, seconds=1.0)
    path.write_bytes(path.read_bytes()[:60])  # header promises 1 s, the file holds 16 bytes of it


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda p: write_wav(p, seconds=0.0), r"0.000 s long, shorter than the 0.1 s minimum"),
        (_truncated_wav, r"(\d\.\d+ s long, shorter than the 0.1 s minimum|not readable audio)"),
        (lambda p: write_wav(p, seconds=0.05), r"0.050 s long, shorter than the 0.1 s minimum"),
        (lambda p: p.write_bytes(b"\x00" * 4000), r"not readable audio"),
    ],
    ids=["empty", "truncated-60-bytes", "too-short", "garbage"],
)
def test_empty_truncated_short_or_undecodable_audio_is_a_data_error_naming_the_row(data_dir, make, reason):
    make(data_dir / "upload" / "bad.wav")
    write_task(data_dir, "asr", [asr_row("ok", "upload/a.wav"), asr_row("bad-3", "upload/bad.wav")])
    with pytest.raises(data.MCGADataError, match=rf"MCGA_asr_test.jsonl:2 \(id 'bad-3', audio 'upload/bad.wav'\): field 'audio': .*bad.wav is {reason}"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_malformed_jsonl_line_names_file_and_line(data_dir):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav")], raw_lines=['{"id": "2", "asr": '])
    with pytest.raises(data.MCGADataError, match=r"MCGA_asr_test.jsonl:2: not valid JSON"):
        data.load_task_rows("asr", data_dir=data_dir)


def test_missing_gold_field_is_an_error(data_dir):
    row = asr_row("1", "upload/a.wav")
    write_task(data_dir, "sqa", [{**row, "sqa": "作者是谁？", "sqa_a": ""}])
    with pytest.raises(data.MCGADataError, match=r"missing or empty field\(s\) \['sqa_a'\]"):
        data.load_task_rows("sqa", data_dir=data_dir)


def test_shipped_sample_has_the_release_shape_and_real_labels():
    rows = data.load_task_rows("asr", data_dir=data.SAMPLE_DATA_DIR)
    texts = {r["id"]: r["genre"] for r in rows}
    assert sorted(texts.values()) == sorted(["诗", "词", "曲", "赋", "文"] * 2)  # 10 texts, 2 per genre
    assert len(rows) == 14 and len({r["doc_key"] for r in rows}) == 14  # 4 texts read by both voices
    by_id = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r["source"])
    assert by_id["asr_shi_01"] == ["espeak-f", "espeak-m"] and {r["id"]: r["dynasty"] for r in rows}["asr_shi_01"] == "唐"
    assert all({"source", "time", "prompt", "sex"} <= r.keys() for r in rows)
    sqa = [r for r in data.load_task_rows("sqa", data_dir=data.SAMPLE_DATA_DIR) if r["id"] == "sqa_01"]
    assert [(r["sqa"], r["sqa_a"]) for r in sqa] == [("这首诗的题目是什么？", "《静夜思》"), ("这首诗的作者是谁？", "李白")]
    for task in ("su", "sr"):
        rows = data.load_task_rows(task, data_dir=data.SAMPLE_DATA_DIR)
        assert len({r["id"] for r in rows}) < len(rows) and all(r[f"{task}_a"] in "ABCD" for r in rows)


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
    row = {"id": 3, "asr": "x", "audio": "upload/Yvqy/1-2.wav", "asr_r": "y"}
    assert data.official_runner_prediction(row, "Qwen_audio.jsonl") == ("mcga_asr", "3", "upload/Yvqy/1-2.wav", "y")
    assert data.official_runner_prediction({"id": "q", "sqa_a_r": None}, "m_text.jsonl") == ("mcga_sqa_text", "q", None, "")
    assert data.official_runner_prediction({"id": "q"}, "m_audio.jsonl") is None


def test_check_command_reports_each_task_file(data_dir, capsys):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav"), asr_row("1", "upload/b.wav")])
    write_task(data_dir, "su", [{**asr_row("s", "upload/../../x.wav"), "su": "q", "su_a": "A"}])
    assert data.main(["check", str(data_dir)]) == 1
    captured = capsys.readouterr()
    assert "asr: 2 rows OK (1 distinct ids; documents keyed by audio path)" in captured.out
    assert "su: ERROR" in captured.err and "escapes the data folder" in captured.err


@pytest.mark.parametrize(
    "target, problem, hint",
    [
        (lambda d: d.parent / "nowhere", "does not exist", lambda d: d),  # a sibling: data/ is two steps away
        (lambda d: d.parent, "holds no MCGA task file", lambda d: d),  # the parent of data/
        (lambda d: d / "upload", "holds no MCGA task file", lambda d: d),  # a folder inside data/
        (lambda d: d / "upload" / "a.wav", "is not a folder", lambda d: d),
    ],
    ids=["missing", "parent-of-data", "inside-data", "a-file"],
)
def test_check_on_a_wrong_folder_fails_with_one_line_and_suggests_the_data_folder(data_dir, capsys, target, problem, hint):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav")])
    assert data.main(["check", str(target(data_dir))]) == 1
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert line.startswith(f"mcga-data check: error: data folder {target(data_dir)} {problem}")
    if hint:
        assert line.endswith(f". Did you mean {hint(data_dir)}? (it holds 1 MCGA task file)")
    assert captured.out == ""


def test_check_on_an_empty_folder_fails(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert data.main(["check", str(tmp_path / "empty")]) == 1
    assert "holds no MCGA task file" in capsys.readouterr().err


def test_download_offline_prints_one_line_and_fails(tmp_path, monkeypatch, capsys):
    from huggingface_hub.errors import LocalEntryNotFoundError

    def offline(**kwargs):
        raise LocalEntryNotFoundError("An error happened while trying to locate the file on the Hub.\nmore lines")

    monkeypatch.setattr("huggingface_hub.hf_hub_download", offline)
    assert data.main(["download", str(tmp_path / "mcga")]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("mcga-data download: error: could not download MCGA_test.tar.gz from the hub dataset yxdu/MCGA (LocalEntryNotFoundError")


def test_mixed_field_types_are_a_clear_error(data_dir, monkeypatch):
    from lmms_eval_tasks.mcga import hooks

    write_task(data_dir, "asr", [{**asr_row("1", "upload/a.wav"), "time": 3.5}, {**asr_row("2", "upload/b.wav"), "time": "three"}])
    monkeypatch.setenv("MCGA_DATA_DIR", str(data_dir))
    with pytest.raises(data.MCGADataError, match="MCGA_asr_test.jsonl: a field has mixed value types"):
        hooks.mcga_asr_docs(None)


def test_a_run_reading_a_folder_one_level_off_names_it_and_the_data_folder(data_dir, monkeypatch):
    write_task(data_dir, "asr", [asr_row("1", "upload/a.wav")])
    monkeypatch.setenv(data.DATA_DIR_ENV, str(data_dir.parent))  # the release's parent folder instead of its data/
    with pytest.raises(data.MCGADataError) as error:
        data.load_task_rows("asr")  # what the tasks' process_docs call
    assert str(error.value).startswith(f"{data.DATA_DIR_ENV} {data_dir.parent} holds no MCGA task file")
    assert str(error.value).endswith(f". Did you mean {data_dir}? (it holds 1 MCGA task file)")


def test_ctrl_c_during_a_check_prints_one_line(data_dir, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(data, "check_data_dir", interrupted)
    assert data.main(["check", str(data_dir)]) == 130
    assert capsys.readouterr().err.strip() == ("mcga-data interrupted (Ctrl-C): a check writes nothing; a download keeps what the Hugging Face cache "
                                               "holds and resumes from it when run again.")  # fmt: skip


def _extracted_release(cache):
    """An extracted hub release in ``cache/mcga_release`` (what :func:`data.download_test_release` leaves)."""
    release = cache / "mcga_release"
    (release / "data").mkdir(parents=True)
    (release / "SOURCE.json").write_text('{"repo_id": "yxdu/MCGA", "file": "MCGA_test.tar.gz", "revision": "abc"}', encoding="utf-8")
    return release / "data"


def test_mcga_data_dir_hub_reads_the_release_extracted_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path))
    monkeypatch.setenv("MCGA_DATA_DIR", "hub")
    release = _extracted_release(tmp_path)
    assert data.data_dir_from_env() == release


def test_unset_data_dir_is_the_shipped_sample(monkeypatch):
    monkeypatch.delenv("MCGA_DATA_DIR", raising=False)
    assert data.data_dir_from_env() == data.SAMPLE_DATA_DIR


def test_hub_release_unreachable_is_one_line_naming_the_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("MCGA_DATA_DIR", "hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(data.MCGAHubAccessError, match=r"could not download MCGA_test\.tar\.gz from the hub dataset yxdu/MCGA") as error:
        data.data_dir_from_env()
    assert "\n" not in str(error.value) and not (tmp_path / "mcga_release" / "SOURCE.json").exists()
