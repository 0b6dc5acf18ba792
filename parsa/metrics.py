"""PARSA-Bench metrics (paper §4.2, §6.1, Figure 3, Appendix F). All scores are **fractions (0-1)**, as in the
paper's tables (WER 0.36 = 36 %); WER and CER can exceed 1 (insertions, repetition loops).

==========================  ===========================================================================================
metric                      definition
==========================  ===========================================================================================
macro-F1                    scikit-learn ``f1_score(average="macro")`` with ``labels`` = the union of gold labels and
                            predicted labels, passed explicitly (§4.2: "macro-averaged F1 over the union of gold and
                            predicted labels"); ``zero_division=0``. Any label in the predictions is a class (F1 0
                            if never right); the parser excludes out-of-set labels before the headline
                            (parsa.parsing), ``macro_f1_invented_as_classes`` passes them here.
macro-F1 strict (ours)      same, with unparseable/refused items kept as wrong predictions of a label outside the
                            averaged set (their gold class loses recall; no extra class is averaged).
accuracy                    share of items whose prediction equals the gold (scikit-learn ``accuracy_score``).
F1-exact (NER)              micro F1 over items of exact (type, span) matches: per item, the predicted and gold
                            entities are multisets of (type key, normalised span without spaces, see
                            :func:`entity_key`); matches = multiset intersection;
                            precision = sum matches / sum predicted, recall = sum matches / sum gold.
WER, CER                    per item, jiwer ``wer``/``cer`` of the normalised reference and hypothesis
                            (:func:`parsa.normalize.normalize_persian`); reported as mean and median over items.
WERfix                      mean WER after collapsing immediately repeated n-grams (n <= 30) in the hypothesis.
repetition loop (Rep.%)     a hypothesis holding some n-gram (1 <= n <= 30) :data:`LOOP_MIN_COPIES` (5) or more
                            times in immediate succession (a "degenerate repetition loop", §6.1).
chrF++, BLEU                sacrebleu corpus scores (chrF++ = ``CHRF(word_order=2)``, BLEU defaults: 13a, exp
                            smoothing), on sacrebleu's 0-100 scale (as everywhere else: "chrF++ 54.3"; the only
                            PARSA metrics not in fractions, to keep the name's usual meaning); signatures reported.
                            Into Persian the caller normalises both sides first (parsa.scoring: ``chrf_pp``,
                            ``bleu``) and also reports plain sacrebleu on the raw text (``chrf_pp_raw``,
                            ``bleu_raw``); these functions score what they are given.
COMET                       Unbabel ``unbabel-comet`` system score (0-1) from a local checkpoint, only when the package
                            is importable and ``PARSA_COMET_MODEL`` points to a checkpoint; never downloaded.
majority baseline           share of the most frequent gold class (Table 2's chance, "1/|L| when balanced").
normalised score            (score - b) / (1 - b) (Figure 3).
bootstrap 95 % CI           percentile interval of the metric over :data:`BOOTSTRAP_RESAMPLES` (1000) resamples of
                            the items with replacement, numpy ``default_rng(BOOTSTRAP_SEED=0)``: medians, means,
                            macro-F1, F1-exact, chrF++.
proportion 95 % CI          Wilson score interval (scipy ``binomtest(k, n).proportion_ci(method="wilson")``) for
                            accuracies: unlike a bootstrap it has width at 0/n and n/n.
==========================  ===========================================================================================
"""

from __future__ import annotations

import operator
import os
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
from rapidfuzz.distance.Levenshtein import distance as _levenshtein_distance
from sklearn.metrics import accuracy_score, f1_score

from parsa.normalize import label_key, normalize_persian

MAX_REPEAT_NGRAM = 30
LOOP_MIN_COPIES = 5
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
#: Intervals over fewer scored items than this are flagged (parsa.scoring.ci_flags).
MIN_ITEMS_FOR_CI = 30
COMET_MODEL_ENV = "PARSA_COMET_MODEL"
_INVALID = "\x00invalid"


# ------------------------------------------------------------------------------------ classification
def macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
    """Macro-F1 over the union of gold and predicted labels (paper §4.2).

    Args:
        gold, predicted: aligned label lists of equal, non-zero length.

    Returns:
        Mean per-label F1 over ``sorted(set(gold) | set(predicted))``. Example: gold ``[a, a, b]``, predicted
        ``[a, c, b]``: F1(a) = 2/3, F1(b) = 1, F1(c) = 0 -> 5/9.

    Raises:
        ValueError: lengths differ or the lists are empty.
    """
    _check_aligned(gold, predicted)
    labels = sorted(set(gold) | set(predicted))
    return float(f1_score(list(gold), list(predicted), labels=labels, average="macro", zero_division=0))


def macro_f1_strict(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    """Macro-F1 where ``None`` predictions (excluded or refused items) count as wrong (ours, beside the paper's rule).

    The averaged labels are the union of gold labels and the valid predicted labels; a ``None`` is a prediction of
    a label outside that set, so it costs its gold class recall and adds no class.

    Raises:
        ValueError: lengths differ or the lists are empty.
    """
    _check_aligned(gold, predicted)
    labels = sorted(set(gold) | {p for p in predicted if p is not None})
    filled = [_INVALID if p is None else p for p in predicted]
    return float(f1_score(list(gold), filled, labels=labels, average="macro", zero_division=0))


def accuracy(gold: Sequence, predicted: Sequence) -> float:
    """Share of positions where ``predicted`` equals ``gold`` (``None`` never equals). Raises ValueError on empty or
    unequal lists."""
    _check_aligned(gold, predicted)
    return float(accuracy_score([str(g) for g in gold], [_INVALID if p is None else str(p) for p in predicted]))


def majority_baseline(gold: Sequence) -> float:
    """Share of the most frequent gold class (Table 2's chance). ``[a, a, b, c]`` -> 0.5. Raises ValueError if empty."""
    if not gold:
        raise ValueError("majority baseline of an empty gold list is undefined")
    return Counter(gold).most_common(1)[0][1] / len(gold)


def normalised_score(score: float, baseline: float) -> float:
    """(score - b) / (1 - b), Figure 3: 0 = majority level, 1 = perfect, negative = below the baseline.

    Raises:
        ValueError: ``baseline`` is 1 (every gold label is the same class: the score cannot be normalised).
    """
    if baseline >= 1:
        raise ValueError("normalised score is undefined when the majority baseline is 1")
    return (score - baseline) / (1 - baseline)


def _check_aligned(gold: Sequence, predicted: Sequence) -> None:
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    if not gold:
        raise ValueError("metric of an empty item list is undefined")


# ------------------------------------------------------------------------------------ NER
def entity_key(entity: dict) -> tuple[str, str]:
    """Matching key of one ``{"type", "span"}`` entity: (:func:`label_key` of the type, the span after
    :func:`normalize_persian` with its spaces removed). Spaces go because inside one entity they are spelling, not
    content: ``کتاب‌خانهٔ ملی``, ``کتابخانه ملی`` and ``کتاب خانه ی ملی`` are one span (a compound written apart is
    not caught by the normaliser's affix rule)."""
    return label_key(str(entity.get("type", ""))), normalize_persian(str(entity.get("span", ""))).replace(" ", "")


def ner_counts(gold: Sequence[dict], predicted: Sequence[dict]) -> tuple[int, int, int]:
    """``(matches, n_predicted, n_gold)`` for one item: exact (type, span) matches as a multiset intersection.

    Example: gold ``[(date, فردا), (time, ساعت ۷)]``, predicted ``[(date, فردا), (time, ساعت)]`` -> ``(1, 2, 2)``:
    the partial span ``ساعت`` earns nothing.
    """
    gold_keys, predicted_keys = Counter(map(entity_key, gold)), Counter(map(entity_key, predicted))
    return sum((gold_keys & predicted_keys).values()), sum(predicted_keys.values()), sum(gold_keys.values())


def micro_prf(counts: Sequence[tuple[int, int, int]]) -> tuple[float, float, float]:
    """``(precision, recall, f1)`` from summed ``(matches, n_predicted, n_gold)``; 0 where a denominator is 0.

    Example: counts ``[(1, 2, 2), (0, 0, 1)]`` -> P = 1/2, R = 1/3, F1 = 0.4.
    """
    matches = sum(c[0] for c in counts)
    n_predicted = sum(c[1] for c in counts)
    n_gold = sum(c[2] for c in counts)
    precision = matches / n_predicted if n_predicted else 0.0
    recall = matches / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


# ------------------------------------------------------------------------------------ ASR
def word_error_rate(reference: str, hypothesis: str) -> float:
    """WER of one item after :func:`normalize_persian` on both sides (fraction; > 1 possible).

    Raises:
        ValueError: the normalised reference is empty (WER undefined).
    """
    ref, hyp = _normalised_pair(reference, hypothesis)
    return _error_rate(ref.split(" "), hyp.split(" ") if hyp else [])


def character_error_rate(reference: str, hypothesis: str) -> float:
    """CER of one item after :func:`normalize_persian` on both sides; the single spaces between words count as
    characters (jiwer ``cer``). Raises ValueError when the normalised reference is empty."""
    ref, hyp = _normalised_pair(reference, hypothesis)
    return _error_rate(ref, hyp)


def _error_rate(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """(S + D + I) / (H + S + D) of one pair of token sequences (words, or the characters of a string), as jiwer's
    ``wer``/``cer`` count them for a normalised pair (single spaces, no edge spaces, so jiwer's own transforms
    change nothing): the number of edits is the Levenshtein distance, computed by rapidfuzz, the engine jiwer
    itself calls (editdistance gives the same counts), without jiwer's per-call alignment objects (about 15x the
    cost). The tests check equality with ``jiwer.wer``/``jiwer.cer``."""
    return float(_levenshtein_distance(reference, hypothesis) / len(reference))


def _normalised_pair(reference: str, hypothesis: str) -> tuple[str, str]:
    ref = normalize_persian(reference)
    if not ref:
        raise ValueError(f"reference {reference!r} is empty after normalisation: WER/CER undefined")
    return ref, normalize_persian(hypothesis)


def collapse_repeats(words: Sequence[str], max_n: int = MAX_REPEAT_NGRAM) -> list[str]:
    """Collapse immediately repeated n-grams (1 <= n <= ``max_n``) into one copy, until none is left.

    For n = 1, 2, ..., max_n: scanning left to right, whenever ``words[i:i+n] == words[i+n:i+2n]`` the second copy is
    deleted (and the same position is checked again); the passes repeat until a full pass changes nothing.
    ``a b a b a b c`` -> ``a b c``; ``x x y`` -> ``x y``.

    Implementation (same output as the definition, tested on random and adversarial lists): a slice is compared only
    where its first words are equal (``words[i] == words[i+n]``, necessary for equal slices of strings); a deletion
    never copies the rest of the list (the pass for one n reads the list once, left to right, and writes the kept
    words once: linear in its length, where deleting in place was quadratic, 697 s on a 10-million-character
    answer); and instead of a last full pass that would change nothing, :func:`longest_immediate_repeat` says whether
    any repeat is left (a full pass changes nothing exactly when no n-gram, n <= ``max_n``, is immediately repeated).
    """
    return _collapse_repeats(list(words), max_n, longest_immediate_repeat(words, max_n))


def _collapse_pass(words: list[str], n: int) -> list[str]:
    """One left-to-right pass of the definition for one ``n``, without deleting in place.

    In the definition the window ``out[i:i+n]`` is compared with the next ``n`` words; a deletion removes those next
    words only, never the window or anything before it. So the words before the window are final (``kept[:-n]``),
    the window is ``kept[-n:]``, and what follows it is ``words[read:]`` (deletions only skip ahead in ``words``):
    a repeat moves ``read`` on by ``n``, anything else moves one word from ``words`` into ``kept``.
    """
    size = len(words)
    if size < 2 * n:
        return words
    kept, read = words[:n], n
    while read + n <= size:
        if kept[-n] == words[read] and kept[-n:] == words[read:read + n]:
            read += n  # the next n words repeat the window: deleted
        else:
            kept.append(words[read])
            read += 1
    kept.extend(words[read:])
    return kept


def _collapse_repeats(out: list[str], max_n: int, repeats: int) -> list[str]:
    """:func:`collapse_repeats` of ``out`` whose :func:`longest_immediate_repeat` is ``repeats``, already known to the
    caller."""
    while repeats >= 2:  # nothing repeated: a full pass would change nothing
        for n in range(1, max_n + 1):
            out = _collapse_pass(out, n)
        repeats = longest_immediate_repeat(out, max_n)
    return out


def longest_immediate_repeat(words: Sequence[str], max_n: int = MAX_REPEAT_NGRAM) -> int:
    """The largest number of consecutive copies of any n-gram (1 <= n <= ``max_n``) in ``words``; 1 if none repeats.

    ``k`` consecutive copies of an n-gram starting at ``s`` are exactly a run of ``(k - 1) * n`` positions ``j``
    (from ``s``) with ``words[j] == words[j + n]``, so for each n the longest such run ``L`` gives ``L // n + 1``
    copies: one pass of word comparisons per n, no slicing (``a b a b a b c``: n = 2, run 4, 3 copies).

    Work skipped (the result is the same, tested against the slice-by-slice definition): a list of distinct words
    (the usual hypothesis) repeats nothing; an n can give at most ``len(words) // n`` copies, so the scan stops at the
    first n where that is no more than the best found (a loop found at n = 3 ends the scan); and in a list of at
    most :data:`_PAIR_COUNT_MAX_WORDS` words, an n is scanned only if at least n pairs of equal words lie n apart
    (a run of n positions needs them).
    """
    size = len(words)
    limit = min(max_n, size // 2)
    if limit < 1 or len(set(words)) == size:
        return 1
    pairs_at = _equal_pairs_by_distance(words, limit) if size <= _PAIR_COUNT_MAX_WORDS else None
    best = 1
    for n in range(1, limit + 1):
        if size // n <= best:
            break
        if pairs_at is not None and pairs_at.get(n, 0) < n:
            continue
        equal = bytes(map(operator.eq, words, words[n:]))  # 1 where words[j] == words[j + n]
        longest = max(map(len, equal.split(b"\x00")))
        if longest >= n:
            best = max(best, longest // n + 1)
    return best


#: Lists up to this length count their equal-word pairs per distance before scanning (longer ones, such as
#: repetition loops, would pay more for the count than the scan, which the ``len // n`` bound cuts short anyway).
_PAIR_COUNT_MAX_WORDS = 40


def _equal_pairs_by_distance(words: Sequence[str], limit: int) -> dict[int, int]:
    """``{d: number of j with words[j] == words[j + d]}`` for 1 <= d <= ``limit`` (zero counts left out)."""
    positions: dict[str, list[int]] = {}
    pairs_at: dict[int, int] = {}
    for j, word in enumerate(words):
        earlier = positions.setdefault(word, [])
        for i in reversed(earlier):
            if j - i > limit:
                break
            pairs_at[j - i] = pairs_at.get(j - i, 0) + 1
        earlier.append(j)
    return pairs_at


def is_repetition_loop(hypothesis: str) -> bool:
    """True if the normalised hypothesis holds an n-gram (n <= 30) repeated :data:`LOOP_MIN_COPIES` (5) or more times
    in immediate succession: the "degenerate repetition loop" of §6.1 (our threshold; the paper gives none)."""
    return longest_immediate_repeat(normalize_persian(hypothesis).split()) >= LOOP_MIN_COPIES


def wer_after_collapse(reference: str, hypothesis: str) -> float:
    """WER of one item with the hypothesis's immediately repeated n-grams collapsed (the paper's WERfix, per item)."""
    ref, hyp = _normalised_pair(reference, hypothesis)
    return _error_rate(ref.split(" "), collapse_repeats(hyp.split()))


def asr_item_scores(reference: str, hypothesis: str) -> dict[str, float | bool]:
    """The four per-item ASR scores at once: ``{"wer", "cer", "wer_fix", "repetition_loop"}``, equal to
    :func:`word_error_rate`, :func:`character_error_rate`, :func:`wer_after_collapse` and :func:`is_repetition_loop`
    of the same pair (fractions; tested equal), with each side normalised and split once and the repeated n-grams
    searched once: a hypothesis with no immediate repeat is its own collapse, so its WERfix is its WER.

    Raises:
        ValueError: the normalised reference is empty.
    """
    ref, hyp = _normalised_pair(reference, hypothesis)
    ref_words = ref.split(" ")
    hyp_words = hyp.split(" ") if hyp else []
    wer = _error_rate(ref_words, hyp_words)
    words = hyp.split()  # the same list as hyp_words: a normalised text has single spaces and no edge spaces
    repeats = longest_immediate_repeat(words)
    collapsed = _collapse_repeats(list(words), MAX_REPEAT_NGRAM, repeats) if repeats >= 2 else words
    return {
        "wer": wer,
        "cer": _error_rate(ref, hyp),
        "wer_fix": wer if collapsed == hyp_words else _error_rate(ref_words, collapsed),
        "repetition_loop": repeats >= LOOP_MIN_COPIES,
    }


# ------------------------------------------------------------------------------------ translation
def _sacrebleu():
    import sacrebleu

    return sacrebleu


def chrf_pp(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus chrF++ (sacrebleu ``CHRF(word_order=2)``), 0-100. Raises ValueError on empty/unequal lists."""
    _check_aligned(references, hypotheses)
    return _sacrebleu().CHRF(word_order=2).corpus_score(list(hypotheses), [list(references)]).score


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (sacrebleu defaults), 0-100. Raises ValueError on empty/unequal lists."""
    _check_aligned(references, hypotheses)
    return _sacrebleu().BLEU().corpus_score(list(hypotheses), [list(references)]).score


def chrf_pp_bootstrap_ci(hypotheses: Sequence[str], references: Sequence[str], n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[float]:
    """95 % percentile bootstrap interval ``[low, high]`` of corpus chrF++ (0-100), resampling sentences.

    Same resampling as :func:`bootstrap_ci` (same seed, same index draws), computed the way sacrebleu's own
    paired-bootstrap test does it: per-sentence chrF statistics are extracted once and summed per resample
    (``_extract_corpus_statistics`` / ``_compute_score_from_stats``, sacrebleu's significance module), which gives
    exactly the corpus chrF++ of each resample at a fraction of the cost.

    Raises:
        ValueError: empty or unequal lists.
    """
    _check_aligned(references, hypotheses)
    metric = _sacrebleu().CHRF(word_order=2)
    stats = np.array(metric._extract_corpus_statistics(list(hypotheses), [list(references)]))
    values = [metric._compute_score_from_stats(stats[indices].sum(0)).score for indices in _bootstrap_indices(len(stats), n_resamples, seed)]
    return _percentile_interval(values)


def sacrebleu_signatures() -> dict[str, str]:
    """``{"chrf_pp": "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0", "bleu": "nrefs:1|case:mixed|
    eff:no|tok:13a|smooth:exp|version:2.6.0"}`` (sacrebleu fills the signature in after scoring, so a one-sentence
    corpus is scored first)."""
    sacrebleu = _sacrebleu()
    signatures = {}
    for name, metric in (("chrf_pp", sacrebleu.CHRF(word_order=2)), ("bleu", sacrebleu.BLEU())):
        metric.corpus_score(["a"], [["a"]])
        signatures[name] = str(metric.get_signature())
    return signatures


def comet_unavailable_reason() -> str | None:
    """Why COMET cannot be computed here (``None`` when it can): ``unbabel-comet`` not importable, or
    ``PARSA_COMET_MODEL`` unset or not an existing checkpoint file."""
    try:
        import comet  # noqa: F401
    except ImportError:
        return "unbabel-comet is not installed here; score the logged samples in a COMET venv with `python -m parsa.comet_offline` (lmms_eval_tasks/parsa/README.md, 'COMET')"
    path = os.environ.get(COMET_MODEL_ENV, "")
    if not path:
        return f"{COMET_MODEL_ENV} is not set (path to a local COMET checkpoint, e.g. wmt22-comet-da/checkpoints/model.ckpt)"
    if not Path(path).is_file():
        return f"{COMET_MODEL_ENV}={path} is not an existing checkpoint file"
    return None


def comet_score(sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str]) -> float | str:
    """COMET system score (0-1) of raw (unnormalised) source/hypothesis/reference triples, or the string
    ``"not computed: <reason>"`` when :func:`comet_unavailable_reason` gives one. Uses one GPU if torch sees one.

    Raises:
        ValueError: empty or unequal lists.
    """
    _check_aligned(references, hypotheses)
    _check_aligned(references, sources)
    reason = comet_unavailable_reason()
    if reason:
        return f"not computed: {reason}"
    import torch
    from comet import load_from_checkpoint

    model = load_from_checkpoint(os.environ[COMET_MODEL_ENV])
    data = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(sources, hypotheses, references)]
    output = model.predict(data, batch_size=16, gpus=1 if torch.cuda.is_available() else 0, progress_bar=False)
    return float(output.system_score)


def comet_signature() -> str:
    """``comet:<checkpoint path>(unbabel-comet-<version>)`` or ``comet:not-computed``."""
    if comet_unavailable_reason():
        return "comet:not-computed"
    return f"comet:{os.environ[COMET_MODEL_ENV]}(unbabel-comet-{package_version('unbabel-comet')})"


# ------------------------------------------------------------------------------------ intervals
def proportion_ci(successes: int, n: int, confidence: float = 0.95) -> list[float]:
    """Wilson score interval ``[low, high]`` (fractions) of a proportion ``successes / n``.

    scipy ``binomtest(successes, n).proportion_ci(confidence_level, method="wilson")`` (Wilson 1927): it has width
    at 0/n and n/n, where a bootstrap of 0/1 outcomes collapses to ``[0, 0]`` or ``[1, 1]``. Example: 4/4 ->
    ``[0.510, 1.0]``; 0/4 -> ``[0.0, 0.490]``.

    Raises:
        ValueError: ``n`` < 1 or ``successes`` outside 0..n.
    """
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"a proportion interval needs 0 <= successes <= n and n >= 1 (got {successes}/{n})")
    from scipy.stats import binomtest

    interval = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return [float(interval.low), float(interval.high)]


def bootstrap_ci(items: Sequence, statistic: Callable[[list], float], n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[float]:
    """Percentile 95 % bootstrap interval ``[low, high]`` of ``statistic`` over ``items`` (Appendix F).

    Draws ``n_resamples`` samples of ``len(items)`` items with replacement using ``numpy.random.default_rng(seed)``
    and returns the 2.5th and 97.5th percentiles (numpy's default linear interpolation) of the statistic. The same
    items, statistic and seed always give the same interval.

    Raises:
        ValueError: ``items`` is empty.
    """
    if not items:
        raise ValueError("bootstrap interval of an empty item list is undefined")
    if statistic in (statistics.median, statistics.fmean) and all(type(item) in (int, float) for item in items):
        return _percentile_interval(_numeric_bootstrap_values(items, statistic, n_resamples, seed))
    values = [statistic([items[i] for i in indices]) for indices in _bootstrap_indices(len(items), n_resamples, seed)]
    return _percentile_interval(values)


_BOOTSTRAP_ROWS_PER_BLOCK = 128


def _numeric_bootstrap_values(items: Sequence[float], statistic: Callable, n_resamples: int, seed: int) -> list[float]:
    """The resampled medians or means of numbers, equal bit for bit to ``statistic`` over the same draws.

    The index draws are the generic path's (:func:`_bootstrap_indices`), memoised for the next interval of the same
    size.
    For finite values with no negative zero (:func:`_countable`), each resample is reduced to the counts of the
    distinct values in it (:func:`_resample_counts`, memoised: the median and the mean interval of one task share
    them), and :func:`_medians_from_counts` / :func:`_means_from_counts` read the statistics off the counts.
    Otherwise the resampled values are gathered in blocks of rows: ``np.median`` of a row is ``statistics.median``
    (middle value, or ``(a + b) / 2`` of the middle two), and means keep ``statistics.fmean`` per row."""
    values = np.asarray(items, dtype=np.float64)
    if _countable(items, values):
        distinct, counts = _resample_counts(values.tobytes(), n_resamples, seed)
        if statistic is statistics.median:
            return _medians_from_counts(distinct, counts, len(values))
        if _safe_for_exact_means(values):
            return _means_from_counts(distinct, counts, len(values))
    draws = _bootstrap_index_matrix(len(items), n_resamples, seed)
    out: list[float] = []
    for first in range(0, n_resamples, _BOOTSTRAP_ROWS_PER_BLOCK):
        resampled = values[draws[first:first + _BOOTSTRAP_ROWS_PER_BLOCK]]
        if statistic is statistics.median:
            out.extend(np.median(resampled, axis=1).tolist())
        else:
            out.extend(statistics.fmean(row) for row in resampled.tolist())
    return out


def _countable(items: Sequence[float], values: np.ndarray) -> bool:
    """True when the counts of distinct values stand for the values themselves: every value finite, no negative
    zero (``np.unique`` would merge it with 0.0), fewer than 2**26 items, and every integer item exactly a float
    (``abs <= 2**53``)."""
    if len(values) >= 1 << 26 or not np.isfinite(values).all() or np.signbit(values[values == 0]).any():
        return False
    return all(type(item) is float or abs(item) <= 1 << 53 for item in items)


@lru_cache(maxsize=2)
def _resample_counts(values_bytes: bytes, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, counts)``: the sorted distinct values (float64) of the items (``values_bytes``, a float64
    array's bytes) and the ``(n_resamples, K)`` matrix of how often each occurs in each resample of
    :func:`_bootstrap_indices` (drawn block by block, the full matrix of draws is never held); both read-only,
    memoised."""
    values = np.frombuffer(values_bytes, dtype=np.float64)
    distinct, inverse = np.unique(values, return_inverse=True)
    inverse = inverse.astype(np.intp).ravel()
    k = len(distinct)
    counts = np.empty((n_resamples, k), dtype=np.intp)
    offsets = (np.arange(_BOOTSTRAP_ROWS_PER_BLOCK, dtype=np.intp) * k)[:, None]
    first = 0
    for block in _bootstrap_index_blocks(len(values), n_resamples, seed):  # small temporaries, no full draw matrix
        rows = inverse[block]  # distinct-value index of each draw
        n_rows = len(rows)
        rows += offsets[:n_rows]  # row r's values counted in bins r*k .. r*k + k - 1
        counts[first:first + n_rows] = np.bincount(rows.ravel(), minlength=n_rows * k).reshape(n_rows, k)
        first += n_rows
    distinct.flags.writeable = False
    counts.flags.writeable = False
    return distinct, counts


def _medians_from_counts(distinct: np.ndarray, counts: np.ndarray, n_items: int) -> list[float]:
    """``statistics.median`` of every resample, bit for bit, from its counts of the sorted distinct values.

    In a resample, the value at sorted position ``p`` (0-based) is ``distinct[k]`` with ``k`` the number of distinct
    values whose cumulative count is ``<= p``. ``statistics.median`` returns the value at ``n // 2`` for odd ``n``
    and ``(data[n//2 - 1] + data[n//2]) / 2`` for even ``n``: the same IEEE addition and division here.
    """
    cumulative = np.cumsum(counts, axis=1)

    def value_at(position: int) -> np.ndarray:
        return distinct[(cumulative <= position).sum(axis=1)]

    if n_items % 2:
        return value_at(n_items // 2).tolist()
    with np.errstate(over="ignore"):  # a sum past the float range is inf, as in statistics.median, without a warning
        return ((value_at(n_items // 2 - 1) + value_at(n_items // 2)) / 2).tolist()


#: Significant bits per level of :func:`_means_from_counts` (counts < 2**26 times 26-bit levels stay below 2**53).
_LEVEL_BITS = 26


def _means_from_counts(distinct: np.ndarray, counts: np.ndarray, n_items: int) -> list[float]:
    """``statistics.fmean`` of every resample, bit for bit, from its counts of the distinct values.

    ``fmean`` is ``math.fsum`` (the exactly rounded sum) / n. A resample's sum is ``sum_k c_k * u_k``. The distinct
    values are cut into levels on common grids: with ``2**e`` above every ``|u_k|``, level 1 is ``u_k`` rounded to a
    multiple of ``q1 = 2**(e - 26)``, level 2 the remainder rounded to a multiple of ``q2 = q1 / 2**26``, and so on
    until nothing remains (each cut is exact: scaling by a power of two, rounding to an integer, subtracting a
    nearby value of the same grid). A level is an integer of at most 26 bits times its ``q``, so with ``n < 2**26``
    every partial sum of ``c_k * level_k`` is an integer below ``2**52`` times ``q``: the matrix product of the
    counts with one level is exact in any order of summation. ``math.fsum`` of the few exact level sums of a row is
    then the exactly rounded sum of the row, the float ``fsum`` returns for the expanded resample. Requires
    :func:`_safe_for_exact_means` values (no overflow in the cuts, no subnormal grid).
    """
    import math

    _, exponent = np.frexp(np.abs(distinct).max())
    step = float(exponent) - _LEVEL_BITS
    remainder = distinct.copy()
    factor = counts.astype(np.float64)
    level_sums = []
    while remainder.any():
        quantum = math.ldexp(1.0, int(step))
        level = np.round(remainder / quantum) * quantum
        remainder = remainder - level
        level_sums.append(factor @ level)
        step -= _LEVEL_BITS
    if not level_sums:  # every value is zero
        return [0.0] * len(counts)
    return [math.fsum(row) / n_items for row in np.stack(level_sums, axis=1).tolist()]


def _safe_for_exact_means(values: np.ndarray) -> bool:
    """True when :func:`_means_from_counts` is exact: finite values, fewer than 2**26 items, and every non-zero
    magnitude in [1e-250, 1e290] (the level cuts neither overflow nor reach subnormal numbers)."""
    magnitudes = np.abs(values[values != 0])
    return bool(np.isfinite(values).all() and len(values) < 1 << 26 and (magnitudes.size == 0 or (magnitudes.min() >= 1e-250 and magnitudes.max() <= 1e290)))


def clear_bootstrap_cache() -> None:
    """Forget the memoised index draws and resample counts (results do not change; benchmarks time cold runs)."""
    _bootstrap_index_matrix.cache_clear()
    _resample_counts.cache_clear()


def _bootstrap_indices(n_items: int, n_resamples: int, seed: int):
    """The index draws of every bootstrap interval, one resample (an array of ``n_items`` indices) at a time: the rows
    of ``numpy.random.default_rng(seed).integers(0, n_items, size=(n_resamples, n_items))``, drawn in blocks of
    :data:`_BOOTSTRAP_ROWS_PER_BLOCK` rows. These are the numbers of one ``integers(0, n_items, size=n_items)`` call
    per resample too: numpy's bounded integers below 2**32 take 32-bit words from the generator's one stream (the
    spare half of a 64-bit output is kept in the bit generator, across calls), so the blocks cut one sequence
    (the tests check this for odd and even sizes)."""
    for block in _bootstrap_index_blocks(n_items, n_resamples, seed):
        yield from block


def _bootstrap_index_blocks(n_items: int, n_resamples: int, seed: int):
    """The draws of :func:`_bootstrap_indices` as arrays of up to :data:`_BOOTSTRAP_ROWS_PER_BLOCK` resamples."""
    if n_items == 0:
        raise ValueError("bootstrap interval of an empty item list is undefined")
    rng = np.random.default_rng(seed)
    for first in range(0, n_resamples, _BOOTSTRAP_ROWS_PER_BLOCK):
        yield rng.integers(0, n_items, size=(min(_BOOTSTRAP_ROWS_PER_BLOCK, n_resamples - first), n_items))


@lru_cache(maxsize=2)
def _bootstrap_index_matrix(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """The draws of :func:`_bootstrap_indices` as one read-only ``(n_resamples, n_items)`` array (one ``integers``
    call), memoised (the median and mean intervals of one task resample the same item count with the same seed)."""
    if n_items == 0:
        raise ValueError("bootstrap interval of an empty item list is undefined")
    matrix = np.random.default_rng(seed).integers(0, n_items, size=(n_resamples, n_items))
    matrix.flags.writeable = False
    return matrix


def _percentile_interval(values: Sequence[float]) -> list[float]:
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]


def package_version(name: str) -> str:
    """Installed version of a distribution, or ``"not-installed"``."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not-installed"
