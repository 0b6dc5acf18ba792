"""lmms-eval hooks for MMAC (free-form audio captioning judged per dimension; arXiv 2607.27109).

Tasks ``mmac_content``, ``mmac_background``, ``mmac_persona``, ``mmac_paralinguistic``, ``mmac_dynamic``,
``mmac_implication`` (one per capability category) and the group ``mmac``. Every task sends the one prompt
"Describe this audio in detail." with the clip; the caption is judged afterwards, per target dimension of
its sample, by the LLM judge (:func:`audio_bench_core.judge.judge_task`: cache, bounded concurrency,
retries, failure accounting) under the rubric in ``mmac/rubric.json``. Schema, rubric, reply contract and
metrics live in the ``mmac`` package; this module only wires them to lmms-eval.

The judge runs in the aggregations, once per task, on rank 0, over all documents. With no judge configured
the judged metrics read "not computed: ..." and the run goes on (caption lengths are still reported).
"""

from __future__ import annotations

from functools import partial

from loguru import logger

from audio_bench_core import judge, judged_documents, responses
from audio_bench_core.audio import audio_for_model
from audio_bench_core.data_identity import DocsLoader
from audio_bench_core.run_status import guarded_group_aggregation
from lmms_eval_tasks.judge_provider import LlmJudgeClient
from mmac import data, judging, metrics, schema

_KEY_SEPARATOR = "|"  # judge_task metric key: "<dimension>|<caption-length bucket>"


def _load_docs(category: str, dataset):
    """``process_docs``: the checked samples of ``category`` from ``$MMAC_DATA_DIR`` (default: the shipped sample,
    which the YAML's ``data_files`` also names), replacing the rows lmms-eval loaded, so one environment
    variable moves rows and audio together and every sample passes :func:`mmac.data.load_samples`'s checks."""
    from datasets import Dataset

    return Dataset.from_list(data.load_category(category))


# process_docs of every task, named with the digest of what it loaded (audio_bench_core.data_identity: --use_cache)
mmac_content_docs = DocsLoader("mmac_content_docs", partial(_load_docs, "content"))
mmac_background_docs = DocsLoader("mmac_background_docs", partial(_load_docs, "background"))
mmac_persona_docs = DocsLoader("mmac_persona_docs", partial(_load_docs, "persona"))
mmac_paralinguistic_docs = DocsLoader("mmac_paralinguistic_docs", partial(_load_docs, "paralinguistic"))
mmac_dynamic_docs = DocsLoader("mmac_dynamic_docs", partial(_load_docs, "dynamic"))
mmac_implication_docs = DocsLoader("mmac_implication_docs", partial(_load_docs, "implication"))


def _max_seconds(kwargs: dict | None) -> float | None:
    value = (kwargs or {}).get("max_audio_seconds")
    return None if value in (None, "", "none", "None") else float(value)


def mmac_doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    """The one caption prompt of the paper (Sec. 3.1): "Describe this audio in detail."."""
    return schema.PROMPT


def mmac_doc_to_audio(doc: dict, lmms_eval_specific_kwargs: dict | None):
    """``doc_to_visual`` for simple models: ``[audio]`` in the form ``simple_audio`` (``array`` or ``path``)."""
    kwargs = lmms_eval_specific_kwargs or {}
    return [audio_for_model(doc["audio_path"], kwargs.get("simple_audio", "array"), _max_seconds(kwargs))]


def mmac_doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    """Chat request: one user turn [audio, prompt]; no system turn (each model keeps its default)."""
    kwargs = lmms_eval_specific_kwargs or {}
    audio = audio_for_model(doc["audio_path"], kwargs.get("chat_audio", "path"), _max_seconds(kwargs))
    return [{"role": "user", "content": [{"type": "audio", "url": audio}, {"type": "text", "text": schema.PROMPT}]}]


def mmac_doc_to_target(doc: dict) -> str:
    """The reference labels, ``"dimension: label; ..."`` (for the logs; captions are judged, not compared)."""
    return "; ".join(f"{t['dimension']}: {t['label']}" for t in doc["targets"])


JUDGED_METRICS = (
    "coverage", "precision", "accuracy", "dimensions", "judge_failed", "judge_verdicts_after_reasoning", "judge_unfinished_reasoning",
    "judge_uncached", "judge_skipped_budget", "judge", "caption_length",
)  # fmt: skip


@responses.scoring_guard(lambda doc: (f"mmac_{doc['category']}", doc["id"]), lambda doc, reason: {"signature": doc["category"]})
def mmac_process_results(doc: dict, results: list[str]) -> dict:
    """One item per document, shared by every judged metric; the judge runs in the aggregations. A document whose
    scoring raises is left out of the judged metrics and counted in ``scoring_errors``
    (:func:`audio_bench_core.responses.scoring_guard`).

    The response is first checked by :func:`audio_bench_core.responses.check_response` (failed generations,
    empty, echoed prompt, identical captions for many clips, invalid text; the diagnostics metrics). The item
    keeps the raw ``response``, the caption sent to the judge (``""`` for a failed generation), its length and
    bucket, and the sample's targets, so the logged samples say what was judged against what.
    """
    response = results[0] if results else ""
    checked = responses.check_response(
        response, task=f"mmac_{doc['category']}", doc_id=doc["id"], clip=doc["audio_path"], gold=mmac_doc_to_target(doc), prompt_texts=[schema.PROMPT]
    )
    caption = checked.answer.strip()
    length = metrics.caption_length(caption)
    item = {
        "task": f"mmac_{doc['category']}",
        "id": doc["id"],
        "category": doc["category"],
        "targets": [{"dimension": t["dimension"], "label": t["label"]} for t in doc["targets"]],
        "response": response,
        "caption": caption,
        "generation_failure": checked.record["failure"],
        "length": length,
        "bucket": metrics.length_bucket(length),
    }
    return {**checked.metrics(), **dict.fromkeys(JUDGED_METRICS, item), "signature": doc["category"]}


# ------------------------------------------------------------------------------------------ judging
def _requests(item: dict) -> dict[str, judge.JudgeRequest]:
    """One judge request per target dimension; none for empty captions (omissions) and failed generations."""
    if item["generation_failure"] or not item["caption"]:
        return {}
    rubric = judging.load_rubric()
    return {
        f"{t['dimension']}{_KEY_SEPARATOR}{item['bucket']}": judge.JudgeRequest.of(judging.judge_messages(t["dimension"], t["label"], item["caption"], rubric))
        for t in item["targets"]
    }


#: The caption length the cost estimate assumes (words): MMAC's references are per-dimension labels, not captions.
ESTIMATE_CAPTION_WORDS = 150


def mmac_judge_requests_for_estimate(doc: dict) -> list[judge.JudgeRequest]:
    """The judge requests one document's caption will send (one per target dimension), for the cost estimate before
    inference (:mod:`lmms_eval_tasks.judge_estimate`), the caption assumed :data:`ESTIMATE_CAPTION_WORDS` words long."""
    caption = " ".join(["word"] * ESTIMATE_CAPTION_WORDS)
    length = metrics.caption_length(caption)
    item = {"generation_failure": None, "caption": caption, "bucket": metrics.length_bucket(length), "targets": doc["targets"]}
    return list(_requests(item).values())


def _judgment_or_reason(scale: int, reply: str | None, item: dict | None = None) -> judging.Judgment | str:
    """``score_from_reply`` for one target dimension: the judge's final verdict (:func:`mmac.judging.parse_judge_reply`:
    the reply's reasoning is already removed; the last JSON verdict not quoted from the item's caption) on that
    dimension's ``scale``, or the reason it breaks the JSON contract. The judge layer caches only valid
    judgments and asks again for the others, then counts the item judge_failed with this reason."""
    try:
        return judging.parse_judge_reply(reply, scale, caption=item["caption"] if item else None)
    except judging.InvalidJudgeReply as error:
        return f"invalid judge reply ({error})"


def _score_functions(items: list[dict]) -> dict[str, partial]:
    """``{request key: score function}`` with each target dimension's own scale (gender is binary)."""
    rubric = judging.load_rubric()
    keys = {f"{t['dimension']}{_KEY_SEPARATOR}{item['bucket']}" for item in items for t in item["targets"]}
    return {key: partial(_judgment_or_reason, rubric["dimensions"][key.split(_KEY_SEPARATOR, 1)[0]]["scale"]) for key in keys}


def _judged(items: list[dict]) -> judge.JudgedTask | str:
    return judge.judge_task(items[0]["task"], items, _requests, _score_functions(items), {"mmac_rubric": judging.rubric_sha256_16()}, client=LlmJudgeClient)


def _outcomes(items: list[dict], judged: judge.JudgedTask) -> tuple[list[metrics.Outcome], dict]:
    """Every (sample, target) outcome, and the counts judged elsewhere than the judge call.

    Empty captions are omissions (mentioned = False) without a judge call; failed generations are left out
    and counted; judge failures (including replies off the dimension's scale) are left out and counted.
    """
    rubric = judging.load_rubric()
    outcomes: list[metrics.Outcome] = []
    extra = {"omitted_without_call": {}, "generation_failed": {}}
    for item in items:
        for target in item["targets"]:
            dimension = target["dimension"]
            if item["generation_failure"]:
                extra["generation_failed"][dimension] = extra["generation_failed"].get(dimension, 0) + 1
            elif not item["caption"]:
                extra["omitted_without_call"][dimension] = extra["omitted_without_call"].get(dimension, 0) + 1
                outcomes.append(metrics.Outcome(dimension, False, None, item["bucket"]))
    for key, result in judged.dimensions.items():
        dimension, bucket = key.split(_KEY_SEPARATOR, 1)
        scale = rubric["dimensions"][dimension]["scale"]
        outcomes.extend(metrics.Outcome(dimension, j.mentioned, judging.normalized_score(j, scale), bucket) for j in result.values)
        outcomes.extend(metrics.Outcome(dimension, None, None, bucket) for _ in result.failed)
    return outcomes, extra


def _document_outcomes(items: list[dict], judged: judge.JudgedTask) -> dict:
    """The per-document outcomes of the pass (:mod:`audio_bench_core.judged_documents`, "outcomes" shape), the same
    outcomes :func:`_outcomes` counts, so ``audio-bench-compare`` recomputes Coverage / Precision / Accuracy from them."""
    rubric = judging.load_rubric()
    by_key = {key: dimension.by_key() for key, dimension in judged.dimensions.items()}
    outcomes, failed = {}, []
    for item in items:
        if item["generation_failure"]:
            failed.append(str(item["id"]))
            continue
        rows = []
        for target in item["targets"]:
            dimension = target["dimension"]
            if not item["caption"]:
                rows.append([dimension, False, None])  # an omission, without a judge call
                continue
            judgment = by_key.get(f"{dimension}{_KEY_SEPARATOR}{item['bucket']}", {}).get(str(item["id"]))
            if judgment is None:
                rows.append([dimension, None, None])  # judge_failed
            else:
                rows.append([dimension, judgment.mentioned, judging.normalized_score(judgment, rubric["dimensions"][dimension]["scale"])])
        outcomes[str(item["id"])] = rows
    return {"key_field": "id", "outcomes": outcomes, "generation_failed": failed}


def _scores(items: list[dict]) -> dict | str:
    """Everything the judged metrics report, computed once per task, or the reason it was not computed."""
    result = _judged(items)
    if isinstance(result, str):
        return result
    outcomes, extra = _outcomes(items, result)
    judged_documents.record(items[0]["task"], _document_outcomes(items, result))
    per_dimension = metrics.dimension_scores(outcomes)
    for dimension, entry in per_dimension.items():
        entry["generation_failed"] = extra["generation_failed"].get(dimension, 0)
        entry["omitted_without_call"] = extra["omitted_without_call"].get(dimension, 0)
    category = items[0]["category"]
    return {
        "category": metrics.category_scores(per_dimension).get(category, {m: None for m in metrics.METRICS}),
        "dimensions": per_dimension,
        "judge_failed": sum(entry["judge_failed"] for entry in per_dimension.values()),
        "outcomes": outcomes,
        "provenance": {**result.provenance, **{k: v for k, v in extra.items() if v}},
    }


def _category_metric(metric: str, items: list[dict]) -> float | str:
    scores = _scores(items)
    if isinstance(scores, str):
        return scores
    value = scores["category"][metric]
    return f"not computed: no dimension of this task has a {metric} (see 'dimensions')" if value is None else value


def mmac_agg_coverage(items: list[dict]) -> float | str:
    """Coverage (percent) of the task's category: mean over its dimensions of mentioned / valid."""
    return _category_metric("coverage", items)


def mmac_agg_precision(items: list[dict]) -> float | str:
    """Precision (percent) of the task's category: mean over its dimensions of the mean score of mentioned samples."""
    return _category_metric("precision", items)


def mmac_agg_accuracy(items: list[dict]) -> float | str:
    """Accuracy (percent) of the task's category: mean over its dimensions of the mean score, omissions = 0."""
    return _category_metric("accuracy", items)


def mmac_agg_dimensions(items: list[dict]) -> dict | str:
    """Per dimension: coverage, precision, accuracy (percent) and the counts behind them."""
    scores = _scores(items)
    return scores if isinstance(scores, str) else scores["dimensions"]


def mmac_agg_judge_failed(items: list[dict]) -> int | str:
    """Number of (sample, dimension) pairs without a valid judgment (failed call, invalid or out-of-scale reply);
    each is left out of every denominator."""
    scores = _scores(items)
    return scores if isinstance(scores, str) else scores["judge_failed"]


def _pass_count(name: str, items: list[dict]) -> int | str:
    """A count of the task's judge pass (:meth:`audio_bench_core.judge.JudgedTask.count`), or the reason there is none."""
    result = _judged(items)
    return result if isinstance(result, str) else result.count(name)


#: Verdicts read after the judge's reasoning; replies whose reasoning never closed (judge_failed); usable replies
#: not stored in the cache (docs/judge.md).
mmac_agg_judge_verdicts_after_reasoning = partial(_pass_count, "reasoning_read_past")
mmac_agg_judge_unfinished_reasoning = partial(_pass_count, "unfinished_reasoning")
mmac_agg_judge_uncached = partial(_pass_count, "uncached_replies")
mmac_agg_judge_skipped_budget = partial(_pass_count, "judge_skipped_budget")


def mmac_agg_judge(items: list[dict]) -> dict | str:
    """Judge provenance: models reported, parameters, rubric hash, cache hits/misses, per-key judged/failed."""
    scores = _scores(items)
    return scores if isinstance(scores, str) else scores["provenance"]


def mmac_agg_caption_length(items: list[dict]) -> dict:
    """Caption lengths (words; CJK characters for Chinese) and Coverage / Precision per length bucket (paper Fig. 5)."""
    lengths = [item["length"] for item in items if not item["generation_failure"]]
    scores = _scores(items)
    if isinstance(scores, str):
        analysis = metrics.length_analysis(lengths, [])
        analysis["buckets"] = {label: {"captions": entry["captions"]} for label, entry in analysis["buckets"].items()}
        analysis["buckets_note"] = f"coverage/precision per bucket {scores}"
        return analysis
    return metrics.length_analysis(lengths, scores["outcomes"])


def mmac_agg_signature(items: list[str]) -> str:
    """Signature of the MMAC metrics (:func:`mmac.judging.signature`: rubric hash, averaging, units)."""
    return judging.signature()


@guarded_group_aggregation("mmac")
def mmac_agg_category_macro(values: list, sizes: list[int], weight_by_size: bool = False) -> float | str:
    """Group aggregation: the equal-weight mean of the category values (paper's "category-macro"; sizes ignored), in
    percent. A category without a number (a withheld "not computed: ..." figure, or any other value) makes it
    "not computed" with the reason; an exception costs only this figure
    (:func:`audio_bench_core.run_status.guarded_group_aggregation`). The categories hold different clips by design (the
    paper's macro over categories), so it is not a same-document figure; its documents are the categories' ``sizes``.
    """
    reasons = [v for v in values if isinstance(v, str)]
    if reasons:
        return f"not computed: {len(reasons)} of {len(values)} categories have no value ({reasons[0]})"
    others = [v for v in values if isinstance(v, bool) or not isinstance(v, (int, float))]
    if others:
        return f"not computed: {len(others)} of {len(values)} categories have no number (one is {type(others[0]).__name__})"
    if len(values) != len(schema.CATEGORIES):
        logger.warning(f"MMAC category-macro over {len(values)} categories, not all {len(schema.CATEGORIES)}")
    return sum(values) / len(values)
