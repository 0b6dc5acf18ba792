"""MCGA judged tasks (S2TT, SEC): requests, output splitting, score extraction and SEC CER, pinned to the
official scorer's own behaviour (fixture made by running it unmodified; see fixtures/README_mcga_official_judged.md)."""

from __future__ import annotations

import json

import pytest

from mcga import judging
from tests.conftest import FIXTURES

OFFICIAL = json.loads((FIXTURES / "mcga_official_judged.json").read_text(encoding="utf-8"))
S2TT_KEYS = {"beauty_of_form": "llm_bf", "beauty_of_meaning": "llm_bm", "beauty_of_sound": "llm_bs"}
SEC_KEYS = {"sec_1": "sec_p", "sec_2": "sec_g", "sec_3": "sec_s"}


@pytest.mark.parametrize("case", [c for c in OFFICIAL["s2tt_cases"] if c["sent"]], ids=lambda c: c["output_name"])
def test_s2tt_requests_equal_what_the_official_script_sends(case):
    translation = judging.s2tt_translation(case["output"])
    for sent, official_key in zip(case["sent"], S2TT_KEYS):
        assert judging.s2tt_judge_messages(S2TT_KEYS[official_key], OFFICIAL["sec_source_row"]["asr"], translation) == sent["messages"]
        assert sent["max_tokens"] == judging.S2TT_JUDGE_MAX_TOKENS and sent["temperature"] == 0.0 and sent["model"] == "deepseek-chat"


@pytest.mark.parametrize("case", OFFICIAL["s2tt_cases"], ids=lambda c: f"{c['output_name']}-{list(c['replies'].values())[0]}")
def test_s2tt_score_is_the_first_digit_of_the_reply_as_official(case):
    for official_key, reply in case["replies"].items():
        assert judging.official_s2tt_score(reply) == case["official_scores"][official_key]


def test_s2tt_translation_is_text_after_the_last_marker():
    assert judging.s2tt_translation("译文：draft\n原文：x\n译文： Final line. ") == "Final line."
    assert judging.s2tt_translation("译文: ascii colon is not the marker") == "译文: ascii colon is not the marker"
    assert judging.s2tt_translation(None) == ""


@pytest.mark.parametrize("case", [c for c in OFFICIAL["sec_cases"] if c["sent"]], ids=lambda c: c["output_name"])
def test_sec_split_and_requests_equal_what_the_official_script_sends(case):
    row, parts = OFFICIAL["sec_source_row"], judging.split_sec_output(case["output"])
    for sent, (field, name) in zip(case["sent"], SEC_KEYS.items()):
        _, _, index, _ = judging.SEC_DIMENSIONS[name]
        assert judging.sec_judge_messages(name, row[field], parts[index]) == sent["messages"]
        assert sent["temperature"] == 0.0 and "max_tokens" not in sent


@pytest.mark.parametrize("case", [c for c in OFFICIAL["sec_cases"] if c["sent"]], ids=lambda c: c["output_name"])
def test_sec_sentence_cer_equals_official(case):
    official_cer = case["official_sec_score"]["cer"]  # official: round(cer * 100, 4)
    ours = judging.official_sec_cer_percent(OFFICIAL["sec_source_row"]["asr"], judging.split_sec_output(case["output"])[2])
    assert round(ours, 4) == official_cer


@pytest.mark.parametrize("case", OFFICIAL["sec_cases"], ids=lambda c: f"{c['output_name']}-{c['reply_set']}")
def test_sec_score_extraction_equals_official_except_no_number_is_judge_failed(case):
    for field, name in SEC_KEYS.items():
        official = case["official_sec_score"][field]
        ours = judging.official_sec_score(case["replies"][name])
        if official == "0" and not any(ch.isdigit() for ch in case["replies"][name]):
            assert ours is None  # official scores 0; we count judge_failed
        else:
            assert ours == float(official)


def test_sec_score_probes_against_official_extract_score():
    for reply, official in OFFICIAL["extract_score"].items():
        if reply.startswith("请求失败"):
            continue  # the official error text; we never score a failed call
        expected = None if official == "0" and not any(ch.isdigit() for ch in reply) else float(official)
        assert judging.official_sec_score(reply) == expected, reply


def test_markdown_table_without_bracket_scores_its_first_integer_like_official():
    # The official fallback reads the first integer: here the sentence number 1, not the total 4.
    reply = "| 句子编号 | 匹配状态 |\n|---|---|\n| 1 | 匹配 |\n| 3 | 不匹配 |\n最终总分：4分"
    assert judging.official_sec_score(reply) == 1.0
    assert judging.official_sec_score("最终总分：[4/5]") == 4.0


def test_official_failures_differ_from_ours_as_documented():
    # Official S2TT: a raising call gives None (missing), like our judge_failed.
    assert OFFICIAL["s2tt_failure"]["scores_when_form_call_raises"]["beauty_of_form"] is None
    # Official SEC: a call failing 3 times scores the first integer of the error text (429 here).
    assert OFFICIAL["sec_failure"]["sec_score_when_persona_call_raises_429"]["sec_1"] == "429"


def test_llm_b_and_llm_c_scale_means_as_official():
    # S2TT means 4, 3, 2 -> mean 3 -> x20 = 60.  SEC means 1.5 + 2 + 4 = 7.5 -> x10 = 75.
    assert judging.llm_b({"llm_bf": 4.0, "llm_bm": 3.0, "llm_bs": 2.0}) == pytest.approx(60.0)
    assert judging.llm_c({"sec_p": 1.5, "sec_g": 2.0, "sec_s": 4.0}) == pytest.approx(75.0)
    assert judging.llm_b({"llm_bf": 4.0, "llm_bm": None, "llm_bs": 2.0}) is None


def test_reference_metrics_are_sacrebleu_corpus_scores_with_signatures():
    identical = judging.s2tt_reference_metrics(["The moon is bright."], ["The moon is bright."])
    assert identical["chrf_pp"] == pytest.approx(100.0) and identical["bleu"] == pytest.approx(100.0)
    assert "nw:2" in identical["chrf_pp_signature"] and "tok:13a" in identical["bleu_signature"]
    with pytest.raises(ValueError, match="as many translations"):
        judging.s2tt_reference_metrics(["a"], [])


def test_prompt_hashes_change_when_a_template_changes(monkeypatch):
    before = judging.judge_prompt_hashes("s2tt")
    prompts = json.loads(json.dumps(judging.official_judge_prompts()))
    prompts["s2tt_beauty_prompts"]["beauty_of_form"] += " "
    monkeypatch.setattr(judging, "official_judge_prompts", lambda: prompts)
    after = judging.judge_prompt_hashes("s2tt")
    assert after["beauty_of_form"] != before["beauty_of_form"] and after["beauty_of_sound"] == before["beauty_of_sound"]
