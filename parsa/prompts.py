"""PARSA-Bench prompts: assembling one item's instruction text from ``prompts.json``.

Paper §4.1: every prompt is in English (content in Persian) and has three parts: a role sentence; the task
instruction with the explicit label set or numbered option list; a hard output constraint (JSON object only).
Only the ASR prompt is printed in the paper; :func:`build_user_text` reproduces it verbatim for ``asr``. The other
prompts are ours, written to the same shape (Appendix C, which holds the originals, is not available).

Layout of the text (``setting`` as in :data:`parsa.tasks.SETTINGS`)::

    <role> <instruction>[ <label list sentence> | <answer-as-integer rule>]
    [<text label>: <transcript>]            text: the transcript replaces the audio
    [<reference label>: <transcript>]       audio_ref: the transcript next to the audio
    [Question: <question>]                  when the item has one
    [Options:\\n1. ...\\n2. ...]              multiple choice
    Return your response as a JSON object with this exact format: <schema>. Provide ONLY the JSON object, nothing
    else.[ <chain-of-thought sentence>][ <closing>]

With no middle block (ASR, the paralinguistic tasks in the audio setting) the parts are joined by single spaces,
so the ASR prompt is one paragraph exactly as printed; otherwise by newlines. ``cot`` adds
``"reasoning": "your step-by-step reasoning"`` as the first field of the schema (the paper: "a reasoning field
emitted before the answer field"). ``fewshot`` uses the ``audio`` text for the query; demonstrations carry
:func:`demo_answer_json` as the assistant turn.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from parsa.tasks import get_task

PROMPTS_FILE = Path(__file__).with_name("prompts.json")


@lru_cache(maxsize=1)
def prompt_table() -> dict:
    """The parsed ``prompts.json``: ``{"shared": {...}, "tasks": {task: {...}}}``."""
    return json.loads(PROMPTS_FILE.read_text(encoding="utf-8"))


def _shared(key: str) -> str:
    return prompt_table()["shared"][key]


def _task_prompt(task: str) -> dict:
    return prompt_table()["tasks"][task]


def answer_schema(task: str, setting: str = "audio") -> str:
    """The JSON shape the model is asked for, e.g. ``{"transcription": "your Persian transcription here"}``;
    with ``setting="cot"`` a ``"reasoning"`` field comes first."""
    schema = _task_prompt(task)["schema"]
    if setting == "cot":
        return "{" + _shared("cot_schema_field") + schema[1:]
    return schema


def _check_setting(task: str, setting: str) -> None:
    spec = get_task(task)
    if setting not in spec.settings:
        raise ValueError(f"PARSA task {task!r} is not run in setting {setting!r}; its settings: {', '.join(spec.settings)}")


def _options(task: str, doc: dict) -> list[str]:
    options = doc.get("options") or []
    expected = get_task(task).n_options
    if len(options) != expected:
        raise ValueError(f"PARSA {task} item {doc.get('id')!r}: {expected} options expected, got {len(options)}")
    return [str(option) for option in options]


def _head(task: str, setting: str) -> str:
    spec = get_task(task)
    prompt = _task_prompt(task)
    mode = "text" if setting == "text" else "audio"
    instruction = prompt["instruction"][mode].replace("{entity_types}", ", ".join(spec.entity_types))
    parts = [prompt["role"], instruction]
    if spec.kind == "classification":
        parts.append(_shared("labels_sentence").replace("{labels}", ", ".join(spec.labels)))
    elif spec.kind == "multiple_choice":
        parts.append(_shared("mc_answer_rule").replace("{n_options}", str(spec.n_options)))
    return " ".join(parts)


def _middle(task: str, doc: dict, setting: str) -> list[str]:
    prompt = _task_prompt(task)
    lines = []
    if setting in ("text", "audio_ref"):
        label = prompt["text_label"] if setting == "text" else prompt["reference_label"]
        lines.append(f"{label}: {doc.get('transcript', '')}")
    question = str(doc.get("question") or "").strip()
    if question:
        lines.append(_shared("question_line").replace("{question}", question))
    if get_task(task).kind == "multiple_choice":
        lines.append(_shared("options_header"))
        for number, text in enumerate(_options(task, doc), start=1):
            lines.append(_shared("option_line").replace("{number}", str(number)).replace("{text}", text))
    return lines


def _tail(task: str, setting: str) -> str:
    spec = get_task(task)
    parts = [_shared("output_constraint").replace("{schema}", answer_schema(task, setting))]
    if setting == "cot":
        parts.append(_shared("cot_instruction").replace("{answer_key}", spec.answer_key))
    closing = _task_prompt(task).get("closing", "")
    if closing:
        parts.append(closing)
    return " ".join(parts)


def build_user_text(task: str, doc: dict, setting: str = "audio") -> str:
    """The complete instruction text of one item (role + instruction + content + JSON-only constraint).

    Args:
        task: short task name (``asr``, ``vazn``, ...).
        doc: the canonical document (fields ``id``, ``transcript``, ``question``, ``options`` are read; missing
            ``question``/``transcript`` count as empty).
        setting: ``audio`` (default), ``text``, ``audio_ref``, ``fewshot`` (same text as ``audio``) or ``cot``.

    Returns:
        The user text; the audio (when the setting has audio) is sent beside it by the lmms-eval hooks.

    Raises:
        KeyError: unknown task.
        ValueError: the task is not run in ``setting`` (see ``TaskSpec.settings``), or a multiple-choice item does
            not have ``TaskSpec.n_options`` options (the message names the item id).
    """
    _check_setting(task, setting)
    head, middle, tail = _head(task, setting), _middle(task, doc, setting), _tail(task, setting)
    if not middle:
        return f"{head} {tail}"
    return "\n".join([head, *middle, tail])


def demo_answer_json(task: str, demo_doc: dict) -> str:
    """A few-shot demonstration's gold answer written as the JSON object the model should output.

    ``{"transcription": <transcript>}`` (ASR), ``{"translation": <reference>}``, ``{"<answer_key>": <label>}``
    (classification), ``{"answer": <option number as an integer>}`` (multiple choice),
    ``{"entities": [{"type": ..., "span": ...}, ...]}`` (NER). Non-ASCII text is written as is (no ``\\u`` escapes).

    Raises:
        KeyError: unknown task.
        ValueError: the demo's ``reference`` is not a valid gold answer for the task (the message names the id).
    """
    spec = get_task(task)
    reference = demo_doc.get("reference", "")
    if spec.kind == "asr":
        value = demo_doc.get("transcript") or reference
    elif spec.kind == "multiple_choice":
        value = _gold_option_number(task, demo_doc)
    elif spec.kind == "ner":
        value = _gold_entities(task, demo_doc)
    else:
        value = reference
    return json.dumps({spec.answer_key: value}, ensure_ascii=False)


def _gold_option_number(task: str, doc: dict) -> int:
    reference = str(doc.get("reference", "")).strip()
    n_options = get_task(task).n_options
    if not reference.isdigit() or not 1 <= int(reference) <= n_options:
        raise ValueError(f"PARSA {task} item {doc.get('id')!r}: reference {reference!r} is not an option number 1..{n_options}")
    return int(reference)


def _gold_entities(task: str, doc: dict) -> list:
    try:
        entities = json.loads(doc.get("reference") or "[]")
    except json.JSONDecodeError as error:
        raise ValueError(f"PARSA {task} item {doc.get('id')!r}: reference is not a JSON list of entities ({error})") from None
    if not isinstance(entities, list):  # bad data, not a programming error: ValueError like every data check
        raise ValueError(f"PARSA {task} item {doc.get('id')!r}: reference is not a JSON list of entities")  # noqa: TRY004
    return entities
