"""How lmms-eval finds this project's tasks and models after ``pip install``, with no extra flag.

lmms-eval 0.7 loads the entry-point group ``lmms_eval.models`` when ``lmms_eval.models`` is imported,
which its CLI does (through ``lmms_eval.evaluator``) before it builds the task index. It has no task
entry point, and ``LMMS_EVAL_PLUGINS`` is read after the index is built. So :func:`register`, our entry
point, does two things:

1. wraps ``TaskManager.initialize_tasks`` so that every task index also covers
   :data:`lmms_eval_tasks.TASKS_DIR` (added once; a user's ``--include_path`` pointing there too is fine);
2. returns the manifests of our models ``faster_whisper`` and ``replay``, and of our ``qwen2_5_omni`` /
   ``qwen3_omni`` classes, which replace lmms-eval's under those names (lmms-eval's stay reachable as
   ``qwen2_5_omni_upstream`` / ``qwen3_omni_upstream``; see :mod:`lmms_eval_tasks.models.qwen_omni`).

If lmms-eval changes underneath (no ``initialize_tasks(include_path=...)``), an error saying so is logged
and the models are still registered; ``--include_path <TASKS_DIR>`` then remains the way in.
This is the only module that touches lmms-eval internals for discovery.
"""

from __future__ import annotations

import functools
import inspect
import os

from lmms_eval_tasks import TASKS_DIR

MODEL_CLASSES = {
    "faster_whisper": "lmms_eval_tasks.models.faster_whisper.FasterWhisper",
    "replay": "lmms_eval_tasks.models.replay.Replay",
}
#: Built-in names whose lmms-eval classes answer "" with our pinned transformers: ours take them over
#: (entry points load after the built-ins, with overwrite) and lmms-eval's stay reachable as "<name>_upstream".
#: name: (chat class, simple class); see lmms_eval_tasks/models/qwen_omni.py.
REPLACED_MODELS = {
    "qwen2_5_omni": ("lmms_eval_tasks.models.qwen_omni.Qwen2_5OmniThinkerChat", "lmms_eval_tasks.models.qwen_omni.Qwen2_5OmniThinkerSimple"),
    "qwen3_omni": ("lmms_eval_tasks.models.qwen_omni.Qwen3OmniThinkerChat", "lmms_eval_tasks.models.qwen_omni.Qwen3OmniThinkerSimple"),
}
UPSTREAM_MODELS = {
    "qwen2_5_omni_upstream": ("lmms_eval.models.chat.qwen2_5_omni.Qwen2_5_Omni", "lmms_eval.models.simple.qwen2_5_omni.Qwen2_5_Omni"),
    "qwen3_omni_upstream": ("lmms_eval.models.chat.qwen3_omni.Qwen3_Omni", "lmms_eval.models.simple.qwen3_omni.Qwen3_Omni"),
}


class PluginCompatibilityError(RuntimeError):
    """The installed lmms-eval no longer has the hook this plugin uses to add its task folder."""


def _with_tasks_dir(include_path):
    paths = [] if include_path is None else [include_path] if isinstance(include_path, (str, os.PathLike)) else list(include_path)
    if not any(os.path.realpath(p) == str(TASKS_DIR) for p in paths):
        paths.append(str(TASKS_DIR))
    return paths


def add_tasks_dir_to_task_index() -> None:
    """Make every ``lmms_eval.tasks.TaskManager`` index our task folder too. Idempotent.

    Raises:
        PluginCompatibilityError: lmms-eval has no ``TaskManager.initialize_tasks`` taking ``include_path``.
    """
    from lmms_eval.tasks import TaskManager

    original = getattr(TaskManager, "initialize_tasks", None)
    if getattr(original, "_lmms_eval_audio_plugin", False):
        return
    signature = inspect.signature(original) if callable(original) else None
    if signature is None or "include_path" not in signature.parameters:
        raise PluginCompatibilityError(
            "lmms-eval-audio-plugin cannot add its task folder: lmms_eval.tasks.TaskManager.initialize_tasks(include_path=...) "
            f"was not found in this lmms-eval. Pass --include_path {TASKS_DIR} instead, or install the tested lmms-eval 0.7.x."
        )

    @functools.wraps(original)
    def initialize_tasks(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        bound.arguments["include_path"] = _with_tasks_dir(bound.arguments["include_path"])
        return original(*bound.args, **bound.kwargs)

    initialize_tasks._lmms_eval_audio_plugin = True
    TaskManager.initialize_tasks = initialize_tasks


def register():
    """Entry point of group ``lmms_eval.models``: add our task folder, return our model manifests."""
    from lmms_eval.models.registry_v2 import ModelManifest

    try:
        add_tasks_dir_to_task_index()
    except Exception as error:  # lmms-eval would swallow it into a vague warning and drop our models too
        from loguru import logger

        logger.error(f"{error}" if isinstance(error, PluginCompatibilityError) else f"lmms-eval-audio-plugin could not add its task folder ({error!r}); pass --include_path {TASKS_DIR}")
    both = {**REPLACED_MODELS, **UPSTREAM_MODELS}
    return [ModelManifest(model_id=name, simple_class_path=path) for name, path in MODEL_CLASSES.items()] + [
        ModelManifest(model_id=name, chat_class_path=chat, simple_class_path=simple) for name, (chat, simple) in both.items()
    ]
