"""Paired tests for two runs on the same documents: exact McNemar, paired bootstrap intervals and paired permutation
p-values that recompute a corpus figure from per-document parts on every resample, and Holm's adjustment.

Every figure here is a function of column sums of a per-document parts matrix (CER = 100 x sum(edits) /
sum(reference characters); accuracy = sum(correct) / sum(scored); macro-F1 from per-class hit/gold/predicted
counts; BLEU/chrF++ from sacrebleu's sentence statistics), or a median of per-document values. A resample is a
count vector over documents (or clusters: their parts are summed first), so a resampled figure is ``counts @
parts`` followed by the figure's own formula: never a mean of per-document ratios. Resamples are drawn in chunks
of about :data:`CHUNK_ELEMENTS` draws so memory does not grow with their number.

statsmodels is not installed in this project's environment, so the exact McNemar test is
``scipy.stats.binomtest`` on the discordant pairs (two-sided, p = 0.5), which is what
``statsmodels.stats.contingency_tables.mcnemar(exact=True)`` computes; tests pin it against a hand computation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Random draws (resamples x documents) per chunk: memory stays flat in the number of resamples, and a chunk's
#: count matrix (2 MiB) stays in cache.
CHUNK_ELEMENTS = 1 << 18
#: Fewer paired documents (or clusters) than this and a comparison is flagged small (as the run's intervals are).
MIN_PAIRED = 30
#: z(0.975) + z(0.80): a difference of this many standard errors is detected with 80 % power at alpha 0.05.
MDD_Z = 1.959963984540054 + 0.8416212335729143


def mcnemar_exact(a_correct: np.ndarray, b_correct: np.ndarray) -> tuple[float, int, int]:
    """Exact McNemar test of two paired 0/1 outcome vectors.

    Returns:
        ``(p_value, n_a_only, n_b_only)``: two-sided exact binomial p on the discordant pairs (documents right in A
        only, right in B only) with p = 0.5, as ``statsmodels mcnemar(exact=True)``; 1.0 with no discordant pair.
    """
    from scipy.stats import binomtest

    a, b = np.asarray(a_correct, bool), np.asarray(b_correct, bool)
    a_only, b_only = int(np.sum(a & ~b)), int(np.sum(b & ~a))
    if a_only + b_only == 0:
        return 1.0, a_only, b_only
    return float(binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue), a_only, b_only


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input order; ``nan`` entries stay ``nan`` and
    do not count in the family. Same values as ``statsmodels multipletests(method="holm")``."""
    p = np.asarray(p_values, float)
    valid = np.flatnonzero(~np.isnan(p))
    adjusted = np.full(p.shape, np.nan)
    order = valid[np.argsort(p[valid], kind="stable")]
    m = len(order)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return adjusted.tolist()


@dataclass
class Figure:
    """A corpus figure over per-document parts.

    Attributes:
        parts_a, parts_b: ``(n_docs, k)`` float arrays, row i the same document in both runs.
        value: ``value(sums) -> figures``: ``(R, k)`` column sums to ``(R,)`` figures (``nan`` where undefined).
        median: when true, ``parts_*`` are ``(n_docs, 1)`` per-document values (``nan`` where the document is not
            in the figure) and the figure is their median; ``value`` is unused.
    """

    parts_a: np.ndarray
    parts_b: np.ndarray
    value: Callable[[np.ndarray], np.ndarray] | None = None
    median: bool = False

    def full(self) -> tuple[float, float]:
        """The two runs' figures on all paired documents."""
        if self.median:
            return float(np.nanmedian(self.parts_a[:, 0])), float(np.nanmedian(self.parts_b[:, 0]))
        return float(self.value(self.parts_a.sum(0)[None])[0]), float(self.value(self.parts_b.sum(0)[None])[0])


def _cluster_sums(parts: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    out = np.zeros((int(clusters.max()) + 1, parts.shape[1]))
    np.add.at(out, clusters, parts)
    return out


def chunk_rows(n: int, resamples: int) -> int:
    """Resamples per chunk over ``n`` units: about :data:`CHUNK_ELEMENTS` draws, a multiple of 32 (so that numpy's
    buffered 0/1 draws, 32 per 32-bit word, fall the same in any chunking), at most ``resamples``."""
    return max(1, min(resamples, max(32, CHUNK_ELEMENTS // max(n, 1) // 32 * 32)))


def _one_blas_thread():
    """One BLAS thread while resampling (``threadpoolctl``, a declared dependency): the products here are small and
    memory-bound, and a second BLAS thread that spins while the other core is busy made a comparison 2-3x slower on a
    loaded 2-core machine (bench/README.md)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


def _bootstrap_counts(index: np.ndarray) -> np.ndarray:
    """``(rows, n)`` integer counts from ``(rows, n)`` draws: how often each unit is in each bootstrap resample."""
    rows, n = index.shape
    flat = index + (np.arange(rows) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=rows * n).reshape(rows, n)


def _operand(matrix: np.ndarray | None):
    """The right operand of ``left @ matrix`` for :func:`_times`: ``matrix`` itself, or, where it is mostly zeros
    (per-class one-hot parts: PARSA intent has 60 classes, 3 columns each), a ``scipy.sparse`` CSR copy of its
    transpose, whose product costs one pass per nonzero instead of one per entry."""
    if matrix is None or matrix.shape[1] < 64 or 8 * np.count_nonzero(matrix) >= matrix.size:
        return matrix
    from scipy.sparse import csr_array

    return csr_array(matrix.T)


def _times(left: np.ndarray, operand) -> np.ndarray:
    """``left @ matrix`` for an :func:`_operand` (the same sums: integer-valued parts add exactly in any order)."""
    return left @ operand if isinstance(operand, np.ndarray) else (operand @ left.T).T


def _median_ranks(values_a: np.ndarray, values_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ranks of A's values, ranks of B's values, the values in ascending order)``: each document's two values
    ranked in their joint ascending order (int32); ``nan`` (not in the figure) ranks ``len(values)``, after all."""
    values = np.concatenate([values_a, values_b])
    valid = np.flatnonzero(~np.isnan(values))
    order = valid[np.argsort(values[valid], kind="stable")]
    ranks = np.full(len(values), len(order), np.int32)
    ranks[order] = np.arange(len(order), dtype=np.int32)
    return ranks[: len(values_a)], ranks[len(values_a) :], values[order]


def _rank_medians(ranks: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Per row of ``(rows, n)`` ranks into ``sorted_values``: the median of the values those ranks name, leaving
    out rank ``len(sorted_values)`` (``nan``), as ``np.nanmedian`` of the row's values (the mean of the two middle
    values for an even count, ``nan`` when none is left). Sorting ranks (small integers) instead of values: numpy's
    integer sort is several times faster than its float sort or partition."""
    m = len(sorted_values)
    if m == 0:
        return np.full(len(ranks), np.nan)
    ordered = np.sort(ranks, axis=1)
    total = np.count_nonzero(ranks < m, axis=1)
    low = np.take_along_axis(ordered, np.maximum((total - 1) // 2, 0)[:, None], axis=1)[:, 0]
    high = np.take_along_axis(ordered, (total // 2)[:, None], axis=1)[:, 0]
    medians = (sorted_values[np.minimum(low, m - 1)] + sorted_values[np.minimum(high, m - 1)]) / 2
    return np.where(total > 0, medians, np.nan)


def resample_differences(figures: list[Figure], clusters: np.ndarray | None, resamples: int, seed: int, permute: list[bool] | None = None
                         ) -> list[tuple[np.ndarray, np.ndarray | None]]:  # fmt: skip
    """For each figure (all over the same paired documents): ``(bootstrap B-A differences, permutation B-A
    differences or None)``, each ``(resamples,)``. The draws are shared by the figures (one task's metrics are
    resampled together, as the documents are).

    Bootstrap: whole documents (or whole clusters) drawn with replacement, the same draw for both runs (paired).
    Permutation (where ``permute`` asks for it; default all): for each document (cluster) the two runs' outputs are
    swapped with probability 1/2 (the null hypothesis: the runs are exchangeable), and both figures recomputed.
    ``clusters`` (``(n_docs,)`` ints 0..C-1) applies to sum figures; a median figure needs ``clusters=None``.

    Random draws: ``SeedSequence(seed).spawn(2)`` gives the bootstrap stream (``integers(0, n, (R, n))``: resample
    r draws units ``index[r]``) and the permutation stream (``integers(0, 2, (R, n), dtype=bool)``: True swaps the
    unit), drawn in chunks of :func:`chunk_rows` resamples; the draws, hence the results, do not depend on the
    chunking. Per chunk, every sum figure is one matrix product (``counts @ parts`` for the bootstrap, ``swaps @
    (B - A)`` for the permutation) over the stacked parts of all figures; a median is read from the cumulative
    ranks of the values, ranked once (:func:`_rank_medians`), equal to ``np.nanmedian`` of the resample.

    Raises:
        ValueError: a median figure with clusters.
    """
    permute = permute if permute is not None else [True] * len(figures)
    if clusters is not None and any(f.median for f in figures):
        raise ValueError("cluster resampling of a median figure is not implemented")
    boot_rng, perm_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    sums, deltas, columns, medians = [], [], {}, {}
    width = 0
    for number, figure in enumerate(figures):
        pa, pb = figure.parts_a, figure.parts_b
        if figure.median:
            medians[number] = _median_ranks(pa[:, 0], pb[:, 0])
            continue
        if clusters is not None:
            pa, pb = _cluster_sums(pa, clusters), _cluster_sums(pb, clusters)
        k = pa.shape[1]
        columns[number] = (slice(width, width + k), slice(width + k, width + 2 * k), pa.sum(0), pb.sum(0))
        sums += [pa, pb]
        if permute[number]:
            deltas.append(pb - pa)
        width += 2 * k
    n = len(figures[0].parts_a) if clusters is None else int(clusters.max()) + 1
    stacked = _operand(np.hstack(sums)) if sums else None
    delta = _operand(np.hstack(deltas)) if deltas else None
    boot = [np.empty(resamples) for _ in figures]
    perm = [np.empty(resamples) if permute[i] else None for i in range(len(figures))]
    need_swaps = any(permute)
    rows = chunk_rows(n, resamples)
    with _one_blas_thread():
        for start in range(0, resamples, rows):
            chunk = slice(start, min(start + rows, resamples))
            size = chunk.stop - chunk.start
            index = boot_rng.integers(0, n, size=(size, n))
            swaps = perm_rng.integers(0, 2, size=(size, n), dtype=bool) if need_swaps else None
            drawn = _times(_bootstrap_counts(index).astype(float), stacked) if stacked is not None else None
            moved = _times(swaps.astype(float), delta) if delta is not None else None  # what swapping those units moves from B to A
            moved_at = 0
            for number, figure in enumerate(figures):
                if figure.median:
                    ranks_a, ranks_b, values = medians[number]
                    boot[number][chunk] = _rank_medians(ranks_b[index], values) - _rank_medians(ranks_a[index], values)
                    if permute[number]:  # B's side holds A's value where swapped
                        perm[number][chunk] = _rank_medians(np.where(swaps, ranks_a, ranks_b), values) - _rank_medians(np.where(swaps, ranks_b, ranks_a), values)
                    continue
                in_a, in_b, sum_a, sum_b = columns[number]
                boot[number][chunk] = figure.value(drawn[:, in_b]) - figure.value(drawn[:, in_a])
                if permute[number]:
                    k = sum_a.shape[0]
                    shift = moved[:, moved_at : moved_at + k]
                    moved_at += k
                    perm[number][chunk] = figure.value(sum_b - shift) - figure.value(sum_a + shift)
            del index, swaps, drawn, moved  # before the next chunk's draws: one chunk in memory at a time
    return list(zip(boot, perm))


def sacrebleu_seed() -> int | None:
    """The seed sacrebleu's paired tests use: ``SACREBLEU_SEED`` (default 12345; ``none`` or 0: unseeded), read as
    ``sacrebleu.significance.PairedTest`` reads it (sacrebleu 2.x)."""
    import os

    seed = os.environ.get("SACREBLEU_SEED", "12345")
    value = None if seed.lower() == "none" else int(seed)
    return value if value else None


def approximate_randomisation_p(figure: Figure, resamples: int, seed: int | None) -> float:
    """Paired approximate-randomisation p-value of a sum figure, baseline A and system B, by sacrebleu's algorithm
    (``sacrebleu.significance._paired_ar_test``, sacrebleu 2.x, after multeval): ``rng = default_rng(seed)``,
    ``pos_sel = rng.integers(2, size=(resamples, n), dtype=bool)`` (True: the pseudo-system A takes A's statistics
    of that document), both pseudo-systems scored from summed statistics, and ``p = (1 + #{|a* - b*| > |a - b|}) /
    (1 + resamples)``. The selections are drawn in chunks whose sizes are multiples of 32 draws, so they are
    sacrebleu's own; the scores come from ``figure.value`` over summed statistics (vectorised; tests pin the
    p-value equal to sacrebleu's ``PairedTest(test_type="ar")`` for BLEU and chrF++).

    Args:
        figure: a sum figure (``parts_*``: ``(n_docs, k)`` sentence statistics); resamples: AR trials;
        seed: as :func:`sacrebleu_seed` (``None``: unseeded).
    """
    rng = np.random.default_rng(seed)
    pa, pb = figure.parts_a, figure.parts_b
    n = len(pa)
    sum_a, sum_b = pa.sum(0), pb.sum(0)
    observed = abs(float(figure.value(sum_a[None])[0]) - float(figure.value(sum_b[None])[0]))
    delta = pa - pb
    larger = 0
    rows = chunk_rows(n, resamples)
    with _one_blas_thread():
        for start in range(0, resamples, rows):
            size = min(rows, resamples - start)
            selected = rng.integers(2, size=(size, n), dtype=bool)
            shuffled_a = sum_b + selected.astype(float) @ delta  # pos_sel @ A + neg_sel @ B
            shuffled_b = sum_a + sum_b - shuffled_a
            larger += int(np.sum(np.abs(figure.value(shuffled_a) - figure.value(shuffled_b)) > observed))
            del selected, shuffled_a, shuffled_b
    return (larger + 1) / (resamples + 1)


def permutation_p(observed: float, permuted: np.ndarray) -> float:
    """Two-sided permutation p-value ``(1 + #{|d*| >= |d|}) / (1 + R)`` (a tolerance of 1e-12 for ties)."""
    permuted = permuted[~np.isnan(permuted)]
    return float((1 + np.sum(np.abs(permuted) >= abs(observed) - 1e-12)) / (1 + len(permuted)))


def interval(boot: np.ndarray) -> tuple[float, float]:
    """95 % percentile interval of bootstrap differences (``nan`` resamples, where the figure is undefined, left out)."""
    boot = boot[~np.isnan(boot)]
    if not len(boot):
        return float("nan"), float("nan")
    low, high = np.percentile(boot, [2.5, 97.5])
    return float(low), float(high)


def minimum_detectable(boot: np.ndarray) -> float:
    """Smallest |B-A| this test detects with 80 % power at alpha 0.05: :data:`MDD_Z` bootstrap standard errors."""
    boot = boot[~np.isnan(boot)]
    return float(MDD_Z * np.std(boot, ddof=1)) if len(boot) > 1 else float("nan")
