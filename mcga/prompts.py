"""The official MCGA prompts and how a request is assembled from them.

Source: ``eval/mcga_prompt.jsonl`` and ``eval/api_mcga.py`` of the official repository, reproduced in
``official_prompts.jsonl`` beside this module. Audio mode: system message = the task's ``system``;
user message = [audio, instruction], where ``{sqa}``/``{su}``/``{sr}`` in the instruction are filled
from the row. Text mode (the paper's QA/LU/LR, the CMC denominators): no audio, and the user text is
``"文本: {asr}\\n任务: {instruction}"`` with the same system message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_PROMPTS_FILE = Path(__file__).with_name("official_prompts.jsonl")


@dataclass(frozen=True)
class TaskPrompt:
    """The official (system, instruction template) pair of one MCGA task."""

    system: str
    instruction: str


class _KeepUnknownFields(dict):
    """``str.format_map`` mapping that leaves unknown ``{fields}`` as they are (as the official runner does)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@lru_cache(maxsize=None)
def official_prompts() -> dict[str, TaskPrompt]:
    """All official prompts, keyed by task name (``asr``, ``s2tt``, ``sec``, ``sqa``, ``su``, ``sr``)."""
    prompts: dict[str, TaskPrompt] = {}
    for line in _PROMPTS_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            for task, spec in json.loads(line).items():
                prompts[task] = TaskPrompt(system=spec["system"], instruction=spec["instruction"])
    return prompts


def task_prompt(task: str) -> TaskPrompt:
    """The official prompt of ``task``.

    Raises:
        KeyError: ``task`` is not one of the six MCGA tasks.
    """
    prompts = official_prompts()
    if task not in prompts:
        raise KeyError(f"no official MCGA prompt for task {task!r}; known: {sorted(prompts)}")
    return prompts[task]


def build_instruction(task: str, doc: dict) -> str:
    """The audio-mode user text: the official instruction with ``{field}`` placeholders filled from ``doc``."""
    template = task_prompt(task).instruction
    try:
        return template.format_map(_KeepUnknownFields(doc))
    except (ValueError, IndexError):  # a stray brace in the template: the official runner sends it unfilled
        return template


def build_text_mode_user_text(task: str, doc: dict) -> str:
    """The text-mode user text: ``"文本: {asr}\\n任务: {instruction}"`` (official runner, ``input_mode == "text"``)."""
    return f"文本: {doc.get('asr', '')}\n任务: {build_instruction(task, doc)}"
