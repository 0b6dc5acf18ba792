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
        ("options A and B", None), ("答案：E", None),
        # issue 8 item 3: traditional script, plain phrasings, answer then a mention of another option
        ("我選擇 C", "C"), ("正確選項為 D", "D"), ("我觉得是B", "B"), ("应该是 C", "C"), ("B选项", "B"),
        ("答案是B。选项A的说法与原文不符。", "B"), ("The answer is C. Option A is a common distractor.", "C"),
        # constructed siblings
        ("我覺得是B", "B"), ("應該是 A", "A"), ("正确答案应为A", "A"), ("B選項", "B"), ("我认为是 d", "D"),
        ("答案是D。選項A與原文不符。", "D"), ("The correct answer is B; option C is tempting but wrong.", "B"),
        ("I choose A. Option B and option D are distractors.", "A"), ("C选项是正确的", "C"), ("C is correct", "C"),
        ("答案是A，B是错的", "A"), ("应选 (B)", "B"),
        # still refused: two letters offered as the answer, a letter called wrong, no letter
        ("答案是A或B", None), ("答案：A、B", None), ("I choose A or B", None), ("答案是A，B。", None), ("我觉得A不对", None),
        ("可能是A和C", None), ("无法判断", None), ("The passage does not say.", None),
        ("I cannot answer a question about this", None), ("答案是b。", "B"), ("ANSWER IS C", "C"),
    ],
)
def test_strict_mcq_letter(output, letter):
    assert metrics.strict_mcq_letter(output) == letter


@pytest.mark.parametrize(
    "output, letter, reason",
    [
        # issue 17 item 1: a question is not an answer (simplified, traditional, English, a bare letter with ?)
        ("答案是B吗？", None, "question"), ("答案是B嗎？", None, "question"), ("是B吗", None, "question"), ("Is it B?", None, "question"),
        ("B？", None, "question"), ("會不會是C？", None, "question"), ("Could the answer be D?", None, "question"),
        ("答案是B吗？我认为答案是C。", "C", ""), ("Is it B? No. The answer is C.", "C", ""), ("答案是A。你还有其他问题吗？", "A", ""),
        # issue 17 item 2: a clear retraction makes the last declaration final
        ("答案是A。不对，答案是B", "B", ""), ("答案是A。不對，正確答案是B。", "B", ""), ("The answer is A. Wait, actually the answer is B.", "B", ""),
        ("答案是A或B。最终答案：B", "B", ""), ("I choose A. Correction: I choose C.", "C", ""), ("答案：A\n更正：答案是D", "D", ""),
        # several answers with no clear final one: ambiguous
        ("答案是A。答案是B。", None, "ambiguous"), ("The answer is A. The answer is C.", None, "ambiguous"), ("答案是A或B", None, "ambiguous"),
        ("答案是A。不对，答案是B。答案是A", None, "ambiguous"), ("答案是A。不对，是B", None, "ambiguous"),
        ("The answer is C. Wait, B might be better.", None, "ambiguous"),
        # a hedge offering another option after the declared one: no single answer; the same option again is one
        ("我认为是B，也可能是C", None, "ambiguous"), ("The answer is B, but it could also be C.", None, "ambiguous"),
        ("答案是B。可能是因为作者思乡。", "B", ""), ("答案是B，也可能是B", "B", ""),
        # LaTeX answers of maths-trained reasoning models
        (r"The answer is \boxed{B}.", "B", ""), (r"\boxed{C}", "C", ""), (r"最终答案：$\boxed{\text{D}}$", "D", ""),
        # the same letter declared twice is one answer; an answer then prose is the answer
        ("答案是C。所以答案是C。", "C", ""), ("The answer is D. No other option fits the passage.", "D", ""),
        ("", None, "no_letter"), ("无法判断", None, "no_letter"),
    ],
)
def test_strict_reading_of_questions_retractions_and_several_answers(output, letter, reason):
    assert metrics.strict_mcq_reading(output) == metrics.StrictReading(letter, reason)


def test_strict_reading_is_linear_in_the_reply_length():
    import time

    def seconds(n):
        reply = "答案是A。不对，答案是B？" * n + "选项" * n
        start = time.perf_counter()
        metrics.strict_mcq_reading(reply)
        return time.perf_counter() - start

    seconds(10)
    small, large = min(seconds(2_000) for _ in range(3)), min(seconds(20_000) for _ in range(3))
    assert large < 30 * small  # 10x the text: about 10x the time (quadratic would be 100x)


SU_QUESTION = "问题：这首小令主要抒发了怎样的情感？\nA. 边塞将士建功立业的豪情\nB. 漂泊天涯的游子的思乡愁苦\nC. 归隐田园的闲适与快乐\nD. 久别重逢的喜悦\n答案："


def test_parse_mcq_options_reads_line_and_inline_layouts():
    assert metrics.parse_mcq_options(SU_QUESTION)["B"] == "漂泊天涯的游子的思乡愁苦"
    assert metrics.parse_mcq_options("问题：哪种物品与“丽水”相关？\nA. 玉 B. 剑 C. 金 D. 珠\n答案：") == {"A": "玉", "B": "剑", "C": "金", "D": "珠"}
    assert metrics.parse_mcq_options("no options here") == {}


@pytest.mark.parametrize(
    "output, letter",
    [
        ("漂泊天涯的游子的思乡愁苦", "B"),  # issue 8: the full text of option B
        ("漂泊天涯的游子的思鄉愁苦。", "B"), ("答案是归隐田园的闲适与快乐", "C"), ("这首小令抒发了久别重逢的喜悦。", "D"),
        ("B", "B"),  # a letter still wins over text
        (SU_QUESTION, None),  # the question echoed: every option's text, no answer
        ("边塞将士建功立业的豪情和久别重逢的喜悦", None),  # two options' texts
        ("思乡", None),  # part of an option is not the option
    ],
)
def test_strict_mcq_letter_reads_the_option_text_given_instead_of_its_letter(output, letter):
    assert metrics.strict_mcq_letter(output, options=metrics.parse_mcq_options(SU_QUESTION)) == letter


def test_single_character_options_match_only_as_the_whole_answer():
    options = {"A": "玉", "B": "剑", "C": "金", "D": "珠"}
    assert metrics.strict_mcq_letter("剑", options=options) == "B" and metrics.strict_mcq_letter("答案是珠。", options=options) == "D"
    assert metrics.strict_mcq_letter("金玉满堂", options=options) is None


@pytest.mark.parametrize(
    "reference, traditional, wrong",
    [
        ("夜深乾清宫里静", "夜深乾清宮裏靜", "夜深干清宫里静"),  # issue 8 item 4
        ("乾安县", "乾安縣", "干安县"),
        ("乾隆皇帝下江南", "乾隆皇帝下江南", "干隆皇帝下江南"),
        ("乾坤一掷", "乾坤一擲", "干坤一掷"),
        ("天气干燥", "天氣乾燥", "天气乾燥x"),  # 乾燥 is the traditional form of 干燥
        ("白发三千丈", "白髮三千丈", "白法三千丈"),
        ("后会有期", "後會有期", "候会有期"),
    ],
)
def test_strict_cer_scores_script_variants_zero_and_real_errors_above_zero(reference, traditional, wrong):
    assert metrics.strict_cer_percent([reference], [traditional]) == 0.0
    assert metrics.strict_cer_percent([reference], [wrong]) == pytest.approx(100 / len(reference))


def test_official_cer_keeps_the_inherited_t2s_fault():
    # OpenCC t2s turns the correct 乾 of the reference into 干: the official rule forgives the wrong reply.
    assert metrics.official_cer_percent(["夜深乾清宫里静"], ["夜深乾清宮裏靜"]) == pytest.approx(100 / 13)  # 7.69
    assert metrics.official_cer_percent(["夜深乾清宫里静"], ["夜深干清宫里静"]) == 0.0
    assert metrics.strict_cer_percent(["夜深乾清宫里静"], ["夜深乾清宮裏靜"]) == 0.0
    assert metrics.strict_cer_percent(["夜深乾清宫里静"], ["夜深干清宫里静"]) == pytest.approx(100 / 7)  # 14.29


def test_group_sizes_follow_the_breakdown_order():
    assert metrics.group_sizes(["词", "诗", "词", "文"], metrics.GENRE_ORDER) == {"诗": 1, "词": 2, "文": 1}


def test_strict_and_official_mcq_disagree_where_the_official_rule_is_lenient():
    assert metrics.official_mcq_correct("A", "ABCD") and metrics.strict_mcq_letter("ABCD") is None
    assert metrics.official_mcq_correct("A", "The answer is C") and metrics.strict_mcq_letter("The answer is C") == "C"


def test_cross_modal_consistency_follows_paper_equation_1():
    assert metrics.cross_modal_consistency(sqa=40, qa=80, su=60, lu=60, sr=45, lr=90) == pytest.approx((0.5 + 1 + 0.5) / 3 * 100)
    with pytest.raises(ValueError, match="LU"):
        metrics.cross_modal_consistency(1, 1, 1, 0, 1, 1)


def test_task_signature_names_rules_normaliser_and_versions():
    signature = metrics.task_signature("asr")
    assert signature.startswith("mcga-scoring:5|cer_official=")
    assert "opencc-" in signature and "whisper-normalizer-" in signature and "jiwer-" in signature
    assert "strict-norm:fullwidth+" in signature and "ref-as-written+reply-t2s-except-ref-chars" in signature
    assert "acc_strict=t2s+questions-dropped+declaration(last-if-retracted,hedged=ambiguous,boxed,any-script-wrappers)>conclusion(" in metrics.task_signature("su")
    assert "non-gb2312-variants(jp2t/tw2t/hk2t)-to-ref-chars" in signature
    assert signature.endswith("unit:percent")


def test_report_prints_group_sizes_next_to_each_group_cer():
    from mcga.report import breakdown_line

    values = {"cer_official_by_genre": {"诗": 12.345, "词": 0.0}, "n_by_genre": {"诗": 200, "词": 3}}
    assert breakdown_line(values, "genre") == "诗 12.3 (n=200) · 词 0.0 (n=3)"
    assert breakdown_line(values, "dynasty") is None


# ----------------------------------------------------------------- speed-ups keep the results (bench/README.md)
def _release_asr():
    from tests.release_shaped_mcga import release_rows

    rows = release_rows()["asr"]
    return [r["asr"] for r in rows], [r["asr_r"] for r in rows], [r["genre"] for r in rows], [r["dynasty"] for r in rows]


def test_character_edits_give_jiwer_cer_on_the_release_shaped_set_and_random_strings():
    import random

    import jiwer

    refs, outputs, genres, _ = _release_asr()
    official_refs, official_hyps = metrics._official_pairs(refs, outputs)
    assert metrics._corpus_cer_percent(official_refs, official_hyps) == 100.0 * jiwer.cer(official_refs, official_hyps)
    rng = random.Random(7)
    alphabet = "床前明月光 疑是地上霜ab"
    for _ in range(200):
        n = rng.randint(1, 5)
        r = [" " * rng.randint(0, 1) + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(n)]
        h = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 15))) for _ in range(n)]
        assert metrics._corpus_cer_percent(r, h) == 100.0 * float(jiwer.cer(r, h)), (r, h)
    # jiwer's edge case: no reference character at all -> the number of insertions
    assert metrics._corpus_cer_percent(["   "], ["ab"]) == 100.0 * float(jiwer.cer(["   "], ["ab"])) == 200.0


def test_cer_by_group_equals_the_corpus_cer_of_each_group_computed_alone():
    refs, outputs, genres, dynasties = _release_asr()
    for groups in (genres, dynasties):
        by_group = metrics.official_cer_percent_by_group(refs, outputs, groups)
        for group, value in by_group.items():
            index = [i for i, g in enumerate(groups) if g == group]
            assert value == metrics.official_cer_percent([refs[i] for i in index], [outputs[i] for i in index])
    assert metrics.official_cer_percent_by_group([], [], []) == {}
    with pytest.raises(ValueError, match="group labels"):
        metrics.official_cer_percent_by_group(["a"], ["a"], [])


def test_normalisation_memo_returns_what_a_cold_call_returns():
    from mcga import normalize

    refs, outputs, _, _ = _release_asr()
    warm = [normalize.normalize_for_cer(t) for t in refs + outputs] + [normalize.normalize_for_strict_cer(t) for t in refs + outputs]
    normalize.clear_normalisation_cache()
    strict_first = [normalize.normalize_for_strict_cer(t) for t in refs + outputs]  # fills the shared steps 2-4 memo first
    assert [normalize.normalize_for_cer(t) for t in refs + outputs] + strict_first == warm
    assert normalize.normalize_for_cer("舉頭望明月！") == "举头望明月" and normalize.normalize_for_cer(None) == ""


def test_symbol_table_equals_whisper_remove_symbols_on_every_code_point():
    from whisper_normalizer.basic import BasicTextNormalizer, remove_symbols

    from mcga import normalize

    every = "".join(chr(code) for code in range(0x110000))  # surrogates included
    for start in range(0, len(every), 4096):
        block = every[start:start + 4096]
        assert normalize._remove_symbols(block) == remove_symbols(block), hex(start)
    from tests.test_responses import _tricky_strings

    for text in _tricky_strings(20000):  # composition across characters: NFKC computed as NFC of NFKD
        assert normalize._remove_symbols(text) == remove_symbols(text), [hex(ord(c)) for c in text]
    library = BasicTextNormalizer()
    refs, outputs, _, _ = _release_asr()
    samples = refs + outputs + ["Ｈｅｌｌｏ, World! (aside) [noise] <tag> ﻻ ①②", "e\u0301 ñ \u0654 ٪ ￥ 🎵"]
    assert [normalize._whisper_basic()(t) for t in samples] == [library(t) for t in samples]


def _simplify_as_defined(reply, reference):
    """simplify_reply_against_reference without the shortcut (the former implementation)."""
    from mcga import normalize

    if not reply:
        return ""
    allowed = set(reference)
    converted = normalize._t2s().convert(reply)
    if len(converted) != len(reply):
        converted = "".join(normalize._t2s().convert(character) for character in reply)
    return "".join(original if original in allowed else simple for original, simple in zip(reply, converted))


def test_simplify_reply_shortcut_gives_the_defined_reply():
    import random

    from mcga.normalize import simplify_reply_against_reference

    rng = random.Random(8)
    characters = "乾干隆清宫宮里裏静靜夜深燥發发頭头髮后後"
    for _ in range(2000):
        reference = "".join(rng.choice(characters) for _ in range(rng.randint(0, 10)))
        reply = "".join(rng.choice(characters) for _ in range(rng.randint(0, 10)))
        assert simplify_reply_against_reference(reply, reference) == _simplify_as_defined(reply, reference), (reply, reference)


def test_memoised_corpus_edits_equal_cold_scores_and_unhashable_outputs_still_score():
    refs, outputs, genres, _ = _release_asr()
    warm = (metrics.official_cer_percent(refs, outputs), metrics.official_cer_percent_by_group(refs, outputs, genres, metrics.GENRE_ORDER))
    metrics.clear_scoring_cache()
    by_genre_first = metrics.official_cer_percent_by_group(refs, outputs, genres, metrics.GENRE_ORDER)
    assert (metrics.official_cer_percent(refs, outputs), by_genre_first) == warm
    assert metrics.official_cer_percent(refs[:10], outputs[:10]) != warm[0]  # another corpus is not served from the memo
    unhashable = [{"text": "举头望明月"}]
    assert metrics.official_cer_percent(["举头望明月"], unhashable) == metrics.official_cer_percent(["举头望明月"], [str(unhashable[0])])
    with pytest.raises(ValueError, match="empty corpus"):
        metrics.official_cer_percent([], [])
    with pytest.raises(ValueError, match="2 references but 1 hypotheses"):
        metrics.official_cer_percent(["a", "b"], ["a"])


# ------------------------------------------------------------------ issue 17 item 9: variant characters and number forms
@pytest.mark.parametrize(
    ("reference", "reply", "strict", "official"),
    [
        # OpenCC's variant tables: a Japanese shinjitai / Taiwan variant folds onto the reference character
        ("德行", "徳行", 0.0, 100 / 3),  # official: 2 of 3 space-joined characters ("德 行" vs "徳 行")
        ("说话", "説话", 0.0, 0.0),  # t2s already folds 説 (both rules)
        # a standard simplified character is never folded, though Japanese writes 予 for 豫
        ("豫章", "予章", 50.0, 100 / 3),
        # historical variants outside OpenCC's tables count as errors in both rules (documented)
        ("仙人", "僊人", 50.0, 100 / 3),
        ("清风", "淸风", 50.0, 100 / 3),
        # number forms are text: digits for 三百 are three insertions/substitutions in both rules (documented)
        ("三百篇", "300篇", 100.0, 80.0),
    ],
)
def test_variant_characters_fold_in_cer_strict_only_where_opencc_lists_them(reference, reply, strict, official):
    assert metrics.strict_cer_percent([reference], [reply]) == pytest.approx(strict)
    assert metrics.official_cer_percent([reference], [reply]) == pytest.approx(official)
