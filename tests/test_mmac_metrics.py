"""MMAC metrics (paper Sec. 3.2), caption lengths, Kendall's W and mention agreement, on hand-computed cases."""

import math

import pytest

from mmac import metrics
from mmac.metrics import Outcome


def test_omission_lowers_coverage_and_accuracy_but_not_precision():
    judged = [Outcome("pitch", True, 1.0), Outcome("pitch", True, 0.5)]
    with_omission = judged + [Outcome("pitch", False)]
    assert metrics.counts_and_scores(judged) == {"valid": 2, "mentioned": 2, "judge_failed": 0, "coverage": 100.0, "precision": 75.0, "accuracy": 75.0}
    # 2 of 3 mentioned; precision over the mentioned only; accuracy (1 + 0.5 + 0) / 3.
    assert metrics.counts_and_scores(with_omission) == {"valid": 3, "mentioned": 2, "judge_failed": 0, "coverage": pytest.approx(200 / 3), "precision": 75.0, "accuracy": 50.0}


def test_judge_failure_changes_no_denominator_only_its_count():
    base = [Outcome("speed", True, 1.0), Outcome("speed", False)]
    failed = base + [Outcome("speed", None), Outcome("speed", None)]
    a, b = metrics.counts_and_scores(base), metrics.counts_and_scores(failed)
    assert b["judge_failed"] == 2 and a["judge_failed"] == 0
    assert {k: v for k, v in a.items() if k != "judge_failed"} == {k: v for k, v in b.items() if k != "judge_failed"}
    assert (b["coverage"], b["precision"], b["accuracy"]) == (50.0, 100.0, 50.0)


def test_category_macro_differs_from_a_plain_mean_over_samples():
    # persona: gender 2 samples (1.0 and 0.0, both mentioned), age 1 sample (1.0, mentioned).
    outcomes = [Outcome("gender", True, 1.0), Outcome("gender", True, 0.0), Outcome("age", True, 1.0)]
    per_dimension = metrics.dimension_scores(outcomes)
    assert list(per_dimension) == ["gender", "age"]
    persona = metrics.category_scores(per_dimension)["persona"]
    assert persona["accuracy"] == 75.0  # (50 + 100) / 2
    assert metrics.counts_and_scores(outcomes)["accuracy"] == pytest.approx(200 / 3)  # pooled over samples: 2 / 3
    # overall = equal-weight mean of the categories, whatever their sizes
    assert metrics.category_macro({"persona": 75.0, "content": 25.0}) == 50.0
    assert metrics.category_macro({"persona": 75.0, "content": None}) is None


def test_dimension_without_mentions_is_left_out_of_category_precision_and_named():
    per_dimension = metrics.dimension_scores([Outcome("pitch_change", False), Outcome("speed_change", True, 0.5), Outcome("emotion_change", None)])
    dynamic = metrics.category_scores(per_dimension)["dynamic"]
    assert dynamic["precision"] == 50.0 and dynamic["coverage"] == 50.0 and dynamic["accuracy"] == 25.0
    assert dynamic["left_out"] == {"coverage": ["emotion_change"], "precision": ["emotion_change", "pitch_change"], "accuracy": ["emotion_change"]}


def test_outcome_rejects_inconsistent_values():
    with pytest.raises(ValueError):
        Outcome("pitch", True, None)
    with pytest.raises(ValueError):
        Outcome("pitch", True, 1.5)
    with pytest.raises(ValueError):
        Outcome("pitch", False, 0.0)


def test_caption_length_counts_words_and_chinese_characters():
    assert metrics.caption_length("A man speaks quickly, in a calm voice. It's rainy.") == {"words": 10, "cjk_chars": 0, "unit": "words", "length": 10}
    chinese = metrics.caption_length("一位男性用平静的语气说话，背景有雨声。")
    assert chinese == {"words": 0, "cjk_chars": 17, "unit": "chars", "length": 17}
    assert metrics.caption_length("")["length"] == 0
    assert metrics.length_bucket({"unit": "words", "length": 120}) == "100-199 words"
    assert metrics.length_bucket({"unit": "words", "length": 500}) == "500+ words"
    assert metrics.length_bucket({"unit": "chars", "length": 17}) == "0-99 chars"


def test_length_analysis_pools_outcomes_per_bucket():
    lengths = [{"words": 30, "cjk_chars": 0, "unit": "words", "length": 30}, {"words": 250, "cjk_chars": 0, "unit": "words", "length": 250}]
    outcomes = [Outcome("pitch", False, bucket="0-49 words"), Outcome("pitch", True, 1.0, "200-299 words"), Outcome("speed", True, 0.0, "200-299 words")]
    analysis = metrics.length_analysis(lengths, outcomes)
    assert analysis["mean_words"] == 140 and analysis["captions"] == 2
    assert list(analysis["buckets"]) == ["0-49 words", "200-299 words"]
    assert analysis["buckets"]["0-49 words"]["coverage"] == 0.0
    assert analysis["buckets"]["200-299 words"] == {"captions": 1, "valid": 2, "mentioned": 2, "judge_failed": 0, "coverage": 100.0, "precision": 50.0, "accuracy": 50.0}


def test_kendalls_w_hand_computed():
    # ranks (1 = best): r1 A1 B2 C3 D4; r2 A1 C2 B3 D4; r3 B1 A2 C3 D4 -> rank sums 4, 6, 8, 12, mean 7.5,
    # S = 12.25 + 2.25 + 0.25 + 20.25 = 35, W = 12 S / (m^2 (n^3 - n)) = 420 / 540 = 7/9.
    scores = {"r1": {"A": 40, "B": 30, "C": 20, "D": 10}, "r2": {"A": 40, "C": 30, "B": 20, "D": 10}, "r3": {"B": 40, "A": 30, "C": 20, "D": 10}}
    assert metrics.kendalls_w(scores) == pytest.approx(7 / 9)
    identical = {"r1": {"A": 3, "B": 2, "C": 1}, "r2": {"A": 0.9, "B": 0.5, "C": 0.1}}
    assert metrics.kendalls_w(identical) == pytest.approx(1.0)
    assert metrics.rankings({"A": 40, "B": 30, "C": 30}) == {"A": 1.0, "B": 2.5, "C": 2.5}
    with pytest.raises(ValueError, match="at least 3 models"):
        metrics.kendalls_w({"r1": {"A": 1, "B": 2}, "r2": {"A": 1, "B": 2}})
    with pytest.raises(ValueError, match="scored models"):
        metrics.kendalls_w({"r1": {"A": 1, "B": 2, "C": 3}, "r2": {"A": 1, "B": 2, "D": 3}})
    assert math.isnan(metrics.kendalls_w({"r1": {"A": 1, "B": 1, "C": 1}, "r2": {"A": 2, "B": 2, "C": 2}}))


def test_mention_agreement_and_kappa_hand_computed():
    a = {1: True, 2: True, 3: False, 4: False, 5: True}
    b = {1: True, 2: False, 3: False, 4: False}
    # over the 4 shared keys: po = 3/4; pe = 0.5 * 0.25 + 0.5 * 0.75 = 0.5; kappa = 0.25 / 0.5 = 0.5
    assert metrics.mention_agreement(a, b) == {"pairs": 4, "agreement": 75.0, "cohen_kappa": pytest.approx(0.5)}
    assert metrics.mention_agreement({1: True}, {2: True}) == {"pairs": 0, "agreement": None, "cohen_kappa": None}
