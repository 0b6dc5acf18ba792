"""The load-time audio check decodes each clip once per process, whichever tasks read it (MCGA's seven rule-scored
tasks share the release's clips: 7 decodes per clip before), and again when the file changes."""

import numpy as np
import soundfile

from audio_bench_core import audio
from mcga import data as mcga_data
from parsa import data as parsa_data
from tests.release_shaped_mcga import write_release


def _counting(monkeypatch):
    calls = []
    real = audio.audio_file_check

    def counted(path, *args, **kwargs):
        calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(audio, "audio_file_check", counted)
    audio._audio_file_check_memo.cache_clear()
    return calls


def test_mcga_tasks_sharing_clips_decode_each_clip_once(tmp_path, monkeypatch):
    data_dir, _, _ = write_release(tmp_path / "release")  # 1,000 clips shared by asr, sqa, su, sr
    calls = _counting(monkeypatch)
    rows = {task: mcga_data.load_task_rows(task, data_dir=data_dir) for task in ("asr", "sqa", "su", "sr")}
    rows["sqa_again"] = mcga_data.load_task_rows("sqa", data_dir=data_dir)  # the text twin loads the same file
    clips = {row["audio_path"] for task_rows in rows.values() for row in task_rows}
    assert len(clips) == 1000 and sum(len(r) for r in rows.values()) == 5000
    assert len(calls) == 1000 and set(calls) == clips


def test_a_file_rewritten_since_is_checked_again(tmp_path, monkeypatch):
    path = tmp_path / "clip.wav"
    soundfile.write(path, np.zeros(1600, dtype=np.float32), 16000, subtype="PCM_16")  # 0.1 s: accepted
    calls = _counting(monkeypatch)
    assert audio.audio_file_problem_once(path) is None
    assert audio.audio_file_problem_once(tmp_path / "." / "clip.wav") is None  # same file, another spelling: memo
    assert len(calls) == 1
    soundfile.write(path, np.zeros(160, dtype=np.float32), 16000, subtype="PCM_16")  # now 0.01 s: too short
    assert audio.audio_file_problem_once(path) == "0.010 s long, shorter than the 0.1 s minimum (empty or truncated file)"
    assert len(calls) == 2


def test_parsa_uses_the_same_memo(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    docs = parsa_data.load_task_docs("vazn", parsa_data.SAMPLE_DATA_DIR)
    again = parsa_data.load_task_docs("vazn", parsa_data.SAMPLE_DATA_DIR, setting="text")
    assert len(docs) == len(again) and len(calls) == len({d["audio_path"] for d in docs})
