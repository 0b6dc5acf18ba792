"""faster_whisper's transcript cache: one decode per clip, language, task and decoding settings (issue 13)."""

import numpy as np
import pytest

pytest.importorskip("faster_whisper")
from lmms_eval_tasks.models import faster_whisper as fw  # noqa: E402


class _Segment:
    def __init__(self, text):
        self.text = text


class _CountingModel:
    """Stands in for WhisperModel: returns a text derived from the clip and options, counts decodes."""

    def __init__(self):
        self.calls = []

    def transcribe(self, array, **options):
        self.calls.append(options)
        return iter([_Segment(f" {options['language']}:{options['task']}:{float(np.sum(array)):.3f} ")]), None


def _model(folder=None, language=None, task="transcribe", max_new_tokens=fw.DEFAULT_MAX_NEW_TOKENS):
    model = fw.FasterWhisper.__new__(fw.FasterWhisper)
    model.model, model.language, model.whisper_task, model.beam_size, model.max_new_tokens = _CountingModel(), language, task, 5, max_new_tokens
    model.transcripts = fw.TranscriptCache(folder)
    model._model_identity = {"model": "/models/x", "model_bin": [1, 2], "device": "cpu", "compute_type": "default", "faster_whisper": "1", "ctranslate2": "1"}
    return model


def _clip(seed, seconds=1.0):
    return {"array": np.random.default_rng(seed).normal(0, 0.1, int(16000 * seconds)).astype(np.float32), "sampling_rate": 16000}


def test_the_same_clip_is_decoded_once_per_language_and_settings():
    model, clip = _model(), _clip(0)
    first = model.transcribe(clip, "zh")
    assert model.transcribe({"array": clip["array"].copy(), "sampling_rate": 16000}, "zh") == first  # same content, another array
    assert len(model.model.calls) == 1 and (model.transcripts.hits, model.transcripts.misses) == (1, 1)
    model.transcribe(clip, "fa")  # another language: decoded
    model.transcribe(_clip(1), "zh")  # another clip: decoded
    assert len(model.model.calls) == 3
    assert model.model.calls[0]["max_new_tokens"] == 224 and model.model.calls[0]["temperature"] == 0.0


def test_cache_key_changes_with_every_setting_that_changes_a_transcript():
    clip = _clip(0)["array"]
    base = _model().decoding_settings("zh")
    key = fw.transcript_key(clip, 16000, base)
    assert key == fw.transcript_key(clip.copy(), 16000, dict(base))
    for field, value in [("language", "fa"), ("task", "translate"), ("beam_size", 1), ("max_new_tokens", 448), ("model", "/models/y"),
                         ("model_bin", [1, 3]), ("compute_type", "float32"), ("device", "cuda"), ("ctranslate2", "2")]:  # fmt: skip
        assert fw.transcript_key(clip, 16000, {**base, field: value}) != key, field
    changed = clip.copy()
    changed[100] += 1e-6
    assert fw.transcript_key(changed, 16000, base) != key
    assert fw.transcript_key(clip, 8000, base) != key


def test_transcripts_are_kept_across_runs_only_when_asked(tmp_path):
    clip = _clip(2)
    first = _model(tmp_path / "t")
    text = first.transcribe(clip, "zh")
    second = _model(tmp_path / "t")  # a new run with the same folder
    assert second.transcribe(clip, "zh") == text and second.model.calls == []
    assert _model(None).transcribe(clip, "zh") == text  # default: memo only, decodes again in a new run
    damaged = next((tmp_path / "t").rglob("*.json"))
    damaged.write_text("{not json", encoding="utf-8")
    third = _model(tmp_path / "t")
    assert third.transcribe(clip, "zh") == text and len(third.model.calls) == 1  # a damaged entry is a miss, rewritten


def test_cache_argument_values(tmp_path, monkeypatch):
    monkeypatch.setenv("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path))
    assert fw._cache_folder(None) is None and fw._cache_folder("") is None and fw._cache_folder("false") is None
    assert fw._cache_folder("default") == tmp_path / "whisper-transcripts"
    assert fw._cache_folder(str(tmp_path / "x")) == tmp_path / "x"
