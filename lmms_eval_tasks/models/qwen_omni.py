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
  video processor (audio, images and text need none);
- messages are sent as the task made them; the default Qwen system turn (``system_prompt``) is added only
  when the request has no system message. Simple-model requests become one user turn
  ``[audio..., prompt]`` after that system turn;
- audio parts may take every form a task hands over (:func:`audio_bench_core.audio.audio_to_16k_mono`: paths,
  ``data:`` URIs, file bytes, ``{"array", "sampling_rate"}`` with an ndarray or a list, undecoded
  ``{"bytes", "path"}``, datasets' ``AudioDecoder``, a bare 16 kHz array); each is decoded to 16 kHz mono
  (channels averaged) and never cut here (the task decides: MCGA cuts at 30 s, PARSA-Bench does not); a clip
  longer than the feature extractor's window (300 s for Qwen2.5-Omni) is split into consecutive window-long
  parts, as lmms-eval's simple wrapper does;
- a part naming a path that is the HF ``Audio`` ``path`` of an audio value of the document (lmms-eval's
  automatic messages for tasks without ``doc_to_messages``, e.g. librispeech's ``0.wav``, which exists nowhere
  on disk) gets that decoded value (:func:`audio_bench_core.audio.audio_in_document`); a "video" part holding
  audio (lmms-eval labels dicts "video") is sent as audio;
- generation follows the task's ``generation_kwargs``: ``max_new_tokens`` (default 4096), greedy when
  ``temperature`` is 0 / ``do_sample`` false, ``top_p``, ``num_beams``, and ``until`` stop strings;
- text-only requests and images are served as by lmms-eval's classes: an image (PIL image, path or
  ``data:image`` URI) is made RGB and resized as ``qwen_vl_utils.fetch_image`` does for them (``smart_resize``
  to multiples of the model's patch factor, at most 512 x 512 pixels for the chat class, 16384 x 28 x 28 for the
  simple one), then goes through the model's image processor; a simple request's visuals are images (PIL, or
  image paths), videos (video paths) or audio (anything else). Video is refused with an error naming
  ``*_upstream``: transformers' video processor needs torchvision, whose PyPI wheel breaks a CPU install, so
  it could not be built or tested here;
- a document whose generation raised gets ``audio_bench_core.responses.GENERATION_FAILED_PREFIX + " <error>"``
  on our tasks, which count it as a failed generation, never as an answer; on any other task (lmms-eval's
  built-in ones, which would score that text) it gets ``""``, and the failures are counted per task, logged,
  written into the results file and fatal past our tasks' threshold
  (:class:`lmms_eval_tasks.models.FailureAccounting`). The error is logged with its task and doc id. Errors of
  the task's own hooks (``doc_to_messages`` / ``doc_to_visual``: bad data) stop the run.

Model arguments (``--model_args k=v,...``): ``pretrained``; ``device`` (default ``cuda`` when available,
else ``cpu``; one process per GPU under ``accelerate launch``); ``device_map`` (e.g. ``auto`` to spread one
model over the GPUs of a single process); ``dtype`` (default ``auto``: the checkpoint's, bf16 for the real
weights); ``attn_implementation`` (e.g. ``flash_attention_2``); ``system_prompt`` (text or a file; ``none``
= add no system turn); ``batch_size`` (only 1); ``use_cache``.
"""

from __future__ import annotations

import os
import traceback

import numpy as np
import torch
from loguru import logger
from tqdm import tqdm

from lmms_eval.api.model import lmms
from audio_bench_core.audio import TARGET_SAMPLING_RATE, audio_in_document, audio_to_16k_mono, is_audio_value
from lmms_eval_tasks.models import FailureAccounting
from audio_bench_core.responses import GENERATION_FAILED_PREFIX

#: lmms-eval's default Qwen-Omni system prompt (the one the Qwen team gives for Qwen2.5-Omni).
DEFAULT_SYSTEM_PROMPT = (
    "You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of perceiving auditory and visual inputs, "
    "as well as generating text and speech."
)
DEFAULT_MAX_NEW_TOKENS = 4096
#: Image pixel budgets of lmms-eval's Qwen-Omni classes: the chat class passes ``max_pixels=512*512``
#: (``lmms_eval/models/chat/_chat_base.py`` IMAGE_KWARGS); the simple class none, so qwen_vl_utils' default
#: (16384 tokens x 28 x 28 pixels) applies.
CHAT_IMAGE_MAX_PIXELS = 512 * 512
SIMPLE_IMAGE_MAX_PIXELS = 16384 * 28 * 28
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")
VIDEO_EXTENSIONS = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".flv", ".wmv", ".m4v")
_ERROR_CHARS = 300


def failed_generation(error: BaseException) -> str:
    """The placeholder answer of a document whose generation raised: prefix, error type, first 300 characters."""
    message = " ".join(str(error).split())[:_ERROR_CHARS]
    return f"{GENERATION_FAILED_PREFIX} {type(error).__name__}: {message}".rstrip()


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
        samples = audio_to_16k_mono(reference)
        window = int(self.processor.feature_extractor.n_samples)
        if len(samples) <= window:
            return [samples]
        logger.warning(f"{self.model_family}: an audio part of {len(samples) / TARGET_SAMPLING_RATE:.1f} s is longer than the model's {window / TARGET_SAMPLING_RATE:.0f} s window; sent as consecutive parts")
        return [samples[start : start + window] for start in range(0, len(samples), window)]

    def _image(self, reference, max_pixels: int):
        """An image part as lmms-eval's Qwen-Omni classes prepare it (``qwen_vl_utils.fetch_image``, which needs torchvision
        and so is not imported here): RGB (transparent pixels on white), resized with PIL's default filter to the
        ``smart_resize`` size for the model's patch factor within [4 x factor^2, ``max_pixels``] pixels."""
        from PIL import Image
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize  # the torchvision-free module

        if isinstance(reference, Image.Image):
            image = reference
        elif isinstance(reference, str) and reference.startswith("data:image"):
            import base64
            import io

            image = Image.open(io.BytesIO(base64.b64decode(reference.split("base64,", 1)[1])))
        elif isinstance(reference, str):
            image = Image.open(reference.removeprefix("file://"))
        else:
            raise ValueError(f"{self.model_family}: unsupported image part of type {type(reference).__name__} (expected a PIL image, a path or a data:image URI)")
        if image.mode == "RGBA":
            background = Image.new("RGB", image.size, (255, 255, 255))
            background.paste(image, mask=image.split()[3])
            image = background
        else:
            image = image.convert("RGB")
        processor = self.processor.image_processor
        factor = int(processor.patch_size) * int(processor.merge_size)
        height, width = smart_resize(image.height, image.width, factor=factor, min_pixels=4 * factor * factor, max_pixels=max_pixels)
        return image.resize((width, height))

    def _audio_of_part(self, part: dict, document):
        """The audio an "audio" part (or a "video" part holding audio) names, or ``None`` when it is no audio."""
        reference = part.get("url", part.get("audio"))
        in_document = audio_in_document(reference, document) if isinstance(reference, str) else None
        if in_document is not None:
            return in_document  # lmms-eval's automatic messages name the HF Audio "path" (e.g. "0.wav"); the clip is in the document
        if part["type"] == "audio" or is_audio_value(reference):
            return reference
        return None

    def generate_from_messages(self, messages: list[dict], gen_kwargs: dict, document=None, image_max_pixels: int | None = None) -> str:
        """Text answer to chat ``messages`` (``[{"role", "content": [{"type": "text"|"audio"|"image"|"video", ...}]}]``).

        Audio parts may take every form of :func:`audio_bench_core.audio.audio_to_16k_mono`; a path that is not a file
        but the HF ``path`` of an audio value of ``document`` is that value. Images: see :meth:`_image`
        (``image_max_pixels``: the chat class's 512 x 512 unless given).

        Raises:
            ValueError: a video part, or an unsupported audio or image part.
        """
        conversation, audios, images = [], [], []
        for message in self._with_default_system(messages):
            content = []
            parts = message["content"] if isinstance(message["content"], list) else [{"type": "text", "text": message["content"]}]
            for part in parts:
                kind = part["type"]
                if kind == "text":
                    content.append({"type": "text", "text": part["text"]})
                    continue
                audio = self._audio_of_part(part, document) if kind in ("audio", "video") else None
                if audio is not None:
                    for samples in self._audio_parts(audio):
                        audios.append(samples)
                        content.append({"type": "audio", "audio": f"<audio {len(audios)}>"})
                elif kind == "image":
                    images.append(self._image(part.get("url", part.get("image")), image_max_pixels or CHAT_IMAGE_MAX_PIXELS))
                    content.append({"type": "image", "image": f"<image {len(images)}>"})
                else:
                    raise ValueError(
                        f"{self.model_family} (plugin class) takes text, audio and images, not {kind} parts (transformers' video processor needs "
                        f"torchvision); use --model {self.model_family}_upstream for video"
                    )
            conversation.append({"role": message["role"], "content": content})
        text = self.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
        inputs = self.processor(text=[text], audio=audios or None, images=images or None, return_tensors="pt", padding=True)
        inputs = inputs.to(self.model.device)
        for name in ("input_features", "pixel_values"):
            if name in inputs:
                inputs[name] = inputs[name].to(self.model.dtype)
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

    def _answer(self, messages: list[dict], gen_kwargs: dict, task: str, doc_id: int, document=None) -> str:
        try:
            return self.generate_from_messages(messages, gen_kwargs, document, image_max_pixels=self.image_max_pixels)
        except Exception as error:
            logger.error(f"{self.model_family}: generation failed for {task} doc {doc_id}: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            return failed_generation(error)

    def generate_until(self, requests) -> list[str]:
        """One answer per request, in order. A document whose generation raises gets :func:`failed_generation` on our
        tasks and ``""`` on other tasks (counted, and fatal past the threshold: :class:`lmms_eval_tasks.models.FailureAccounting`)."""
        answers, accounting = [], FailureAccounting(self.model_family)
        for request in tqdm(requests, disable=(self.rank != 0), desc=self.model_family):
            context, gen_kwargs, messages, task, doc_id, document = self._request_messages(request)
            answers.append(accounting.answer(task, self._answer(messages, dict(gen_kwargs), task, doc_id, document)))
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), answers[-1])
        accounting.close(self)
        return answers

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{self.model_family} only generates text")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError(f"{self.model_family} answers single-turn requests")


class _ChatRequests:
    """Chat variant: requests carry the task's ``doc_to_messages``."""

    is_simple = False

    image_max_pixels = CHAT_IMAGE_MAX_PIXELS  # as lmms-eval's chat class

    def _request_messages(self, request):
        context, doc_to_messages, gen_kwargs, doc_id, task, split = request.args
        document = self.task_dict[task][split][doc_id]
        return context, gen_kwargs, doc_to_messages(document), task, doc_id, document


class _SimpleRequests:
    """Simple variant (``--force_simple``): one user turn ``[every audio of doc_to_visual, prompt]``."""

    is_simple = True

    image_max_pixels = SIMPLE_IMAGE_MAX_PIXELS  # as lmms-eval's simple class (qwen_vl_utils' default)

    def _request_messages(self, request):
        context, gen_kwargs, doc_to_visual, doc_id, task, split = request.args
        document = self.task_dict[task][split][doc_id]
        visuals = (doc_to_visual(document) or []) if doc_to_visual is not None else []
        content = [_simple_part(visual) for visual in _flat(visuals)] + [{"type": "text", "text": context}]
        return context, gen_kwargs, [{"role": "user", "content": content}], task, doc_id, document


def _flat(visuals) -> list:
    """``doc_to_visual``'s list, with lists of images (one multi-image visual) flattened as lmms-eval's simple class does."""
    from PIL import Image

    flat = []
    for visual in visuals:
        if isinstance(visual, (list, tuple)) and visual and all(isinstance(v, Image.Image) for v in visual):
            flat.extend(visual)
        else:
            flat.append(visual)
    return flat


def _simple_part(visual) -> dict:
    """One visual of a simple request as a message part: a PIL image or an image path is an image, a video path a
    video (refused), anything else audio (every form of :func:`audio_bench_core.audio.audio_to_16k_mono`)."""
    from PIL import Image

    if isinstance(visual, Image.Image):
        return {"type": "image", "url": visual}
    if isinstance(visual, str) and not is_audio_value(visual):
        extension = os.path.splitext(visual)[1].lower()
        if extension in IMAGE_EXTENSIONS:
            return {"type": "image", "url": visual}
        if extension in VIDEO_EXTENSIONS:
            return {"type": "video", "url": visual}
    return {"type": "audio", "url": visual}


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
