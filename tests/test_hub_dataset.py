"""The hub audio layout (:mod:`audio_bench_core.hub_layout`): made from the shipped samples by each benchmark's
``hub_dataset`` command, read back offline by ``datasets.load_dataset`` from a folder named like the hub repository (the
mixing test's way), and turned by ``process_docs`` into the very documents the release layout gives."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from audio_bench_core.audio import audio_for_model
from mcga import data as mcga_data
from mcga import hub_dataset as mcga_hub

datasets = pytest.importorskip("datasets")


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """cwd = tmp_path (where ``load_dataset("owner/name")`` finds ``tmp_path/owner/name``), no hub, caches under tmp_path."""
    monkeypatch.chdir(tmp_path)
    for name, value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("HF_DATASETS_CACHE", str(tmp_path / "hf")), ("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path / "cache"))):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MCGA_DATA_DIR", raising=False)
    return tmp_path


@pytest.fixture
def mcga_copy(offline):
    """``tmp_path/yxdu/MCGA`` made from the shipped sample by ``python -m mcga.hub_dataset``."""
    assert mcga_hub.main([str(mcga_data.SAMPLE_DATA_DIR), str(offline / "yxdu" / "MCGA")]) == 0
    return offline / "yxdu" / "MCGA"


def _same_docs(hub_docs, release_docs):
    """Every field equal but ``audio_path`` (a cache file there, the release's file here), and the clips the model gets
    equal: the 16 kHz arrays, and the data URI (the same file bytes)."""
    assert len(hub_docs) == len(release_docs) > 0
    for hub, release in zip(hub_docs, release_docs):
        assert {k: v for k, v in hub.items() if k != "audio_path"} == {k: v for k, v in release.items() if k != "audio_path"}
        ours, theirs = audio_for_model(hub["audio_path"], "array"), audio_for_model(release["audio_path"], "array")
        assert ours["sampling_rate"] == theirs["sampling_rate"] == 16000
        np.testing.assert_allclose(ours["array"], theirs["array"], atol=1e-7)
        assert audio_for_model(hub["audio_path"], "data_uri") == audio_for_model(release["audio_path"], "data_uri")


def test_mcga_layout_configs_and_columns(mcga_copy):
    card = (mcga_copy / "README.md").read_text(encoding="utf-8")
    assert [line.split(": ")[1] for line in card.splitlines() if line.startswith("- config_name")] == ["asr", "s2tt", "sec", "sqa", "su", "sr"]
    asr = datasets.load_dataset("yxdu/MCGA", "asr", split="test")
    assert asr.num_rows == 14 and isinstance(asr.features["audio"], datasets.Audio) and asr.features["audio"].sampling_rate is None
    assert asr.column_names == ["id", "asr", "audio", "source", "time", "prompt", "check_score", "split", "dynasty", "genre", "sex"]
    first = asr[0]
    assert first["audio"]["path"] == "upload/espeak-f/asr_ci_01.wav" and first["audio"]["sampling_rate"] == 16000
    samples = audio_for_model(str(mcga_data.SAMPLE_DATA_DIR / "upload/espeak-f/asr_ci_01.wav"), "array", None)["array"]
    np.testing.assert_allclose(first["audio"]["array"], samples, atol=1e-7)  # datasets decodes the stored wav bytes as they are
    assert set(mcga_hub.HUB_CONFIGS.values()) == set(mcga_hub.CONFIGS) and mcga_hub.HUB_CONFIGS["mcga_su_text"] == "su"


@pytest.mark.parametrize("task,mode", [("asr", "audio"), ("s2tt", "audio"), ("sec", "audio"), ("sqa", "audio"), ("su", "text"), ("sr", "audio")])
def test_mcga_process_docs_hub_equals_release(mcga_copy, task, mode):
    from lmms_eval_tasks.mcga import hooks

    loaded = datasets.load_dataset("yxdu/MCGA", task, split="test")
    hub_docs = list(hooks._load_docs(task, mode, loaded))
    plugin_yaml = datasets.load_dataset("json", data_files={"test": str(mcga_data.task_file(mcga_data.SAMPLE_DATA_DIR, task))}, split="test")
    release_docs = list(hooks._load_docs(task, mode, plugin_yaml))  # the plugin's way: $MCGA_DATA_DIR unset, the shipped sample
    _same_docs(hub_docs, release_docs)
    assert [d["doc_key"] for d in hub_docs] == [json.loads(line)["audio"] for line in mcga_data.task_file(mcga_data.SAMPLE_DATA_DIR, task).read_text(encoding="utf-8").splitlines() if line.strip()]
    chat = {"chat_audio": "data_uri", "max_audio_seconds": 30}  # the request a server gets: same text, same wav bytes
    assert hooks.mcga_doc_to_messages(hub_docs[0], chat) == hooks.mcga_doc_to_messages(release_docs[0], chat)
    assert hooks.mcga_doc_to_text(hub_docs[0]) == hooks.mcga_doc_to_text(release_docs[0])


def test_mcga_hub_dataset_refuses_a_bad_row(offline, capsys):
    release = offline / "release"
    shutil.copytree(mcga_data.SAMPLE_DATA_DIR, release)
    path = mcga_data.task_file(release, "su")
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    lines[1] = json.dumps({**row, "su_a": "E"}, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert mcga_hub.main([str(release), str(offline / "out")]) == 1
    error = capsys.readouterr().err
    assert f"MCGA_su_test.jsonl:2 (id {row['id']!r}, audio {row['audio']!r}): field 'su_a' must be one option letter A/B/C/D, got 'E'" in error
    assert not (offline / "out").exists()  # checked before anything is written
    (offline / "full").mkdir()
    (offline / "full" / "x").write_text("x")
    assert mcga_hub.main([str(mcga_data.SAMPLE_DATA_DIR), str(offline / "full")]) == 1
    assert "exists and is not an empty folder" in capsys.readouterr().err


def test_mcga_rows_from_hub_refuses_bad_hub_rows(mcga_copy):
    loaded = datasets.load_dataset("yxdu/MCGA", "sr", split="test", features=None)
    stored = loaded.cast_column("audio", datasets.Audio(decode=False)).to_list()
    bad_audio = [dict(r) for r in stored]
    bad_audio[2]["audio"] = {"bytes": b"RIFF not a wav", "path": stored[2]["audio"]["path"]}
    with pytest.raises(mcga_data.MCGADataError, match=rf"hub dataset yxdu/MCGA config 'sr' row 3 \(id '{stored[2]['id']}', audio '{stored[2]['audio']['path']}'\): field 'audio': the audio bytes \(14\) are not readable audio"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list(bad_audio, features=loaded.features), "sr")
    duplicate = [dict(r) for r in stored]
    duplicate[1]["audio"] = stored[0]["audio"]
    with pytest.raises(mcga_data.MCGADataError, match=r"row 2 .*field 'audio': duplicate audio path, first seen on row 1"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list(duplicate, features=loaded.features), "sr")
    no_gold = [{**r, "sr_a": " "} if n == 3 else r for n, r in enumerate(stored)]
    with pytest.raises(mcga_data.MCGADataError, match=r"row 4 .*missing or empty field\(s\) \['sr_a'\]"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list(no_gold, features=loaded.features), "sr")
    with pytest.raises(mcga_data.MCGADataError, match=r"no Audio column 'audio'"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list([{"id": "1", "audio": "a.wav"}]), "sr")
