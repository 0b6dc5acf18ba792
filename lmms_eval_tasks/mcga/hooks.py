"""lmms-eval hooks for MCGA (classical Chinese literature read aloud; arXiv 2601.09270).

Tasks: ``mcga_asr``, ``mcga_sqa``, ``mcga_su``, ``mcga_sr`` (audio) and the text-mode twins
``mcga_sqa_text``, ``mcga_su_text``, ``mcga_sr_text`` (the paper's QA, LU, LR, the CMC denominators).
One set of hooks serves all of them: ``process_docs`` tags each document with its MCGA task and mode,
the other hooks read that tag. Prompts, data checks and metrics live in the ``mcga`` package.
"""

from __future__ import annotations

from functools import partial

from lmms_eval_tasks.audio import DEFAULT_MAX_SECONDS, audio_for_model
from mcga import data, metrics, prompts

TASK_FIELD, MODE_FIELD = "mcga_task", "mcga_mode"
GOLD_FIELD = {"asr": "asr", "sqa": "sqa_a", "su": "su_a", "sr": "sr_a"}


def _load_docs(task: str, mode: str, dataset):
    """``process_docs``: the checked rows of ``MCGA_{task}_test.jsonl`` from ``$MCGA_DATA_DIR`` (default: the
    shipped sample, which is also what the YAML's ``data_files`` name), tagged with task and mode.

    The rows lmms-eval loaded through ``data_files`` are replaced, so that one environment variable moves
    rows and audio together and every row passes :func:`mcga.data.load_task_rows`'s checks.
    """
    from datasets import Dataset

    rows = data.load_task_rows(task, "test")
    try:
        return Dataset.from_list([{**row, TASK_FIELD: task, MODE_FIELD: mode} for row in rows])
    except (TypeError, ValueError) as error:  # pyarrow: one field holds values of incompatible types across rows
        raise data.MCGADataError(f"{data.task_file(data.data_dir_from_env(), task)}: a field has mixed value types across rows ({error})") from None


mcga_asr_docs = partial(_load_docs, "asr", "audio")
mcga_sqa_docs = partial(_load_docs, "sqa", "audio")
mcga_su_docs = partial(_load_docs, "su", "audio")
mcga_sr_docs = partial(_load_docs, "sr", "audio")
mcga_sqa_text_docs = partial(_load_docs, "sqa", "text")
mcga_su_text_docs = partial(_load_docs, "su", "text")
mcga_sr_text_docs = partial(_load_docs, "sr", "text")


def _user_text(doc: dict) -> str:
    task = doc[TASK_FIELD]
    if doc[MODE_FIELD] == "text":
        return prompts.build_text_mode_user_text(task, doc)
    return prompts.build_instruction(task, doc)


def _max_seconds(kwargs: dict | None) -> float:
    return float((kwargs or {}).get("max_audio_seconds", DEFAULT_MAX_SECONDS))


def mcga_doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    """Prompt for simple models, which have no system turn: ``system + "\\n" + user text``.

    Chat models get the official two-message form from :func:`mcga_doc_to_messages` instead.
    """
    return f"{prompts.task_prompt(doc[TASK_FIELD]).system}\n{_user_text(doc)}"


def mcga_doc_to_audio(doc: dict, lmms_eval_specific_kwargs: dict | None):
    """``doc_to_visual`` for simple models: ``[audio]`` in the form ``simple_audio`` (``array`` or ``path``); ``[]`` in text mode."""
    if doc[MODE_FIELD] == "text":
        return []
    form = (lmms_eval_specific_kwargs or {}).get("simple_audio", "array")
    return [audio_for_model(doc["audio_path"], form, _max_seconds(lmms_eval_specific_kwargs))]


def mcga_doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    """Chat request as the official runner sends it: system message, then user [audio, instruction].

    The audio part is ``{"type": "audio", "url": ...}`` in the form ``chat_audio`` (``path`` by default,
    ``data_uri`` for OpenAI-compatible servers). Text mode sends the user text alone.
    """
    kwargs = lmms_eval_specific_kwargs or {}
    user = []
    if doc[MODE_FIELD] == "audio":
        user.append({"type": "audio", "url": audio_for_model(doc["audio_path"], kwargs.get("chat_audio", "path"), _max_seconds(kwargs))})
    user.append({"type": "text", "text": _user_text(doc)})
    system = [{"type": "text", "text": prompts.task_prompt(doc[TASK_FIELD]).system}]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def mcga_doc_to_target(doc: dict) -> str:
    """The gold answer: transcript (asr), answer noun (sqa) or option letter (su/sr)."""
    return str(doc[GOLD_FIELD[doc[TASK_FIELD]]])


def mcga_process_results(doc: dict, results: list[str]) -> dict:
    """Per-document metric items; the corpus-level scores are computed in the aggregations.

    Every item that is a dict carries the row id, so the logged samples say which document scored what.
    """
    task, output = doc[TASK_FIELD], results[0] if results else ""
    gold = mcga_doc_to_target(doc)
    shared = {"empty_responses": int(not output.strip()), "signature": task}
    if task == "asr":
        item = {"id": doc["id"], "genre": doc.get("genre", ""), "dynasty": doc.get("dynasty", ""), "ref": gold, "output": output}
        return {**shared, "cer_official": item, "cer_strict": item, "cer_official_by_genre": item, "cer_official_by_dynasty": item}
    if task == "sqa":
        return {**shared, "f1_official": 100.0 * metrics.official_sqa_f1(gold, output)}
    letter = metrics.strict_mcq_letter(output)
    return {
        **shared,
        "acc_official": 100.0 * metrics.official_mcq_correct(gold, output),
        "acc_strict": 100.0 * (letter == gold.strip().upper()),
        "strict_parse_failures": {"id": doc["id"], "gold": gold, "output": output, "strict_letter": letter},
    }


# ------------------------------------------------------------------------------------ aggregations
def _refs_outputs(items: list[dict]) -> tuple[list[str], list[str]]:
    return [i["ref"] for i in items], [i["output"] for i in items]


def mcga_agg_cer_official(items: list[dict]) -> float:
    """Official corpus CER in percent over all documents of all ranks (:func:`mcga.metrics.official_cer_percent`)."""
    return metrics.official_cer_percent(*_refs_outputs(items))


def mcga_agg_cer_strict(items: list[dict]) -> float:
    """Plain character CER in percent (:func:`mcga.metrics.strict_cer_percent`)."""
    return metrics.strict_cer_percent(*_refs_outputs(items))


def mcga_agg_cer_official_by_genre(items: list[dict]) -> dict[str, float]:
    """``{genre: official CER percent}`` in the paper's genre order (Table 4)."""
    return metrics.official_cer_percent_by_group(*_refs_outputs(items), [i["genre"] for i in items], metrics.GENRE_ORDER)


def mcga_agg_cer_official_by_dynasty(items: list[dict]) -> dict[str, float]:
    """``{dynasty: official CER percent}`` in chronological order (Figure 7)."""
    return metrics.official_cer_percent_by_group(*_refs_outputs(items), [i["dynasty"] for i in items], metrics.DYNASTY_ORDER)


def mcga_agg_count(items: list) -> int:
    """Number of true items (e.g. empty responses)."""
    return int(sum(bool(i) for i in items))


def mcga_agg_strict_parse_failures(items: list[dict]) -> int:
    """Number of outputs from which :func:`mcga.metrics.strict_mcq_letter` read no option letter."""
    return sum(i["strict_letter"] is None for i in items)


def mcga_agg_signature(items: list[str]) -> str:
    """Signature of this task's metrics (:func:`mcga.metrics.task_signature`); items are the task name."""
    return metrics.task_signature(items[0])
