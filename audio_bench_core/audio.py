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
import functools
import hashlib
import io
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from audio_bench_core import cache_dir

TARGET_SAMPLING_RATE = 16000
DEFAULT_MAX_SECONDS = 30.0
#: Shortest clip accepted as data (seconds): anything shorter is an empty or truncated file, not speech.
MIN_AUDIO_SECONDS = 0.1
AUDIO_FORMS = ("array", "path", "data_uri")
#: Frames decoded at a time by :func:`audio_file_problem` (64 Ki frames: 0.5 MiB of stereo float32).
_CHECK_BLOCK_FRAMES = 1 << 16

logger = logging.getLogger(__name__)


@dataclass
class DecodedAudio:
    """An audio file opened by :func:`decoded_audio`: ``rate`` (Hz), ``channels``, ``header_frames`` (the frames its
    header promises; a truncated file holds fewer) and ``blocks``, yielding float32 arrays of shape ``(frames,
    channels)`` at full scale 1, decoded from the start."""

    rate: int
    channels: int
    header_frames: int
    blocks: object


def decoded_audio(path, max_seconds: float | None = None, blocksize: int = 1 << 22) -> DecodedAudio:
    """Open ``path`` (a path, or a binary file object such as ``io.BytesIO`` of file bytes) for decoding from the start: at most the first ``max_seconds`` (``None``: every frame the
    decoder gives), in blocks of at most ``blocksize`` frames (default 4 Mi: a clip cut at 30 s is one read of the
    frames kept; a header promising more frames than a file holds never makes one read allocate more than that). The
    file is closed when the blocks are exhausted.

    The one decoder behind the data check (:func:`audio_file_check`) and the loader (:func:`load_audio_array` and
    every form built from a file), so a file the check accepts is a file the loader decodes, and the reverse. It
    reads sequentially (``SoundFile.read`` until the decoder gives no more frames) and never seeks: formats
    libsndfile cannot seek in (GSM 06.10, G.721/G.723 and NMS ADPCM in WAV, AU or W64) decode like any other, and a
    header promising frames a truncated file does not hold gives only the frames there are.

    Raises:
        soundfile's errors (``LibsndfileError``, ``RuntimeError``, ``TypeError`` ...) when ``path`` cannot be opened
        or decoded, on opening or while the blocks are read: callers turn them into their own messages.
    """
    import soundfile

    handle = soundfile.SoundFile(str(path) if isinstance(path, (str, Path)) else path)
    rate, frames = int(handle.samplerate), int(handle.frames)
    limit = _kept_frames(frames, rate, max_seconds) if max_seconds is not None else None

    def blocks():
        with handle:
            remaining = limit
            while remaining is None or remaining > 0:
                block = handle.read(blocksize if remaining is None else min(blocksize, remaining), dtype="float32", always_2d=True)
                if not len(block):
                    return
                if remaining is not None:
                    remaining -= len(block)
                yield block

    return DecodedAudio(rate, handle.channels, frames, blocks())


def _read_mono(path: str, max_seconds: float | None = None) -> tuple[np.ndarray, int]:
    """``(float32 mono samples, rate)`` of at most the first ``max_seconds`` of ``path`` (logged when cut).

    Decoded by :func:`decoded_audio` (only the frames kept; seekable or not); a mono file is returned as read (no
    averaging: the same values ``mean`` over one channel gives), a multi-channel one averaged in float32.

    Raises:
        OSError: the file cannot be decoded (names it).
    """
    try:
        audio = decoded_audio(path, max_seconds)
        mono = audio.channels == 1
        parts = [block[:, 0] if mono else block.mean(axis=1, dtype=np.float32) for block in audio.blocks]
    except Exception as error:
        raise OSError(f"cannot decode audio file {path}: {error}") from None
    samples = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    rate, frames = audio.rate, audio.header_frames
    if _kept_frames(frames, rate, max_seconds) < frames:
        logger.warning("audio %s is %.2f s long; cut to its first %.1f s (MCGA protocol)", path, frames / rate, max_seconds)
    return samples, rate


def _kept_frames(frames: int, rate: int, max_seconds: float | None) -> int:
    """Frames kept of a clip of ``frames`` at ``rate`` Hz: all, or the first ``int(max_seconds * rate)``."""
    if max_seconds is not None and frames > int(max_seconds * rate):
        return int(max_seconds * rate)
    return frames


def resample_to_target(samples: np.ndarray, rate: int) -> np.ndarray:
    """``samples`` (float32 mono) at ``rate`` Hz resampled to 16 kHz, bit for bit what ``librosa.resample(samples,
    orig_sr=rate, target_sr=16000)`` returns with librosa 0.11's defaults (``res_type="soxr_hq"``, ``fix=True``,
    ``scale=False``): ``soxr.resample(..., quality="soxr_hq")``, then cut or zero-padded to
    ``ceil(len * 16000 / rate)`` samples (``librosa.util.fix_length``), float32. soxr is called directly: importing
    librosa only to reach it costs about 2 s and 200 MB (numba, llvmlite). The tests compare with librosa."""
    if rate == TARGET_SAMPLING_RATE:
        return samples
    import soxr

    if not np.isfinite(samples).all():  # librosa's valid_audio check, kept: soxr would spread a NaN silently
        raise ValueError("audio buffer is not finite everywhere")
    n_samples = int(np.ceil(samples.shape[-1] * (float(TARGET_SAMPLING_RATE) / rate)))
    resampled = soxr.resample(samples, rate, TARGET_SAMPLING_RATE, quality="soxr_hq")
    if len(resampled) > n_samples:
        resampled = resampled[:n_samples]
    elif len(resampled) < n_samples:
        resampled = np.pad(resampled, (0, n_samples - len(resampled)))
    return np.asarray(resampled, dtype=np.float32)


#: Peak amplitude (full scale = 1) at or below which a clip is all silent: at most one 16-bit step (2**-15).
SILENT_PEAK = 2.0**-15
#: Absolute sample value counted as "at the rail" (full scale, or beyond it in a float file).
CLIP_LEVEL = 0.999
#: Share of samples at the rail from which a clip is reported as clipped (1 %: a loud but sound recording touches
#: the rail on a few isolated peaks, far below this).
CLIPPED_SHARE = 0.01


@dataclass(frozen=True)
class AudioCheck:
    """What :func:`audio_file_check` found in one audio file.

    Attributes:
        problem: why the file is not usable audio (a data error), or ``None``.
        warning: what is suspicious but usable (an all-silent or clipped clip), or ``None``; always ``None`` when
            there is a problem.
    """

    problem: str | None = None
    warning: str | None = None


def audio_file_check(path: str | Path, min_seconds: float = MIN_AUDIO_SECONDS) -> AudioCheck:
    """Decode the whole of ``path`` and say whether it is usable audio.

    The file is decoded one block of :data:`_CHECK_BLOCK_FRAMES` frames at a time (a header alone can promise
    frames a truncated file does not hold; memory does not grow with the clip's length), as float32 at full scale 1.

    Problems (data errors, each a one-line reason for the caller to put in its error with the file and row):
    unreadable (``"not readable audio (...)"``), shorter than ``min_seconds`` (empty, 0-sample or truncated file:
    ``"0.000 s long, shorter than the 0.1 s minimum ..."``), or holding non-finite samples (NaN or ±inf, as a float
    WAV can: ``"holds 3 non-finite samples (NaN or ±inf) of 16000, the first at 0.250 s"``; a model would be
    given garbage, and resampling refuses it mid-run).

    Warnings (usable, but worth a look; the callers count them): all silent (peak amplitude at most
    :data:`SILENT_PEAK`, one 16-bit step) or clipped (at least :data:`CLIPPED_SHARE` of the samples at or beyond
    :data:`CLIP_LEVEL` of full scale).

    Args:
        path: an audio file soundfile can read (wav, flac, ogg, mp3 ...).
        min_seconds: shortest accepted duration in seconds (default :data:`MIN_AUDIO_SECONDS`).
    """
    frames = non_finite = at_rail = 0
    first_non_finite, peak = None, 0.0
    try:  # decoded block by block, by the loader's own decoder: memory stays one block whatever the clip's length
        audio = decoded_audio(path, blocksize=_CHECK_BLOCK_FRAMES)
        rate, channels = audio.rate, audio.channels
        for block in audio.blocks:
            finite = np.isfinite(block)
            if not finite.all():
                bad = int(block.size - np.count_nonzero(finite))
                if first_non_finite is None:
                    first_non_finite = frames + int(np.argmin(finite.all(axis=1)))
                non_finite += bad
                block = np.where(finite, block, 0.0)
            magnitude = np.abs(block)
            if magnitude.size:
                peak = max(peak, float(magnitude.max()))
            at_rail += int(np.count_nonzero(magnitude >= CLIP_LEVEL))
            frames += len(block)
    except Exception as error:  # soundfile raises LibsndfileError/RuntimeError variants
        return AudioCheck(problem=f"not readable audio ({error})")
    seconds = frames / rate if rate else 0.0
    if seconds < min_seconds:
        return AudioCheck(problem=f"{seconds:.3f} s long, shorter than the {min_seconds} s minimum (empty or truncated file)")
    samples = frames * channels
    if non_finite:
        return AudioCheck(problem=f"holds {non_finite} non-finite samples (NaN or ±inf) of {samples}, the first at {first_non_finite / rate:.3f} s")
    if peak <= SILENT_PEAK:
        return AudioCheck(warning=f"all silent (peak amplitude {peak:.2g} of full scale 1, over {seconds:.2f} s)")
    if at_rail >= CLIPPED_SHARE * samples:
        return AudioCheck(warning=f"clipped ({at_rail} of {samples} samples, {100 * at_rail / samples:.1f}%, at or beyond {CLIP_LEVEL} of full scale)")
    return AudioCheck()


def audio_file_problem(path: str | Path, min_seconds: float = MIN_AUDIO_SECONDS) -> str | None:
    """Why ``path`` is not usable audio, or ``None`` if it is: the ``problem`` of :func:`audio_file_check`."""
    return audio_file_check(path, min_seconds).problem


def audio_file_check_once(path: str | Path) -> AudioCheck:
    """:func:`audio_file_check` (default minimum length), remembered per (resolved path, size, mtime) for the life of
    the process: the tasks of one run that read the same clips decode each file once (MCGA's audio and text-mode
    tasks share the release's clips: 7 decodes per clip without this; PARSA's settings of a task share its clips).
    A file rewritten since (other size or modification time) is decoded again.

    Raises:
        OSError: ``path`` cannot be stat-ed (e.g. it does not exist).
        ValueError: ``path`` holds a NUL character (the caller checks paths first, :func:`path_text_problem`).
    """
    resolved = Path(path).resolve()
    stat = os.stat(resolved)
    return _audio_file_check_memo(str(resolved), stat.st_size, stat.st_mtime_ns)


def audio_file_problem_once(path: str | Path) -> str | None:
    """The ``problem`` of :func:`audio_file_check_once` (same memo)."""
    return audio_file_check_once(path).problem


@functools.lru_cache(maxsize=65536)
def _audio_file_check_memo(path: str, size: int, mtime_ns: int) -> AudioCheck:
    return audio_file_check(path)


def path_text_problem(value: object) -> str | None:
    """Why a data file's audio path cell cannot name a file, or ``None``: not a string (``true``, a number, an object),
    or holding a NUL or other control character (the operating system refuses such a path with a bare ``ValueError:
    embedded null byte``, and no release writes one)."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__} ({str(value)[:40]!r}), not a path string"
    bad = next((ch for ch in value if ord(ch) < 32 or ord(ch) == 127), None)
    if bad is not None:
        return f"holds the control character U+{ord(bad):04X} at position {value.index(bad)} ({value[:60]!r}); a path cannot hold it"
    return None


#: A byte that is not UTF-8 in text read with ``errors="surrogateescape"`` (each such byte becomes U+DC80-U+DCFF).
NOT_UTF8 = re.compile("[\udc80-\udcff]")


def first_not_utf8(value: object) -> re.Match | None:
    """The first byte that was not UTF-8 in a data file's cell (a string read with ``errors="surrogateescape"``, or the
    strings inside a list/object cell, looked at without recursion): its match (``.group()`` is U+DC80-U+DCFF, the
    byte being ``ord(...) - 0xDC00``; ``.start()`` its position in its string), or ``None``. Shared by the data
    loaders of the three benchmarks, which name the file, row and field."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            match = NOT_UTF8.search(item)
            if match:
                return match
        elif isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(item)
        elif isinstance(item, list):
            stack.extend(item)
    return None


def audio_warnings_line(warnings: list[tuple[str, str]], what: str) -> str | None:
    """One line counting the audio warnings of a data load (for the log and the check commands), or ``None``.

    Args:
        warnings: ``[(where, warning), ...]``: the row (file, line, id) and its :class:`AudioCheck` warning.
        what: what was loaded, e.g. ``"MCGA asr (data/MCGA_asr_test.jsonl)"``.

    Returns:
        e.g. ``"MCGA asr (...): 2 clip(s) with audio warnings (1 all silent, 1 clipped), scored as they are; first:
        data/MCGA_asr_test.jsonl:3 (id ...): all silent (...)"``.
    """
    if not warnings:
        return None
    kinds: dict[str, int] = {}
    for _, warning in warnings:
        kind = warning.split(" (", 1)[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    counts = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    where, warning = warnings[0]
    return f"{what}: {len(warnings)} clip(s) with audio warnings ({counts}), scored as they are; first: {where}: {warning}"


def load_audio_array(path: str, max_seconds: float | None = DEFAULT_MAX_SECONDS) -> dict:
    """Decode one file to ``{"array": float32 mono ndarray (n,), "sampling_rate": 16000}``.

    At most the first ``max_seconds`` are decoded; channels are averaged; other rates are resampled to 16 kHz
    (:func:`resample_to_target`: soxr ``soxr_hq``, librosa's default, bit-identical to ``librosa.resample``).

    Raises:
        OSError: the file cannot be decoded, or holds NaN or ±inf samples (the message names it).
    """
    samples, rate = _read_mono(path, max_seconds)
    if not np.isfinite(samples).all():  # the data checks refuse such files; a file changed since is named here
        raise OSError(f"audio file {path} holds non-finite samples (NaN or ±inf); check the data folder (mcga-data / parsa-data / mmac-data check)")
    return {"array": resample_to_target(samples, rate), "sampling_rate": TARGET_SAMPLING_RATE}


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
        samples, rate = _read_mono(path, max_seconds)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(_wav_bytes(samples, rate))
        os.replace(partial, target)  # atomic: concurrent ranks never see a half-written file
    return str(target)


#: soundfile container formats sent as their own bytes under the ``audio/wav`` MIME type.
WAV_CONTAINERS = ("WAV", "WAVEX")
#: File suffix of each container soundfile names (``soundfile.info(...).format``), for bytes held without a file name.
CONTAINER_SUFFIXES = {"WAV": ".wav", "WAVEX": ".wav", "FLAC": ".flac", "OGG": ".ogg", "MP3": ".mp3", "AIFF": ".aiff", "AU": ".au", "W64": ".w64", "RF64": ".wav", "CAF": ".caf"}


def container_format(source: str | Path | bytes) -> str | None:
    """The container of an audio file or of audio bytes as read from their first bytes (``"WAV"``, ``"FLAC"``,
    ``"MP3"``, ``"OGG"``, ... as soundfile names them), never from a file name; ``None`` when soundfile cannot read it."""
    import soundfile

    try:
        return soundfile.info(io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else str(source)).format
    except Exception:  # soundfile raises LibsndfileError/RuntimeError variants
        return None


def audio_bytes_file(payload: bytes, name: str, folder: Path) -> Path:
    """Audio file bytes held in a dataset (an HF ``Audio`` value's ``bytes``) as a file, written once to ``folder`` and
    named by their SHA-1 and by the container the bytes hold (:func:`container_format`; the ``name``'s suffix only when
    the bytes are not readable audio, which the caller's check then reports), so every form a model takes is built from
    the same bytes as from a release's file.

    Raises:
        OSError: the file cannot be written.
    """
    suffix = CONTAINER_SUFFIXES.get(container_format(payload) or "", Path(name).suffix.lower() or ".bin")
    target = Path(folder) / f"{hashlib.sha1(payload).hexdigest()}{suffix}"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        partial.write_bytes(payload)
        os.replace(partial, target)  # atomic: concurrent ranks never see a half-written file
    return target


def audio_data_uri(path: str, max_seconds: float | None = DEFAULT_MAX_SECONDS) -> str:
    """``data:audio/wav;base64,...`` of the (cut) clip, as the official runner sends to vLLM.

    The MIME type always matches the bytes: a WAV file (read from its bytes, :func:`container_format`, not its name)
    is sent as it is; any other container (FLAC, MP3, OGG, or another container behind a ``.wav`` name) is decoded
    and sent as 16-bit WAV."""
    clip = audio_path_within_limit(path, max_seconds)
    if container_format(clip) in WAV_CONTAINERS:
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


# ------------------------------------------------------------------------------------------- forms models receive
# Every form in which an lmms-eval task (ours or a built-in one) hands a clip to a model, decoded in one place for
# our models (faster_whisper, qwen2_5_omni, qwen3_omni). Built-in tasks return the HF ``Audio`` value of the
# document: with datasets < 4 a dict ``{"path", "array", "sampling_rate"}``; with datasets >= 4 a torchcodec-backed
# ``AudioDecoder``; undecoded (``Audio(decode=False)``) a dict ``{"bytes", "path"}``. Others hand paths, arrays,
# JSON-round-tripped dicts (``array`` a list) or raw file bytes. lmms-eval's automatic chat messages name a dict's
# ``path`` (e.g. ``0.wav``), which exists only inside the document: :func:`audio_in_document` finds it there.

#: File extensions read as audio when a path arrives in a part lmms-eval labelled "video" (its default for dicts).
AUDIO_EXTENSIONS = ("wav", "flac", "mp3", "ogg", "opus", "m4a", "aac", "wma", "aiff", "aif")


def _is_audio_decoder(value) -> bool:
    """torchcodec's ``AudioDecoder`` (what datasets >= 4 returns for an ``Audio`` column): ``get_all_samples()``."""
    return callable(getattr(value, "get_all_samples", None))


def pcm_to_float(samples, what: str = "audio array") -> np.ndarray:
    """Samples of any numeric dtype as float32 at full scale 1, scaled by their dtype (the convention of
    ``soundfile.read(dtype=...)``, ``scipy.io.wavfile.read`` and ``librosa.util.buf_to_float``):

    - float (``float16``/``float32``/``float64``): already at full scale 1, only cast;
    - signed integer PCM ``int8``, ``int16``, ``int32``: divided by ``2**(bits - 1)`` (128, 32768, 2**31; a 24-bit
      WAV read by scipy or soundfile as ``int32`` is left-justified, so 2**31 is its full scale too);
    - ``uint8`` (8-bit WAV PCM, unsigned): ``(x - 128) / 128``.

    A list (a JSON round trip) is read as floats at full scale 1; a list of integers carries no sample width, and
    ``int64``/``uint16``/``uint32``/``bool`` samples are no PCM format any reader produces: both are refused rather
    than guessed (an unscaled int16 clip reaches a model 32,768 times too loud; measured: four different Whisper
    transcripts of one clip, one a loop, one empty).

    Raises:
        ValueError: samples of a refused dtype, or non-numeric (names ``what`` and the dtype).
    """
    if hasattr(samples, "detach"):  # a torch tensor
        samples = samples.detach().cpu().numpy()
    from_list = not isinstance(samples, np.ndarray)
    array = np.asarray(samples)
    kind, bits = array.dtype.kind, array.dtype.itemsize * 8
    if kind == "f":
        return array.astype(np.float32, copy=False)
    if from_list and kind in "iu" and array.size:
        raise ValueError(
            f"{what}: integer samples in a list carry no sample width (int16? int32?); pass an ndarray of its PCM dtype "
            "(int16, int32, uint8) or floats at full scale 1"
        )
    if from_list and array.size == 0:
        return np.zeros(array.shape, dtype=np.float32)
    if kind == "i" and bits in (8, 16, 32):
        return (array.astype(np.float32) / np.float32(2 ** (bits - 1))).astype(np.float32, copy=False)
    if kind == "u" and bits == 8:
        return (array.astype(np.float32) - np.float32(128)) / np.float32(128)
    raise ValueError(
        f"{what}: samples of dtype {array.dtype} are no PCM format a reader produces; expected float (full scale 1), int8, int16, int32 or uint8"
    )


def _mono_16k(samples, rate: int, what: str) -> np.ndarray:
    """``samples`` (1-D, or 2-D with channels on the shorter axis; any dtype :func:`pcm_to_float` reads) at ``rate``
    Hz as float32 mono 16 kHz."""
    samples = pcm_to_float(samples, what)
    if samples.ndim == 2:  # (channels, samples) as torchcodec/librosa give, or (samples, channels) as soundfile gives
        samples = samples.mean(axis=0 if samples.shape[0] < samples.shape[1] else 1, dtype=np.float32)
    if samples.ndim != 1:
        raise ValueError(f"{what}: audio samples must be 1-D or 2-D (channels x samples), got shape {samples.shape}")
    return resample_to_target(samples, int(rate))


def _decode_bytes(payload: bytes, what: str) -> np.ndarray:
    try:  # the loader's and the data check's decoder (decoded_audio)
        audio = decoded_audio(io.BytesIO(payload))
        blocks = list(audio.blocks)
    except Exception as error:
        raise OSError(f"cannot decode {what} ({len(payload)} bytes, starting {bytes(payload[:12])!r}): {error}") from None
    samples = np.concatenate(blocks) if blocks else np.zeros((0, audio.channels), dtype=np.float32)
    return _mono_16k(samples.T, audio.rate, what)


def audio_to_16k_mono(value) -> np.ndarray:
    """One clip, in any form a task hands a model, as float32 mono samples at 16 kHz, shape ``(samples,)``.

    Forms: a path or ``file://`` URL (read with soundfile); a ``data:audio/...;base64,`` URI; encoded file bytes
    (``bytes``, ``bytearray``, ``memoryview``); a dict with ``array`` (ndarray, list or tensor; 1-D, or 2-D with the
    channels on the shorter axis) and ``sampling_rate``; an undecoded HF ``Audio`` dict ``{"bytes", "path"}``
    (``bytes`` may be ``None``: then the path is read); a torchcodec ``AudioDecoder`` (datasets >= 4); a bare 1-D
    ndarray, taken as 16 kHz mono (the ``qwen_omni_utils`` convention). Array samples are scaled by their dtype
    (:func:`pcm_to_float`: float as it is, int16 / 32768, int32 / 2**31, int8 / 128, uint8 (x - 128) / 128).
    Channels are averaged; other rates are resampled with :func:`resample_to_target`. Nothing is cut here (tasks
    cut: MCGA at 30 s).

    Raises:
        ValueError: a value of none of these forms (names its type), an array of 3+ dimensions, or samples of a
            dtype :func:`pcm_to_float` refuses (int64, a list of integers ...).
        OSError: a file, URI or byte string that cannot be decoded (names it); FileNotFoundError for a missing path.
    """
    if isinstance(value, str):
        if value.startswith("data:"):
            try:
                payload = base64.b64decode(value.split(",", 1)[1])
            except Exception as error:
                raise OSError(f"cannot decode the audio data URI ({value[:40]}...): {error}") from None
            return _decode_bytes(payload, f"the audio data URI ({value[:40]}...)")
        path = value.removeprefix("file://")
        if not os.path.exists(path):
            raise FileNotFoundError(f"audio file {path!r} does not exist")
        return load_audio_array(path, max_seconds=None)["array"]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _decode_bytes(bytes(value), "audio bytes")
    if isinstance(value, dict):
        if value.get("array") is not None:
            if "sampling_rate" not in value:
                raise ValueError(f"an audio dict with 'array' needs 'sampling_rate' (keys: {sorted(value)})")
            return _mono_16k(value["array"], value["sampling_rate"], f"audio {value.get('path') or 'array'}")
        if value.get("bytes") is not None:
            return _decode_bytes(value["bytes"], f"audio bytes of {value.get('path') or 'an HF Audio value'}")
        if isinstance(value.get("path"), str):
            return audio_to_16k_mono(value["path"])
        raise ValueError(f"an audio dict needs 'array' and 'sampling_rate', 'bytes', or 'path' (keys: {sorted(value)})")
    if _is_audio_decoder(value):
        decoded = value.get_all_samples()
        data = decoded.data
        data = data.detach().cpu().numpy() if hasattr(data, "detach") else np.asarray(data)
        return _mono_16k(data, decoded.sample_rate, f"{type(value).__name__}")
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(f"a bare audio array must be 1-D 16 kHz mono, got shape {value.shape}; pass {{'array', 'sampling_rate'}} instead")
        return pcm_to_float(value, "a bare audio array")
    raise ValueError(
        f"unsupported audio value of type {type(value).__name__}: expected a path, a data URI, file bytes, {{'array', 'sampling_rate'}}, "
        "{'bytes', 'path'}, an AudioDecoder or a 1-D 16 kHz array"
    )


def is_audio_value(value) -> bool:
    """True for a value :func:`audio_to_16k_mono` reads as audio without opening it: an audio dict, file bytes, an
    ``AudioDecoder``, an ``audio/`` data URI or a path with an audio extension (:data:`AUDIO_EXTENSIONS`)."""
    if isinstance(value, dict):
        return value.get("array") is not None or value.get("bytes") is not None or is_audio_value(value.get("path"))
    if isinstance(value, (bytes, bytearray, memoryview)) or _is_audio_decoder(value):
        return True
    if isinstance(value, str):
        return value.startswith("data:audio/") or value.lower().rsplit(".", 1)[-1] in AUDIO_EXTENSIONS
    return False


def _audio_values(value, depth: int = 0):
    """Audio values (decoded HF ``Audio`` dicts, undecoded ``{"bytes", "path"}``, ``AudioDecoder``) inside a document."""
    if isinstance(value, dict):
        if "path" in value and (value.get("array") is not None or value.get("bytes") is not None):
            yield value
        elif depth < 3:
            for item in value.values():
                yield from _audio_values(item, depth + 1)
    elif isinstance(value, (list, tuple)) and depth < 3:
        for item in value:
            yield from _audio_values(item, depth + 1)
    elif _is_audio_decoder(value):
        yield value


def _audio_value_path(value) -> str | None:
    if isinstance(value, dict):
        return value.get("path")
    encoded = getattr(value, "_hf_encoded", None)  # datasets >= 4 keeps the stored {"bytes", "path"} on its AudioDecoder
    return encoded.get("path") if isinstance(encoded, dict) else None


def audio_in_document(reference: str, document) -> object | None:
    """The audio value of ``document`` whose HF ``path`` is ``reference``, or ``None``.

    lmms-eval's automatic chat messages (tasks without ``doc_to_messages``) replace an HF ``Audio`` dict by its
    ``path`` field, e.g. ``"0.wav"``: the name the clip had when the dataset was built, which is not a file here.
    The clip itself is in the document. A path matches exactly, or by file name when only one audio value of the
    document has that file name.

    Raises:
        ValueError: several audio values of the document carry that exact path (ambiguous).
    """
    if not isinstance(reference, str) or document is None:
        return None
    candidates = [(v, _audio_value_path(v)) for v in _audio_values(document)]
    exact = [v for v, path in candidates if path == reference]
    if len(exact) > 1:
        raise ValueError(f"audio {reference!r}: {len(exact)} audio values of the document carry this path; cannot tell which one the message means")
    if exact:
        return exact[0]
    by_name = [v for v, path in candidates if isinstance(path, str) and os.path.basename(path) == os.path.basename(reference)]
    return by_name[0] if len(by_name) == 1 else None
