"""The 16 PARSA-Bench tasks: kind, dimension, label set, answer key, settings and headline metric.

Source: the paper (arXiv 2603.14456 v2): Table 1 (tasks, label-set sizes), §3 (construction), §4 (prompting,
decoding, metrics), §6.3-6.5 (settings). Label sets and alias tables live in ``labels.json`` beside this module.

Settings (names used everywhere): ``audio`` (zero-shot, audio only: the paper's main setting, Table 2),
``text`` (text only: the transcript/passage instead of the audio, §6.3), ``audio_ref`` (audio plus the reference
text, §6.4), ``fewshot`` (k=2 demonstrations with their audio, §6.5), ``cot`` (chain of thought: a reasoning field
before the answer field, §6.5). Which task gets which setting:

- ``text``: the 11 tasks of Table 4 (the ones with a transcript or passage that carries the answer):
  both translations, intent, NER, register, code-switching, MCQA, both reading-comprehension sets, vazn, sabk.
- ``audio_ref``: "the fourteen comparable tasks" (§6.4): the 11 above plus age, gender and emotion (§6.4 discusses
  paralinguistic tasks with the transcript added). ASR (the transcript is the answer) and music (no transcript)
  are the two left out. The paper does not list the 14; this is our reading.
- ``fewshot`` and ``cot``: the paper ran them for Qwen3-Omni-30B only (Table 8, not in the accessible text) and
  names intent, reading comprehension, emotion and code-switching among them. We offer both on every task except
  ASR (interpretation: a reasoning field would change the one verbatim prompt, and §6.5 discusses only
  answer-extraction tasks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

LABELS_FILE = Path(__file__).with_name("labels.json")

KINDS = ("asr", "translation", "classification", "multiple_choice", "ner")
DIMENSIONS = ("speech_understanding", "paralinguistic", "cultural")
SETTINGS = ("audio", "text", "audio_ref", "fewshot", "cot")

# Decoding of every request (paper §4.1): temperature 0.0, max_tokens 8192.
TEMPERATURE = 0.0
MAX_NEW_TOKENS = 8192
DECODING = {"temperature": TEMPERATURE, "max_new_tokens": MAX_NEW_TOKENS}

# Few-shot demonstrations per query (paper §6.5 and Appendix C: k = 2).
FEWSHOT_K = 2

_ALL = ("audio", "text", "audio_ref", "fewshot", "cot")
_NO_TEXT = ("audio", "audio_ref", "fewshot", "cot")


@dataclass(frozen=True)
class TaskSpec:
    """One PARSA-Bench task.

    Attributes:
        name: short name (``asr``, ``vazn``, ...); lmms-eval task names are ``parsa_<name>``.
        kind: one of :data:`KINDS`; decides parsing and metrics.
        dimension: one of :data:`DIMENSIONS` (Table 1 grouping).
        labels: canonical labels for ``classification`` tasks (the prompt enumerates them), ``()`` otherwise.
        answer_key: the JSON key the model must fill (``transcription``, ``translation``, ``intent``, ``answer``...).
        settings: which of :data:`SETTINGS` the task is run in (see the module docstring).
        headline_metric: the metric of Table 2 (``wer_median`` for ASR, as Table 2 prints the median).
        n_options: number of options for ``multiple_choice`` tasks (0 otherwise).
        fixed_options: multiple choice over one fixed option set (vazn: the 10 metres, sabk: the 4 forms), so the
            option text is a class: the majority baseline is the majority gold option text and macro-F1 over
            option texts is reported too (§6.6 reads sabk's macro-F1).
        baseline: ``"majority"`` (share of the most frequent gold class in the evaluated set; Table 2's chance),
            ``"uniform"`` (1/n_options, for multiple choice whose options change per item: MCQA, RC, music;
            Table 2 prints 0.25 for them), or ``"none"`` (ASR, translation, NER: no chance level, Table 2 "–").
        target_language: ``"fa"`` or ``"en"``: the language of the answer text (ASR, translation), else ``""``.
        entity_types: the entity types listed in the NER prompt (MASSIVE slot types), ``()`` otherwise.
        eval_items: number of items the paper scored (Table 1), for reference.
    """

    name: str
    kind: str
    dimension: str
    labels: tuple[str, ...]
    answer_key: str
    settings: tuple[str, ...]
    headline_metric: str
    n_options: int = 0
    fixed_options: bool = False
    baseline: str = "none"
    target_language: str = ""
    entity_types: tuple[str, ...] = ()
    eval_items: int = 0


@lru_cache(maxsize=1)
def label_tables() -> dict:
    """The parsed ``labels.json`` (label sets, alias tables), keyed by task short name."""
    return json.loads(LABELS_FILE.read_text(encoding="utf-8"))


def _labels(task: str) -> tuple[str, ...]:
    return tuple(label_tables()[task]["labels"])


def _classification(name: str, dimension: str, answer_key: str, settings: tuple[str, ...], eval_items: int) -> TaskSpec:
    return TaskSpec(name, "classification", dimension, _labels(name), answer_key, settings, "macro_f1", baseline="majority", eval_items=eval_items)


def _multiple_choice(name: str, dimension: str, settings: tuple[str, ...], n_options: int, fixed: bool, eval_items: int) -> TaskSpec:
    return TaskSpec(
        name, "multiple_choice", dimension, (), "answer", settings, "accuracy",
        n_options=n_options, fixed_options=fixed, baseline="majority" if fixed else "uniform", eval_items=eval_items,
    )


def _build_tasks() -> dict[str, TaskSpec]:
    su, pl, cu = DIMENSIONS
    specs = [
        TaskSpec("asr", "asr", su, (), "transcription", ("audio",), "wer_median", target_language="fa", eval_items=500),
        TaskSpec("s2tt_fa_en", "translation", su, (), "translation", _ALL, "comet", target_language="en", eval_items=500),
        TaskSpec("s2tt_en_fa", "translation", su, (), "translation", _ALL, "comet", target_language="fa", eval_items=499),
        _classification("intent", su, "intent", _ALL, 500),
        TaskSpec("ner", "ner", su, (), "entities", _ALL, "f1_exact", entity_types=tuple(label_tables()["ner"]["entity_types"]), eval_items=497),
        _classification("register", su, "register", _ALL, 496),
        _classification("code_switch", su, "code_switching", _ALL, 500),
        _multiple_choice("mcqa", su, _ALL, 4, False, 500),
        _multiple_choice("rc_wiki", su, _ALL, 4, False, 500),
        _multiple_choice("rc_tiny", su, _ALL, 4, False, 500),
        _classification("age", pl, "age", _NO_TEXT, 480),
        _classification("gender", pl, "gender", _NO_TEXT, 500),
        _classification("emotion", pl, "emotion", _NO_TEXT, 388),
        _multiple_choice("vazn", cu, _ALL, 10, True, 347),
        _multiple_choice("sabk", cu, _ALL, 4, True, 442),
        _multiple_choice("music", cu, ("audio", "fewshot", "cot"), 4, False, 496),
    ]
    return {spec.name: spec for spec in specs}


TASKS: dict[str, TaskSpec] = _build_tasks()


def get_task(task: str) -> TaskSpec:
    """The :class:`TaskSpec` of ``task`` (short name).

    Raises:
        KeyError: ``task`` is not one of the 16 PARSA-Bench tasks (the message lists them).
    """
    if task not in TASKS:
        raise KeyError(f"unknown PARSA-Bench task {task!r}; known: {', '.join(TASKS)}")
    return TASKS[task]


def tasks_in_dimension(dimension: str) -> list[str]:
    """Short names of the tasks of one dimension, in Table 1 order.

    Raises:
        ValueError: ``dimension`` is not one of :data:`DIMENSIONS`.
    """
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}; known: {', '.join(DIMENSIONS)}")
    return [name for name, spec in TASKS.items() if spec.dimension == dimension]
