"""MCGA metrics against values computed by the official script (tests/fixtures/mcga_official_scores.json,
see README_mcga_official_scores.md for how it was made), plus hand-checked strict variants and CMC."""

import json

import pytest

from mcga import metrics
from mcga.normalize import normalize_for_cer
from tests.conftest import FIXTURES

OFFICIAL = json.loads((FIXTURES / "mcga_official_scores.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("corpus", OFFICIAL["asr_corpora"], ids=lambda c: c["name"])
def test_official_cer_equals_official_script(corpus):
    refs = [p["ref"] for p in corpus["pairs"]]
    hyps = [p["hyp"] for p in corpus["pairs"]]
    assert [normalize_for_cer(r) for r in refs] == corpus["normalized_refs"]
    assert [normalize_for_cer(metrics.official_hypothesis_text(h)) for h in hyps] == corpus["normalized_hyps"]
    assert metrics.official_cer_percent(refs, hyps) == pytest.approx(corpus["official_cer_percent"], abs=1e-9)


@pytest.mark.parametrize("case", OFFICIAL["sqa_pairs"], ids=lambda c: f"{c['gold']}|{c['pred']}")
def test_official_sqa_f1_equals_official_script(case):
    assert metrics.official_sqa_f1(case["gold"], case["pred"]) == pytest.approx(case["official_f1"], abs=1e-12)


@pytest.mark.parametrize("case", OFFICIAL["mcq_pairs"], ids=lambda c: f"{c['gold']}|{c['pred']}")
def test_official_mcq_correct_equals_official_script(case):
    assert metrics.official_mcq_correct(case["gold"], case["pred"]) is case["official_correct"]


def test_official_cer_counts_joining_spaces():
    # 5 substituted characters of 5: the joined strings have 9 characters, 5 of them wrong.
    assert metrics.official_cer_percent(["床前明月光"], ["甲乙丙丁戊"]) == pytest.approx(500 / 9)
    assert metrics.strict_cer_percent(["床前明月光"], ["甲乙丙丁戊"]) == pytest.approx(100.0)


def test_official_cer_is_a_corpus_rate_not_a_mean():
    refs, hyps = ["床前明月光", "举头望明月低头思故乡"], ["", "举头望明月低头思故乡"]
    # Joined: 9 + 19 = 28 characters; the empty hypothesis deletes all 9 of the first.
    assert metrics.official_cer_percent(refs, hyps) == pytest.approx(100 * 9 / 28)


def test_strict_cer_scores_the_whole_output_without_cut_or_separator():
    ref = "床前明月光"
    output = "Here is the transcription:\n" + ref * 30  # 150 characters after the separator
    assert metrics.official_cer_percent([ref], [output]) == pytest.approx(100 * (2 * 95) / 9)  # 95 inserted chars, 2 edits each
    # strict: 150 + len("hereisthetranscription") = 22 letters; 145 + 22 insertions over 5 chars
    assert metrics.strict_cer_percent([ref], [output]) == pytest.approx(100 * (145 + 22) / 5)


def test_strict_cer_of_a_100kb_output_is_finite_and_counts_every_character():
    output = "床前明月光" + "啊" * 100_000
    assert metrics.strict_cer_percent(["床前明月光"], [output]) == pytest.approx(100 * 100_000 / 5)


def test_cer_by_group_uses_the_official_order_and_the_corpus_formula_inside_each_group():
    refs, hyps, genres = ["床前明月光", "明月几时有", "枯藤老树"], ["床前明月光", "明月几时", "枯藤老树"], ["词", "诗", "词"]
    by_genre = metrics.official_cer_percent_by_group(refs, hyps, genres, metrics.GENRE_ORDER)
    assert list(by_genre) == ["诗", "词"]
    assert by_genre == {"诗": pytest.approx(100 * 2 / 9), "词": 0.0}


def test_cer_rejects_misaligned_or_empty_corpora():
    with pytest.raises(ValueError, match="2 references but 1"):
        metrics.official_cer_percent(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty corpus"):
        metrics.strict_cer_percent([], [])


@pytest.mark.parametrize(
    "output, letter",
    [
        ("A", "A"), ("a", "A"), (" B ", "B"), ("(B)", "B"), ("**D**", "D"), ("Ａ", "A"), ("C. 思念家乡", "C"), ("D、", "D"),
        ("答案：A，因为B选项错误", "A"), ("答案是B", "B"), ("答案A", "A"), ("选项C正确", "C"), ("我选择C", "C"),
        ("The answer is C", "C"), ("I think A is wrong, the answer is D", "D"), ("这是一道选择题，答案是B", "B"),
        ("", None), ("ABCD", None), ("E", None), ("A dog barks", None), ("因为B选项错误", None),
        ("答案是A。不对，答案是B", None), ("options A and B", None), ("答案：E", None),
    ],
)
def test_strict_mcq_letter(output, letter):
    assert metrics.strict_mcq_letter(output) == letter


def test_strict_and_official_mcq_disagree_where_the_official_rule_is_lenient():
    assert metrics.official_mcq_correct("A", "ABCD") and metrics.strict_mcq_letter("ABCD") is None
    assert metrics.official_mcq_correct("A", "The answer is C") and metrics.strict_mcq_letter("The answer is C") == "C"


def test_cross_modal_consistency_follows_paper_equation_1():
    assert metrics.cross_modal_consistency(sqa=40, qa=80, su=60, lu=60, sr=45, lr=90) == pytest.approx((0.5 + 1 + 0.5) / 3 * 100)
    with pytest.raises(ValueError, match="LU"):
        metrics.cross_modal_consistency(1, 1, 1, 0, 1, 1)


def test_task_signature_names_rules_normaliser_and_versions():
    signature = metrics.task_signature("asr")
    assert signature.startswith("mcga-scoring:1|cer_official=")
    assert "opencc-" in signature and "whisper-normalizer-" in signature and "jiwer-" in signature
    assert signature.endswith("unit:percent")
