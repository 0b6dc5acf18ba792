"""Unit tests of the MCGA tasks (lmms_eval/tasks/mcga): a two-clip folder in the release layout, turned into the hub
layout by make_hub_dataset as lmms-eval loads it, then the hooks, with official-scorer values worked out by hand. No
model, no judge, no download."""

import json

import numpy as np
import pytest
import soundfile
from datasets import Audio, Dataset

from lmms_eval.tasks import TaskManager
from lmms_eval.tasks.mcga import make_hub_dataset
from lmms_eval.tasks.mcga import utils as mcga_utils

ROWS = [
    {"id": "1", "asr": "床前明月光", "audio": "upload/a/1.wav", "source": "spk_a", "genre": "诗", "dynasty": "唐"},
    {"id": "2", "asr": "大江东去", "audio": "upload/b/2.wav", "source": "spk_b", "genre": "词", "dynasty": "宋"},
]


@pytest.fixture
def release_folder(tmp_path, monkeypatch):
    """``data/MCGA_asr_test.jsonl`` and its clips (one second of a 440 Hz tone each); clips read from the hub layout are
    written below the task cache, here in ``tmp_path``."""
    for row in ROWS:
        clip = tmp_path / row["audio"]
        clip.parent.mkdir(parents=True, exist_ok=True)
        soundfile.write(clip, 0.1 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000), 16000)
    (tmp_path / "MCGA_asr_test.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS), encoding="utf-8")
    monkeypatch.setenv("LMMS_EVAL_AUDIO_BENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _hub_asr(folder):
    """The ASR config of ``folder`` in the hub layout, as lmms-eval loads it (an ``Audio`` column)."""
    return Dataset.from_list(make_hub_dataset.hub_rows(folder, "asr")).cast_column("audio", Audio())


def _asr_docs(folder):
    return list(mcga_utils.mcga_asr_docs(_hub_asr(folder)))


def test_mcga_tasks_are_registered():
    expected = {"mcga", "mcga_asr", "mcga_s2tt", "mcga_sec", "mcga_sqa", "mcga_su", "mcga_sr", "mcga_sqa_text", "mcga_su_text", "mcga_sr_text"}
    assert not expected.difference(TaskManager("ERROR").all_tasks)


def test_docs_are_the_hub_rows_with_their_clips(release_folder):
    docs = _asr_docs(release_folder)
    assert [d["doc_key"] for d in docs] == ["upload/a/1.wav", "upload/b/2.wav"]
    assert open(docs[0]["audio_path"], "rb").read() == (release_folder / "upload/a/1.wav").read_bytes()


def test_a_missing_clip_stops_make_hub_dataset_naming_the_row(release_folder):
    (release_folder / "upload/b/2.wav").unlink()
    with pytest.raises(ValueError, match="2.wav"):
        make_hub_dataset.hub_rows(release_folder, "asr")


def test_a_clip_that_is_not_audio_is_an_error_naming_the_row(release_folder):
    rows = make_hub_dataset.hub_rows(release_folder, "asr")
    rows[1]["audio"]["bytes"] = b"not a wav file"
    with pytest.raises(ValueError, match="upload/b/2.wav"):
        mcga_utils.mcga_asr_docs(Dataset.from_list(rows).cast_column("audio", Audio()))


def test_a_dataset_not_in_the_hub_layout_is_refused(release_folder):
    with pytest.raises(ValueError, match="not the hub layout"):
        mcga_utils.mcga_asr_docs(Dataset.from_list(ROWS))


def test_prompt_is_the_official_system_prompt_then_the_instruction(release_folder):
    text = mcga_utils.mcga_doc_to_text(_asr_docs(release_folder)[0])
    assert text == "You are a speech recognition model. Do not provide any explanations or notes.\nTranscribe the Chinese audio into Chinese text."


def test_chat_messages_carry_the_clip_path_then_the_instruction(release_folder):
    doc = _asr_docs(release_folder)[0]
    system, user = mcga_utils.mcga_doc_to_messages(doc, {"chat_audio": "path", "max_audio_seconds": 30})
    assert system["role"] == "system" and user["content"][0] == {"type": "audio", "url": doc["audio_path"]}
    assert user["content"][1]["text"] == "Transcribe the Chinese audio into Chinese text."


def test_official_cer_counts_the_joining_spaces(release_folder):
    # One substitution (月 -> 日) in 5 characters; the official scorer joins characters with spaces before jiwer's CER,
    # so the reference is 9 characters long: 1 / 9 = 11.11 %. The second clip is right after the official cut at
    # the last ":\n" ("识别结果如下:\n大江东去").
    docs = _asr_docs(release_folder)
    items = [mcga_utils.mcga_process_results(doc, [answer])["cer_official"] for doc, answer in zip(docs, ["床前明日光", "识别结果如下:\n大江东去"])]
    assert mcga_utils.mcga_agg_cer_official(items) == pytest.approx(100 * 1 / 16)  # 1 edit over 9 + 7 characters
    assert mcga_utils.mcga_agg_cer_official([items[0]]) == pytest.approx(100 / 9)


def test_a_mostly_empty_run_is_reported_by_its_counts_not_raised(release_folder):
    docs = _asr_docs(release_folder)
    records = [mcga_utils.mcga_process_results(doc, [""])["flagged_responses"] for doc in docs]
    assert mcga_utils.agg_flagged_responses(records) == len(docs) == 2  # a failed run: a warning says so, nothing raises
    assert [record["empty"] for record in records] == [True, True] and not any(record["failure"] for record in records)
