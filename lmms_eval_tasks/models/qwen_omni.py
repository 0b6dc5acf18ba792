"""``--model qwen2_5_omni`` (and ``qwen3_omni``): Qwen-Omni answering in text through its thinker.

lmms-eval 0.7.3's own Qwen-Omni wrappers give an empty answer for every document with the transformers
this project pins (>=5.15): they call ``disable_talker()`` and then ``generate(return_audio=False)``, which
raises (5.15-5.22: AttributeError 'talker'; 5.23+: "Cannot use talker when talker module not
initialized"), and they catch the error per document. They also load the processor from the hard-coded id
``Qwen/Qwen2.5-Omni-7B`` whatever ``pretrained=`` says, need torchvision and ``qwen_omni_utils`` for audio
tasks, ignore the task's ``max_new_tokens`` above 1024 (``thinker_max_new_tokens``) and prepend their own
system turn even when the task sends one (MCGA's official system prompt then becomes a second system turn).

This plugin registers the classes below under the names users type (``qwen2_5_omni``, ``qwen3_omni``;
chat by default, ``--force_simple`` for the simple variant), through its ``lmms_eval.models`` entry point
(:mod:`lmms_eval_tasks.plugin`); lmms-eval loads entry points after its built-ins and lets them replace a
built-in name. lmms-eval's classes stay reachable as ``qwen2_5_omni_upstream`` / ``qwen3_omni_upstream``.
Loading logs one INFO line naming the class.

What these classes do:

- the thinker alone (``Qwen2_5OmniThinkerForConditionalGeneration`` / ``Qwen3OmniMoeThinkerForConditionalGeneration``)
  is loaded from ``pretrained`` (a hub id or a local folder, full Omni checkpoint or thinker-only) and
  generates text; no talker, no speech output;
- the processor comes from ``pretrained`` too; where torchvision is missing, it is built without its
  video processor (audio and text need none);
- messages are sent as the task made them; the default Qwen system turn (``system_prompt``) is added only
  when the request has no system message. Simple-model requests become one user turn
  ``[audio..., prompt]`` after that system turn;
- audio parts may be a path, a ``data:`` URI, a 16 kHz mono array or ``{"array", "sampling_rate"}``; each
  is decoded to 16 kHz mono (channels averaged) and never cut here (the task decides: MCGA cuts at 30 s,
  PARSA-Bench does not); a clip longer than the feature extractor's window (300 s for Qwen2.5-Omni) is
  split into consecutive window-long parts, as lmms-eval's simple wrapper does;
- generation follows the task's ``generation_kwargs``: ``max_new_tokens`` (default 4096), greedy when
  ``temperature`` is 0 / ``do_sample`` false, ``top_p``, ``num_beams``, and ``until`` stop strings;
- images and video are refused (use the ``*_upstream`` class for them); a "video" part that is an audio
  dict or an audio file (lmms-eval's automatic messages label audio dicts of tasks without
  ``doc_to_messages`` "video") is sent as audio. Such tasks may pass a path that is not on disk (hub
  datasets): run them with ``--force_simple``, which receives the decoded audio;
- a document whose generation raised gets
  ``lmms_eval_tasks.responses.GENERATION_FAILED_PREFIX + " <error>"``, and the error is logged with its
  task and doc id; the tasks count such answers as failed generations, never as answers. Errors of the
  task's own hooks (``doc_to_messages`` / ``doc_to_visual``: bad data) stop the run.

Model arguments (``--model_args k=v,...``): ``pretrained``; ``device`` (default ``cuda`` when available,
else ``cpu``; one process per GPU under ``accelerate launch``); ``device_map`` (e.g. ``auto`` to spread one
model over the GPUs of a single process); ``dtype`` (default ``auto``: the checkpoint's, bf16 for the real
weights); ``attn_implementation`` (e.g. ``flash_attention_2``); ``system_prompt`` (text or a file; ``none``
= add no system turn); ``batch_size`` (only 1); ``use_cache``.
"""

from __future__ import annotations

import base64
import io
import traceback

import numpy as np
import torch
from loguru import logger
from tqdm import tqdm

from lmms_eval.api.model import lmms
from lmms_eval_tasks.audio import TARGET_SAMPLING_RATE, load_audio_array
from lmms_eval_tasks.responses import GENERATION_FAILED_PREFIX

#: lmms-eval's default Qwen-Omni system prompt (the one the Qwen team gives for Qwen2.5-Omni).
DEFAULT_SYSTEM_PROMPT = (
    "You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of perceiving auditory and visual inputs, "
    "as well as generating text and speech."
)
DEFAULT_MAX_NEW_TOKENS = 4096
_ERROR_CHARS = 300
AUDIO_EXTENSIONS = ("wav", "flac", "mp3", "ogg", "opus", "m4a", "aac")


def failed_generation(error: BaseException) -> str:
    """The placeholder answer of a document whose generation raised: prefix, error type, first 300 characters."""
    message = " ".join(str(error).split())[:_ERROR_CHARS]
    return f"{GENERATION_FAILED_PREFIX} {type(error).__name__}: {message}".rstrip()


def audio_16k_mono(reference) -> np.ndarray:
    """One audio part as a float32 mono array at 16 kHz, shape (samples,).

    Accepts a file path (or ``file://`` URL), a ``data:audio/...;base64,`` URI, a 1-D array taken to be
    16 kHz mono (the ``qwen_omni_utils`` convention), or ``{"array", "sampling_rate"}``.

    Raises:
        ValueError: any other value, or an array that is not 1-D.
        OSError: the file or data cannot be decoded.
    """
    import librosa
    import soundfile

    if isinstance(reference, dict) and "array" in reference and "sampling_rate" in reference:
        samples, rate = np.asarray(reference["array"], dtype=np.float32), int(reference["sampling_rate"])
        if samples.ndim == 2:  # (channels, samples) as librosa gives, or (samples, channels) as soundfile gives
            samples = samples.mean(axis=0 if samples.shape[0] < samples.shape[1] else 1, dtype=np.float32)
        return samples if rate == TARGET_SAMPLING_RATE else librosa.resample(samples, orig_sr=rate, target_sr=TARGET_SAMPLING_RATE).astype(np.float32)
    if isinstance(reference, np.ndarray):
        if reference.ndim != 1:
            raise ValueError(f"an audio array must be 1-D 16 kHz mono, got shape {reference.shape}")
        return reference.astype(np.float32, copy=False)
    if isinstance(reference, str) and reference.startswith("data:"):
        try:
            samples, rate = soundfile.read(io.BytesIO(base64.b64decode(reference.split(",", 1)[1])), dtype="float32", always_2d=True)
        except Exception as error:
            raise OSError(f"cannot decode the audio data URI ({reference[:40]}...): {error}") from None
        samples = samples.mean(axis=1, dtype=np.float32)
        return samples if rate == TARGET_SAMPLING_RATE else librosa.resample(samples, orig_sr=rate, target_sr=TARGET_SAMPLING_RATE).astype(np.float32)
    if isinstance(reference, str):
        return load_audio_array(reference.removeprefix("file://"), max_seconds=None)["array"]
    raise ValueError(f"unsupported audio part {type(reference).__name__}: expected a path, a data URI, a 16 kHz array or {{'array', 'sampling_rate'}}")


def is_audio_reference(reference) -> bool:
    """True for ``{"array", "sampling_rate"}`` or a path with an audio extension.

    lmms-eval labels audio dicts of tasks without ``doc_to_messages`` as "video" parts (its automatic messages
    default a dict's type to "video"); such parts are sent as the audio they are.
    """
    if isinstance(reference, dict):
        return "array" in reference and "sampling_rate" in reference
    return isinstance(reference, str) and reference.lower().rsplit(".", 1)[-1] in AUDIO_EXTENSIONS


def _load_processor(processor_class, pretrained: str):
    """``processor_class.from_pretrained(pretrained)``; without torchvision, the same processor minus its video processor."""
    from transformers import AutoFeatureExtractor, AutoImageProcessor, AutoTokenizer
    from transformers.utils import is_torchvision_available

    if is_torchvision_available():
        try:
            return processor_class.from_pretrained(pretrained)
        except (ImportError, RuntimeError) as error:  # e.g. a CUDA-built torchvision beside a CPU torch
            if "torchvision" not in str(error):
                raise
            logger.warning(f"{processor_class.__name__}: torchvision is installed but unusable ({error}); loading the processor without its video part")

    class AudioTextProcessor(processor_class):
        """The model's processor with no video processor (building one needs torchvision)."""

        def check_argument_for_proper_class(self, argument_name, argument):
            if argument_name == "video_processor" and argument is None:
                return None
            return super().check_argument_for_proper_class(argument_name, argument)

    processor_dict, _ = processor_class.get_processor_dict(pretrained)
    return AudioTextProcessor(
        image_processor=AutoImageProcessor.from_pretrained(pretrained),
        video_processor=None,
        feature_extractor=AutoFeatureExtractor.from_pretrained(pretrained),
        tokenizer=AutoTokenizer.from_pretrained(pretrained),
        chat_template=processor_dict.get("chat_template"),
    )


class _QwenOmniThinker(lmms):
    """Shared loading and generation; subclasses name the transformers classes and the request form."""

    model_family = ""
    thinker_class_name = ""
    processor_class_name = ""
    default_pretrained = ""

    def __init__(
        self,
        pretrained: str | None = None,
        device: str | None = None,
        device_map: str | None = None,
        dtype: str = "auto",
        attn_implementation: str | None = None,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        batch_size: int | str = 1,
        use_cache: bool | str = True,
        **kwargs,
    ) -> None:
        super().__init__()
        kwargs.pop("max_batch_size", None)
        if kwargs:
            raise ValueError(f"{self.model_family}: unknown model arguments {sorted(kwargs)}; accepted: pretrained, device, device_map, dtype, attn_implementation, system_prompt, batch_size, use_cache")
        if int(batch_size) != 1:
            raise ValueError(f"{self.model_family}: only batch_size=1 is supported (got {batch_size})")
        import transformers
        from accelerate import Accelerator

        accelerator = Accelerator()
        if accelerator.num_processes > 1:
            self.accelerator = accelerator
            self._rank, self._world_size = accelerator.process_index, accelerator.num_processes
            self._device = accelerator.device
        else:
            self._device = torch.device(device if device not in (None, "", "None") else ("cuda" if torch.cuda.is_available() else "cpu"))
        self.pretrained = pretrained or self.default_pretrained
        self.use_cache = str(use_cache).lower() not in ("false", "0", "no")
        prompt = self._resolve_system_prompt(system_prompt) if system_prompt else ""
        self.system_prompt = "" if str(prompt).strip().lower() in ("", "none") else prompt

        self.processor = _load_processor(getattr(transformers, self.processor_class_name), self.pretrained)
        self.tokenizer = self.processor.tokenizer
        load_kwargs = {"dtype": dtype}
        if attn_implementation:
            load_kwargs["attn_implementation"] = attn_implementation
        if device_map not in (None, "", "None") and accelerator.num_processes == 1:
            load_kwargs["device_map"] = device_map
        self.model = getattr(transformers, self.thinker_class_name).from_pretrained(self.pretrained, **load_kwargs).eval()
        if "device_map" not in load_kwargs:
            self.model.to(self._device)
        logger.info(
            f"--model {self.model_family} is {type(self).__module__}.{type(self).__name__} (lmms-eval-audio-plugin): text through "
            f"{self.thinker_class_name} from {self.pretrained} on {self.model.device}, {self.model.dtype}; no talker. "
            f"lmms-eval's own class: --model {self.model_family}_upstream"
        )

    @property
    def device(self):
        return self._device

    @property
    def batch_size(self) -> int:
        return 1

    def _with_default_system(self, messages: list[dict]) -> list[dict]:
        if self.system_prompt and not any(m["role"] == "system" for m in messages):
            return [{"role": "system", "content": [{"type": "text", "text": self.system_prompt}]}, *messages]
        return messages

    def _audio_parts(self, reference) -> list[np.ndarray]:
        samples = audio_16k_mono(reference)
        window = int(self.processor.feature_extractor.n_samples)
        if len(samples) <= window:
            return [samples]
        logger.warning(f"{self.model_family}: an audio part of {len(samples) / TARGET_SAMPLING_RATE:.1f} s is longer than the model's {window / TARGET_SAMPLING_RATE:.0f} s window; sent as consecutive parts")
        return [samples[start : start + window] for start in range(0, len(samples), window)]

    def generate_from_messages(self, messages: list[dict], gen_kwargs: dict) -> str:
        """Text answer to chat ``messages`` (``[{"role", "content": [{"type": "text"|"audio", ...}]}]``).

        Raises:
            ValueError: an image or video part, or an unsupported audio part.
        """
        conversation, audios = [], []
        for message in self._with_default_system(messages):
            content = []
            for part in message["content"]:
                kind = part["type"]
                if kind == "text":
                    content.append({"type": "text", "text": part["text"]})
                elif kind == "audio" or (kind == "video" and is_audio_reference(part.get("url"))):
                    for samples in self._audio_parts(part.get("url", part.get("audio"))):
                        audios.append(samples)
                        content.append({"type": "audio", "audio": f"<audio {len(audios)}>"})
                else:
                    raise ValueError(f"{self.model_family} (plugin class) takes text and audio only, got a {kind} part; use --model {self.model_family}_upstream")
            conversation.append({"role": message["role"], "content": content})
        text = self.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
        inputs = self.processor(text=[text], audio=audios or None, return_tensors="pt", padding=True)
        inputs = inputs.to(self.model.device)
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        return self._generate(inputs, gen_kwargs)

    def _generate(self, inputs, gen_kwargs: dict) -> str:
        temperature = float(gen_kwargs.get("temperature", 0) or 0)
        do_sample = bool(gen_kwargs.get("do_sample", temperature > 0)) and temperature > 0
        settings = {
            "max_new_tokens": int(gen_kwargs.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)),
            "do_sample": do_sample,
            "num_beams": int(gen_kwargs.get("num_beams", 1) or 1),
            "use_cache": self.use_cache,
            "eos_token_id": self.tokenizer.eos_token_id,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if do_sample:
            settings["temperature"] = temperature
            if gen_kwargs.get("top_p") is not None:
                settings["top_p"] = float(gen_kwargs["top_p"])
        with torch.inference_mode():
            output = self.model.generate(**inputs, **settings)
        answer = self.tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True).strip()
        until = gen_kwargs.get("until") or []
        for stop in [until] if isinstance(until, str) else until:
            if stop:
                answer = answer.split(stop)[0]
        return answer

    def _answer(self, messages: list[dict], gen_kwargs: dict, task: str, doc_id: int) -> str:
        try:
            return self.generate_from_messages(messages, gen_kwargs)
        except Exception as error:
            logger.error(f"{self.model_family}: generation failed for {task} doc {doc_id}: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            return failed_generation(error)

    def generate_until(self, requests) -> list[str]:
        """One answer per request, in order; a document whose generation raises gets :func:`failed_generation`."""
        answers = []
        for request in tqdm(requests, disable=(self.rank != 0), desc=self.model_family):
            context, gen_kwargs, messages, task, doc_id = self._request_messages(request)
            answers.append(self._answer(messages, dict(gen_kwargs), task, doc_id))
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), answers[-1])
        return answers

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{self.model_family} only generates text")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError(f"{self.model_family} answers single-turn requests")


class _ChatRequests:
    """Chat variant: requests carry the task's ``doc_to_messages``."""

    is_simple = False

    def _request_messages(self, request):
        context, doc_to_messages, gen_kwargs, doc_id, task, split = request.args
        return context, gen_kwargs, doc_to_messages(self.task_dict[task][split][doc_id]), task, doc_id


class _SimpleRequests:
    """Simple variant (``--force_simple``): one user turn ``[every audio of doc_to_visual, prompt]``."""

    is_simple = True

    def _request_messages(self, request):
        context, gen_kwargs, doc_to_visual, doc_id, task, split = request.args
        visuals = doc_to_visual(self.task_dict[task][split][doc_id]) or []
        content = [{"type": "audio", "url": visual} for visual in visuals] + [{"type": "text", "text": context}]
        return context, gen_kwargs, [{"role": "user", "content": content}], task, doc_id


class _Qwen2_5Omni(_QwenOmniThinker):
    model_family = "qwen2_5_omni"
    thinker_class_name = "Qwen2_5OmniThinkerForConditionalGeneration"
    processor_class_name = "Qwen2_5OmniProcessor"
    default_pretrained = "Qwen/Qwen2.5-Omni-7B"


class _Qwen3Omni(_QwenOmniThinker):
    model_family = "qwen3_omni"
    thinker_class_name = "Qwen3OmniMoeThinkerForConditionalGeneration"
    processor_class_name = "Qwen3OmniMoeProcessor"
    default_pretrained = "Qwen/Qwen3-Omni-30B-A3B-Instruct"


class Qwen2_5OmniThinkerChat(_ChatRequests, _Qwen2_5Omni):
    """``--model qwen2_5_omni``: chat requests, text through the Qwen2.5-Omni thinker."""


class Qwen2_5OmniThinkerSimple(_SimpleRequests, _Qwen2_5Omni):
    """``--model qwen2_5_omni --force_simple``: simple requests, text through the Qwen2.5-Omni thinker."""


class Qwen3OmniThinkerChat(_ChatRequests, _Qwen3Omni):
    """``--model qwen3_omni``: chat requests, text through the Qwen3-Omni thinker."""


class Qwen3OmniThinkerSimple(_SimpleRequests, _Qwen3Omni):
    """``--model qwen3_omni --force_simple``: simple requests, text through the Qwen3-Omni thinker."""
