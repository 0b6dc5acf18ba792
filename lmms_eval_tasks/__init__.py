"""lmms-eval glue for the benchmarks of this project: task YAML, thin hooks and two helper models.

- ``lmms_eval_tasks/<benchmark>/``: task and group YAML plus ``hooks.py`` (prompts, parsers and metrics
  live in the benchmark packages ``mcga``, ``parsa``, ``mmac``);
- :mod:`lmms_eval_tasks.plugin`: the ``lmms_eval.models`` entry point that makes lmms-eval find our tasks
  and models without ``--include_path``;
- :mod:`lmms_eval_tasks.audio`: the one place where audio is decoded, cut and handed to models;
- :mod:`lmms_eval_tasks.judge`: the LLM judge shared by every judged task (cache, retries, accounting);
- :mod:`lmms_eval_tasks.models`: ``faster_whisper`` (the embedded default model) and ``replay``;
- :mod:`lmms_eval_tasks.printed_table` (the short results table the CLI prints) and
  :mod:`lmms_eval_tasks.hub_access` (one line when the Hugging Face hub is needed and cannot be reached).

Importing this package does not import lmms-eval.
"""

import os
from pathlib import Path

#: The folder lmms-eval indexes for our task and group YAML files.
TASKS_DIR = Path(__file__).resolve().parent
CACHE_ENV = "LMMS_EVAL_AUDIO_PLUGIN_CACHE"


def cache_dir(name: str) -> Path:
    """``$LMMS_EVAL_AUDIO_PLUGIN_CACHE/<name>`` (default ``~/.cache/lmms_eval_audio_plugin/<name>``); not created."""
    root = os.environ.get(CACHE_ENV, "").strip()
    return (Path(root).expanduser() if root else Path.home() / ".cache" / "lmms_eval_audio_plugin") / name
