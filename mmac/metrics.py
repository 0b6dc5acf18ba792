"""MMAC's metrics exactly as the paper defines them (arXiv 2607.27109, Sec. 3.2), plus the caption-length
analysis (Fig. 5) and the judge-agreement statistics (Sec. 3.3, Fig. 4).

Unit of judging: one (sample, target dimension) pair -> an :class:`Outcome`: valid (the judge decided
``mentioned`` and, if mentioned, a score normalised to [0, 1]) or judge_failed (no valid decision).

Per dimension, over its *valid* pairs (judge_failed pairs are counted and left out of every denominator):

- Coverage  = mentioned / valid;
- Precision = sum of scores of the mentioned pairs / mentioned;
- Accuracy  = sum of scores / valid, an omission scoring 0 (so Accuracy = Coverage x Precision).

Per category: the unweighted mean of its dimensions' values (dimensions with no valid pair are left out and
named; a dimension with no mention has no Precision and is left out of the category's Precision, named).
Overall: the unweighted mean of the 6 category values ("category-macro", paper Sec. 3.1/3.2, Table 2).
All values are percentages (0-100), as in Table 2.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mmac.schema import CATEGORIES, DIMENSION_CATEGORY

METRICS = ("coverage", "precision", "accuracy")


@dataclass(frozen=True)
class Outcome:
    """One judged (sample, target dimension) pair.

    ``mentioned``: True / False, or None when judge_failed; ``score``: normalised score in [0, 1] when
    mentioned, else None; ``bucket``: the caption-length bucket (:func:`length_bucket`), if known.
    """

    dimension: str
    mentioned: bool | None
    score: float | None = None
    bucket: str | None = None

    def __post_init__(self) -> None:
        if self.mentioned and (self.score is None or not 0.0 <= self.score <= 1.0):
            raise ValueError(f"a mentioned outcome needs a score in [0, 1], got {self.score!r}")
        if not self.mentioned and self.score is not None:
            raise ValueError("only a mentioned outcome has a score")


def _percent(numerator: float, denominator: int) -> float | None:
    return 100.0 * numerator / denominator if denominator else None


def counts_and_scores(outcomes: Iterable[Outcome]) -> dict:
    """Coverage / Precision / Accuracy (percent, None when undefined) of a set of outcomes, with the counts.

    Returns:
        ``{"valid", "mentioned", "judge_failed", "coverage", "precision", "accuracy"}``; Precision is None
        when nothing was mentioned, all three are None when nothing is valid.
    """
    valid = mentioned = failed = 0
    total = 0.0
    for outcome in outcomes:
        if outcome.mentioned is None:
            failed += 1
            continue
        valid += 1
        if outcome.mentioned:
            mentioned += 1
            total += outcome.score
    return {
        "valid": valid,
        "mentioned": mentioned,
        "judge_failed": failed,
        "coverage": _percent(mentioned, valid),
        "precision": _percent(total, mentioned),
        "accuracy": _percent(total, valid),
    }


def dimension_scores(outcomes: Iterable[Outcome]) -> dict[str, dict]:
    """``{dimension: counts_and_scores(...)}`` in the paper's dimension order (only dimensions present)."""
    by_dimension: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_dimension[outcome.dimension].append(outcome)
    order = list(DIMENSION_CATEGORY)
    return {d: counts_and_scores(by_dimension[d]) for d in sorted(by_dimension, key=lambda d: order.index(d) if d in order else len(order))}


def category_scores(per_dimension: Mapping[str, dict]) -> dict[str, dict]:
    """Per category: each metric's unweighted mean over the category's dimensions where it is defined.

    Returns:
        ``{category: {"coverage", "precision", "accuracy", "dimensions", "left_out"}}`` for the categories with
        at least one dimension present; a metric is None when no dimension defines it; ``left_out`` names
        ``{metric: [dimensions without a value]}``.
    """
    result = {}
    for category, dimensions in CATEGORIES.items():
        present = [d for d in dimensions if d in per_dimension]
        if not present:
            continue
        entry: dict = {"dimensions": present, "left_out": {}}
        for metric in METRICS:
            values = [per_dimension[d][metric] for d in present if per_dimension[d][metric] is not None]
            entry[metric] = sum(values) / len(values) if values else None
            missing = [d for d in present if per_dimension[d][metric] is None]
            if missing:
                entry["left_out"][metric] = missing
        result[category] = entry
    return result


def category_macro(values: Mapping[str, float | None]) -> float | None:
    """Equal-weight mean of the category values (the paper's aggregate); None if any category has no value.

    Args:
        values: ``{category: value in percent}``, normally all 6 categories.
    """
    if not values or any(v is None for v in values.values()):
        return None
    return sum(values.values()) / len(values)


# ----------------------------------------------------------------------------------- caption length
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.UNICODE)
#: Bucket lower edges: words for captions in a spaced script, characters for Chinese (mostly-CJK) captions.
#: The word edges cover the paper's Fig. 5 conditions (100+ ... 500+ words).
WORD_EDGES = (0, 50, 100, 200, 300, 400, 500)
CHAR_EDGES = (0, 100, 200, 400, 600, 800, 1000)


def caption_length(text: str) -> dict:
    """Length of a caption: ``{"words", "cjk_chars", "unit", "length"}``.

    ``words`` counts word tokens outside CJK characters; ``cjk_chars`` counts CJK ideographs. ``unit`` is
    ``"chars"`` when the caption has more CJK characters than other words (a Chinese caption), else
    ``"words"``; ``length`` is the count in that unit.
    """
    cjk = len(_CJK.findall(text or ""))
    words = len(_WORD.findall(_CJK.sub(" ", text or "")))
    unit = "chars" if cjk > words else "words"
    return {"words": words, "cjk_chars": cjk, "unit": unit, "length": cjk if unit == "chars" else words}


def length_bucket(length: dict) -> str:
    """The bucket label of a :func:`caption_length` result, e.g. ``"100-199 words"``, ``"500+ words"``."""
    edges = CHAR_EDGES if length["unit"] == "chars" else WORD_EDGES
    value = length["length"]
    for low, high in itertools.pairwise(edges):
        if low <= value < high:
            return f"{low}-{high - 1} {length['unit']}"
    return f"{edges[-1]}+ {length['unit']}"


def _bucket_order(label: str) -> tuple:
    unit = label.rsplit(" ", 1)[-1]
    return (unit, int(re.match(r"\d+", label).group()))


def length_analysis(lengths: Sequence[dict], outcomes: Iterable[Outcome]) -> dict:
    """The caption-length view of one task (paper Fig. 5: longer captions, higher Coverage, lower Precision).

    Args:
        lengths: :func:`caption_length` of every caption of the task.
        outcomes: the task's outcomes, each with its caption's ``bucket``.
    Returns:
        ``{"captions", "mean_words", "median_words", "mean_cjk_chars", "median_cjk_chars", "buckets"}``;
        ``buckets`` maps each bucket label to ``{"captions", **counts_and_scores}`` pooled over the bucket's
        (sample, dimension) pairs.
    """
    captions_per_bucket: dict[str, int] = defaultdict(int)
    for length in lengths:
        captions_per_bucket[length_bucket(length)] += 1
    by_bucket: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_bucket[outcome.bucket].append(outcome)
    words = [length["words"] for length in lengths]
    chars = [length["cjk_chars"] for length in lengths]
    return {
        "captions": len(lengths),
        "mean_words": statistics.fmean(words) if words else None,
        "median_words": statistics.median(words) if words else None,
        "mean_cjk_chars": statistics.fmean(chars) if chars else None,
        "median_cjk_chars": statistics.median(chars) if chars else None,
        "buckets": {
            label: {"captions": captions_per_bucket[label], **counts_and_scores(by_bucket.get(label, []))}
            for label in sorted(captions_per_bucket, key=_bucket_order)
        },
    }


# ----------------------------------------------------------------------------------- judge agreement
def rankings(scores: Mapping[str, float]) -> dict[str, float]:
    """Rank of each model by score, 1 = best; tied models share the mean of their ranks."""
    from scipy.stats import rankdata

    models = list(scores)
    ranks = rankdata([-scores[m] for m in models], method="average")
    return {m: float(r) for m, r in zip(models, ranks)}


def kendalls_w(scores_by_rater: Mapping[str, Mapping[str, float]]) -> float:
    """Kendall's coefficient of concordance W (with the tie correction) of several raters' model rankings.

    Computed from scipy's Friedman statistic: W = chi2_F / (m (n - 1)) for m raters (blocks) and n models
    (treatments); scipy ranks within each rater and corrects chi2_F for ties, which gives the tie-corrected W
    of Kendall & Babington Smith (1939), the statistic the paper reports (W = 0.981 over five rankings).

    Args:
        scores_by_rater: ``{rater: {model: score}}``, every rater scoring the same >= 3 models.
    Returns:
        W in [0, 1] (1 = identical rankings).
    Raises:
        ValueError: fewer than 2 raters or 3 models, or raters scoring different models.
    """
    from scipy.stats import friedmanchisquare

    raters = list(scores_by_rater)
    if len(raters) < 2:
        raise ValueError(f"Kendall's W needs at least 2 raters, got {len(raters)}")
    models = sorted(scores_by_rater[raters[0]])
    for rater in raters:
        if sorted(scores_by_rater[rater]) != models:
            raise ValueError(f"rater {rater!r} scored models {sorted(scores_by_rater[rater])}, expected {models}")
    if len(models) < 3:
        raise ValueError(f"Kendall's W (via the Friedman test) needs at least 3 models, got {len(models)}")
    columns = [[scores_by_rater[rater][model] for rater in raters] for model in models]
    if all(len(set(scores_by_rater[rater].values())) == 1 for rater in raters):
        return math.nan  # every rater ties every model: W is undefined
    statistic = friedmanchisquare(*columns).statistic
    return float(statistic) / (len(raters) * (len(models) - 1))


def mention_agreement(a: Mapping[tuple, bool], b: Mapping[tuple, bool]) -> dict:
    """Agreement of two raters on the per-sample mention decision, over the keys both decided.

    Returns:
        ``{"pairs", "agreement" (percent of equal decisions), "cohen_kappa" (sklearn; None when undefined)}``.
    """
    keys = sorted(set(a) & set(b), key=repr)
    if not keys:
        return {"pairs": 0, "agreement": None, "cohen_kappa": None}
    left, right = [a[k] for k in keys], [b[k] for k in keys]
    agreement = 100.0 * sum(x == y for x, y in zip(left, right)) / len(keys)
    kappa = None
    if len(set(left) | set(right)) > 1:
        from sklearn.metrics import cohen_kappa_score

        value = float(cohen_kappa_score(left, right))
        kappa = None if math.isnan(value) else value
    return {"pairs": len(keys), "agreement": agreement, "cohen_kappa": kappa}
