"""Test-only: record what the real model classes receive, in CLI subprocesses of the model tests.

Active only when this folder is on ``PYTHONPATH`` and ``MODEL_TRACE=<file>`` is set (``tests/test_model_cli.py``
does both). Appends one JSON line per call of a Qwen processor (prompt text, each audio array's length and
sha1, the sampling rate, each image's size, whether videos came) and per ``generate`` of a Qwen model (settings, new tokens).

``MODEL_TRACE_CUDA_TO_CPU=1`` additionally turns ``BatchFeature.to("cuda")`` into ``.to("cpu")`` on a machine
without CUDA: lmms-eval's ``qwen2_audio`` wrapper moves its inputs to "cuda" unconditionally (with
``device_map=auto``), the one step that keeps it off CPU; everything else it does runs unchanged.
"""

import json
import os

if os.environ.get("MODEL_TRACE"):
    import transformers
    from transformers import feature_extraction_utils

    def _record(kind, **fields):
        with open(os.environ["MODEL_TRACE"], "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"kind": kind, "pid": os.getpid(), **fields}, ensure_ascii=False, default=str) + "\n")

    def _shape(value):
        shape = getattr(value, "shape", None)
        return list(shape) if shape is not None else type(value).__name__

    def _sha1(value):
        """sha1 of an audio array's float32 bytes: tests compare it with the clip they expect the model to get."""
        import hashlib

        import numpy as np

        return hashlib.sha1(np.ascontiguousarray(value, dtype=np.float32).tobytes()).hexdigest() if hasattr(value, "shape") else None

    def _wrap_processor(cls):
        original = cls.__call__

        def __call__(self, *args, **kwargs):
            text = kwargs.get("text", args[0] if args else None)
            audio = kwargs.get("audio", kwargs.get("audios"))
            _record(
                "processor",
                processor=cls.__name__,
                text=text if isinstance(text, str) else list(text or []),
                audio=[_shape(a) for a in (audio or [])],
                audio_sha1=[_sha1(a) for a in (audio or [])],
                sampling_rate=kwargs.get("sampling_rate", self.feature_extractor.sampling_rate),
                images=[list(getattr(i, "size", None) or _shape(i)) for i in (kwargs.get("images") or [])],
                videos=kwargs.get("videos") is not None,
            )
            return original(self, *args, **kwargs)

        cls.__call__ = __call__

    def _wrap_generate(cls):
        original = cls.generate

        def generate(self, *args, **kwargs):
            settings = {k: v for k, v in kwargs.items() if not hasattr(v, "shape")}
            output = original(self, *args, **kwargs)
            sequences = output[0] if isinstance(output, tuple) else output
            prompt = kwargs["input_ids"].shape[1] if "input_ids" in kwargs else None
            _record("generate", model=cls.__name__, settings=settings, new_tokens=int(sequences.shape[1] - prompt) if prompt else None)
            return output

        cls.generate = generate

    for name in ("Qwen2_5OmniProcessor", "Qwen3OmniMoeProcessor", "Qwen2AudioProcessor"):
        _wrap_processor(getattr(transformers, name))
    for name in ("Qwen2_5OmniThinkerForConditionalGeneration", "Qwen2_5OmniForConditionalGeneration", "Qwen3OmniMoeThinkerForConditionalGeneration",
                 "Qwen3OmniMoeForConditionalGeneration", "Qwen2AudioForConditionalGeneration"):
        _wrap_generate(getattr(transformers, name))

    if os.environ.get("MODEL_TRACE_CUDA_TO_CPU"):
        import torch

        original_to = feature_extraction_utils.BatchFeature.to

        def to(self, *args, **kwargs):
            if not torch.cuda.is_available():
                args = tuple("cpu" if str(a).startswith("cuda") else a for a in args)
                if str(kwargs.get("device", "")).startswith("cuda"):
                    kwargs["device"] = "cpu"
            return original_to(self, *args, **kwargs)

        feature_extraction_utils.BatchFeature.to = to
