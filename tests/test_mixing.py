"""Fast checks of the pieces behind mixed runs (issue 18); the CLI runs are in tests/test_mixing_cli.py."""

from __future__ import annotations

import base64
import importlib.metadata
import io
import json
import re
from argparse import Namespace

import numpy as np
import pytest
import soundfile

from audio_bench_core import run_status
from audio_bench_core.audio import audio_in_document, audio_to_16k_mono, is_audio_value
from audio_bench_core.responses import GENERATION_FAILED_PREFIX, FailedRunError
from tests.builtin_task_copies import MMAC_AUDIO

CLIP = MMAC_AUDIO / "content_en_01.wav"  # 16 kHz mono PCM-16


def _flac(samples, rate) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="FLAC", subtype="PCM_16")
    return buffer.getvalue()


class _Decoded:
    def __init__(self, data, sample_rate):
        self.data, self.sample_rate = data, sample_rate


class _AudioDecoderInterface:
    """What datasets >= 4 hands over for an Audio column (torchcodec's AudioDecoder): get_all_samples() -> (channels, samples)."""

    def __init__(self, samples, rate):
        import torch

        self._decoded = _Decoded(torch.from_numpy(np.atleast_2d(samples)), rate)

    def get_all_samples(self):
        return self._decoded


def test_every_form_of_one_clip_decodes_to_the_same_16k_mono_samples():
    samples, rate = soundfile.read(CLIP, dtype="float32")
    raw = CLIP.read_bytes()
    forms = [str(CLIP), f"file://{CLIP}", "data:audio/wav;base64," + base64.b64encode(raw).decode(), raw, bytearray(raw), memoryview(raw),
             _flac(samples, rate), {"array": samples, "sampling_rate": rate, "path": "0.wav"}, {"array": samples.tolist(), "sampling_rate": rate},
             {"bytes": raw, "path": "0.wav"}, {"bytes": None, "path": str(CLIP)}, _AudioDecoderInterface(samples, rate), samples]  # fmt: skip
    for form in forms:
        decoded = audio_to_16k_mono(form)
        assert decoded.dtype == np.float32 and np.array_equal(decoded, samples), type(form).__name__
    stereo = np.stack([samples, 0.5 * samples])  # (channels, samples): averaged to 0.75 x
    assert np.allclose(audio_to_16k_mono({"array": stereo, "sampling_rate": rate}), 0.75 * samples, atol=1e-7)
    assert np.allclose(audio_to_16k_mono({"array": stereo.T, "sampling_rate": rate}), 0.75 * samples, atol=1e-7)


def test_other_rates_are_resampled_to_16k():
    samples = np.sin(np.arange(8000) / 8000 * 2 * np.pi * 440).astype(np.float32)  # 1 s at 8 kHz
    assert audio_to_16k_mono({"array": samples, "sampling_rate": 8000}).shape == (16000,)
    assert audio_to_16k_mono(_flac(samples, 8000)).shape == (16000,)


def test_values_that_are_no_audio_are_errors_naming_what_was_wrong(tmp_path):
    with pytest.raises(ValueError, match="unsupported audio value of type int"):
        audio_to_16k_mono(42)
    with pytest.raises(ValueError, match="needs 'sampling_rate'"):
        audio_to_16k_mono({"array": [0.0, 0.1]})
    with pytest.raises(ValueError, match="must be 1-D 16 kHz mono"):
        audio_to_16k_mono(np.zeros((2, 100), dtype=np.float32))
    with pytest.raises(FileNotFoundError, match="0.wav"):
        audio_to_16k_mono("0.wav")
    with pytest.raises(OSError, match="cannot decode audio bytes"):
        audio_to_16k_mono(b"RIFF....WAVEfmt no audio")
    assert is_audio_value("x.FLAC") and is_audio_value({"bytes": b"x", "path": None}) and not is_audio_value("x.png") and not is_audio_value(None)


def test_a_path_named_only_inside_the_document_is_found_there():
    first = {"path": "0.wav", "array": np.zeros(10, dtype=np.float32), "sampling_rate": 16000}
    second = {"path": "clips/1.flac", "bytes": b"..."}
    document = {"audio": first, "options": [{"audio": second}], "gt": "0.wav"}
    assert audio_in_document("0.wav", document) is first
    assert audio_in_document("clips/1.flac", document) is second
    assert audio_in_document("elsewhere/1.flac", document) is second  # by file name, when only one value has it
    assert audio_in_document("2.wav", document) is None and audio_in_document("0.wav", None) is None
    with pytest.raises(ValueError, match="2 audio values of the document carry this path"):
        audio_in_document("0.wav", {"a": first, "b": dict(first)})


class _Model:
    world_size = 1


def test_a_failed_generation_reaches_only_tasks_that_count_it():
    from lmms_eval_tasks.models import FAILED_ON_OTHER_TASKS, FailureAccounting

    FAILED_ON_OTHER_TASKS.clear()
    placeholder = f"{GENERATION_FAILED_PREFIX} RuntimeError: boom"
    accounting = FailureAccounting("qwen2_5_omni")
    assert accounting.answer("mcga_asr", placeholder) == placeholder  # ours: counted by the task itself
    assert accounting.answer("librispeech_test_clean", placeholder) == ""  # built-in: never a transcript
    assert accounting.answer("librispeech_test_clean", "a real answer") == "a real answer"
    run_status.clear()
    accounting.close(_Model())  # 1 of 2 failed: not more than half
    assert FAILED_ON_OTHER_TASKS == {"librispeech_test_clean": {"failed": 1, "requests": 2, "first_error": "generation raised: RuntimeError: boom"}}
    assert run_status.statuses() == {}
    accounting.answer("librispeech_test_clean", placeholder), accounting.answer("librispeech_test_clean", placeholder), accounting.answer("librispeech_test_clean", "ok")
    accounting.close(_Model())  # 2 of 3: a failed run of that task only, recorded (issue 27: it no longer ends the run)
    [(task, status)] = run_status.statuses().items()
    assert task == "librispeech_test_clean" and status["status"] == "failed"
    assert re.match(rf"{FailedRunError.__name__}: librispeech_test_clean: failed run: generation failed for 2 of 3 documents with --model qwen2_5_omni", status["reasons"][0])
    FAILED_ON_OTHER_TASKS.clear()
    run_status.clear()


@pytest.mark.parametrize(
    "model, tasks, ours",
    [("dummy", "librispeech_test_clean", False), ("dummy", "librispeech_test_clean,mcga_asr", True), ("dummy", "parsa", True),
     ("faster_whisper", "librispeech_test_clean", True), ("qwen2_5_omni", "mme", True), ("qwen2_5_omni_upstream", "mme", True),
     ("openai", "mmac_content", True), ("openai", "mmmu_val", False), ("dummy", None, True)],
)  # fmt: skip
def test_the_plugins_cli_behaviour_applies_to_runs_naming_our_tasks_or_models(model, tasks, ours):
    from lmms_eval_tasks.plugin import run_uses_plugin

    assert run_uses_plugin(Namespace(model=model, tasks=tasks)) is ours


def test_results_record_the_installed_lmms_eval_not_the_enclosing_clone(monkeypatch):
    import lmms_eval.utils as utils

    from lmms_eval_tasks.plugin import record_installed_lmms_eval_version

    for name in ("LMMS_EVAL_GIT_COMMIT", "GIT_COMMIT", "GITHUB_SHA", "LMMS_EVAL_GIT_BRANCH", "GIT_BRANCH", "BRANCH_NAME", "GITHUB_REF_NAME"):
        monkeypatch.delenv(name, raising=False)
    record_installed_lmms_eval_version()  # the venv of this checkout lies inside the plugin's clone
    assert utils.get_lmms_eval_version_string() == importlib.metadata.version("lmms-eval")
    assert utils.get_git_commit_hash() is None and utils.get_git_branch_name() is None
    monkeypatch.setenv("LMMS_EVAL_GIT_COMMIT", "abc1234")  # lmms-eval's own fallback still applies
    assert utils.get_git_commit_hash() == "abc1234"


def test_simple_requests_sort_images_video_and_audio_as_lmms_evals_simple_class():
    from PIL import Image

    from lmms_eval_tasks.models.qwen_omni import _flat, _simple_part

    image = Image.new("RGB", (4, 4))
    assert [p["type"] for p in map(_simple_part, _flat([image, [image, image], "a.JPG", "b.mp4", "c.wav", b"RIFF", {"array": [0.0], "sampling_rate": 16000}]))] == [
        "image", "image", "image", "image", "video", "audio", "audio", "audio"]  # fmt: skip


def test_a_run_of_lmms_evals_own_tasks_and_models_fails_as_lmms_eval_lets_it():
    """lmms-eval's cli_evaluate then catches the error and exits 0, as without the plugin (CLI: test_mixing_cli.py)."""
    from lmms_eval_tasks import plugin

    def cli_evaluate_single(args):
        raise ValueError("boom")

    wrapped = plugin._exit_nonzero_on_failure(cli_evaluate_single)
    with pytest.raises(ValueError, match="boom"):
        wrapped(Namespace(model="dummy", tasks="librispeech_test_clean"))
    with pytest.raises(SystemExit):
        wrapped(Namespace(model="dummy", tasks="librispeech_test_clean,mcga_asr"))


# ---------------------------------------------------------------- item 5: the installed lmms-eval version


@pytest.mark.lmms_eval_versions
def test_our_tasks_and_models_run_through_the_installed_lmms_evals_python_api(offline_env, monkeypatch):
    """Our task folder and the replay model through lmms-eval's own evaluator (``simple_evaluate`` with a TaskManager
    of our folder only), in this process: runs on every lmms-eval version, also where its built-in index cannot load."""
    import lmms_eval.models  # noqa: F401  (loads the entry points, so our models)
    from lmms_eval import evaluator
    from lmms_eval.tasks import TaskManager

    from lmms_eval_tasks import TASKS_DIR
    from tests.conftest import FIXTURES

    for key, value in offline_env.items():
        monkeypatch.setenv(key, value)
    expected = json.loads((FIXTURES / "official_runner_rows" / "expected_official.json").read_text(encoding="utf-8"))
    manager = TaskManager("WARNING", include_path=str(TASKS_DIR), include_defaults=False)
    results = evaluator.simple_evaluate(model="replay", model_args=f"predictions={FIXTURES / 'official_runner_rows'}", tasks=["mcga_su"], task_manager=manager)
    assert results["results"]["mcga_su"]["acc_official,none"] == pytest.approx(expected["su_acc"])
    assert results["lmms_eval_version"] == importlib.metadata.version("lmms-eval")
