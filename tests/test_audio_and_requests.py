"""Audio hand-off and request construction for simple and chat models (audio_bench_core.audio, mcga hooks)."""

import base64
import io

import numpy as np
import pytest
import soundfile

from audio_bench_core import audio
from lmms_eval_tasks.mcga import hooks
from mcga import data, prompts


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "cut"


def tone(path, seconds, rate, channels=1):
    t = np.arange(int(seconds * rate)) / rate
    mono = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    soundfile.write(path, np.stack([mono] * channels, axis=1) if channels > 1 else mono, rate)
    return str(path)


def test_array_form_is_16k_mono_float32(tmp_path):
    clip = audio.load_audio_array(tone(tmp_path / "s.wav", 2.0, 44100, channels=2))
    assert clip["sampling_rate"] == 16000 and clip["array"].dtype == np.float32 and clip["array"].ndim == 1
    assert len(clip["array"]) == 32000


def test_clips_over_30_seconds_are_cut_in_every_form(tmp_path, cache_dir):
    long_clip = tone(tmp_path / "long.wav", 31.5, 16000)
    assert len(audio.load_audio_array(long_clip)["array"]) == 30 * 16000
    cut_path = audio.audio_for_model(long_clip, "path")
    assert cut_path.startswith(str(cache_dir)) and soundfile.info(cut_path).duration == pytest.approx(30.0)
    assert audio.audio_for_model(long_clip, "path") == cut_path  # cached, not rewritten
    uri = audio.audio_for_model(long_clip, "data_uri")
    decoded, rate = soundfile.read(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert uri.startswith("data:audio/wav;base64,") and len(decoded) / rate == pytest.approx(30.0)


def test_clips_within_the_limit_are_handed_over_unchanged(tmp_path, cache_dir):
    short = tone(tmp_path / "short.wav", 3.0, 16000)
    assert audio.audio_for_model(short, "path") == short
    assert base64.b64decode(audio.audio_for_model(short, "data_uri").split(",", 1)[1]) == open(short, "rb").read()
    assert not cache_dir.exists()


def _former_array(path, max_seconds=audio.DEFAULT_MAX_SECONDS):
    """The former hand-off, for comparison: whole file decoded 2-D, channels averaged, cut, librosa.resample."""
    import librosa

    samples, rate = soundfile.read(path, dtype="float32", always_2d=True)
    samples = samples.mean(axis=1, dtype=np.float32)[: int(max_seconds * rate)]
    return samples if rate == 16000 else librosa.resample(samples, orig_sr=rate, target_sr=16000).astype(np.float32)


@pytest.mark.parametrize("seconds,rate,channels", [(2.0, 44100, 2), (1.37, 44100, 1), (0.9, 22050, 1), (3.3, 8000, 2), (31.2, 48000, 1), (31.5, 16000, 1), (2.5, 16000, 3)])
def test_array_form_is_bit_identical_to_whole_decode_channel_mean_and_librosa_resample(tmp_path, seconds, rate, channels):
    t = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(1).normal(0, 0.05, (len(t), channels))
    samples = (0.3 * np.sin(2 * np.pi * 440 * t)[:, None] + noise).astype(np.float32)
    path = str(tmp_path / "c.wav")
    soundfile.write(path, samples, rate, subtype="PCM_16")
    new = audio.load_audio_array(path)["array"]
    assert new.dtype == np.float32 and new.ndim == 1 and np.array_equal(new, _former_array(path))


def test_a_cut_clip_decodes_only_the_frames_kept(tmp_path, monkeypatch):
    path = tone(tmp_path / "long.wav", 31.0, 16000)
    asked = []
    real_read = soundfile.SoundFile.read
    monkeypatch.setattr(soundfile.SoundFile, "read", lambda self, frames=-1, **kw: asked.append(frames) or real_read(self, frames, **kw))
    assert len(audio.load_audio_array(path)["array"]) == 480000 and asked == [480000]


def test_resampling_needs_no_librosa_import(tmp_path):
    import subprocess
    import sys

    path = tone(tmp_path / "s.wav", 0.5, 44100)
    code = f"import sys; from audio_bench_core import audio; audio.load_audio_array({path!r}); print('librosa' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_undecodable_file_and_unknown_form_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"nope")
    with pytest.raises(OSError, match="cannot decode audio file .*bad.wav"):
        audio.load_audio_array(str(bad))
    with pytest.raises(ValueError, match="unknown audio form 'mp3'"):
        audio.audio_for_model(str(bad), "mp3")


@pytest.fixture
def su_doc():
    row = data.load_task_rows("su", data_dir=data.SAMPLE_DATA_DIR)[0]
    return {**row, "mcga_task": "su", "mcga_mode": "audio"}


def test_chat_request_is_system_then_audio_then_official_instruction(su_doc):
    messages = hooks.mcga_doc_to_messages(su_doc, {"chat_audio": "path", "max_audio_seconds": 30})
    official = prompts.task_prompt("su")
    assert messages[0] == {"role": "system", "content": [{"type": "text", "text": official.system}]}
    assert messages[1]["role"] == "user"
    assert messages[1]["content"][0] == {"type": "audio", "url": su_doc["audio_path"]}
    assert messages[1]["content"][1] == {"type": "text", "text": su_doc["su"]}  # official instruction is "{su}"


def test_chat_request_for_openai_compatible_servers_carries_a_data_uri(su_doc):
    messages = hooks.mcga_doc_to_messages(su_doc, {"chat_audio": "data_uri"})
    assert messages[1]["content"][0]["url"].startswith("data:audio/wav;base64,UklGR")  # "RIFF"


def test_chat_messages_validate_against_lmms_eval_protocol(su_doc):
    from lmms_eval.protocol import ChatMessages

    parsed = ChatMessages(messages=hooks.mcga_doc_to_messages(su_doc, {}))
    images, videos, audios = parsed.extract_media()
    assert audios == [su_doc["audio_path"]] and not images and not videos


def test_simple_request_gets_array_audio_and_system_plus_instruction(su_doc):
    [clip] = hooks.mcga_doc_to_audio(su_doc, {"simple_audio": "array"})
    assert clip["sampling_rate"] == 16000 and clip["array"].ndim == 1
    assert hooks.mcga_doc_to_audio(su_doc, {"simple_audio": "path"}) == [su_doc["audio_path"]]
    assert hooks.mcga_doc_to_text(su_doc) == prompts.task_prompt("su").system + "\n" + su_doc["su"]


def test_text_mode_twin_sends_no_audio_and_the_official_text_prompt(su_doc):
    doc = {**su_doc, "mcga_mode": "text"}
    assert hooks.mcga_doc_to_audio(doc, {}) == []
    messages = hooks.mcga_doc_to_messages(doc, {})
    assert messages[1]["content"] == [{"type": "text", "text": f"文本: {doc['asr']}\n任务: {doc['su']}"}]


def test_asr_instruction_is_the_official_one():
    doc = {**data.load_task_rows("asr", data_dir=data.SAMPLE_DATA_DIR)[0], "mcga_task": "asr", "mcga_mode": "audio"}
    assert hooks.mcga_doc_to_messages(doc, {})[1]["content"][1]["text"] == "Transcribe the Chinese audio into Chinese text."


def test_process_results_carries_ids_and_handles_empty_and_huge_outputs(su_doc):
    empty = hooks.mcga_process_results(su_doc, [""])
    assert empty["empty_responses"]["empty"] is True and empty["acc_official"] == 0.0
    assert empty["strict_parse_failures"] == {"key": "upload/espeak-f/asr_qu_01.wav", "id": "su_01", "speaker": "espeak-f", "gold": "B", "output": "",
                                              "strict_letter": None, "strict_reason": "no_letter"}  # fmt: skip
    # the option's text instead of its letter is read as that option (options come from the doc's question)
    assert hooks.mcga_process_results(su_doc, ["漂泊天涯的游子的思乡愁苦"])["acc_strict"] == 100.0
    huge = hooks.mcga_process_results(su_doc, ["B" + "。" * 100_000])
    assert huge["acc_strict"] == 100.0 and huge["empty_responses"]["empty"] is False
    asr_doc = {**data.load_task_rows("asr", data_dir=data.SAMPLE_DATA_DIR)[0], "mcga_task": "asr", "mcga_mode": "audio"}
    items = [hooks.mcga_process_results(asr_doc, [asr_doc["asr"] * 2_000])["cer_strict"]]
    assert hooks.mcga_agg_cer_strict(items) == pytest.approx(100 * 1999)
    assert {k: items[0][k] for k in ("key", "id", "speaker")} == {"key": "upload/espeak-f/asr_ci_01.wav", "id": "asr_ci_01", "speaker": "espeak-f"}


# ------------------------------------------------------------------------------------------- issue 27 item 3
def test_integer_pcm_is_scaled_by_its_dtype():
    assert audio.pcm_to_float(np.array([-32768, 0, 16384, 32767], np.int16)).tolist() == [-1.0, 0.0, 0.5, pytest.approx(32767 / 32768)]
    assert audio.pcm_to_float(np.array([-(2**31), 2**30], np.int32)).tolist() == [-1.0, 0.5]
    assert audio.pcm_to_float(np.array([-128, 64], np.int8)).tolist() == [-1.0, 0.5]
    assert audio.pcm_to_float(np.array([0, 128, 192], np.uint8)).tolist() == [-1.0, 0.0, 0.5]  # 8-bit WAV is unsigned, 128 = silence
    floats = audio.pcm_to_float(np.array([0.25, -0.5], np.float64))
    assert floats.dtype == np.float32 and floats.tolist() == [0.25, -0.5]
    for refused, said in [(np.array([1, 2], np.int64), "int64"), (np.array([1], np.uint16), "uint16"), ([0, 1200, -3], "integer samples in a list")]:
        with pytest.raises(ValueError, match=said):
            audio.pcm_to_float(refused)
    assert audio.pcm_to_float([0.5, -0.25]).tolist() == [0.5, -0.25]  # a JSON round trip of float samples


def test_every_integer_form_reaches_the_model_as_the_same_float_samples(tmp_path):
    """What scipy.io.wavfile and soundfile.read(dtype=...) return, in a dict or bare: the 16 kHz float samples of the
    file, whatever the dtype (before the fix an int16 clip reached Whisper 32,768 times too loud)."""
    path = tone(tmp_path / "s.wav", 0.5, 16000)  # PCM_16: every integer width holds its samples exactly
    expected = soundfile.read(path, dtype="float32")[0]
    for dtype in ("int16", "int32"):
        samples = soundfile.read(path, dtype=dtype)[0]
        assert np.array_equal(audio.audio_to_16k_mono({"array": samples, "sampling_rate": 16000}), expected), dtype
        assert np.array_equal(audio.audio_to_16k_mono(samples), expected), dtype
    from scipy.io import wavfile

    rate, scipy_samples = wavfile.read(path)
    assert scipy_samples.dtype == np.int16 and np.array_equal(audio.audio_to_16k_mono({"array": scipy_samples, "sampling_rate": rate}), expected)
    eight_bit = tmp_path / "u8.wav"
    soundfile.write(eight_bit, expected, 16000, subtype="PCM_U8")
    _, unsigned = wavfile.read(eight_bit)
    assert unsigned.dtype == np.uint8
    assert np.abs(audio.audio_to_16k_mono({"array": unsigned, "sampling_rate": 16000}) - expected).max() < 1 / 128  # one 8-bit step
    stereo = np.stack([soundfile.read(path, dtype="int16")[0]] * 2)  # (channels, samples)
    assert np.allclose(audio.audio_to_16k_mono({"array": stereo, "sampling_rate": 16000}), expected)
    with pytest.raises(ValueError, match="integer samples in a list carry no sample width"):
        audio.audio_to_16k_mono({"array": soundfile.read(path, dtype="int16")[0].tolist(), "sampling_rate": 16000})


NON_SEEKABLE = [("WAV", "GSM610", 8000), ("WAV", "G721_32", 8000), ("AU", "G723_24", 8000), ("W64", "GSM610", 16000), ("WAV", "NMS_ADPCM_16", 8000)]


@pytest.mark.parametrize(("container", "subtype", "rate"), NON_SEEKABLE)
def test_the_data_check_accepts_what_the_loader_decodes_in_formats_that_cannot_seek(tmp_path, container, subtype, rate):
    path = tmp_path / f"clip.{container.lower()}"
    t = np.arange(rate) / rate
    soundfile.write(path, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), rate, format=container, subtype=subtype)
    with soundfile.SoundFile(path) as handle:
        assert not handle.seekable()  # the kind: libsndfile cannot seek in it (blocks() refused it)
    assert audio.audio_file_check(path) == audio.AudioCheck()  # was "not readable audio (frames must be specified ...)"
    loaded = audio.load_audio_array(str(path))["array"]
    with soundfile.SoundFile(path) as handle:  # decoded from the start, as far as the decoder goes
        decoded = handle.read(handle.frames, dtype="float32")
    assert len(loaded) == int(np.ceil(len(decoded) * 16000 / rate)) and len(loaded) >= 16000
    assert np.array_equal(audio.audio_to_16k_mono(path.read_bytes()), loaded)  # file bytes: the same decoder
    half = audio.load_audio_array(str(path), max_seconds=0.5)["array"]
    assert len(half) == 8000 and np.array_equal(half[:4000], loaded[:4000])


def test_check_and_loader_share_one_decoder(tmp_path, monkeypatch):
    path = tone(tmp_path / "s.wav", 0.5, 16000)

    def broken(*args, **kwargs):
        raise RuntimeError("decoder says no")

    monkeypatch.setattr(audio, "decoded_audio", broken)
    assert audio.audio_file_check(path).problem == "not readable audio (decoder says no)"
    with pytest.raises(OSError, match="decoder says no"):
        audio.load_audio_array(path)
