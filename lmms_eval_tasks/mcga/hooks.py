"""lmms-eval hooks for MCGA (classical Chinese literature read aloud; arXiv 2601.09270).

Tasks: ``mcga_asr``, ``mcga_s2tt``, ``mcga_sec``, ``mcga_sqa``, ``mcga_su``, ``mcga_sr`` (audio) and the text-mode twins
``mcga_sqa_text``, ``mcga_su_text``, ``mcga_sr_text`` (the paper's QA, LU, LR, the CMC denominators).
One set of hooks serves all of them: ``process_docs`` tags each document with its MCGA task and mode,
the other hooks read that tag. Prompts, data checks and metrics live in the ``mcga`` package.

The judged tasks (S2TT, SEC) call the LLM judge in their aggregations, which run once, on rank 0, over
all documents (:func:`audio_bench_core.judge.judge_task`: cache, bounded concurrency, retries, failure
accounting); with no judge configured their judged metrics say "not computed: ..." and the run goes on.
"""

from __future__ import annotations

from functools import partial

from audio_bench_core import judge, judged_documents, responses
from audio_bench_core.audio import DEFAULT_MAX_SECONDS, audio_for_model
from audio_bench_core.data_identity import DocsLoader
from lmms_eval_tasks.judge_provider import LlmJudgeClient
from mcga import data, judging, metrics, prompts

TASK_FIELD, MODE_FIELD = "mcga_task", "mcga_mode"
GOLD_FIELD = {"asr": "asr", "s2tt": "s2tt", "sec": "sec_3", "sqa": "sqa_a", "su": "su_a", "sr": "sr_a"}
#: Output-format placeholders of the official prompts (each is checked to occur in its prompt by the tests). SEC's
#: line template; S2TT's worked example (江雪) is not one: a clip of that poem may rightly be translated like it.
FORMAT_PLACEHOLDERS = {"sec": ("原文|情感意境分析",)}
#: Tasks whose instruction is fixed text (SQA/SU/SR's instruction is the row's question and options).
FIXED_INSTRUCTION_TASKS = ("asr", "s2tt", "sec")


def _release_layout_docs(task: str) -> tuple[list[dict], str]:
    """The checked rows of ``MCGA_{task}_test.jsonl`` in ``$MCGA_DATA_DIR`` (default: the shipped sample;
    :func:`mcga.data.load_task_rows`), and that file's path."""
    return data.load_task_rows(task, "test"), str(data.task_file(data.data_dir_from_env(), task))


#: What ``process_docs`` reads in place of a dataset not in the hub layout: ``(task) -> (rows, the file read)`` from a
#: local copy in the release layout, or ``None``: only the hub layout, as lmms-eval loaded it.
RELEASE_LAYOUT_DOCS = _release_layout_docs


def _load_docs(task: str, mode: str, dataset):
    """``process_docs``: the checked rows of the task, tagged with task and mode: ``dataset`` in the hub layout (an
    ``Audio`` column ``audio``: the exported task's ``dataset_path``) checked and converted by
    :func:`mcga.data.rows_from_hub`, or else what :data:`RELEASE_LAYOUT_DOCS` reads.

    Raises:
        MCGADataError: a bad row, or (no :data:`RELEASE_LAYOUT_DOCS`) ``dataset`` not in the hub layout.
    """
    from datasets import Dataset

    from audio_bench_core.hub_layout import has_audio_feature

    if RELEASE_LAYOUT_DOCS is not None and not has_audio_feature(dataset):
        rows, where = RELEASE_LAYOUT_DOCS(task)
    else:
        rows, where = data.rows_from_hub(dataset, task), f"hub dataset {data.HUB_REPO_ID} config {task!r}"
    try:
        return Dataset.from_list([{**row, TASK_FIELD: task, MODE_FIELD: mode} for row in rows])
    except (TypeError, ValueError) as error:  # pyarrow: one field holds values of incompatible types across rows
        raise data.MCGADataError(f"{where}: a field has mixed value types across rows ({error})") from None


# process_docs of every task: the loader, named with the digest of what it loaded (audio_bench_core.data_identity), so
# lmms-eval's --use_cache never serves one data folder's answers to another's documents.
mcga_asr_docs = DocsLoader("mcga_asr_docs", partial(_load_docs, "asr", "audio"))
mcga_s2tt_docs = DocsLoader("mcga_s2tt_docs", partial(_load_docs, "s2tt", "audio"))
mcga_sec_docs = DocsLoader("mcga_sec_docs", partial(_load_docs, "sec", "audio"))
mcga_sqa_docs = DocsLoader("mcga_sqa_docs", partial(_load_docs, "sqa", "audio"))
mcga_su_docs = DocsLoader("mcga_su_docs", partial(_load_docs, "su", "audio"))
mcga_sr_docs = DocsLoader("mcga_sr_docs", partial(_load_docs, "sr", "audio"))
mcga_sqa_text_docs = DocsLoader("mcga_sqa_text_docs", partial(_load_docs, "sqa", "text"))
mcga_su_text_docs = DocsLoader("mcga_su_text_docs", partial(_load_docs, "su", "text"))
mcga_sr_text_docs = DocsLoader("mcga_sr_text_docs", partial(_load_docs, "sr", "text"))


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
    """The gold answer: transcript (asr), reference translation (s2tt), per-sentence analysis (sec),
    answer noun (sqa) or option letter (su/sr)."""
    return str(doc[GOLD_FIELD[doc[TASK_FIELD]]])


def _doc_identity(doc: dict) -> dict:
    """What names a document in per-item records: ``key`` (unique: the clip path, :data:`mcga.data.DOC_KEY_FIELD`),
    ``id`` (the text; repeats across speakers) and ``speaker`` (the release's ``source`` field, ``""`` if absent)."""
    return {"key": doc[data.DOC_KEY_FIELD], "id": doc["id"], "speaker": str(doc.get("source") or "")}


def _task_and_key(doc: dict) -> tuple[str, str]:
    return f"mcga_{doc[TASK_FIELD]}" + ("_text" if doc[MODE_FIELD] == "text" else ""), doc[data.DOC_KEY_FIELD]


@responses.scoring_guard(_task_and_key, lambda doc, reason: {"signature": doc[TASK_FIELD]})
def mcga_process_results(doc: dict, results: list[str]) -> dict:
    """Per-document metric items; the corpus-level scores are computed in the aggregations. A document whose scoring
    raises is left out of the task's scored metrics and counted in ``scoring_errors``
    (:func:`audio_bench_core.responses.scoring_guard`).

    Every item that is a dict carries the document's ``key``, ``id`` and ``speaker`` (:func:`_doc_identity`), so
    the logged samples say which clip scored what; judged items carry ``key`` for the judge to tell clips of
    one text apart.
    """
    task, gold = doc[TASK_FIELD], mcga_doc_to_target(doc)
    checked = _checked_response(doc, results[0] if results else "")
    output = checked.answer  # "" for a failed generation; response diagnostics first, so a failed run stops before judging
    identity = _doc_identity(doc)
    shared = {**checked.metrics(), "signature": task}
    if task == "asr":
        item = {**identity, "genre": doc.get("genre", ""), "dynasty": doc.get("dynasty", ""), "ref": gold, "output": output}
        return {**shared, **dict.fromkeys(("cer_official", "cer_strict", "cer_official_by_genre", "cer_official_by_dynasty", "n_by_genre", "n_by_dynasty"), item)}
    if task == "s2tt":
        translation = judging.s2tt_translation(output)
        item = {"task": task, **identity, "source": doc["asr"], "reference": gold, "translation": translation, "framing": judging.prompt_framing(translation)}
        return {**shared, **dict.fromkeys(S2TT_METRICS, item)}
    if task == "sec":
        persona, tone, sentences = judging.split_sec_output(output)
        cer = judging.official_sec_cer(doc["asr"], sentences)
        item = {
            "task": task,
            **identity,
            **{field: doc[field] for field in ("sec_1", "sec_2", "sec_3")},
            "parts": [persona, tone, sentences],
            "cer_sentences": round(100.0 * cer, 4),  # as the official script stores it
            "cer_text": judging.official_sec_cer_text(cer),  # what the official SEC-S code appends to the judge's reply
            "framing": sorted({mark for part in (persona, tone, sentences) for mark in judging.prompt_framing(part, quoted=True)}),
        }
        return {**shared, **dict.fromkeys(SEC_METRICS, item)}
    if task == "sqa":
        return {**shared, "f1_official": 100.0 * metrics.official_sqa_f1(gold, output)}
    reading = metrics.strict_mcq_reading(output, options=metrics.parse_mcq_options(doc[task]))
    strict_item = {**identity, "gold": gold, "output": output, "strict_letter": reading.letter, "strict_reason": reading.reason}
    return {
        **shared,
        "acc_official": 100.0 * metrics.official_mcq_correct(gold, output),
        "acc_strict": 100.0 * (reading.letter == gold.strip().upper()),
        "strict_parse_failures": strict_item,
        "ambiguous_answers": strict_item,
    }


def _checked_response(doc: dict, response: str) -> responses.CheckedResponse:
    """:func:`audio_bench_core.responses.check_response` with this document's prompt texts, placeholders and answer kind."""
    task, system, instruction = doc[TASK_FIELD], prompts.task_prompt(doc[TASK_FIELD]).system, prompts.build_instruction(doc[TASK_FIELD], doc)
    texts = [system, instruction, *([_user_text(doc)] if doc[MODE_FIELD] == "text" else []), *responses.sentences(system)]
    if task in FIXED_INSTRUCTION_TASKS:
        texts += responses.sentences(instruction)
    return responses.check_response(
        response,
        task=_task_and_key(doc)[0],
        doc_id=doc[data.DOC_KEY_FIELD],
        clip=doc["audio_path"] if doc[MODE_FIELD] == "audio" else None,
        gold=mcga_doc_to_target(doc),
        prompt_texts=texts,
        placeholders=FORMAT_PLACEHOLDERS.get(task, ()),
        closed_answer_set=task in ("su", "sr"),
    )


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


def mcga_agg_n_by_genre(items: list[dict]) -> dict[str, int]:
    """``{genre: number of clips}`` beside ``cer_official_by_genre`` (same order; the official ``Count`` table)."""
    return metrics.group_sizes([i["genre"] for i in items], metrics.GENRE_ORDER)


def mcga_agg_n_by_dynasty(items: list[dict]) -> dict[str, int]:
    """``{dynasty: number of clips}`` beside ``cer_official_by_dynasty`` (same order)."""
    return metrics.group_sizes([i["dynasty"] for i in items], metrics.DYNASTY_ORDER)


def mcga_agg_count(items: list) -> int:
    """Number of true items (e.g. empty responses)."""
    return int(sum(bool(i) for i in items))


def mcga_agg_strict_parse_failures(items: list[dict]) -> int:
    """Number of outputs from which :func:`mcga.metrics.strict_mcq_reading` read no option letter (ambiguous
    answers and questions included; each is scored wrong in ``acc_strict``)."""
    return sum(i["strict_letter"] is None for i in items)


def mcga_agg_ambiguous_answers(items: list[dict]) -> int:
    """Number of outputs that declare several different letters with no clear retraction making the last one final
    (:func:`mcga.metrics.strict_mcq_reading`, reason ``ambiguous``): scored wrong in ``acc_strict``, part of
    ``strict_parse_failures``."""
    return sum(i.get("strict_reason") == "ambiguous" for i in items)


def mcga_agg_signature(items: list[str]) -> str:
    """Signature of this task's metrics (:func:`mcga.metrics.task_signature`, :func:`mcga.judging.judged_signature`
    for S2TT and SEC); items are the task name."""
    task = items[0]
    return judging.judged_signature(task) if task in ("s2tt", "sec") else metrics.task_signature(task)


# ------------------------------------------------------------------------------- judged tasks (S2TT, SEC)
#: Counts every judged task reports: judge_failed / judge_failed_strict (left out of the
#: official-compatible / strict means), strict_differs (replies the official rule scored that the strict rule refused
#: or read otherwise), judge_verdicts_after_reasoning (verdicts read after the judge's reasoning),
#: judge_unfinished_reasoning (reasoning never closed: no verdict, judge_failed), judge_uncached (usable replies not
#: stored in the cache), candidate_prompt_framing (candidates holding prompt-like text: mcga.judging.prompt_framing).
JUDGE_COUNTS = (
    "judge_failed", "judge_failed_strict", "strict_differs", "judge_verdicts_after_reasoning", "judge_unfinished_reasoning",
    "judge_uncached", "judge_skipped_budget", "candidate_prompt_framing", "judge",
)  # fmt: skip
S2TT_STRICT = tuple(f"{name}_strict" for name in (*judging.S2TT_DIMENSIONS, "llm_b"))
SEC_STRICT = tuple(f"{name}_strict" for name in (*judging.SEC_DIMENSIONS, "llm_c"))
S2TT_METRICS = ("chrf_pp", "bleu", *judging.S2TT_DIMENSIONS, "llm_b", *S2TT_STRICT, *JUDGE_COUNTS)
SEC_METRICS = ("cer_sentences", *judging.SEC_DIMENSIONS, "llm_c", *SEC_STRICT, *JUDGE_COUNTS)


def _s2tt_requests(item: dict) -> dict[str, judge.JudgeRequest]:
    return {
        name: judge.JudgeRequest.of(judging.s2tt_judge_messages(name, item["source"], item["translation"]), judging.S2TT_JUDGE_MAX_TOKENS)
        for name in judging.S2TT_DIMENSIONS
    }


def _sec_requests(item: dict) -> dict[str, judge.JudgeRequest]:
    return {
        name: judge.JudgeRequest.of(judging.sec_judge_messages(name, item[field], item["parts"][index]))
        for name, (_, field, index, _) in judging.SEC_DIMENSIONS.items()
    }


def mcga_judge_requests_for_estimate(doc: dict) -> list[judge.JudgeRequest]:
    """The judge requests one document's judged answer will send (S2TT: 3, SEC: 3; other tasks: none), for the cost
    estimate before inference. The answer is assumed to be the reference:
    the gold translation (S2TT), the gold persona, tone and sentence parts (SEC)."""
    if doc[TASK_FIELD] == "s2tt":
        return list(_s2tt_requests({"source": doc["asr"], "translation": mcga_doc_to_target(doc)}).values())
    if doc[TASK_FIELD] == "sec":
        parts = {index: doc[field] for _, field, index, _ in judging.SEC_DIMENSIONS.values()}
        item = {**{field: doc[field] for _, field, _, _ in judging.SEC_DIMENSIONS.values()}, "parts": [parts.get(i, "") for i in range(max(parts) + 1)]}
        return list(_sec_requests(item).values())
    return []


def _sec_official(dimension: str, reply: str, item: dict) -> float:
    return judging.official_sec_judge_score(dimension, reply, item)


_SEC_OFFICIAL = {name: partial(_sec_official, name) for name in judging.SEC_DIMENSIONS}
_SEC_STRICT = {name: partial(judging.sec_judge_score, name) for name in judging.SEC_DIMENSIONS}


def _judged(task: str, items: list[dict]) -> judge.JudgedTask | str:
    """The task's judge pass: the official-compatible readings decide what is cached and asked again
    (:func:`mcga.judging.official_s2tt_judge_score`, :func:`mcga.judging.official_sec_judge_score`); the strict
    readings (:func:`mcga.judging.s2tt_judge_score`, :func:`mcga.judging.sec_judge_score`) go beside them. The calls go
    through lmms-eval's ``llm_judge`` (the ``audio_judge`` provider)."""
    if task == "s2tt":
        return judge.judge_task(
            "mcga_s2tt", items, _s2tt_requests, judging.official_s2tt_judge_score, judging.judge_prompt_hashes("s2tt"),
            strict_score=judging.s2tt_judge_score, client=LlmJudgeClient,
        )
    return judge.judge_task("mcga_sec", items, _sec_requests, _SEC_OFFICIAL, judging.judge_prompt_hashes("sec"), strict_score=_SEC_STRICT, client=LlmJudgeClient)


def _task_of(items: list[dict]) -> str:
    return items[0]["task"]


def _dimension(result: judge.JudgedTask, name: str) -> judge.JudgedDimension:
    """``name`` is a dimension (``llm_bf``) or its strict twin (``llm_bf_strict``)."""
    if name.endswith("_strict"):
        return result.dimensions[name.removesuffix("_strict")].strict
    return result.dimensions[name]


def _judged_mean(name: str, items: list[dict], scale: float) -> float | str:
    """Mean judge score of one dimension (or its strict reading: ``<name>_strict``) times ``scale``, or the reason it
    was not computed."""
    result = _judged(_task_of(items), items)
    if isinstance(result, str):
        return result
    partial = result.partial_reason([name.removesuffix("_strict")])  # the judge budget left calls unmade
    if partial is not None:
        return partial
    mean = _dimension(result, name).mean
    return "not computed: every judge call of this metric failed (see 'judge')" if mean is None else mean * scale


def _metrics(name: str, scale: float, what: str):
    """The aggregations of one judged dimension: ``(official-compatible, strict)`` means times ``scale``."""

    def official(items: list[dict]) -> float | str:
        return _judged_mean(name, items, scale)

    def strict(items: list[dict]) -> float | str:
        return _judged_mean(f"{name}_strict", items, scale)

    official.__name__, official.__doc__ = f"mcga_agg_{name}", f"{what}, official-compatible: mean judge score over judged items" + (" ×20." if scale != 1 else ".")
    strict.__name__, strict.__doc__ = f"mcga_agg_{name}_strict", f"{what}, strict reading (mcga.judging, 'Two readings')."
    return official, strict


mcga_agg_llm_bf, mcga_agg_llm_bf_strict = _metrics("llm_bf", judging.S2TT_SCALE, "LLM-BF, beauty of form (0-100)")
mcga_agg_llm_bm, mcga_agg_llm_bm_strict = _metrics("llm_bm", judging.S2TT_SCALE, "LLM-BM, beauty of meaning (0-100)")
mcga_agg_llm_bs, mcga_agg_llm_bs_strict = _metrics("llm_bs", judging.S2TT_SCALE, "LLM-BS, beauty of sound (0-100)")
mcga_agg_sec_p, mcga_agg_sec_p_strict = _metrics("sec_p", 1, "SEC-P, voice persona (0-2)")
mcga_agg_sec_g, mcga_agg_sec_g_strict = _metrics("sec_g", 1, "SEC-G, global emotion (0-3)")
mcga_agg_sec_s, mcga_agg_sec_s_strict = _metrics("sec_s", 1, "SEC-S, sentence-level emotion (0-5; official: the CER text appended)")


def _combined(items: list[dict], combine, strict: bool = False) -> float | str:
    result = _judged(_task_of(items), items)
    if isinstance(result, str):
        return result
    _record_documents(items, result)
    partial = result.partial_reason()  # the judge budget left calls unmade
    if partial is not None:
        return partial
    value = combine({name: (d.strict if strict else d).mean for name, d in result.dimensions.items()})
    return "not computed: a dimension has no judged item (see 'judge')" if value is None else value


def _record_documents(items: list[dict], result: judge.JudgedTask) -> None:
    """Keep the pass's per-document scores of every dimension, both readings, for the results file
    (:mod:`audio_bench_core.judged_documents`: for paired comparisons of two runs, LLM-B/LLM-C recomputed per document)."""
    task = _task_of(items)
    dimensions = judging.S2TT_DIMENSIONS if task == "s2tt" else judging.SEC_DIMENSIONS
    judged_documents.record(f"mcga_{task}", judged_documents.dimension_scores(result, items, list(dimensions)))


def mcga_agg_llm_b(items: list[dict]) -> float | str:
    """LLM-B (0-100), official-compatible: mean of the three S2TT dimension means ×20 (:func:`mcga.judging.llm_b`)."""
    return _combined(items, judging.llm_b)


def mcga_agg_llm_c(items: list[dict]) -> float | str:
    """LLM-C (0-100), official-compatible: (SEC-P + SEC-G + SEC-S means) ×10 (:func:`mcga.judging.llm_c`)."""
    return _combined(items, judging.llm_c)


def mcga_agg_llm_b_strict(items: list[dict]) -> float | str:
    """LLM-B (0-100) from the strict readings."""
    return _combined(items, judging.llm_b, strict=True)


def mcga_agg_llm_c_strict(items: list[dict]) -> float | str:
    """LLM-C (0-100) from the strict readings."""
    return _combined(items, judging.llm_c, strict=True)


def mcga_agg_judge_failed(items: list[dict]) -> int | str:
    """Number of (item, dimension) pairs left out of the official-compatible means: failed calls, replies whose
    reasoning never closed, S2TT replies without a digit (the official code leaves those out too)."""
    result = _judged(_task_of(items), items)
    return result if isinstance(result, str) else sum(len(d.failed) for d in result.dimensions.values())


def mcga_agg_judge_failed_strict(items: list[dict]) -> int | str:
    """Number of (item, dimension) pairs left out of the strict means (the above, and replies the strict rule refuses)."""
    result = _judged(_task_of(items), items)
    return result if isinstance(result, str) else sum(len(d.strict.failed) for d in result.dimensions.values())


def mcga_agg_strict_differs(items: list[dict]) -> int | str:
    """Number of replies the official rule scored that the strict rule refused or read as another number: where the
    two figures part in this run (reasons per item in 'judge', per metric under 'strict')."""
    result = _judged(_task_of(items), items)
    return result if isinstance(result, str) else sum(d.strict_differs for d in result.dimensions.values())


def _pass_count(name: str, items: list[dict]) -> int | str:
    result = _judged(_task_of(items), items)
    return result if isinstance(result, str) else result.count(name)


mcga_agg_judge_verdicts_after_reasoning = partial(_pass_count, "reasoning_read_past")
mcga_agg_judge_unfinished_reasoning = partial(_pass_count, "unfinished_reasoning")
mcga_agg_judge_uncached = partial(_pass_count, "uncached_replies")
mcga_agg_judge_skipped_budget = partial(_pass_count, "judge_skipped_budget")


def mcga_agg_candidate_prompt_framing(items: list[dict]) -> int:
    """Number of items whose candidate text holds prompt-like framing (:func:`mcga.judging.prompt_framing`); the
    official prompts send it as it is. Needs no judge."""
    return sum(bool(item["framing"]) for item in items)


def mcga_agg_judge(items: list[dict]) -> dict | str:
    """Judge provenance: models reported, parameters, prompt hashes, cache hits/misses, per-metric judged/failed."""
    result = _judged(_task_of(items), items)
    return result if isinstance(result, str) else result.provenance


def mcga_agg_chrf_pp(items: list[dict]) -> float:
    """Corpus chrF++ (0-100, sacrebleu) of the translations against the gold ``s2tt`` references (no judge)."""
    return judging.s2tt_reference_metrics([i["reference"] for i in items], [i["translation"] for i in items])["chrf_pp"]


def mcga_agg_bleu(items: list[dict]) -> float:
    """Corpus BLEU (0-100, sacrebleu defaults) of the translations against the gold ``s2tt`` references (no judge)."""
    return judging.s2tt_reference_metrics([i["reference"] for i in items], [i["translation"] for i in items])["bleu"]


def mcga_agg_cer_sentences(items: list[dict]) -> float:
    """SEC: mean over items of the per-item CER (percent) of the sentence texts against ``asr`` (official)."""
    return sum(i["cer_sentences"] for i in items) / len(items)
