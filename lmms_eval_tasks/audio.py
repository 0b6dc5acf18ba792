"""How audio reaches models: decoded per document, cut at a maximum length, in the form a model takes.

Audio stays a path string in the dataset; nothing is decoded until a model asks for one document.
Forms (chosen per model through the task's ``lmms_eval_specific_kwargs``):

- ``array``: ``{"array": float32 mono ndarray, "sampling_rate": 16000}`` for lmms-eval's simple models
  (qwen2_audio, qwen2_5_omni ``--force_simple``, gpt4o_audio, our faster_whisper ...);
- ``path``: an absolute wav path, for lmms-eval's chat omni models (their audio dicts would be labelled
  "video") and for ``openai --force_simple``;
- ``data_uri``: ``data:audio/wav;base64,...`` for OpenAI-compatible chat servers such as vLLM.

Length policy: like the official MCGA runner (pydub, ``audio[:30000]`` ms), every form gets at most the
first ``max_seconds`` (default 30 s). A cut clip is logged with its path. For ``path`` a cut copy is written
once to ``cache_dir("cut")`` (``$LMMS_EVAL_AUDIO_PLUGIN_CACHE/cut``, default ``~/.cache/lmms_eval_audio_plugin/cut``); a clip within the
limit is handed over unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import os
from pathlib import Path

import numpy as np

from lmms_eval_tasks import cache_dir

TARGET_SAMPLING_RATE = 16000
DEFAULT_MAX_SECONDS = 30.0
#: Shortest clip accepted as data (seconds): anything shorter is an empty or truncated file, not speech.
MIN_AUDIO_SECONDS = 0.1
AUDIO_FORMS = ("array", "path", "data_uri")

logger = logging.getLogger(__name__)


def _read_mono(path: str) -> tuple[np.ndarray, int]:
    import soundfile

    try:
        samples, rate = soundfile.read(path, dtype="float32", always_2d=True)
    except Exception as error:
        raise OSError(f"cannot decode audio file {path}: {error}") from None
    return samples.mean(axis=1, dtype=np.float32), int(rate)


def audio_file_problem(path: str | Path, min_seconds: float = MIN_AUDIO_SECONDS) -> str | None:
    """Why ``path`` is not usable audio, or ``None`` if it is.

    The whole file is decoded (a header alone can promise frames a truncated file does not hold), so this
    catches unreadable, empty (0-sample), truncated and too-short files before any inference.

    Args:
        path: an audio file soundfile can read (wav, flac, ogg, mp3 ...).
        min_seconds: shortest accepted duration in seconds (default :data:`MIN_AUDIO_SECONDS`).

    Returns:
        ``None``, or a one-line reason such as ``"not readable audio (...)"`` or ``"0.000 s long, shorter
        than the 0.1 s minimum"``, for the caller to put in its data error with the file and row.
    """
    import soundfile

    try:
        samples, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except Exception as error:  # soundfile raises LibsndfileError/RuntimeError variants
        return f"not readable audio ({error})"
    seconds = len(samples) / rate if rate else 0.0
    if seconds < min_seconds:
        return f"{seconds:.3f} s long, shorter than the {min_seconds} s minimum (empty or truncated file)"
    return None


def _cut(samples: np.ndarray, rate: int, max_seconds: float | None, path: str) -> np.ndarray:
    if max_seconds is not None and len(samples) > int(max_seconds * rate):
        logger.warning("audio %s is %.2f s long; cut to its first %.1f s (MCGA protocol)", path, len(samples) / rate, max_seconds)
        return samples[: int(max_seconds * rate)]
    return samples


def load_audio_array(path: str, max_seconds: float | None = DEFAULT_MAX_SECONDS) -> dict:
    """Decode one file to ``{"array": float32 mono ndarray (n,), "sampling_rate": 16000}``.

    Channels are averaged; other rates are resampled with librosa (soxr); at most ``max_seconds`` kept.

    Raises:
        OSError: the file cannot be decoded (the message names it).
    """
    samples, rate = _read_mono(path)
    samples = _cut(samples, rate, max_seconds, path)
    if rate != TARGET_SAMPLING_RATE:
        import librosa

        samples = librosa.resample(samples, orig_sr=rate, target_sr=TARGET_SAMPLING_RATE).astype(np.float32)
    return {"array": samples, "sampling_rate": TARGET_SAMPLING_RATE}


def _duration_seconds(path: str) -> float:
    import soundfile

    return float(soundfile.info(path).duration)


def _wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def audio_path_within_limit(path: str, max_seconds: float | None = DEFAULT_MAX_SECONDS) -> str:
    """``path`` itself if it is within ``max_seconds``, else the path of a cached wav of its first ``max_seconds``."""
    if max_seconds is None or _duration_seconds(path) <= max_seconds:
        return path
    stat = os.stat(path)
    key = hashlib.sha1(f"{os.path.abspath(path)}|{stat.st_size}|{stat.st_mtime_ns}|{max_seconds}".encode()).hexdigest()[:16]
    target = cache_dir("cut") / f"{Path(path).stem}-{key}.wav"
    if not target.is_file():
        samples, rate = _read_mono(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(_wav_bytes(_cut(samples, rate, max_seconds, path), rate))
        os.replace(partial, target)  # atomic: concurrent ranks never see a half-written file
    return str(target)


def audio_data_uri(path: str, max_seconds: float | None = DEFAULT_MAX_SECONDS) -> str:
    """``data:audio/wav;base64,...`` of the (cut) clip, as the official runner sends to vLLM."""
    clip = audio_path_within_limit(path, max_seconds)
    if clip.lower().endswith(".wav"):
        payload = Path(clip).read_bytes()
    else:
        samples, rate = _read_mono(clip)
        payload = _wav_bytes(samples, rate)
    return "data:audio/wav;base64," + base64.b64encode(payload).decode("ascii")


def audio_for_model(path: str, form: str, max_seconds: float | None = DEFAULT_MAX_SECONDS):
    """The clip at ``path`` in one of :data:`AUDIO_FORMS`.

    Raises:
        ValueError: unknown ``form``.
        OSError: the file cannot be decoded.
    """
    if form == "array":
        return load_audio_array(path, max_seconds)
    if form == "path":
        return audio_path_within_limit(path, max_seconds)
    if form == "data_uri":
        return audio_data_uri(path, max_seconds)
    raise ValueError(f"unknown audio form {form!r}; expected one of {AUDIO_FORMS}")
