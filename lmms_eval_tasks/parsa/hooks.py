"""lmms-eval hooks for PARSA-Bench (Persian speech, paralinguistics and culture; arXiv 2603.14456).

Tasks ``parsa_<short>`` (zero-shot audio, the paper's main setting) and the setting variants
``parsa_<short>_text``, ``_audio_ref``, ``_fewshot``, ``_cot`` where ``parsa.tasks.TASKS[short].settings``
has them. One set of hooks serves every task: ``process_docs`` (``parsa_<name>_docs``, one per YAML, made
below from the task table) loads the checked canonical documents (:func:`_load_docs`) and tags
each with its task, setting, few-shot demonstrations and data source; the other hooks read those tags. Prompts
(:mod:`parsa.prompts`), parsing and metrics (:mod:`parsa.scoring`) live in the ``parsa`` package.

Messages sent to chat models (:func:`parsa_doc_to_messages`; no system turn: the paper's prompts put the role
sentence in the instruction itself):

- ``audio``, ``cot``, ``audio_ref``: one user turn ``[audio, text]``;
- ``text``: one user turn ``[text]`` (no audio is sent);
- ``fewshot``: for each of the k = 2 demonstrations a user turn ``[demo audio, demo text]`` followed by an
  assistant turn ``[gold answer as JSON]`` (:func:`parsa.prompts.demo_answer_json`), then the query's user turn
  ``[audio, text]``.

Simple models get :func:`parsa_doc_to_visual` (the audios, in the order above) and :func:`parsa_doc_to_text`
(few-shot: each demonstration's text and gold JSON, a blank line, then the query text).

Audio is never cut: the paper does not cut recordings (sabk excerpts are four beits and can exceed 30 s), so
``max_audio_seconds`` is ``null`` in the task template; models that cannot take long audio cut it themselves.
"""

from __future__ import annotations

import json
from functools import partial

from audio_bench_core import responses
from audio_bench_core.audio import audio_for_model
from audio_bench_core.data_identity import DocsLoader
from parsa import data, prompts, scoring
from parsa.tasks import TASKS

TASK_FIELD, SETTING_FIELD, DEMOS_FIELD, SOURCE_FIELD = "parsa_task", "parsa_setting", "parsa_demos_json", "parsa_data_source"
CANONICAL_FIELDS = ("id", "task", "audio_path", "transcript", "reference", "question", "options")
SUFFIX = {"audio": "", "text": "_text", "audio_ref": "_audio_ref", "fewshot": "_fewshot", "cot": "_cot"}


def lmms_task_name(task: str, setting: str) -> str:
    """``parsa_<task>`` plus the setting's suffix (``""``, ``_text``, ``_audio_ref``, ``_fewshot``, ``_cot``)."""
    return f"parsa_{task}{SUFFIX[setting]}"


def _release_layout_docs(task: str, setting: str) -> tuple[list[dict], str]:
    """The checked documents of ``task`` from ``$PARSA_DATA_DIR`` (default: the shipped sample;
    :func:`parsa.data.load_task_docs`), and the line naming that data (:func:`parsa.data.data_source`)."""
    return data.load_task_docs(task, setting=setting), data.data_source()


#: What ``process_docs`` reads in place of a dataset not in the hub layout: ``(task, setting) -> (documents, data source)`` from a
#: local copy in the release layout, or ``None``: only the hub layout, as lmms-eval loaded it.
RELEASE_LAYOUT_DOCS = _release_layout_docs


def _load_docs(task: str, setting: str, dataset):
    """``process_docs``: the checked documents of ``task``, tagged with task, setting, demonstrations and data source:
    ``dataset`` in the hub layout (the task's audio column an ``Audio`` feature: the exported task's ``dataset_path``)
    checked and converted by :func:`parsa.data.rows_from_hub`, or else what :data:`RELEASE_LAYOUT_DOCS` reads.

    Raises:
        PARSADataError: a bad row, or (no :data:`RELEASE_LAYOUT_DOCS`) ``dataset`` not in the hub layout.
    """
    from datasets import Dataset

    from audio_bench_core.hub_layout import has_audio_feature

    if RELEASE_LAYOUT_DOCS is not None and not has_audio_feature(dataset, data.column_map()[task]["columns"]["audio"]):
        docs, source = RELEASE_LAYOUT_DOCS(task, setting)
    else:
        docs, source = data.rows_from_hub(dataset, task, setting), data.HUB_LAYOUT_SOURCE
    demos = data.fewshot_demos(docs) if setting == "fewshot" else {}
    rows = [{**doc, TASK_FIELD: task, SETTING_FIELD: setting, DEMOS_FIELD: json.dumps(demos.get(doc["id"], []), ensure_ascii=False), SOURCE_FIELD: source} for doc in docs]
    return Dataset.from_list(rows)


# One process_docs function per (task, setting), named after the lmms-eval task: parsa_vazn_docs, parsa_vazn_text_docs, ...
# each names the digest of what it loaded (audio_bench_core.data_identity: --use_cache keys on it).
for _task, _spec in TASKS.items():
    for _setting in _spec.settings:
        _name = f"{lmms_task_name(_task, _setting)}_docs"
        globals()[_name] = DocsLoader(_name, partial(_load_docs, _task, _setting))


def _canonical(doc: dict) -> dict:
    return {field: doc[field] for field in CANONICAL_FIELDS}


def _demos(doc: dict) -> list[dict]:
    return json.loads(doc.get(DEMOS_FIELD) or "[]")


def _query_setting(doc: dict) -> str:
    return "audio" if doc[SETTING_FIELD] == "fewshot" else doc[SETTING_FIELD]


def _user_text(doc: dict) -> str:
    return prompts.build_user_text(doc[TASK_FIELD], _canonical(doc), _query_setting(doc))


def _max_seconds(kwargs: dict | None) -> float | None:
    value = (kwargs or {}).get("max_audio_seconds")
    return None if value is None else float(value)


def parsa_doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    """Prompt for simple models: the instruction text; few-shot: each demonstration's text and gold JSON first."""
    parts = [f"{prompts.build_user_text(doc[TASK_FIELD], demo, 'audio')}\n{prompts.demo_answer_json(doc[TASK_FIELD], demo)}" for demo in _demos(doc)]
    return "\n\n".join([*parts, _user_text(doc)])


def parsa_doc_to_visual(doc: dict, lmms_eval_specific_kwargs: dict | None):
    """``doc_to_visual`` for simple models: the audios in the form ``simple_audio`` (demonstrations first); ``[]`` in text mode."""
    if doc[SETTING_FIELD] == "text":
        return []
    kwargs = lmms_eval_specific_kwargs or {}
    form, seconds = kwargs.get("simple_audio", "array"), _max_seconds(kwargs)
    return [audio_for_model(d["audio_path"], form, seconds) for d in _demos(doc)] + [audio_for_model(doc["audio_path"], form, seconds)]


def parsa_doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    """Chat request; the layout per setting is in the module docstring. Audio parts are
    ``{"type": "audio", "url": ...}`` in the form ``chat_audio`` (``path``, or ``data_uri`` for OpenAI-compatible servers)."""
    kwargs = lmms_eval_specific_kwargs or {}
    form, seconds = kwargs.get("chat_audio", "path"), _max_seconds(kwargs)
    task, messages = doc[TASK_FIELD], []
    for demo in _demos(doc):
        messages.append({"role": "user", "content": [{"type": "audio", "url": audio_for_model(demo["audio_path"], form, seconds)},
                                                     {"type": "text", "text": prompts.build_user_text(task, demo, "audio")}]})  # fmt: skip
        messages.append({"role": "assistant", "content": [{"type": "text", "text": prompts.demo_answer_json(task, demo)}]})
    query = [] if doc[SETTING_FIELD] == "text" else [{"type": "audio", "url": audio_for_model(doc["audio_path"], form, seconds)}]
    messages.append({"role": "user", "content": [*query, {"type": "text", "text": _user_text(doc)}]})
    return messages


def parsa_doc_to_target(doc: dict) -> str:
    """The gold answer as stored: transcript, translation, canonical label, option number or entity JSON."""
    return str(doc["reference"])


def _excluded_metrics(doc: dict, reason: str) -> dict:
    """The task's metrics of a document whose scoring raised: the record of an empty answer, marked excluded with the
    reason (the paper's rule for an answer that cannot be read: excluded, and counted in ``excluded``)."""
    task = doc[TASK_FIELD]
    record = {**scoring.score_response(task, _canonical(doc), ""), "status": "excluded", "reason": f"scoring_error: {reason}", "prediction": None, "raw_answer": None}
    return {**{metric: record for metric in scoring.metric_names(task)}, "data_source": doc[SOURCE_FIELD]}


@responses.scoring_guard(lambda doc: (lmms_task_name(doc[TASK_FIELD], doc[SETTING_FIELD]), doc["id"]), _excluded_metrics)
def parsa_process_results(doc: dict, results: list[str]) -> dict:
    """One scored record per item (:func:`parsa.scoring.score_response`) under every metric of the task, plus
    the data source. Aggregations run on rank 0 over the records of all ranks. A document whose scoring raises is
    excluded and counted (:func:`audio_bench_core.responses.scoring_guard`, :func:`_excluded_metrics`)."""
    task = doc[TASK_FIELD]
    checked = _checked_response(doc, results[0] if results else "")
    # a failed generation is scored as ""; reasoning is removed, and one that never closed is excluded (no answer)
    record = scoring.score_response(task, _canonical(doc), checked.answer, unfinished_reasoning=checked.record["unfinished_reasoning"])
    if checked.record["failure"]:
        record["reason"] = "generation_failed"
    return {**checked.metrics(), **{metric: record for metric in scoring.metric_names(task)}, "data_source": doc[SOURCE_FIELD]}


def _checked_response(doc: dict, response: str) -> responses.CheckedResponse:
    """:func:`audio_bench_core.responses.check_response` for one document. Prompt texts: the user text, and each
    sentence of its first line (role + instruction) and last line (output format): the layout of
    :func:`parsa.prompts.build_user_text`, whose middle lines are content (transcript, question, options)."""
    task, user_text = doc[TASK_FIELD], _user_text(doc)
    lines = user_text.split("\n")
    return responses.check_response(
        response,
        task=lmms_task_name(task, doc[SETTING_FIELD]),
        doc_id=doc["id"],
        clip=None if doc[SETTING_FIELD] == "text" else doc["audio_path"],
        gold=doc["reference"],
        prompt_texts=[user_text, *responses.sentences(lines[0]), *(responses.sentences(lines[-1]) if len(lines) > 1 else [])],
        placeholders=responses.format_placeholders(prompts.answer_schema(task, _query_setting(doc))),
        closed_answer_set=TASKS[task].kind in ("classification", "multiple_choice"),
    )


# ------------------------------------------------------------------------------------ aggregations
def _hook(aggregation):
    """``parsa_agg_<metric>``: ``aggregation`` (``parsa.scoring.agg_<metric>``) of one task over the records of all
    ranks (:func:`parsa.scoring.aggregate_with`)."""
    hook = partial(_aggregate, aggregation)
    hook.__doc__ = f"``{aggregation.__name__.removeprefix('agg_')}`` of one task over the records of all ranks (:func:`parsa.scoring.aggregate_with`)."
    return hook


def _aggregate(aggregation, records: list[dict]):
    return scoring.aggregate_with(aggregation, records[0]["task"], records)


# One aggregation per metric of parsa.scoring.metric_names, a line each (not a loop over a table): each names the one
# function it runs, so a task that lists a metric needs only that metric's code.
parsa_agg_accuracy = _hook(scoring.agg_accuracy)
parsa_agg_accuracy_ci95 = _hook(scoring.agg_accuracy_ci95)
parsa_agg_accuracy_strict = _hook(scoring.agg_accuracy_strict)
parsa_agg_ambiguous_answers = _hook(scoring.agg_ambiguous_answers)
parsa_agg_bleu = _hook(scoring.agg_bleu)
parsa_agg_bleu_raw = _hook(scoring.agg_bleu_raw)
parsa_agg_cer_mean = _hook(scoring.agg_cer_mean)
parsa_agg_chrf_pp = _hook(scoring.agg_chrf_pp)
parsa_agg_chrf_pp_ci95 = _hook(scoring.agg_chrf_pp_ci95)
parsa_agg_chrf_pp_raw = _hook(scoring.agg_chrf_pp_raw)
parsa_agg_chrf_pp_strict = _hook(scoring.agg_chrf_pp_strict)
parsa_agg_ci_flags = _hook(scoring.agg_ci_flags)
parsa_agg_comet = _hook(scoring.agg_comet)
parsa_agg_excluded = _hook(scoring.agg_excluded)
parsa_agg_f1_exact = _hook(scoring.agg_f1_exact)
parsa_agg_f1_exact_ci95 = _hook(scoring.agg_f1_exact_ci95)
parsa_agg_f1_exact_strict = _hook(scoring.agg_f1_exact_strict)
parsa_agg_json_fallback = _hook(scoring.agg_json_fallback)
parsa_agg_macro_f1 = _hook(scoring.agg_macro_f1)
parsa_agg_macro_f1_ci95 = _hook(scoring.agg_macro_f1_ci95)
parsa_agg_macro_f1_invented_as_classes = _hook(scoring.agg_macro_f1_invented_as_classes)
parsa_agg_macro_f1_strict = _hook(scoring.agg_macro_f1_strict)
parsa_agg_majority_baseline = _hook(scoring.agg_majority_baseline)
parsa_agg_normalised_score = _hook(scoring.agg_normalised_score)
parsa_agg_out_of_set_labels = _hook(scoring.agg_out_of_set_labels)
parsa_agg_precision_exact = _hook(scoring.agg_precision_exact)
parsa_agg_recall_exact = _hook(scoring.agg_recall_exact)
parsa_agg_refusal_rate = _hook(scoring.agg_refusal_rate)
parsa_agg_refused = _hook(scoring.agg_refused)
parsa_agg_repaired_json = _hook(scoring.agg_repaired_json)
parsa_agg_repetition_rate = _hook(scoring.agg_repetition_rate)
parsa_agg_scored = _hook(scoring.agg_scored)
parsa_agg_signature = _hook(scoring.agg_signature)
parsa_agg_wer_fix = _hook(scoring.agg_wer_fix)
parsa_agg_wer_mean = _hook(scoring.agg_wer_mean)
parsa_agg_wer_mean_ci95 = _hook(scoring.agg_wer_mean_ci95)
parsa_agg_wer_mean_strict = _hook(scoring.agg_wer_mean_strict)
parsa_agg_wer_median = _hook(scoring.agg_wer_median)
parsa_agg_wer_median_ci95 = _hook(scoring.agg_wer_median_ci95)


def parsa_agg_data_source(items: list[str]) -> str:
    """The data every document came from (:func:`parsa.data.data_source`: sample, local folder, or hub commit)."""
    return " | ".join(sorted(set(items)))
