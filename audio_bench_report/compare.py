"""``audio-bench-compare RUN_A RUN_B``: paired differences B - A, 95 % intervals and p-values for every headline metric
(official and strict readings) of every task both runs hold, on the same documents.

Runs are read as ``audio-bench-report`` reads them (:func:`audio_bench_report.runs.read_runs`: the newest results
file per task); the documents come from the ``<date>_samples_<task>.jsonl`` beside that file (``--log_samples``).
A document is identified by the task's data identity (the ``data=sha256:...`` digest the plugin records in the
task's ``process_docs``, :mod:`audio_bench_core.data_identity`) plus lmms-eval's ``doc_id``; a task whose two runs
name different data is refused with the reason, and only documents both runs scored are compared (the others are
counted as ``n_only_a`` / ``n_only_b``).

Per-document parts are read from the logged per-document metric values (:func:`headline_value`) and fed to the
benchmark packages' own functions (MCGA's CER parts, PARSA's class readings, sacrebleu's sentence statistics), so a
figure on all paired documents equals the run's own figure over those documents. Judged figures (MCGA LLM-B/LLM-C,
official and strict readings; MMAC Coverage/Precision/Accuracy) are recomputed the same way from the per-document
judge scores the plugin writes into the results file (:mod:`audio_bench_core.judged_documents`, read by
:func:`judged_value`): judge_failed documents stay out of their own run's dimension means. PARSA's COMET is compared
from the segment scores ``python -m parsa.comet_offline`` writes beside the samples (``<date>_comet_<task>.json``,
:func:`read_comet_segments`): COMET's system score is the mean of its segment scores, so the figure is that mean over
the paired documents each run scored (excluded/refused items out, as for chrF++/BLEU); without both files it is
listed as not compared. Tests (docs/report.md):

- per-document 0/1 outcomes (MCGA SU/SR accuracy, PARSA strict accuracy): exact McNemar on the discordant pairs;
- everything else: paired permutation test (the two runs' outputs swapped per document, or per cluster) and a
  paired percentile bootstrap interval, both recomputing the corpus figure from summed parts on each resample;
  BLEU and chrF++ p-values from sacrebleu's own paired approximate-randomisation test;
- MCGA documents come in clusters (one text ``id`` read by several speakers): whole clusters are resampled;
- Holm-adjusted p-values across all comparisons of one call.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from audio_bench_report import stats
from audio_bench_report.runs import ReportInputError, Run, is_number, read_runs

_DIGEST = re.compile(r"data=(sha256:[0-9a-f]+)")


def headline_value(sample: dict, metric: str):
    """The per-document value lmms-eval logged for ``metric`` (a number or the item dict the task's aggregation
    reads); ``None`` when absent. The one place this module reads a sample's metric values, so a change in where
    diagnostics are stored cannot reach the comparisons."""
    return sample.get(metric)


# ------------------------------------------------------------------------------------------- measures
@dataclass
class Measure:
    """How one headline metric is compared.

    Attributes:
        metric: the results key (``cer_official``); reading: ``official`` or ``strict``; partner: the other reading.
        unit: shown unit (``percent``, ``fraction``, ``0-100``); lower_is_better: CER/WER.
        parts: ``parts(values) -> (n, k)`` array from the per-document values (one row per document, from that
            document's value alone; columns may depend on the set of values, e.g. PARSA's classes: it is called once
            on both runs' values together, so a column means the same in both).
        value: ``(R, k)`` sums -> ``(R,)`` figures; median: the figure is a median of per-document values.
        binary: per-document 0/1 outcomes (exact McNemar); sacrebleu: ``(metric factory, texts(values) ->
        (hyps, refs))`` for sacrebleu's paired test.
        judged: the per-document values are the run's judge scores (``"official"``, ``"strict"``: a reading of the
        dimension-scores record; ``"outcomes"``: MMAC's), read from the results file (:func:`judged_value`), not the
        samples.
        comet: the per-document values are the run's COMET segment entries (``{"status", "score"}``), read from its
        segment-scores file (:func:`read_comet_segments`), not the samples.
    """

    metric: str
    reading: str
    partner: str
    unit: str
    parts: Callable
    value: Callable | None = None
    lower_is_better: bool = False
    median: bool = False
    binary: bool = False
    sacrebleu: tuple | None = None
    judged: str | None = None
    comet: bool = False


def _ratio(scale: float) -> Callable:
    def value(sums):
        with np.errstate(invalid="ignore", divide="ignore"):
            return scale * sums[..., 0] / sums[..., 1]

    return value


def _mcga_cer(strict: bool) -> Callable:
    from mcga import metrics

    function = metrics.strict_cer_parts if strict else metrics.official_cer_parts
    return lambda values: np.array(function([v["ref"] for v in values], [v["output"] for v in values]), float)


def _mean_of(field_name: str | None, scale: float = 1.0) -> Callable:
    def parts(values):
        numbers = [float(v if field_name is None else v[field_name]) * scale for v in values]
        return np.column_stack([numbers, np.ones(len(numbers))])

    return parts


def _sacrebleu_metric(name: str):
    from sacrebleu.metrics import BLEU, CHRF

    return BLEU() if name == "bleu" else CHRF(word_order=2)


#: sacrebleu sentence statistics by ``(metric, hypothesis, reference)``, per thread, filled by
#: :func:`sentence_statistics` and emptied after each task (:func:`compare_task`): the official and strict readings and
#: both runs share them.
_SENTENCE_STATS = threading.local()


def _sentence_cache() -> dict[tuple[str, str, str], list]:
    return _SENTENCE_STATS.__dict__.setdefault("rows", {})


def sentence_statistics(name: str, hyps: list[str], refs: list[str]) -> np.ndarray:
    """sacrebleu's sentence statistics ``(n, k)`` of ``hyps`` against one reference each (``bleu``: ``[hyp length,
    ref length, matches of orders 1-4, totals of orders 1-4]``; ``chrf_pp``: ``[hyp, ref, match]`` per order), from
    ``Metric._extract_corpus_statistics``, each distinct (hypothesis, reference) pair extracted once per task
    (a sentence's statistics depend on that sentence and its reference alone)."""
    cache = _sentence_cache()
    missing = list(dict.fromkeys(pair for pair in zip(hyps, refs) if (name, *pair) not in cache))
    if missing:
        rows = _sacrebleu_metric(name)._extract_corpus_statistics([h for h, _ in missing], [[r for _, r in missing]])
        cache.update(((name, h, r), row) for (h, r), row in zip(missing, rows))
    return np.array([cache[(name, h, r)] for h, r in zip(hyps, refs)], float)


def _sacrebleu_parts(name: str, texts: Callable) -> Callable:
    def parts(values):
        return sentence_statistics(name, *texts(values))

    return parts


def chrf_from_sums(sums: np.ndarray, beta: int = 2) -> np.ndarray:
    """sacrebleu 2.x ``CHRF._compute_f_score`` (default: no eps smoothing) over rows of summed sentence statistics
    ``(R, 3 * order)`` ([hyp, ref, match] per order) to ``(R,)`` scores (0-100), vectorised over the rows with
    sacrebleu's operations in sacrebleu's order, so the scores are its own to the last bit (tests/test_compare.py
    pins them on random statistics)."""
    stats_ = np.atleast_2d(np.asarray(sums, float))
    stats_ = stats_.reshape(len(stats_), -1, 3)
    factor = beta**2
    avg_p, avg_r, order = np.zeros(len(stats_)), np.zeros(len(stats_)), np.zeros(len(stats_))
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(stats_.shape[1]):
            hyp, ref, match = stats_[:, i, 0], stats_[:, i, 1], stats_[:, i, 2]
            both = (hyp > 0) & (ref > 0)
            avg_p = avg_p + np.where(both, match / np.where(hyp > 0, hyp, 1), 0.0)
            avg_r = avg_r + np.where(both, match / np.where(ref > 0, ref, 1), 0.0)
            order = order + both
        avg_p = np.where(order > 0, avg_p / np.maximum(order, 1), 0.0)
        avg_r = np.where(order > 0, avg_r / np.maximum(order, 1), 0.0)
        score = (1 + factor) * avg_p * avg_r
        denominator = factor * avg_p + avg_r
        return np.where(avg_p + avg_r > 0, 100 * (score / np.where(denominator > 0, denominator, 1)), 0.0)


def bleu_from_sums(sums: np.ndarray, max_ngram_order: int = 4) -> np.ndarray:
    """sacrebleu 2.x ``BLEU.compute_bleu`` with BLEU's defaults (``smooth_method="exp"``, no effective order) over rows
    of summed sentence statistics ``(R, 2 + 2 * order)`` ([hyp length, ref length, matches per order, totals per
    order]) to ``(R,)`` scores (0-100), vectorised over the rows: corpus BLEU is a function of the summed statistics
    (sacrebleu computes it so). Brevity penalty ``exp(1 - ref/hyp)`` when the hypotheses are shorter (0 for an
    empty hypothesis side); precisions ``100 * matches / total``, an order without matches ``100 / (2^k * total)``
    (k: such orders so far), orders from the first with no n-gram on are 0 (log floored to -9999999999, as
    sacrebleu's ``my_log``); 0 when nothing matches. Equal to sacrebleu's score up to numpy's ``log``/``exp``
    against Python's ``math`` (tests/test_compare.py pins it at 1e-9 on random statistics)."""
    stats_ = np.atleast_2d(np.asarray(sums, float))
    order = max_ngram_order
    sys_len, ref_len = stats_[:, 0], stats_[:, 1]
    correct, total = stats_[:, 2 : 2 + order], stats_[:, 2 + order : 2 + 2 * order]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = ref_len / np.where(sys_len > 0, sys_len, 1)
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1 - ratio), 0.0), 1.0)
        counted = np.logical_and.accumulate(total > 0, axis=1)  # sacrebleu stops at the first order with no n-gram
        smooth = 2.0 ** np.cumsum(counted & (correct == 0), axis=1)
        safe_total = np.where(total > 0, total, 1)
        precision = np.where(counted, np.where(correct == 0, 100.0 / (smooth * safe_total), 100.0 * correct / safe_total), 0.0)
        logs = np.where(precision > 0, np.log(np.where(precision > 0, precision, 1)), -9999999999.0)
        log_sum = logs[:, 0]
        for i in range(1, order):
            log_sum = log_sum + logs[:, i]
        return np.where(correct.any(axis=1), bp * np.exp(log_sum / order), 0.0)


def _sacrebleu_value(name: str) -> Callable:
    metric = _sacrebleu_metric(name)
    if name == "chrf_pp" and not metric.eps_smoothing and metric.beta == 2:
        return chrf_from_sums
    if name == "bleu" and metric.smooth_method == "exp" and not metric.effective_order:
        return lambda sums: bleu_from_sums(sums, metric.max_ngram_order)

    def value(sums):
        return np.array([metric._compute_score_from_stats(list(row)).score for row in np.atleast_2d(sums)])

    return value


def _mcga_texts(values):
    return [str(v["translation"]) for v in values], [str(v["reference"]) for v in values]


def _mcga_measures(task: str) -> list[Measure]:
    kind = task.removeprefix("mcga_").removesuffix("_text")
    if kind == "asr":
        return [Measure(m, r, p, "percent CER", _mcga_cer(r == "strict"), _ratio(100.0), lower_is_better=True)
                for m, r, p in (("cer_official", "official", "cer_strict"), ("cer_strict", "strict", "cer_official"))]  # fmt: skip
    if kind in ("su", "sr"):
        return [Measure(m, r, p, "percent", _mean_of(None, 0.01), _ratio(100.0), binary=True)
                for m, r, p in (("acc_official", "official", "acc_strict"), ("acc_strict", "strict", "acc_official"))]  # fmt: skip
    if kind == "sqa":
        return [Measure("f1_official", "official", "", "0-100", _mean_of(None), _ratio(1.0))]
    if kind == "sec":
        return [Measure("cer_sentences", "official", "", "percent CER", _mean_of("cer_sentences"), _ratio(1.0), lower_is_better=True),
                *_mcga_judged("llm_c")]  # fmt: skip
    if kind == "s2tt":
        return [*(Measure(m, "official", "", "0-100", _sacrebleu_parts(m, _mcga_texts), _sacrebleu_value(m), sacrebleu=(m, _mcga_texts)) for m in ("chrf_pp", "bleu")),
                *_mcga_judged("llm_b")]  # fmt: skip
    return []


def judged_dimension_parts(values: list) -> np.ndarray:
    """``(n, 2 * D)`` parts of a mean-of-dimension-means figure from per-document judge scores: for each dimension
    ``[score, 1]`` where the document was judged on it, ``[0, 0]`` where it was judge_failed (or has no record:
    ``None``), so each dimension's mean is over its judged documents only, as the official script computes it.
    ``values``: per document ``{"scores": [score or None per dimension]}`` or ``None``."""
    width = next((len(v["scores"]) for v in values if v is not None), 0)
    out = np.zeros((len(values), 2 * width))
    for row, value in enumerate(values):
        for d, score in enumerate(value["scores"] if value is not None else []):
            if score is not None:
                out[row, 2 * d : 2 * d + 2] = (float(score), 1.0)
    return out


def _dimension_means(combine: str, scale: float) -> Callable:
    """``(R, 2 * D)`` sums -> ``(R,)``: ``scale`` x the mean (``"mean"``, LLM-B) or sum (``"sum"``, LLM-C) of the
    dimension means; ``nan`` where a dimension has no judged document (the run's figure is then "not computed")."""

    def value(sums):
        sums = np.atleast_2d(sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(sums[:, 1::2] > 0, sums[:, 0::2] / np.where(sums[:, 1::2] > 0, sums[:, 1::2], 1), np.nan)
        return scale * (means.mean(1) if combine == "mean" else means.sum(1))

    return value


def _mcga_judged(metric: str) -> list[Measure]:
    """LLM-B (mean of the three S2TT dimension means x 20, mcga.judging.llm_b) or LLM-C (sum of the three SEC
    dimension means x 10, mcga.judging.llm_c), official-compatible and strict readings, from per-document judge scores."""
    from mcga import judging

    combine, scale = ("mean", judging.S2TT_SCALE) if metric == "llm_b" else ("sum", judging.SEC_SCALE)
    return [Measure(metric, "official", f"{metric}_strict", "0-100", judged_dimension_parts, _dimension_means(combine, scale), judged="official"),
            Measure(f"{metric}_strict", "strict", metric, "0-100", judged_dimension_parts, _dimension_means(combine, scale), judged="strict")]  # fmt: skip


def _mmac_measures(task: str) -> list[Measure]:
    """MMAC Coverage / Precision / Accuracy (percent) of one category task, or of the group ``mmac`` (the paper's
    category-macro: the unweighted mean of the six category figures, ``nan`` when one is undefined, as
    ``mmac_agg_category_macro``), recomputed as mmac.metrics does: per dimension, over its valid (sample, dimension)
    pairs (judge_failed pairs out of every denominator; an omission is valid and scores 0), then each category's
    unweighted mean over its dimensions that define the figure."""
    from mmac.schema import CATEGORIES

    categories = list(CATEGORIES) if task == "mmac" else [task.removeprefix("mmac_")]
    if any(c not in CATEGORIES for c in categories):
        return []
    dimensions = [d for c in categories for d in CATEGORIES[c]]
    blocks = []  # the column range of each category's dimensions
    for c in categories:
        start = dimensions.index(CATEGORIES[c][0])
        blocks.append((start, start + len(CATEGORIES[c])))

    def parts(values):  # per dimension: [valid, mentioned, score sum]
        out = np.zeros((len(values), 3 * len(dimensions)))
        for row, value in enumerate(values):
            for dimension, mentioned, score in (value["outcomes"] if value is not None else []):
                if mentioned is None or dimension not in dimensions:
                    continue  # judge_failed: out of every denominator
                d = dimensions.index(dimension)
                out[row, 3 * d] += 1
                if mentioned:
                    out[row, 3 * d + 1] += 1
                    out[row, 3 * d + 2] += float(score)
        return out

    def figure(metric):
        numerator, denominator = {"coverage": (1, 0), "precision": (2, 1), "accuracy": (2, 0)}[metric]

        def value(sums):
            sums = np.atleast_2d(sums)
            top, bottom = sums[:, numerator::3], sums[:, denominator::3]
            with np.errstate(invalid="ignore", divide="ignore"):
                per_dimension = np.where(bottom > 0, 100.0 * top / np.where(bottom > 0, bottom, 1), np.nan)
                per_category = []
                for start, end in blocks:
                    defined = (bottom[:, start:end] > 0).sum(1)
                    per_category.append(np.where(defined > 0, np.nansum(per_dimension[:, start:end], 1) / np.maximum(defined, 1), np.nan))
                return np.mean(per_category, axis=0)

        return value

    return [Measure(m, "official", "", "percent", parts, figure(m), judged="outcomes") for m in ("accuracy", "precision", "coverage")]




def _parsa_measures(task: str) -> list[Measure]:
    from parsa import scoring
    from parsa.tasks import get_task

    short = task.removeprefix("parsa_").removesuffix("_text")
    try:
        spec = get_task(short)
    except KeyError:
        return []
    names = set(scoring.metric_names(short))
    scored = lambda r: r["status"] == "scored"

    def accuracy(strict: bool):
        def parts(values):
            return np.array([[bool(r.get("correct")) and scored(r), 1.0 if strict else float(scored(r))] for r in values], float)

        return parts

    def macro_f1(strict: bool):
        def parts(values):
            gold = [scoring._classes(short, r, "gold") for r in values]
            predicted = [scoring._classes(short, r, "prediction") if scored(r) else None for r in values]
            classes = sorted({str(c) for c in gold + predicted if c is not None})
            index = {c: i for i, c in enumerate(classes)}
            out = np.zeros((len(values), 3 * len(classes)))
            for row, (g, p, r) in enumerate(zip(gold, predicted, values)):
                if not strict and not scored(r):
                    continue  # the paper's rule: non-scored items are out of the figure
                out[row, 3 * index[str(g)] + 1] = 1
                if p is not None:
                    out[row, 3 * index[str(p)] + 2] = 1
                    if str(p) == str(g):
                        out[row, 3 * index[str(g)]] = 1
            return out

        return parts

    def macro_f1_value(sums):
        sums = np.atleast_2d(sums)
        hits, gold, predicted = sums[:, 0::3], sums[:, 1::3], sums[:, 2::3]
        present = gold + predicted > 0  # the union of gold and predicted classes of this resample
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(present, 2.0 * hits / np.where(present, gold + predicted, 1), 0.0)
            return f1.sum(1) / present.sum(1)

    def ner(strict: bool):
        def parts(values):
            return np.array([[r["matches"], r["n_predicted"], r["n_gold"]] if (strict or scored(r)) else [0, 0, 0] for r in values], float)

        return parts

    def ner_f1(sums):
        sums = np.atleast_2d(sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], 0.0)
            recall = np.where(sums[:, 2] > 0, sums[:, 0] / sums[:, 2], 0.0)
            return np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)

    def texts(strict: bool):
        def read(values):
            chosen = values if strict else [r for r in values if scored(r)]
            return scoring._translation_texts(short, chosen)

        return read

    def translation(name: str, strict: bool) -> Measure:
        read = texts(strict)

        def parts(values):  # non-scored items add nothing to the paper-rule figure (zero statistics)
            if strict:
                return _sacrebleu_parts(name, read)(values)
            out = np.zeros((len(values), len(_sacrebleu_metric(name)._extract_corpus_statistics(["a"], [["a"]])[0])))
            rows = [i for i, r in enumerate(values) if scored(r)]
            if rows:
                out[rows] = _sacrebleu_parts(name, read)([values[i] for i in rows])
            return out

        metric = f"{name}_strict" if strict else name
        partner = ("chrf_pp" if strict else "chrf_pp_strict") if name == "chrf_pp" else ""
        return Measure(metric, "strict" if strict else "official", partner, "0-100", parts, _sacrebleu_value(name), sacrebleu=(name, read))

    def comet_parts(values):  # paper rule: COMET over the scored items; an excluded/refused item adds nothing
        return np.array([[v["score"], 1.0] if v["status"] == "scored" else [0.0, 0.0] for v in values], float)

    kind, measures = spec.kind, []
    if kind == "asr":
        measures.append(Measure("wer_median", "official", "wer_mean_strict", "fraction WER", lambda v: np.array([[r["wer"] if scored(r) else np.nan] for r in v], float),
                                lower_is_better=True, median=True))  # fmt: skip
        measures.append(Measure("wer_mean_strict", "strict", "wer_median", "fraction WER", lambda v: np.array([[r["wer"] if scored(r) else 1.0, 1.0] for r in v], float),
                                _ratio(1.0), lower_is_better=True))  # fmt: skip
    elif kind in ("classification", "multiple_choice"):
        if "macro_f1" in names:
            measures += [Measure("macro_f1", "official", "macro_f1_strict" if kind == "classification" else "", "fraction", macro_f1(False), macro_f1_value)]
        if kind == "classification":
            measures.append(Measure("macro_f1_strict", "strict", "macro_f1", "fraction", macro_f1(True), macro_f1_value))
        measures.append(Measure("accuracy", "official", "accuracy_strict", "fraction", accuracy(False), _ratio(1.0)))
        measures.append(Measure("accuracy_strict", "strict", "accuracy", "fraction", accuracy(True), _ratio(1.0), binary=True))
    elif kind == "translation":
        measures += [Measure("comet", "official", "", "0-1 COMET", comet_parts, _ratio(1.0), comet=True),
                     translation("chrf_pp", False), translation("bleu", False), translation("chrf_pp", True)]  # fmt: skip
    elif kind == "ner":
        measures += [Measure("f1_exact", "official", "f1_exact_strict", "fraction", ner(False), ner_f1),
                     Measure("f1_exact_strict", "strict", "f1_exact", "fraction", ner(True), ner_f1)]  # fmt: skip
    return measures


def measures_for(task: str) -> list[Measure]:
    """The compared headline metrics of a task (empty for tasks of no benchmark here)."""
    if task.startswith("mcga_"):
        return _mcga_measures(task)
    if task.startswith("parsa_"):
        return _parsa_measures(task)
    if task == "mmac" or task.startswith("mmac_"):
        return _mmac_measures(task)
    return []


def clusters_of(task: str, values_a: list) -> np.ndarray | None:
    """Cluster index per paired document: MCGA's text ``id`` (one text read by several speakers); ``None`` elsewhere
    or when every cluster has one document."""
    if not task.startswith("mcga_"):
        return None
    ids = [v.get("id") if isinstance(v, dict) else None for v in values_a]
    if any(i is None for i in ids) or len(set(ids)) == len(ids):
        return None
    index: dict = {}
    return np.array([index.setdefault(i, len(index)) for i in ids])


# ------------------------------------------------------------------------------------------- reading
@dataclass
class TaskDocs:
    """One task of one run: ``{doc_id: sample}``, the data identity, the samples file; ``judged``: the task's
    per-document judge scores from the results file (``results["lmms_eval_audio_plugin"]["judged_documents"][task]``,
    :mod:`audio_bench_core.judged_documents`), ``None`` when it holds none; ``results``: the results file;
    ``comet``: the task's COMET segment-scores file (:func:`read_comet_segments`), ``None`` when there is none."""

    identity: str
    samples: dict[str, dict]
    file: Path
    judged: dict | None = None
    results: Path | None = None
    comet: dict | None = None


def samples_file(run: Run, task: str) -> Path:
    """``<date>_samples_<task>.jsonl`` beside the task's results file.

    Raises:
        ReportInputError: no such file (the run was not made with ``--log_samples``).
    """
    result = run.tasks[task]
    stem = result.file.name.removesuffix("_results.json")
    path = result.file.with_name(f"{stem}_samples_{task}.jsonl")
    if not path.exists():
        raise ReportInputError(f"{path}: not found; a paired comparison needs the per-document samples (run lmms-eval with --log_samples)")
    return path


def read_task_docs(run: Run, task: str) -> TaskDocs:
    """The samples of one task, keyed by ``doc_id``, and its data identity.

    Raises:
        ReportInputError: the samples file is missing, a line is not JSON, or a ``doc_id`` repeats (file and line named).
    """
    path = samples_file(run, task)
    config = (run.configs.get(task) or {}) if hasattr(run, "configs") else {}
    match = _DIGEST.search(str(config.get("process_docs", "")))
    samples: dict[str, dict] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except json.JSONDecodeError as error:
            raise ReportInputError(f"{path}, line {number}: not JSON ({error})") from None
        doc = str(sample.get("doc_id"))
        if doc in samples:
            raise ReportInputError(f"{path}, line {number}: doc_id {doc} appears twice")
        samples[doc] = sample
    judged = (getattr(run, "judged", None) or {}).get(task)
    return TaskDocs(match.group(1) if match else "", samples, path, judged if isinstance(judged, dict) else None, run.tasks[task].file,
                    read_comet_segments(path) if task.startswith("parsa_s2tt_") else None)  # fmt: skip


def read_comet_segments(samples: Path) -> dict | None:
    """The COMET segment-scores file ``python -m parsa.comet_offline`` wrote beside ``samples``
    (:func:`parsa.comet_offline.segments_path`; its schema in that module's docstring), with ``"path"`` added;
    ``None`` when there is none.

    Raises:
        ReportInputError: the file is not JSON, not of :data:`parsa.comet_offline.SEGMENTS_FORMAT`, or a segment is
        inconsistent (a scored item without a number, a non-scored item with one), naming the file and document.
    """
    from parsa.comet_offline import SEGMENTS_FORMAT, segments_path

    path = segments_path(samples)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportInputError(f"{path}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != SEGMENTS_FORMAT or not isinstance(data.get("segments"), dict):
        raise ReportInputError(f"{path}: not a {SEGMENTS_FORMAT} file (write it with `python -m parsa.comet_offline`)")
    for doc, entry in data["segments"].items():
        scored = isinstance(entry, dict) and entry.get("status") == "scored"
        if not isinstance(entry, dict) or scored != is_number(entry.get("score")) or (not scored and entry.get("score") is not None):
            raise ReportInputError(f"{path}: doc_id {doc}: a scored item needs a numeric score and an excluded/refused one none, got {entry!r}")
    return {**data, "path": path}


def group_docs(run: Run, group: str) -> TaskDocs:
    """The documents of the group ``mmac`` (its figures are over the six category tasks): every category task's
    samples, keyed ``<task>/<doc_id>``, their judged records merged, the data identity of each task named.

    Raises:
        ReportInputError: a category task is missing from the run, its samples are missing, or two tasks' documents
        share a key (their judged records could not be told apart).
    """
    from mmac.schema import CATEGORIES

    tasks = [f"mmac_{c}" for c in CATEGORIES]
    missing = [t for t in tasks if t not in run.tasks]
    if missing:
        raise ReportInputError(f"{group}: the category-macro needs all six category tasks; {run.label} lacks {', '.join(missing)}")
    parts = [read_task_docs(run, t) for t in tasks]
    samples = {f"{t}/{d}": sample for t, docs in zip(tasks, parts) for d, sample in docs.samples.items()}
    outcomes: dict = {}
    judged = all(docs.judged is not None for docs in parts)
    for t, docs in zip(tasks, parts):
        for key, value in ((docs.judged or {}).get("outcomes") or {}).items():
            if key in outcomes:
                raise ReportInputError(f"{group}: document key {key!r} appears in two category tasks of {run.label}")
            outcomes[key] = value
    identity = ";".join(f"{t}={docs.identity}" for t, docs in zip(tasks, parts)) if all(docs.identity for docs in parts) else ""
    return TaskDocs(identity, samples, parts[0].file, {"key_field": "id", "outcomes": outcomes} if judged else None, run.tasks[group].file)


def judged_value(docs: TaskDocs, sample: dict, measure: Measure) -> dict | None:
    """The per-document value of a judged measure: ``{"key", "id", "scores"}`` (the reading's judge score per
    dimension, ``None`` where judge_failed) or ``{"key", "id", "outcomes"}`` (MMAC), found in the run's judged
    documents by the document's key (the key its logged item carries); ``None`` when the run judged no such document
    (its generation failed, or the judge pass did not reach it)."""
    item = headline_value(sample, measure.metric)
    item = item if isinstance(item, dict) else {}
    record = docs.judged or {}
    key = str(item.get(record.get("key_field", "key"), item.get("key", item.get("id", ""))))
    found = (record.get(measure.judged) or {}).get(key)
    if found is None:
        return None
    return {"key": key, "id": item.get("id"), ("outcomes" if measure.judged == "outcomes" else "scores"): found}


def _doc_key(sample: dict, metric: str) -> str | None:
    value = headline_value(sample, metric)
    if isinstance(value, dict):
        return str(value.get("key") or value.get("id") or "") or None
    return None


# ------------------------------------------------------------------------------------------- comparing
@dataclass
class Comparison:
    """One row of the comparison (the ``--json`` schema)."""

    task: str
    metric: str
    reading: str
    unit: str
    a: float
    b: float
    difference: float
    ci95: list
    p_value: float
    test: str
    n_paired: int
    n_only_a: int
    n_only_b: int
    lower_is_better: bool = False
    p_value_adjusted: float = float("nan")
    clusters: int | None = None
    min_detectable_difference: float = float("nan")
    small_n: bool = False
    a_run: float | None = None
    b_run: float | None = None
    notes: list[str] = field(default_factory=list)


def compare_task(task: str, docs_a: TaskDocs, docs_b: TaskDocs, resamples: int, seed: int, run_a: Run | None = None, run_b: Run | None = None
                 ) -> tuple[list[Comparison], list[dict]]:  # fmt: skip
    """All headline comparisons of one task. Returns ``(comparisons, not compared: [{task, metric, reason}])``.

    Raises:
        ReportInputError: the two runs read different data (the digests, or a document's key, differ).
    """
    try:
        return _compare_task(task, docs_a, docs_b, resamples, seed, run_a, run_b)
    finally:
        _sentence_cache().clear()


def _compare_task(task: str, docs_a: TaskDocs, docs_b: TaskDocs, resamples: int, seed: int, run_a: Run | None, run_b: Run | None
                  ) -> tuple[list[Comparison], list[dict]]:  # fmt: skip
    if docs_a.identity and docs_b.identity and docs_a.identity != docs_b.identity:
        raise ReportInputError(f"{task}: the runs read different data ({docs_a.identity} in {docs_a.file}, {docs_b.identity} in {docs_b.file}); "
                               "documents cannot be paired (another data folder or revision)")  # fmt: skip
    measures = measures_for(task)
    skipped: list[dict] = []
    if not measures:
        return [], skipped + [{"task": task, "metric": "*", "reason": "no paired comparison is defined for this task"}]
    common = [d for d in docs_a.samples if d in docs_b.samples]
    only_a, only_b = len(docs_a.samples) - len(common), len(docs_b.samples) - len(common)
    for doc in common:
        key_a, key_b = _doc_key(docs_a.samples[doc], measures[0].metric), _doc_key(docs_b.samples[doc], measures[0].metric)
        if key_a != key_b:
            raise ReportInputError(f"{task}: doc_id {doc} is {key_a!r} in {docs_a.file} but {key_b!r} in {docs_b.file}: the runs read different data")
    prepared, judged_notes = [], {}
    for measure in measures:
        if measure.judged and (reason := _judged_unavailable(task, measure, docs_a, docs_b, run_a, run_b)):
            skipped.append({"task": task, "metric": measure.metric, "reason": reason})
            continue
        if measure.comet and (reason := _comet_unavailable(docs_a, docs_b)):
            skipped.append({"task": task, "metric": measure.metric, "reason": reason})
            continue
        usable = [d for d in common if headline_value(docs_a.samples[d], measure.metric) is not None and headline_value(docs_b.samples[d], measure.metric) is not None]
        if not usable:
            skipped.append({"task": task, "metric": measure.metric, "reason": "no paired document carries this metric"})
            continue
        if measure.judged:
            values_a = [judged_value(docs_a, docs_a.samples[d], measure) for d in usable]
            values_b = [judged_value(docs_b, docs_b.samples[d], measure) for d in usable]
            judged_notes[measure.metric] = _judge_failed_note(values_a, values_b)
        elif measure.comet:
            values_a, values_b = (_comet_values(docs, usable) for docs in (docs_a, docs_b))
            judged_notes[measure.metric] = _comet_note(values_a, values_b, docs_a.comet)
        else:
            values_a = [headline_value(docs_a.samples[d], measure.metric) for d in usable]
            values_b = [headline_value(docs_b.samples[d], measure.metric) for d in usable]
        # one call over both runs: columns chosen from the values (PARSA's classes) then mean the same in A and B
        parts = measure.parts(values_a + values_b)
        figure = stats.Figure(parts[: len(values_a)], parts[len(values_a) :], measure.value, measure.median)
        undefined = [side for side, value in zip("AB", figure.full()) if np.isnan(value)]
        if undefined:  # e.g. MMAC Precision of a run that mentioned nothing, LLM-B with a dimension never judged
            skipped.append({"task": task, "metric": measure.metric, "reason": f"not defined over the {len(usable)} paired documents in {' and '.join(undefined)} "
                            "(nothing enters a denominator it needs: nothing judged, or nothing mentioned)"})  # fmt: skip
            continue
        prepared.append((measure, tuple(usable), values_a, values_b, figure))
    rows = []
    groups: dict[tuple, list] = {}  # measures over the same documents share their resamples
    for entry in prepared:
        groups.setdefault((entry[1], entry[4].median), []).append(entry)
    for group_number, ((usable, median), entries) in enumerate(groups.items()):
        clusters = None if median else clusters_of(task, entries[0][2])
        # sacrebleu's test needs one reference set: PARSA's paper-rule figures (scored items only) may score different items
        permute = [not m.binary and not (m.sacrebleu and not (task.startswith("parsa_") and m.reading == "official")) for m, *_ in entries]
        drawn = stats.resample_differences([e[4] for e in entries], clusters, resamples, seed + group_number, permute)
        for (measure, _, values_a, values_b, figure), (boot, perm) in zip(entries, drawn):
            rows.append(_row(task, measure, figure, clusters, boot, perm, values_a, values_b, resamples, len(usable), only_a + len(common) - len(usable),
                             only_b + len(common) - len(usable), run_a, run_b))  # fmt: skip
    order = {m.metric: i for i, m in enumerate(measures)}
    rows.sort(key=lambda r: order[r.metric])
    for row in rows:
        row.notes += judged_notes.get(row.metric, [])
        if any(m.comet and m.metric == row.metric for m in measures):  # each run's own figure: its COMET file's system score
            row.a_run, row.b_run = docs_a.comet["system_score"], docs_b.comet["system_score"]
    by_metric = {r.metric: r for r in rows}
    partners = {m.metric: m.partner for m in measures}
    for row in rows:
        other = by_metric.get(partners[row.metric])
        if other and np.sign(row.difference) * np.sign(other.difference) < 0:
            row.notes.append(f"official and strict readings disagree in sign ({other.metric}: {other.difference:+.3g})")
    return rows, skipped


def _comet_unavailable(docs_a: TaskDocs, docs_b: TaskDocs) -> str | None:
    """Why COMET cannot be paired (each run's state named), or ``None`` when both runs have a segment-scores file
    made from their current samples file with the same checkpoint."""
    from parsa.comet_offline import segments_path, sha256_of

    states = []
    for side, docs in (("A", docs_a), ("B", docs_b)):
        if docs.comet is None:
            states.append(f"no COMET file in run {side} ({segments_path(docs.file)}): run `python -m parsa.comet_offline --model CHECKPOINT "
                          f"{docs.file.parent}` in a COMET venv (lmms_eval_tasks/parsa/README.md, 'COMET')")  # fmt: skip
        elif docs.comet.get("samples_sha256") != sha256_of(docs.file):
            states.append(f"run {side}: {docs.comet['path']} was made from another version of {docs.file.name}; rerun `python -m parsa.comet_offline`")
    if not states and docs_a.comet.get("checkpoint") != docs_b.comet.get("checkpoint"):
        states.append(f"the runs were scored with different COMET checkpoints (A: {docs_a.comet.get('checkpoint')}, B: {docs_b.comet.get('checkpoint')}); "
                      "score both with one")  # fmt: skip
    return "COMET: no per-segment scores to pair: " + "; ".join(states) if states else None


def _comet_values(docs: TaskDocs, usable: list[str]) -> list[dict]:
    """The COMET segment entries of the paired documents ``usable`` of one run.

    Raises:
        ReportInputError: a paired document has no entry, or another item ``id`` than its sample.
    """
    out = []
    for doc in usable:
        entry = docs.comet["segments"].get(doc)
        key = _doc_key(docs.samples[doc], "comet")
        if entry is None or (key is not None and str(entry.get("id")) != key):
            raise ReportInputError(f"{docs.comet['path']}: doc_id {doc} ({key!r} in {docs.file}) is {'missing' if entry is None else repr(entry.get('id'))} there")
        out.append(entry)
    return out


def _comet_note(values_a: list, values_b: list, comet: dict) -> list[str]:
    """How many paired documents each run's COMET mean covers (its scored items: the paper's rule) and the checkpoint."""
    scored = [sum(v["status"] == "scored" for v in values) for values in (values_a, values_b)]
    return [(f"COMET over each run's scored items (paper rule; excluded/refused out): {scored[0]} in A, {scored[1]} in B of {len(values_a)} paired; "
             f"checkpoint {comet.get('checkpoint')} (unbabel-comet {comet.get('unbabel_comet')})")]  # fmt: skip


def _judged_unavailable(task: str, measure: Measure, docs_a: TaskDocs, docs_b: TaskDocs, run_a: Run | None, run_b: Run | None) -> str | None:
    """Why a judged measure cannot be paired (each run's state named), or ``None`` when both runs hold its
    per-document judge scores."""
    states = []
    for side, docs, run in (("A", docs_a, run_a), ("B", docs_b, run_b)):
        if docs.judged is not None and isinstance(docs.judged.get(measure.judged), dict):
            continue
        own = run.tasks[task].metrics.get(measure.metric) if run and task in run.tasks else None
        if isinstance(own, str):
            states.append(f"{side}: {own}")
        else:
            states.append(f"{side}: its results file ({docs.results}) holds no per-document judge scores for this task (a run made before they were recorded)")
    return "; ".join(states) or None


def _judge_failed_note(values_a: list, values_b: list) -> list[str]:
    """A note counting the paired documents judge_failed (on some dimension, or not judged at all) in one run only
    and in both: each run's figure leaves them out of that dimension's denominators, as each run's own figure does
    (and the official script), so there the two figures rest on different judged documents."""

    def failed(value) -> bool:
        if value is None:
            return True
        if "scores" in value:
            return any(score is None for score in value["scores"])
        return any(mentioned is None for _, mentioned, _ in value["outcomes"])

    fa, fb = [failed(v) for v in values_a], [failed(v) for v in values_b]
    a_only, b_only, both = sum(a and not b for a, b in zip(fa, fb)), sum(b and not a for a, b in zip(fa, fb)), sum(a and b for a, b in zip(fa, fb))
    if not (a_only or b_only or both):
        return []
    return [f"judge_failed: {a_only} docs in A only, {b_only} in B only, {both} in both (each out of its own run's figure on that dimension, as the official script does)"]


def _row(task, measure, figure, clusters, boot, perm, values_a, values_b, resamples, n_paired, n_only_a, n_only_b, run_a, run_b) -> Comparison:
    a, b = figure.full()
    if measure.binary:
        p, a_only, b_only = stats.mcnemar_exact(figure.parts_a[:, 0], figure.parts_b[:, 0])
        test = f"exact McNemar ({a_only} right in A only, {b_only} in B only; scipy binomtest)"
    elif measure.sacrebleu and not np.isnan(p := _sacrebleu_p(measure, values_a, values_b, resamples)):
        test = "sacrebleu paired approximate randomisation"
        if measure.sacrebleu[1](values_a)[0] == measure.sacrebleu[1](values_b)[0]:
            p, test = 1.0, test + " (identical outputs: p = 1; sacrebleu's own convention would give its minimum 1/(R+1))"
    elif measure.sacrebleu:
        p, test = stats.permutation_p(b - a, perm), "paired permutation of sacrebleu sentence statistics (the runs scored different items)"
    else:
        p, test = stats.permutation_p(b - a, perm), "paired permutation" + (" of clusters" if clusters is not None else "")
    units = n_paired if clusters is None else int(clusters.max()) + 1
    test += "; CI: paired bootstrap" + (f" of {units} text clusters" if clusters is not None else " of documents")
    mdd = stats.minimum_detectable(boot)
    notes = [f"n<{stats.MIN_PAIRED}: cannot see |B−A| below {mdd:.3g}"] if units < stats.MIN_PAIRED else []
    own = [r.tasks[task].number(measure.metric) if r and task in r.tasks else None for r in (run_a, run_b)]
    return Comparison(task, measure.metric, measure.reading, measure.unit, a, b, b - a, list(stats.interval(boot)), p, test, n_paired, n_only_a, n_only_b,
                      measure.lower_is_better, clusters=None if clusters is None else units, min_detectable_difference=mdd,
                      small_n=units < stats.MIN_PAIRED, a_run=own[0], b_run=own[1], notes=notes)  # fmt: skip


def _sacrebleu_p(measure: Measure, values_a: list, values_b: list, resamples: int) -> float:
    """p-value of sacrebleu's paired approximate-randomisation test (baseline A, system B), as
    ``sacrebleu.significance.PairedTest([("A", hyps_a), ("B", hyps_b)], ..., test_type="ar", n_samples=resamples)``
    computes it (its seed ``SACREBLEU_SEED``, its draws, the same sentence statistics), by
    :func:`audio_bench_report.stats.approximate_randomisation_p`: sacrebleu's own test scores each of its trials in
    Python, most of a comparison's time. ``nan`` when the runs scored different references (the caller then
    permutes parts)."""
    name, texts = measure.sacrebleu
    hyps_a, refs = texts(values_a)
    hyps_b, refs_b = texts(values_b)
    if refs != refs_b or not refs:  # paper rule: the two runs scored different items: permutation over parts instead
        return float("nan")
    pair = stats.Figure(sentence_statistics(name, hyps_a, refs), sentence_statistics(name, hyps_b, refs), measure.value)
    return stats.approximate_randomisation_p(pair, resamples, stats.sacrebleu_seed())


def compare(folder_a: str | Path, folder_b: str | Path, tasks: list[str] | None = None, resamples: int = 10_000, seed: int = 0) -> dict:
    """Compare two runs (module docstring). Returns ``{"run_a", "run_b", "comparisons": [dict], "refused": [{task,
    reason}], "not_compared": [{task, metric, reason}], "only_in_a", "only_in_b", "resamples", "seed"}``.

    Raises:
        ReportInputError: a folder holds no run, several runs, or a samples file is missing or malformed.
    """
    run_a, run_b = (_one_run(folder) for folder in (folder_a, folder_b))
    both = [t for t in run_a.tasks if t in run_b.tasks and (not tasks or t in tasks)]
    missing = [t for t in tasks or [] if t not in both]
    rows, refused, skipped = [], [], []
    for task in sorted(both):
        if not measures_for(task):  # groups (their figures are over their tasks, compared one by one) and other benchmarks' tasks
            group = task in {"mcga", "parsa", "mmac"} or not any(run_a.tasks[task].file.parent.glob(f"*_samples_{task}.jsonl"))
            skipped.append({"task": task, "metric": "*", "reason": "a group or a task without per-document samples: its tasks are compared one by one"
                            if group else "no paired comparison is defined for this task"})  # fmt: skip
            continue
        try:
            read = group_docs if task == "mmac" else read_task_docs
            found, passed = compare_task(task, read(run_a, task), read(run_b, task), resamples, seed, run_a, run_b)
        except ReportInputError as error:
            if "different data" in str(error):
                refused.append({"task": task, "reason": str(error)})
            elif task == "mmac":  # the group's category-macro needs every category task; the tasks are still compared
                skipped.append({"task": task, "metric": "*", "reason": str(error)})
            else:
                raise
            continue
        rows += found
        skipped += passed
    comparisons = []
    adjusted = stats.holm([r.p_value for r in rows])
    for row, value in zip(rows, adjusted):
        row.p_value_adjusted = value
        comparisons.append(asdict(row))
    return {
        "run_a": {"label": run_a.label, "folder": str(run_a.folder)},
        "run_b": {"label": run_b.label, "folder": str(run_b.folder)},
        "comparisons": comparisons,
        "refused": refused + [{"task": t, "reason": "not in both runs"} for t in missing],
        "not_compared": skipped,
        "only_in_a": sorted(set(run_a.tasks) - set(run_b.tasks)),
        "only_in_b": sorted(set(run_b.tasks) - set(run_a.tasks)),
        "resamples": resamples,
        "seed": seed,
        "p_value_adjustment": "Holm (family: every comparison of this call)",
    }


def _one_run(folder) -> Run:
    runs = read_runs(folder)
    if len(runs) != 1:
        raise ReportInputError(f"{folder}: holds {len(runs)} runs (different models or arguments); give a folder of one run")
    run = runs[0]
    configs, judged = {}, {}
    for file in {result.file for result in run.tasks.values()}:
        data = json.loads(file.read_text(encoding="utf-8"))
        configs.update({t: c for t, c in (data.get("configs") or {}).items() if t in run.tasks and run.tasks[t].file == file})
        # the per-document judge scores the plugin writes (audio_bench_core.judged_documents)
        written = (data.get("lmms_eval_audio_plugin") or {}).get("judged_documents") or {}
        judged.update({t: e for t, e in written.items() if t in run.tasks and run.tasks[t].file == file})
    run.configs, run.judged = configs, judged
    return run


# ------------------------------------------------------------------------------------------- output
HEADERS = ["task", "metric", "A", "B", "B−A", "95% CI", "p", "p (Holm)", "n", "test", "notes"]


def _number(value, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def _p(value) -> str:
    return "n/a" if value is None or np.isnan(value) else (f"{value:.3f}" if value >= 0.001 else "<0.001")


def table_rows(result: dict) -> list[list[str]]:
    """One row per comparison: the cells of :data:`HEADERS`."""
    rows = []
    for c in result["comparisons"]:
        digits = 4 if c["unit"].startswith(("fraction", "0-1 ")) else 2
        n = f"{c['n_paired']}" + (f" (+{c['n_only_a']} A, +{c['n_only_b']} B)" if c["n_only_a"] or c["n_only_b"] else "")
        notes = list(c["notes"]) + ([f"MDD {c['min_detectable_difference']:.3g}"] if not c["small_n"] else [])
        test = c["test"].split(" (")[0].split(";")[0]
        rows.append([c["task"], c["metric"] + (" ↓" if c["lower_is_better"] else ""), _number(c["a"], digits), _number(c["b"], digits), _number(c["difference"], digits),
                     f"[{_number(c['ci95'][0], digits)}, {_number(c['ci95'][1], digits)}]", _p(c["p_value"]), _p(c["p_value_adjusted"]), n, test, "; ".join(notes)])  # fmt: skip
    return rows


def text_report(result: dict) -> str:
    """The terminal table (one block per benchmark), then refused tasks and metrics not compared."""
    from audio_bench_report.render import text_table

    lines = [f"A = {result['run_a']['label']}  ({result['run_a']['folder']})", f"B = {result['run_b']['label']}  ({result['run_b']['folder']})", ""]
    rows = table_rows(result)
    for benchmark in ("mcga", "parsa", "mmac"):
        chosen = [r for r in rows if r[0] == benchmark or r[0].startswith(benchmark + "_")]
        if chosen:
            lines += [text_table(HEADERS, chosen), ""]
    lines.append(f"{result['resamples']} resamples, seed {result['seed']}; p (Holm): {result['p_value_adjustment']}; ↓ lower is better; MDD: smallest |B−A| "
                 "detectable with 80% power (alpha 0.05) at this n.")  # fmt: skip
    lines += [f"refused: {r['task']}: {r['reason']}" for r in result["refused"]]
    lines += [f"not compared: {r['task']} {r['metric']}: {r['reason']}" for r in result["not_compared"]]
    for side in ("a", "b"):
        if result[f"only_in_{side}"]:
            lines.append(f"tasks only in {side.upper()}: {', '.join(result[f'only_in_{side}'])}")
    return "\n".join(lines)


def markdown(result: dict) -> str:
    rows = table_rows(result)
    out = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    return "\n".join(out + ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]) + "\n"


def csv_text(result: dict) -> str:
    keys = ["task", "metric", "reading", "unit", "a", "b", "difference", "ci95_low", "ci95_high", "p_value", "p_value_adjusted", "test", "n_paired", "n_only_a",
            "n_only_b", "clusters", "min_detectable_difference", "small_n", "notes"]  # fmt: skip
    handle = io.StringIO()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(keys)
    for c in result["comparisons"]:
        flat = {**c, "ci95_low": c["ci95"][0], "ci95_high": c["ci95"][1], "notes": "; ".join(c["notes"])}
        writer.writerow([flat[k] for k in keys])
    return handle.getvalue()


def latex(result: dict) -> str:
    from audio_bench_report.render import latex_escape

    rows = table_rows(result)
    out = ["\\begin{tabular}{" + "l" * 2 + "r" * 6 + "lll}", "\\toprule", " & ".join(latex_escape(h) for h in HEADERS) + " \\\\", "\\midrule"]
    out += [" & ".join(latex_escape(cell) for cell in row) + " \\\\" for row in rows]
    return "\n".join(out + ["\\bottomrule", "\\end{tabular}"]) + "\n"


def write_tables(result: dict, folder: Path, stem: str = "comparison") -> list[Path]:
    """``<stem>.md``, ``.csv``, ``.tex`` in ``folder`` (beside the report's tables)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix, text in ((".md", markdown(result)), (".csv", csv_text(result)), (".tex", latex(result))):
        paths.append(folder / f"{stem}{suffix}")
        paths[-1].write_text(text, encoding="utf-8")
    return paths


def _json_default(value):
    if isinstance(value, float | np.floating) and np.isnan(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value))


def _clean(value):
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="audio-bench-compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", help="lmms-eval output folder of run A (written with --log_samples)")
    parser.add_argument("run_b", help="lmms-eval output folder of run B; differences are B - A")
    parser.add_argument("--tasks", help="comma-separated tasks to compare (default: every task both runs hold)")
    parser.add_argument("--json", help="write the comparisons as JSON to this file")
    parser.add_argument("--tables", help="write comparison.md/.csv/.tex into this folder")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap and permutation resamples (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        result = compare(args.run_a, args.run_b, args.tasks.split(",") if args.tasks else None, args.resamples, args.seed)
    except ReportInputError as error:
        print(f"audio-bench-compare: {error}", file=sys.stderr)
        return 2
    print(text_report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(_clean(result), ensure_ascii=False, indent=1, default=_json_default), encoding="utf-8")
    if args.tables:
        write_tables(result, Path(args.tables))
    if not result["comparisons"]:
        print("audio-bench-compare: nothing was compared (see 'refused' above)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ------------------------------------------------------------------------------------------- report section
#: Resamples of the report's comparison section (the command's default is 10,000).
REPORT_RESAMPLES = 2000


def report_section(runs: list[Run], resamples: int = REPORT_RESAMPLES):
    """The report's "Paired comparison" section when given two or more runs: each run after the first against the
    first (B - A on the documents both hold), one table row per headline metric, and a plot of the differences with
    their 95 % intervals. Self-contained (``audio_bench_report.cli.write_report`` appends it); ``None`` for fewer
    than two runs. A pair that cannot be compared (no samples, other data) is named in the section's notes."""
    from audio_bench_report.tables import Cell, Column, Plot, Row, Section, Table

    if len(runs) < 2:
        return None
    columns = [Column("a", "A", 3), Column("b", "B", 3), Column("difference", "B − A [95% CI]", 3), Column("p", "p", 3), Column("p_holm", "p (Holm)", 3),
               Column("n", "n paired", 0)]  # fmt: skip
    table = Table("paired_comparison", "Paired comparison on the same documents (B − A)", columns, latex=True)
    notes, plotted = [], []
    for run in runs[1:]:
        try:
            result = compare(runs[0].folder, run.folder, resamples=resamples)
        except ReportInputError as error:
            notes.append(f"{runs[0].label} vs {run.label}: not compared: {error}")
            continue
        notes += [f"{r['task']}: refused: {r['reason']}" for r in result["refused"]]
        if not result["comparisons"]:
            notes.append(f"{runs[0].label} vs {run.label}: not compared: no task both runs hold has a paired comparison")
        for c in result["comparisons"]:
            label = f"{c['task']} {c['metric']}"
            detail = f"A = {runs[0].label}, B = {run.label}; {c['n_only_a']} in A only, {c['n_only_b']} in B only; {c['test']}" + (f"; {'; '.join(c['notes'])}" if c["notes"] else "")
            cells = {"a": Cell(c["a"]), "b": Cell(c["b"]), "difference": Cell(c["difference"], ci=tuple(c["ci95"])), "p": Cell(c["p_value"]),
                     "p_holm": Cell(c["p_value_adjusted"]), "n": Cell(float(c["n_paired"]), notes=[f"{c['n_only_a']} in A only, {c['n_only_b']} in B only"])}  # fmt: skip
            table.rows.append(Row(label, "comparison", cells, detail))
            plotted.append((f"{label} ({run.label})", c))
    table.notes = notes + [f"{resamples} resamples; tests and their sources: docs/report.md, 'Comparing two runs'."]
    if not table.rows:
        return Section("compare", "Paired comparison", [table], [], notes)

    def draw(stem: Path) -> list[Path]:
        from audio_bench_report.plots import pyplot, safe_label, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.5, 0.3 * len(plotted) + 1))
        for y, (label, c) in enumerate(plotted):
            scale = max(abs(c["ci95"][0]), abs(c["ci95"][1]), abs(c["difference"]), 1e-12)  # each row on its own scale: units differ
            low, high = c["ci95"][0] / scale, c["ci95"][1] / scale
            ax.errorbar(c["difference"] / scale, y, xerr=[[c["difference"] / scale - low], [high - c["difference"] / scale]], fmt="o", color="black", capsize=2)
        ax.axvline(0, color="0.5", linewidth=0.8)
        ax.set_yticks(range(len(plotted)))
        ax.set_yticklabels([safe_label(label) for label, _ in plotted], fontsize=7)
        ax.set_xlabel("B − A with 95% interval, each row scaled by its largest |value| (0 = no difference)")
        return save(fig, stem)

    plot = Plot("paired_differences", "Paired differences B − A with 95% intervals (scaled per row)", draw)
    return Section("compare", "Paired comparison", [table], [plot], [])
