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


def _counts(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """``(rows, n)`` bootstrap counts: each row the multiplicities of n draws with replacement from n units."""
    draws = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n).astype(float)


def resample_differences(figure: Figure, clusters: np.ndarray | None, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(bootstrap B-A differences, permutation B-A differences)``, each ``(resamples,)``.

    Bootstrap: whole documents (or whole clusters) drawn with replacement, the same draw for both runs (paired).
    Permutation: for each document (cluster) the two runs' outputs are swapped with probability 1/2 (the null
    hypothesis: the runs are exchangeable), and both figures recomputed. ``clusters`` (``(n_docs,)`` ints 0..C-1)
    applies to sum figures; medians resample documents.
    """
    rng = np.random.default_rng(seed)
    boot, perm = [], []
    if figure.median:
        va, vb = figure.parts_a[:, 0], figure.parts_b[:, 0]
        n = len(va)
        for start in range(0, resamples, CHUNK):
            rows = min(CHUNK, resamples - start)
            index = rng.integers(0, n, size=(rows, n))
            boot.append(np.nanmedian(vb[index], axis=1) - np.nanmedian(va[index], axis=1))
            swap = rng.random((rows, n)) < 0.5
            perm.append(np.nanmedian(np.where(swap, va, vb), axis=1) - np.nanmedian(np.where(swap, vb, va), axis=1))
        return np.concatenate(boot), np.concatenate(perm)
    pa, pb = figure.parts_a, figure.parts_b
    if clusters is not None:
        pa, pb = _cluster_sums(pa, clusters), _cluster_sums(pb, clusters)
    n = len(pa)
    sum_a, sum_b, delta = pa.sum(0), pb.sum(0), pb - pa
    for start in range(0, resamples, CHUNK):
        rows = min(CHUNK, resamples - start)
        counts = _counts(rng, rows, n)
        boot.append(figure.value(counts @ pb) - figure.value(counts @ pa))
        moved = (rng.random((rows, n)) < 0.5).astype(float) @ delta  # what swapping those units moves from B to A
        perm.append(figure.value(sum_b - moved) - figure.value(sum_a + moved))
    return np.concatenate(boot), np.concatenate(perm)


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
