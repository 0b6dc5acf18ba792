"""Paired tests for two runs on the same documents: exact McNemar, paired bootstrap intervals and paired permutation
p-values that recompute a corpus figure from per-document parts on every resample, and Holm's adjustment.

Every figure here is a function of column sums of a per-document parts matrix (CER = 100 x sum(edits) /
sum(reference characters); accuracy = sum(correct) / sum(scored); macro-F1 from per-class hit/gold/predicted
counts; BLEU/chrF++ from sacrebleu's sentence statistics), or a median of per-document values. A resample is a
count vector over documents (or clusters: their parts are summed first), so a resampled figure is ``counts @
parts`` followed by the figure's own formula: never a mean of per-document ratios. Resamples are drawn in chunks
of :data:`CHUNK` so memory does not grow with their number.

statsmodels is not installed in this project's environment, so the exact McNemar test is
``scipy.stats.binomtest`` on the discordant pairs (two-sided, p = 0.5), which is what
``statsmodels.stats.contingency_tables.mcnemar(exact=True)`` computes; tests pin it against a hand computation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Resamples drawn at once (rows of one count matrix).
CHUNK = 1000
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


def resample_differences(figures: list[Figure], clusters: np.ndarray | None, resamples: int, seed: int, permute: list[bool] | None = None
                         ) -> list[tuple[np.ndarray, np.ndarray | None]]:  # fmt: skip
    """For each figure (all over the same paired documents): ``(bootstrap B-A differences, permutation B-A
    differences or None)``, each ``(resamples,)``. The draws are shared by the figures (one task's metrics are
    resampled together, as the documents are).

    Bootstrap: whole documents (or whole clusters) drawn with replacement, the same draw for both runs (paired).
    Permutation (where ``permute`` asks for it; default all): for each document (cluster) the two runs' outputs are
    swapped with probability 1/2 (the null hypothesis: the runs are exchangeable), and both figures recomputed.
    ``clusters`` (``(n_docs,)`` ints 0..C-1) applies to sum figures; a median figure needs ``clusters=None``.

    Raises:
        ValueError: a median figure with clusters.
    """
    permute = permute if permute is not None else [True] * len(figures)
    if clusters is not None and any(f.median for f in figures):
        raise ValueError("cluster resampling of a median figure is not implemented")
    rng = np.random.default_rng(seed)
    prepared = []
    for figure in figures:
        pa, pb = figure.parts_a, figure.parts_b
        if clusters is not None and not figure.median:
            pa, pb = _cluster_sums(pa, clusters), _cluster_sums(pb, clusters)
        prepared.append((pa, pb, pa.sum(0), pb.sum(0), pb - pa))
    n = len(prepared[0][0])
    boot: list[list] = [[] for _ in figures]
    perm: list[list] = [[] for _ in figures]
    for start in range(0, resamples, CHUNK):
        rows = min(CHUNK, resamples - start)
        index = rng.integers(0, n, size=(rows, n))
        swap = rng.random((rows, n)) < 0.5
        counts = None
        for number, (figure, (pa, pb, sum_a, sum_b, delta)) in enumerate(zip(figures, prepared)):
            if figure.median:
                va, vb = pa[:, 0], pb[:, 0]
                boot[number].append(np.nanmedian(vb[index], axis=1) - np.nanmedian(va[index], axis=1))
                if permute[number]:
                    perm[number].append(np.nanmedian(np.where(swap, va, vb), axis=1) - np.nanmedian(np.where(swap, vb, va), axis=1))
                continue
            if counts is None:
                flat = (index + (np.arange(rows) * n)[:, None]).ravel()
                counts = np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)
                swapped = swap.astype(float)
            boot[number].append(figure.value(counts @ pb) - figure.value(counts @ pa))
            if permute[number]:
                moved = swapped @ delta  # what swapping those units moves from B to A
                perm[number].append(figure.value(sum_b - moved) - figure.value(sum_a + moved))
    return [(np.concatenate(b), np.concatenate(p) if p else None) for b, p in zip(boot, perm)]


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
