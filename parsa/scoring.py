"""Per-item scoring and per-task aggregation of PARSA-Bench (the API the lmms-eval hooks call).

:func:`score_response` turns one (document, model response) pair into a JSON-serialisable record;
:func:`metric_names` lists the metrics a task reports; :func:`aggregate` computes one metric from the records.

The paper's rule (§4.2): items with no valid answer, refusals included, are **excluded** from the scored set and
the number scored is reported. Every task therefore reports ``scored``, ``excluded`` (unparseable or invalid
answers) and ``refused`` (refusals: for ASR and En->Fa translation a hypothesis with no Persian script; elsewhere an
invalid response with an apology/inability phrase) as counts with ``scored + excluded + refused`` = all items, and
``json_fallback`` (answers read from a response with no JSON object). Beside each paper-rule headline a ``*_strict``
figure counts the excluded and refused items as wrong (ours). How answers are read (reasoning removed, several
answers, repaired JSON, out-of-set labels) is in :mod:`parsa.parsing`; each reading is counted: ``ambiguous_answers``
(several different answers with no clear final one: excluded), ``repaired_json`` (answers read from near-JSON),
and, for classification and multiple choice, ``out_of_set_labels`` (values naming no label or option: excluded).

Metrics by task kind (fractions 0-1 unless a count; chrF++ and BLEU on sacrebleu's 0-100 scale):

- ``asr``: ``wer_median`` (headline, Table 2), ``wer_mean``, ``cer_mean`` (Table 3), ``wer_mean_strict`` (refused
  items at WER 1, the WER of an empty hypothesis), ``wer_fix`` (Table 3 WERfix), ``repetition_rate`` (Rep.%: share
  of scored items that are repetition loops), ``refusal_rate`` (Ref.%: refused / all items), ``wer_median_ci95``,
  ``wer_mean_ci95``.
- ``translation``: ``comet`` (headline; a ``"not computed: ..."`` string unless configured), ``chrf_pp``, ``bleu``,
  ``chrf_pp_raw``, ``bleu_raw``, ``chrf_pp_strict`` (non-scored items as empty hypotheses), ``chrf_pp_ci95``,
  ``refusal_rate``. Into Persian (``s2tt_en_fa``), ``chrf_pp``, ``bleu``, ``chrf_pp_strict`` and ``chrf_pp_ci95``
  are computed on :func:`parsa.normalize.normalize_persian` of both hypothesis and reference (Arabic/Persian
  yeh and kaf, ZWNJ/space/joined spellings, a space before ``؟``, punctuation do not count) and ``chrf_pp_raw``/
  ``bleu_raw`` are plain sacrebleu on the unnormalised text; into English nothing is normalised (``*_raw`` equal
  the plain figures). COMET always gets the raw text (a learned metric, trained on unnormalised text).
- ``classification``: ``macro_f1`` (headline: out-of-set labels excluded, §4.2), ``macro_f1_invented_as_classes``
  (the other reading of §4.2: each out-of-set label a class of its own, F1 0, its item scored), ``macro_f1_strict``,
  ``accuracy``, ``accuracy_strict``, ``macro_f1_ci95``, ``majority_baseline``, ``normalised_score``,
  ``out_of_set_labels``.
- ``multiple_choice``: ``accuracy`` (headline), ``accuracy_strict``, ``accuracy_ci95``, ``majority_baseline``,
  ``normalised_score``, ``out_of_set_labels``; vazn and sabk (one fixed option set) also ``macro_f1`` over option
  texts (§6.6).
- ``ner``: ``f1_exact`` (headline), ``precision_exact``, ``recall_exact``, ``f1_exact_strict`` (non-scored items
  predict no entity), ``f1_exact_ci95``.
- every task: ``scored``, ``excluded``, ``refused``, ``json_fallback``, ``ambiguous_answers``, ``repaired_json``,
  ``ci_flags``, ``signature``.

Baselines: ``majority`` = share of the most frequent gold class over **all** evaluated items (model-independent,
as Table 2's one chance column); ``uniform`` = 1/n_options (MCQA, RC, music). ``normalised_score`` =
(headline - b) / (1 - b) with the paper-rule headline. Confidence intervals (95 %, ``[low, high]``, over the scored
items): proportions (``accuracy_ci95``) by the Wilson score interval (``parsa.metrics.proportion_ci``), which
has width at 0/n and n/n; medians, means, F1 and chrF++ by the percentile bootstrap
(``parsa.metrics.bootstrap_ci``, 1000 resamples, seed 0). ``ci_flags`` says, per interval, when it rests on
fewer than :data:`parsa.metrics.MIN_ITEMS_FOR_CI` (30) scored items or when the bootstrap was degenerate (every
resample gave the same value, so ``[x, x]`` claims a certainty the data do not have); ``{}`` when nothing is flagged.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable

import numpy as np

from parsa import metrics
from parsa.normalize import normalize_persian, normalizer_signature
from parsa.parsing import ParsedAnswer, parse_response
from parsa.tasks import get_task

SCORING_VERSION = "5"  # 3: reasoning removed first, final answer after a retraction, ambiguous/repaired counted, Wilson CI; 4: answer tags;
# 5: labels and options read inside formatting (any script's quotes/brackets, Markdown, LaTeX, \boxed) and beside a gloss, MC conclusions
STATUSES = ("scored", "excluded", "refused")

_COUNTS = ["scored", "excluded", "refused", "json_fallback", "ambiguous_answers", "repaired_json", "ci_flags", "signature"]
_METRICS_BY_KIND = {
    "asr": ["wer_median", "wer_mean", "cer_mean", "wer_mean_strict", "wer_fix", "repetition_rate", "refusal_rate", "wer_median_ci95", "wer_mean_ci95"],
    "translation": ["comet", "chrf_pp", "bleu", "chrf_pp_raw", "bleu_raw", "chrf_pp_strict", "chrf_pp_ci95", "refusal_rate"],
    "classification": ["macro_f1", "macro_f1_invented_as_classes", "macro_f1_strict", "accuracy", "accuracy_strict", "macro_f1_ci95", "majority_baseline",
                       "normalised_score", "out_of_set_labels"],  # fmt: skip
    "multiple_choice": ["accuracy", "accuracy_strict", "accuracy_ci95", "majority_baseline", "normalised_score", "out_of_set_labels"],
    "ner": ["f1_exact", "precision_exact", "recall_exact", "f1_exact_strict", "f1_exact_ci95"],
}

_RULES = {
    "asr": f"hyp=json[transcription]|raw;refusal=no-persian-script;wer,cer=jiwer-per-item(mean,median);loop=ngram<={metrics.MAX_REPEAT_NGRAM}x>={metrics.LOOP_MIN_COPIES};werfix=collapse-repeats;strict=refused-as-wer1",
    "translation": "hyp=json[translation]|raw;refusal(fa)=no-persian-script;chrf++,bleu=sacrebleu-corpus(0-100);text(fa-target)=norm-both-sides,raw=unnormalised;text(en-target)=raw;comet=raw-text,local-checkpoint;strict=non-scored-as-empty",
    "classification": "label=key|alias;macro_f1=sklearn-macro(labels=gold|pred,zero_division=0);non-scored-excluded(out-of-set-too);invented_as_classes=out-of-set-as-own-class;strict=invalid-as-wrong;baseline=majority-gold-all-items;ci=bootstrap",
    "multiple_choice": "option=int|number-string|option-text;accuracy;non-scored-excluded;strict=invalid-as-wrong;baseline=majority-option-text(fixed)|1/n;ci=wilson",
    "ner": "entities=[{type,span}];match=exact(type-key,normalised-span-without-spaces),multiset;micro-f1-over-items;strict=non-scored-predict-nothing",
}

#: How every task reads answers (parsa.parsing), in the signature.
_READING = ("read=reasoning-removed,answer-tags-read,unfinished-excluded;several=last-if-retracted-else-excluded;near-json=json-repair(counted);question-not-answer;"
            "value=as-written>unwrapped(any-script-quotes/brackets,markdown,latex,boxed)>gloss-set-aside(other-option=ambiguous);mc=conclusion(last-option-clause:one-number+affirmed,not-negated/hedged/asked)")


# ------------------------------------------------------------------------------------ per item
def score_response(task: str, doc: dict, response: str | None, *, unfinished_reasoning: bool = False) -> dict:
    """The per-item record of one response (JSON-serialisable).

    Args:
        task: short task name.
        doc: the canonical document (``id``, ``reference``, ``transcript``, ``options``).
        response: the model output with its reasoning removed
            (:func:`audio_bench_core.responses.check_response` does it for the lmms-eval tasks).
        unfinished_reasoning: the model's reasoning never closed, so it gave no final answer: the item is excluded
            with reason ``unfinished_reasoning`` (as a refusal is), whatever ``response`` holds.

    Returns:
        ``{"task", "id", "status" ("scored"|"excluded"|"refused"), "reason", "json_fallback", "json_repaired",
        "out_of_set", "reading" (how a label/option was read, :attr:`parsa.parsing.ParsedAnswer.reading`), "prediction", "gold", "raw_answer", ...}`` plus per kind: classification/MC ``correct`` (bool or ``None``); MC ``gold_option``,
        ``predicted_option`` (texts); ASR ``wer``, ``cer``, ``wer_fix``, ``repetition_loop`` (``None`` unless
        scored); translation ``source``; NER ``matches``, ``n_predicted``, ``n_gold``, ``skipped_entities``.

    Raises:
        KeyError: unknown task.
        ValueError: the document's gold answer is invalid for the task (the message names task and id).
    """
    spec = get_task(task)
    parsed = ParsedAnswer("excluded", None, "unfinished_reasoning") if unfinished_reasoning else parse_response(task, doc, response)
    record = {
        "task": task,
        "id": str(doc.get("id", "")),
        "status": parsed.status,
        "reason": parsed.reason,
        "json_fallback": parsed.json_fallback,
        "json_repaired": parsed.json_repaired,
        "out_of_set": parsed.out_of_set,
        "reading": parsed.reading,
        "prediction": parsed.value,
        "raw_answer": _jsonable(parsed.raw_value),
    }
    record.update(_KIND_FIELDS[spec.kind](task, doc, parsed))
    return record


def _jsonable(value: object) -> object:
    if value is None or type(value) in (str, float, bool):  # json.dumps never fails on these (NaN is allowed)
        return value
    try:
        json.dumps(value, ensure_ascii=False)
        return value
    except (TypeError, ValueError):
        return str(value)


def _bad_gold(task: str, doc: dict, what: str) -> ValueError:
    return ValueError(f"PARSA {task} item {doc.get('id')!r}: {what}")


def _asr_fields(task: str, doc: dict, parsed: ParsedAnswer) -> dict:
    gold = str(doc.get("reference") or doc.get("transcript") or "")
    if not normalize_persian(gold):
        raise _bad_gold(task, doc, "empty reference transcript (WER is undefined)")
    fields = {"gold": gold, "wer": None, "cer": None, "wer_fix": None, "repetition_loop": None}
    if parsed.status == "scored":
        fields.update(metrics.asr_item_scores(gold, str(parsed.value)))
    return fields


def _translation_fields(task: str, doc: dict, parsed: ParsedAnswer) -> dict:
    gold = str(doc.get("reference") or "")
    if not gold.strip():
        raise _bad_gold(task, doc, "empty reference translation")
    return {"gold": gold, "source": str(doc.get("transcript") or "")}


def _classification_fields(task: str, doc: dict, parsed: ParsedAnswer) -> dict:
    gold = str(doc.get("reference") or "")
    labels = get_task(task).labels
    if gold not in labels:
        raise _bad_gold(task, doc, f"gold label {gold!r} is not one of {', '.join(labels)}")
    return {"gold": gold, "correct": (parsed.value == gold) if parsed.status == "scored" else None}


def _multiple_choice_fields(task: str, doc: dict, parsed: ParsedAnswer) -> dict:
    options = [str(o) for o in (doc.get("options") or [])]
    n_options = get_task(task).n_options
    if len(options) != n_options:
        raise _bad_gold(task, doc, f"{n_options} options expected, got {len(options)}")
    reference = str(doc.get("reference") or "").strip()
    if not reference.isdigit() or not 1 <= int(reference) <= n_options:
        raise _bad_gold(task, doc, f"reference {reference!r} is not an option number 1..{n_options}")
    gold = int(reference)
    scored = parsed.status == "scored"
    return {
        "gold": gold,
        "correct": (parsed.value == gold) if scored else None,
        "gold_option": options[gold - 1],
        "predicted_option": options[parsed.value - 1] if scored else None,
    }


def _ner_fields(task: str, doc: dict, parsed: ParsedAnswer) -> dict:
    try:
        gold = json.loads(doc.get("reference") or "[]")
    except json.JSONDecodeError as error:
        raise _bad_gold(task, doc, f"reference is not a JSON list of entities ({error})") from None
    if not isinstance(gold, list) or not all(isinstance(e, dict) and e.get("type") and e.get("span") for e in gold):
        raise _bad_gold(task, doc, 'reference must be a JSON list of {"type": ..., "span": ...} objects')
    predicted = parsed.value if parsed.status == "scored" else []
    matches, n_predicted, n_gold = metrics.ner_counts(gold, predicted)
    return {"gold": gold, "matches": matches, "n_predicted": n_predicted, "n_gold": n_gold, "skipped_entities": parsed.skipped_entities}


_KIND_FIELDS: dict[str, Callable[[str, dict, ParsedAnswer], dict]] = {
    "asr": _asr_fields,
    "translation": _translation_fields,
    "classification": _classification_fields,
    "multiple_choice": _multiple_choice_fields,
    "ner": _ner_fields,
}


# ------------------------------------------------------------------------------------ metric list
def metric_names(task: str) -> list[str]:
    """The metric names ``task`` reports (each a valid lmms-eval metric key), headline first.

    Raises:
        KeyError: unknown task.
    """
    spec = get_task(task)
    names = list(_METRICS_BY_KIND[spec.kind])
    if spec.kind == "multiple_choice" and spec.fixed_options:
        names.insert(1, "macro_f1")
    return names + _COUNTS


# ------------------------------------------------------------------------------------ aggregation
def aggregate(task: str, metric: str, records: list[dict]) -> float | int | str | list:
    """One metric of ``task`` over the per-item records of :func:`score_response`: :func:`aggregate_with` of the
    metric's aggregation (``agg_<metric>`` below).

    Raises:
        KeyError: unknown task, or ``metric`` is not in :func:`metric_names` of the task.
        ValueError: a record belongs to another task or has an unknown status.
    """
    _check_metric(task, metric)
    return aggregate_with(AGGREGATIONS[metric], task, records)


def aggregate_with(aggregation: Callable, task: str, records: list[dict]) -> float | int | str | list:
    """``aggregation`` (one of the ``agg_<metric>`` functions below, ``(task, records, scored records) -> value``) of
    ``task`` over the per-item records of :func:`score_response`, with the rules every metric shares: the counts
    (:data:`_ON_ANY_RECORDS`) are defined on any records; any other metric on no records, or (except
    :data:`_NEEDS_NO_SCORED`) on no scored record, is ``"not computed: <reason>"``, as is a metric the records leave
    undefined (its ``ValueError``).

    Returns:
        A number (fraction or count), ``[low, high]`` for ``*_ci95``, the signature string, a dict (``ci_flags``), or
        ``"not computed: <reason>"``.

    Raises:
        KeyError: unknown task, or the aggregation's metric is not in :func:`metric_names` of the task.
        ValueError: a record belongs to another task or has an unknown status.
    """
    metric = aggregation.__name__.removeprefix("agg_")
    _check_metric(task, metric)
    _check_records(task, records)
    scored = [r for r in records if r["status"] == "scored"]
    if metric in _ON_ANY_RECORDS:
        return aggregation(task, records, scored)
    if not records:
        return "not computed: no items"
    if metric not in _NEEDS_NO_SCORED and not scored:
        counts = {s: sum(1 for r in records if r["status"] == s) for s in STATUSES}
        return f"not computed: no scored items ({counts['excluded']} excluded, {counts['refused']} refused of {len(records)})"
    try:
        return _interval(aggregation, task, records, scored) if metric.endswith("_ci95") else aggregation(task, records, scored)
    except ValueError as error:
        return f"not computed: {error}"


def _check_metric(task: str, metric: str) -> None:
    if metric not in metric_names(task):
        raise KeyError(f"PARSA task {task!r} has no metric {metric!r}; its metrics: {', '.join(metric_names(task))}")


def _check_records(task: str, records: list[dict]) -> None:
    for record in records:
        if record.get("task") != task:
            raise ValueError(f"record {record.get('id')!r} belongs to task {record.get('task')!r}, not {task!r}")
        if record.get("status") not in STATUSES:
            raise ValueError(f"record {record.get('id')!r} of task {task!r} has unknown status {record.get('status')!r}")


#: Metrics defined on any records, none included: the counts, the signature and the interval flags.
_ON_ANY_RECORDS = {*_COUNTS, "out_of_set_labels"}
#: Every aggregation by metric name (:func:`aggregate`), each entered by :func:`_aggregation`.
AGGREGATIONS: dict[str, Callable] = {}


def _aggregation(function: Callable) -> Callable:
    AGGREGATIONS[function.__name__.removeprefix("agg_")] = function
    return function


# counts: defined on any records
@_aggregation
def agg_scored(task, records, scored):
    return len(scored)


@_aggregation
def agg_excluded(task, records, scored):
    return sum(1 for r in records if r["status"] == "excluded")


@_aggregation
def agg_refused(task, records, scored):
    return sum(1 for r in records if r["status"] == "refused")


@_aggregation
def agg_json_fallback(task, records, scored):
    return sum(1 for r in records if r.get("json_fallback"))


@_aggregation
def agg_ambiguous_answers(task, records, scored):
    return sum(1 for r in records if r["reason"] == "ambiguous_answer")


@_aggregation
def agg_repaired_json(task, records, scored):
    return sum(1 for r in records if r.get("json_repaired"))


@_aggregation
def agg_out_of_set_labels(task, records, scored):
    return sum(1 for r in records if r.get("out_of_set"))


@_aggregation
def agg_signature(task, records, scored):
    return task_signature(task)


@_aggregation
def agg_ci_flags(task, records, scored):
    return ci_flags(task, records)


# ASR
def _wer_values(scored: list[dict]) -> list[float]:
    return [r["wer"] for r in scored]


@_aggregation
def agg_wer_median(task, records, scored):
    return float(statistics.median(_wer_values(scored)))


@_aggregation
def agg_wer_mean(task, records, scored):
    return float(statistics.fmean(_wer_values(scored)))


@_aggregation
def agg_cer_mean(task, records, scored):
    return float(statistics.fmean(r["cer"] for r in scored))


@_aggregation
def agg_wer_mean_strict(task, records, scored):
    return float(statistics.fmean(r["wer"] if r["status"] == "scored" else 1.0 for r in records))


@_aggregation
def agg_wer_fix(task, records, scored):
    return float(statistics.fmean(r["wer_fix"] for r in scored))


@_aggregation
def agg_repetition_rate(task, records, scored):
    return sum(1 for r in scored if r["repetition_loop"]) / len(scored)


@_aggregation
def agg_refusal_rate(task, records, scored):
    return sum(1 for r in records if r["status"] == "refused") / len(records)


@_aggregation
def agg_wer_median_ci95(task, records, scored):
    return metrics.bootstrap_ci(_wer_values(scored), statistics.median)


@_aggregation
def agg_wer_mean_ci95(task, records, scored):
    return metrics.bootstrap_ci(_wer_values(scored), statistics.fmean)


# translation
def _translation_texts(task: str, records: list[dict], raw: bool = False) -> tuple[list[str], list[str]]:
    """``(hypotheses, references)`` of ``records`` (non-scored items as empty hypotheses), normalised with
    :func:`normalize_persian` on both sides when the task translates into Persian and ``raw`` is false."""
    hypotheses = [str(r["prediction"]) if r["status"] == "scored" else "" for r in records]
    references = [str(r["gold"]) for r in records]
    if raw or get_task(task).target_language != "fa":
        return hypotheses, references
    return [normalize_persian(h) for h in hypotheses], [normalize_persian(g) for g in references]


@_aggregation
def agg_comet(task, records, scored):
    return metrics.comet_score([r["source"] for r in scored], [r["prediction"] for r in scored], [r["gold"] for r in scored])


@_aggregation
def agg_chrf_pp(task, records, scored):
    return metrics.chrf_pp(*_translation_texts(task, scored))


@_aggregation
def agg_bleu(task, records, scored):
    return metrics.bleu(*_translation_texts(task, scored))


@_aggregation
def agg_chrf_pp_raw(task, records, scored):
    return metrics.chrf_pp(*_translation_texts(task, scored, raw=True))


@_aggregation
def agg_bleu_raw(task, records, scored):
    return metrics.bleu(*_translation_texts(task, scored, raw=True))


@_aggregation
def agg_chrf_pp_strict(task, records, scored):
    return metrics.chrf_pp(*_translation_texts(task, records))


@_aggregation
def agg_chrf_pp_ci95(task, records, scored):
    return metrics.chrf_pp_bootstrap_ci(*_translation_texts(task, scored))


# classification and multiple choice
def _classes(task: str, record: dict, key: str) -> object:
    """The class of a record for F1 and baselines: the label, or for fixed-option MC the normalised option text."""
    if get_task(task).kind == "multiple_choice":
        text = record["gold_option"] if key == "gold" else record["predicted_option"]
        return None if text is None else normalize_persian(text)
    return record[key]


@_aggregation
def agg_macro_f1(task, records, scored):
    return metrics.macro_f1([_classes(task, r, "gold") for r in scored], [_classes(task, r, "prediction") for r in scored])


@_aggregation
def agg_macro_f1_invented_as_classes(task, records, scored):
    """Macro-F1 with every out-of-set label kept as a predicted class of its own (the other reading of §4.2:
    "macro-F1 over the union of gold and predicted labels" with invented labels among the predicted; each such
    class has F1 0 and its item's gold class loses recall). Over the scored items plus the out-of-set ones."""
    kept = [r for r in records if r["status"] == "scored" or r.get("out_of_set")]
    predicted = [r["prediction"] if r["status"] == "scored" else f"out-of-set:{r['out_of_set']}" for r in kept]
    return metrics.macro_f1([r["gold"] for r in kept], predicted)


@_aggregation
def agg_macro_f1_strict(task, records, scored):
    predicted = [r["prediction"] if r["status"] == "scored" else None for r in records]
    return metrics.macro_f1_strict([r["gold"] for r in records], predicted)


@_aggregation
def agg_accuracy(task, records, scored):
    return metrics.accuracy([r["gold"] for r in scored], [r["prediction"] for r in scored])


@_aggregation
def agg_accuracy_strict(task, records, scored):
    return metrics.accuracy([r["gold"] for r in records], [r["prediction"] if r["status"] == "scored" else None for r in records])


@_aggregation
def agg_macro_f1_ci95(task, records, scored):
    pairs = [(_classes(task, r, "gold"), _classes(task, r, "prediction")) for r in scored]  # classes once, not per resample
    return metrics.bootstrap_ci(pairs, macro_f1_of_pairs)


def macro_f1_of_pairs(pairs: list[tuple[object, object]]) -> float:
    """Macro-F1 of ``(gold, predicted)`` class pairs, equal bit for bit to :func:`parsa.metrics.macro_f1` (scikit-learn's
    ``f1_score(average="macro", zero_division=0)`` over the union of gold and predicted classes) on the same lists.

    For the bootstrap interval's 1,000 resamples: counting in Python costs about 1/20 of ``f1_score``'s input
    validation per call. Same arithmetic as scikit-learn 1.9: per class F1 = ``2.0 * tp / (float(n_gold) +
    float(n_predicted))`` (every class in the union has a non-zero denominator), averaged with ``numpy.nanmean`` over
    the classes in sorted order; equality with :func:`parsa.metrics.macro_f1` is tested on random label lists.

    Raises:
        ValueError: ``pairs`` is empty.
    """
    if not pairs:
        raise ValueError("macro-F1 of an empty item list is undefined")
    gold, predicted, hits = Counter(), Counter(), Counter()
    for g, p in pairs:
        gold[g] += 1
        predicted[p] += 1
        if g == p:
            hits[g] += 1
    classes = sorted(gold.keys() | predicted.keys())
    return float(np.nanmean(np.array([2.0 * hits[c] / (float(gold[c]) + float(predicted[c])) for c in classes])))


@_aggregation
def agg_accuracy_ci95(task, records, scored):
    return metrics.proportion_ci(sum(1 for r in scored if r["correct"]), len(scored))


@_aggregation
def agg_majority_baseline(task, records, scored):
    spec = get_task(task)
    if spec.baseline == "uniform":
        return 1 / spec.n_options
    return metrics.majority_baseline([_classes(task, r, "gold") for r in records])


@_aggregation
def agg_normalised_score(task, records, scored):
    spec = get_task(task)
    headline = agg_macro_f1(task, records, scored) if spec.kind == "classification" else agg_accuracy(task, records, scored)
    return metrics.normalised_score(headline, agg_majority_baseline(task, records, scored))


# NER
def _ner_prf(records: list[dict]) -> tuple[float, float, float]:
    return metrics.micro_prf([(r["matches"], r["n_predicted"], r["n_gold"]) for r in records])


@_aggregation
def agg_f1_exact(task, records, scored):
    return _ner_prf(scored)[2]


@_aggregation
def agg_precision_exact(task, records, scored):
    return _ner_prf(scored)[0]


@_aggregation
def agg_recall_exact(task, records, scored):
    return _ner_prf(scored)[1]


@_aggregation
def agg_f1_exact_strict(task, records, scored):
    return _ner_prf(records)[2]  # non-scored records carry matches = n_predicted = 0 and their gold count


@_aggregation
def agg_f1_exact_ci95(task, records, scored):
    return metrics.bootstrap_ci(scored, lambda sample: _ner_prf(sample)[2])


# Defined even when no item is scored (they read all records).
_NEEDS_NO_SCORED = {"wer_mean_strict", "refusal_rate", "chrf_pp_strict", "macro_f1_strict", "accuracy_strict", "f1_exact_strict", "majority_baseline",
                    "macro_f1_invented_as_classes"}  # fmt: skip
#: Intervals drawn by the percentile bootstrap (the others are Wilson score intervals of a proportion).
_BOOTSTRAPPED = {"wer_median_ci95", "wer_mean_ci95", "chrf_pp_ci95", "macro_f1_ci95", "f1_exact_ci95"}
_CI_MEMO: dict[tuple, tuple[list[dict], object]] = {}
_CI_MEMO_SIZE = 32


def _interval(aggregation: Callable, task: str, records: list[dict], scored: list[dict]) -> object:
    """The ``*_ci95`` aggregation, memoised per (task, metric, the record objects) so that ``ci_flags`` reads the
    intervals the run reported without drawing 1,000 resamples again (the memo keeps the records alive, so their
    ids cannot be reused while they key an entry)."""
    key = (task, aggregation.__name__, tuple(map(id, records)))
    if key in _CI_MEMO:
        return _CI_MEMO[key][1]
    value = aggregation(task, records, scored)
    if len(_CI_MEMO) >= _CI_MEMO_SIZE:
        _CI_MEMO.pop(next(iter(_CI_MEMO)))
    _CI_MEMO[key] = (records, value)
    return value


def ci_flags(task: str, records: list[dict]) -> dict[str, str]:
    """``{interval metric: why it should be read with care}`` for the task's ``*_ci95`` metrics; ``{}`` if none.

    Flagged: an interval over fewer than :data:`parsa.metrics.MIN_ITEMS_FOR_CI` (30) scored items (its coverage is
    not the nominal 95 %), and a bootstrap interval of zero width (its 2.5th and 97.5th percentiles are equal, e.g.
    every scored item has the same WER, or a single scored item): such an interval claims a certainty the data do not
    give. Intervals not computed (no scored item) are not listed.
    """
    scored = [r for r in records if r["status"] == "scored"]
    flags = {}
    for metric in metric_names(task):
        if not metric.endswith("_ci95") or not scored:
            continue
        try:
            value = _interval(AGGREGATIONS[metric], task, records, scored)
        except ValueError:
            continue
        notes = []
        if len(scored) < metrics.MIN_ITEMS_FOR_CI:
            notes.append(f"{len(scored)} scored items, fewer than {metrics.MIN_ITEMS_FOR_CI}: a rough guide, not a 95% interval")
        if metric in _BOOTSTRAPPED and isinstance(value, list) and value[0] == value[1]:
            notes.append(f"degenerate bootstrap: every percentile of the {metrics.BOOTSTRAP_RESAMPLES} resamples is {value[0]:.4g}, zero width claims false certainty")
        if notes:
            flags[metric] = "; ".join(notes)
    return flags


# ------------------------------------------------------------------------------------ signature
def task_signature(task: str) -> str:
    """sacrebleu-style signature of how ``task`` was scored: rules, normaliser, library versions, bootstrap, unit.

    Example (asr): ``parsa-scoring:2|task:asr|hyp=json[transcription]|raw;...|norm:parsa-fa-2(...)|jiwer-4.0.0|
    scikit-learn-1.9.1|sacrebleu-2.6.0|bootstrap:1000,seed:0,percentile95|unit:fraction``. Translation tasks add
    the sacrebleu chrF++/BLEU signatures and the COMET checkpoint (or ``comet:not-computed``).

    Raises:
        KeyError: unknown task.
    """
    spec = get_task(task)
    parts = [f"parsa-scoring:{SCORING_VERSION}", f"task:{task}", _RULES[spec.kind], _READING, normalizer_signature()]
    parts += [f"{name}-{metrics.package_version(name)}" for name in ("jiwer", "scikit-learn", "sacrebleu")]
    if spec.kind == "translation":
        parts += [f"{name}:{{{sig}}}" for name, sig in metrics.sacrebleu_signatures().items()]
        parts.append(metrics.comet_signature())
    unit = "unit:fraction(chrf_pp,bleu:0-100)" if spec.kind == "translation" else "unit:fraction"
    parts += [f"bootstrap:{metrics.BOOTSTRAP_RESAMPLES},seed:{metrics.BOOTSTRAP_SEED},percentile95", unit]
    return "|".join(parts)
