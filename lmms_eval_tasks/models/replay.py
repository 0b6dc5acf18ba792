"""``--model replay``: answers read from a predictions file, so outputs produced elsewhere can be scored.

``--model_args predictions=PATH[,on_missing=error|empty]``; ``PATH`` is a jsonl file or a folder (every
``*.jsonl`` below it). Three row formats are read:

- ours: ``{"task": "mcga_asr", "id": "<the document's id field>", "response": "..."}``;
- the official MCGA runner's: the dataset row plus its output field (``asr_r``, ``sqa_a_r``, ``su_r``,
  ``sr_r``, ``s2tt_r``, ``sec_r``); files named ``*_text.jsonl`` go to the text-mode tasks
  (see :func:`mcga.data.official_runner_prediction`);
- lmms-eval's own logged samples (``<date>_samples_<task>.jsonl``, e.g. from a ``--predict_only`` run):
  the task comes from the file name, the document from ``doc_id`` (its index in the task), the answer
  from ``filtered_resps``. lmms-eval's ``doc_hash`` cannot identify a document (it hashes ``null``), so
  each such answer is checked against the run instead: the logged ``input`` (the prompt) must equal this
  run's prompt for that document, else it is an error. Re-score on the same data and task versions.

Nothing is skipped silently. A document of the run with no prediction is an error naming the missing
ids (``on_missing=error``, default) or gets ``""`` with a warning listing them (``on_missing=empty``;
the task's ``empty_responses`` count then shows them too). Predictions whose id is not in the task's
dataset are logged as a warning with their ids; a second prediction for the same task and id is an error.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from loguru import logger

from lmms_eval.api.model import lmms
from lmms_eval_tasks.models import CPUOrAcceleratorDevice
from mcga.data import official_runner_prediction

_SHOWN_IDS = 10
_SAMPLES_FILE = re.compile(r"_samples_(?P<task>.+)\.jsonl$")


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(path.rglob("*.jsonl"))
    if path.is_file():
        return [path]
    raise FileNotFoundError(f"replay: predictions path {path} does not exist")


def read_predictions(path: str | Path) -> dict[tuple[str, str], str]:
    """All predictions under ``path`` as ``{(task, id): response}``; lmms-eval samples get the id ``doc_id=<N>``.

    Raises:
        ValueError: a malformed line, a row in none of the formats, or a duplicate (task, id); the message
            names the file and line (and, for duplicates, the first place too).
        FileNotFoundError: ``path`` does not exist.
    """
    return _read(path)[0]


def _lmms_eval_sample(row: dict, file: Path) -> tuple[tuple[str, str], str, str | None] | None:
    """(key, response, logged prompt) of a row of lmms-eval's ``*_samples_<task>.jsonl``, or None."""
    match = _SAMPLES_FILE.search(file.name)
    if match is None or not {"doc_id", "filtered_resps"} <= row.keys():
        return None
    response = row["filtered_resps"]
    while isinstance(response, list):
        response = response[0] if response else ""
    return (match["task"], f"doc_id={row['doc_id']}"), "" if response is None else str(response), row.get("input")


def _read(path: str | Path) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str | None]]:
    """:func:`read_predictions` plus the logged prompt of every lmms-eval sample row."""
    predictions: dict[tuple[str, str], str] = {}
    prompts: dict[tuple[str, str], str | None] = {}
    origin: dict[tuple[str, str], str] = {}
    for file in _files(Path(path)):
        with file.open(encoding="utf-8") as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{file}:{line_number}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise ValueError(f"replay: {where}: not valid JSON ({error.msg})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"replay: {where}: expected a JSON object")
                sample = _lmms_eval_sample(row, file)
                if {"task", "id", "response"} <= row.keys():
                    key, response = (str(row["task"]), str(row["id"])), "" if row["response"] is None else str(row["response"])
                elif sample is not None:
                    key, response, prompts[sample[0]] = sample
                else:
                    official = official_runner_prediction(row, file.name)
                    if official is None:
                        raise ValueError(
                            f"replay: {where}: expected {{'task', 'id', 'response'}}, an official MCGA runner row with one output field, "
                            "or a row of lmms-eval's <date>_samples_<task>.jsonl"
                        )
                    key, response = official[:2], official[2]
                if key in predictions:
                    raise ValueError(f"replay: {where}: second prediction for task {key[0]} id {key[1]} (first at {origin[key]})")
                predictions[key], origin[key] = response, where
    if not predictions:
        raise ValueError(f"replay: no predictions found under {path}")
    return predictions, prompts


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOWN_IDS]) + (f" ... (+{len(ids) - _SHOWN_IDS} more)" if len(ids) > _SHOWN_IDS else "")


class Replay(CPUOrAcceleratorDevice, lmms):
    """Replays recorded outputs; see the module docstring."""

    is_simple = True

    def __init__(self, predictions: str = "", on_missing: str = "error", batch_size: int | str = 1, device: str | None = None, **kwargs) -> None:
        super().__init__()
        kwargs.pop("max_batch_size", None)
        if kwargs:
            raise ValueError(f"replay: unknown model arguments {sorted(kwargs)}")
        if not predictions:
            raise ValueError("replay: give the predictions file or folder: --model_args predictions=PATH")
        if on_missing not in ("error", "empty"):
            raise ValueError(f"replay: on_missing must be 'error' or 'empty', got {on_missing!r}")
        self.predictions, self.logged_prompts = _read(predictions)
        self.on_missing = on_missing
        self._checked_tasks: set[str] = set()
        counts = defaultdict(int)
        for task, _ in self.predictions:
            counts[task] += 1
        logger.info(f"replay: {len(self.predictions)} predictions from {predictions}: {dict(sorted(counts.items()))}")

    def _doc_key(self, task: str, doc: dict, doc_id: int) -> str:
        """The prediction id of a document: its ``id`` field (or index), else ``doc_id=<index>`` from logged samples."""
        key = str(doc["id"]) if "id" in doc else str(doc_id)
        return key if (task, key) in self.predictions or (task, f"doc_id={doc_id}") not in self.predictions else f"doc_id={doc_id}"

    def _report_unknown_ids(self, task: str, split: str) -> None:
        if task in self._checked_tasks:
            return
        self._checked_tasks.add(task)
        docs = self.task_dict[task][split]
        known = {str(doc["id"]) if "id" in doc else str(i) for i, doc in enumerate(docs)} | {f"doc_id={i}" for i in range(len(docs))}
        unknown = sorted(i for t, i in self.predictions if t == task and i not in known)
        if unknown and self.rank == 0:
            logger.warning(f"replay: {len(unknown)} prediction(s) for {task} match no document of its dataset: {_shown(unknown)}")

    def generate_until(self, requests) -> list[str]:
        answers, missing = [], defaultdict(list)
        for request in requests:
            context, gen_kwargs, _doc_to_visual, doc_id, task, split = request.args
            self._report_unknown_ids(task, split)
            key = self._doc_key(task, self.task_dict[task][split][doc_id], doc_id)
            logged_prompt = self.logged_prompts.get((task, key))
            if logged_prompt is not None and logged_prompt != context:
                raise ValueError(
                    f"replay: the logged sample for {task} doc_id {doc_id} was made with another prompt than this run's "
                    "(different data, data folder or task version); re-score on the data the samples came from"
                )
            if (task, key) not in self.predictions:
                missing[task].append(key)
            answers.append(self.predictions.get((task, key), ""))
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), answers[-1])
        for task, ids in missing.items():
            message = f"replay: no prediction for {len(ids)} document(s) of {task}: {_shown(ids)}"
            if self.on_missing == "error":
                raise ValueError(message + " (pass on_missing=empty to score them as empty answers)")
            logger.warning(message + "; scored as empty answers")
        return answers

    def loglikelihood(self, requests):
        raise NotImplementedError("replay only replays generated text")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("replay only replays single-turn answers")
