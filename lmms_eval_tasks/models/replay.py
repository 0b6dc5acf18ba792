"""``--model replay``: answers read from a predictions file, so outputs produced elsewhere can be scored.

``--model_args predictions=PATH[,on_missing=error|empty]``; ``PATH`` is a jsonl file or a folder (every
``*.jsonl`` below it). Each answer is matched to its document by a **key**, the document's ``doc_key`` field
(MCGA: the clip path ``audio`` as written in the data file, e.g. ``upload/Yvqy/124-20251102214649.wav``,
because MCGA ids repeat: one text, several speakers; a document without ``doc_key``, e.g. PARSA's, is keyed
by its ``id``). Row formats read:

- ours: ``{"task": "mcga_asr", "key": "<the document's doc_key>", "response": "..."}`` (an ``id`` field may be
  added for readability; ``key`` decides). A row with ``audio`` instead of ``key`` is keyed by it. The older
  ``{"task", "id", "response"}`` still works where it is unambiguous: it answers the one document with that
  id, and is an error when several documents of the task share the id;
- the official MCGA runner's: the dataset row plus its output field (``asr_r``, ``sqa_a_r``, ``su_r``,
  ``sr_r``, ``s2tt_r``, ``sec_r``), keyed by the row's ``audio``; files named ``*_text.jsonl`` go to the
  text-mode tasks (see :func:`mcga.data.official_runner_prediction`);
- lmms-eval's own logged samples (``<date>_samples_<task>.jsonl``, e.g. from a ``--predict_only`` run):
  the task comes from the file name, the answer from ``filtered_resps``, the document from the logged
  ``doc``'s ``doc_key`` (else ``doc_id``, its index in the task). lmms-eval's ``doc_hash`` cannot identify a
  document, so each such answer is checked against the run instead: the logged ``input`` (the prompt) must
  equal this run's prompt for that document, else it is an error. Re-score on the same data and task versions.

A ``response`` that is not a string is read as its text (a list of one string, text parts, a chat message, a
number: :func:`audio_bench_core.answers.response_text`), never as its Python ``repr``; one holding no text (a dict
without a text key, several candidate strings) is a failed generation naming its file and line.

Nothing is skipped silently. A document of the run with no prediction is an error naming the missing
keys (``on_missing=error``, default) or gets ``""`` with a warning listing them (``on_missing=empty``;
the task's ``empty_responses`` count then shows them too). Predictions that answer no document of the task
are logged as a warning with their keys; a second prediction for the same task and key is an error.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from lmms_eval.api.model import lmms
from loguru import logger

from audio_bench_core.answers import NotText, response_text
from audio_bench_core.responses import GENERATION_FAILED_PREFIX
from lmms_eval_tasks.models import CPUOrAcceleratorDevice, FailureAccounting
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
    """All predictions under ``path`` as ``{(task, match): response}``.

    ``match`` says how the answer finds its document: ``"key=<doc_key>"`` (ours with ``key``/``audio``, official
    runner rows with ``audio``, logged samples whose ``doc`` has a ``doc_key``), ``"id=<id>"`` (ours or official
    rows with only an id) or ``"doc_id=<N>"`` (logged samples without a ``doc_key``).

    Raises:
        ValueError: a malformed line, a row in none of the formats, or a duplicate (task, match); the message
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
    logged_doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
    found = f"key={logged_doc['doc_key']}" if logged_doc.get("doc_key") not in (None, "") else f"doc_id={row['doc_id']}"
    return (match["task"], found), response, row.get("input")


def _our_row(row: dict) -> tuple[tuple[str, str], str] | None:
    """(key, response) of a row in our format, or None."""
    if not {"task", "response"} <= row.keys():
        return None
    for field, kind in (("key", "key"), ("audio", "key"), ("id", "id")):
        if row.get(field) not in (None, ""):
            return (str(row["task"]), f"{kind}={row[field]}"), row["response"]
    return None


def _read(path: str | Path) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str | None], dict[tuple[str, str], str]]:
    """:func:`read_predictions` plus the logged prompt of every lmms-eval sample row and each prediction's file:line."""
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
                sample, ours = _lmms_eval_sample(row, file), _our_row(row)
                if ours is not None:
                    key, response = ours
                elif sample is not None:
                    key, response, prompts[sample[0]] = sample
                else:
                    official = official_runner_prediction(row, file.name)
                    if official is None:
                        raise ValueError(
                            f"replay: {where}: expected {{'task', 'key', 'response'}} (or 'id' for 'key'), an official MCGA runner row "
                            "with one output field, or a row of lmms-eval's <date>_samples_<task>.jsonl"
                        )
                    task, row_id, audio, response = official
                    key = (task, f"key={audio}" if audio is not None else f"id={row_id}")
                if key in predictions:
                    raise ValueError(f"replay: {where}: second prediction for task {key[0]} {key[1]} (first at {origin[key]})")
                predictions[key], origin[key] = _response_text(response, where), where
    if not predictions:
        raise ValueError(f"replay: no predictions found under {path}")
    return predictions, prompts, origin


def _response_text(response: object, where: str) -> str:
    """The text of a replayed answer (:func:`audio_bench_core.answers.response_text`: a string, a list of one string,
    text parts, a chat message, a number), never its Python ``repr``; a value holding no text becomes a failed
    generation naming ``where`` (file:line), counted in ``failed_generations`` and scored as the empty answer."""
    try:
        return response_text(response)
    except NotText as error:
        logger.warning(f"replay: {where}: the response is not text ({error}); scored as a failed generation")
        return f"{GENERATION_FAILED_PREFIX} replay {where}: the response is not text: {error}"


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOWN_IDS]) + (f" ... (+{len(ids) - _SHOWN_IDS} more)" if len(ids) > _SHOWN_IDS else "")


def document_key(doc: dict, doc_id: int) -> str:
    """The key a prediction names a document by: its ``doc_key`` field, else its ``id``, else its index."""
    for field in ("doc_key", "id"):
        if doc.get(field) not in (None, ""):
            return str(doc[field])
    return str(doc_id)


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
        self.predictions, self.logged_prompts, self._origin = _read(predictions)
        self.on_missing = on_missing
        self._matches: dict[tuple[str, str], list[str | None]] = {}
        counts = defaultdict(int)
        for task, _ in self.predictions:
            counts[task] += 1
        logger.info(f"replay: {len(self.predictions)} predictions from {predictions}: {dict(sorted(counts.items()))}")

    def _match_task(self, task: str, split: str) -> list[str | None]:
        """For each document of ``task`` (by index), the prediction key that answers it, or None.

        Order: ``key=<doc_key>``, then ``id=<id>`` (only when no other document of the task has that id; a
        prediction by a shared id is an error), then ``doc_id=<index>``. Unused predictions are warned about once.
        """
        if (task, split) in self._matches:
            return self._matches[(task, split)]
        docs = self.task_dict[task][split]
        docs_by_id: dict[str, list[str]] = defaultdict(list)
        for index, doc in enumerate(docs):
            if doc.get("id") not in (None, ""):
                docs_by_id[str(doc["id"])].append(document_key(doc, index))
        matched: list[str | None] = []
        for index, doc in enumerate(docs):
            found = None
            by_key, by_index = (task, f"key={document_key(doc, index)}"), (task, f"doc_id={index}")
            by_id = (task, f"id={doc['id']}") if doc.get("id") not in (None, "") else None
            if by_key in self.predictions:
                found = by_key
            elif by_id is not None and by_id in self.predictions:
                sharing = docs_by_id[str(doc["id"])]
                if len(sharing) > 1:
                    raise ValueError(
                        f"replay: {self._origin[by_id]}: the prediction for {task} id {doc['id']} is ambiguous: {len(sharing)} documents "
                        f"share this id (keys {_shown(sharing)}); give each answer the document's key, "
                        '{"task": ..., "key": "<doc_key, for MCGA the audio path>", "response": ...}'
                    )
                found = by_id
            elif by_index in self.predictions:
                found = by_index
            matched.append(found[1] if found else None)
        self._matches[(task, split)] = matched
        used = set(matched)
        unused = sorted(k for t, k in self.predictions if t == task and k not in used)
        if unused and self.rank == 0:
            logger.warning(f"replay: {len(unused)} prediction(s) for {task} match no document of its dataset: {_shown(unused)}")
        return matched

    def generate_until(self, requests) -> list[str]:
        answers, missing, accounting = [], defaultdict(list), FailureAccounting("replay")
        for request in requests:
            context, gen_kwargs, _doc_to_visual, doc_id, task, split = request.args
            match = self._match_task(task, split)[doc_id]
            logged_prompt = self.logged_prompts.get((task, match)) if match else None
            if logged_prompt is not None and logged_prompt != context:
                raise ValueError(
                    f"replay: the logged sample for {task} doc_id {doc_id} was made with another prompt than this run's "
                    "(different data, data folder or task version); re-score on the data the samples came from"
                )
            if match is None:
                missing[task].append(document_key(self.task_dict[task][split][doc_id], doc_id))
                answers.append("")
            else:  # a replayed failure placeholder reaches only tasks that count it (FailureAccounting)
                answers.append(accounting.answer(task, self.predictions[(task, match)]))
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), answers[-1])
        for task, keys in missing.items():
            message = f"replay: no prediction for {len(keys)} document(s) of {task}: {_shown(keys)}"
            if self.on_missing == "error":
                raise ValueError(message + " (pass on_missing=empty to score them as empty answers)")
            logger.warning(message + "; scored as empty answers")
        accounting.close(self)
        return answers

    def loglikelihood(self, requests):
        raise NotImplementedError("replay only replays generated text")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("replay only replays single-turn answers")
