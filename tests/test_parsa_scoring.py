"""Per-item records and per-task aggregates (parsa.scoring), with hand-computed values."""

import json
import re

import pytest

from parsa.scoring import aggregate, metric_names, score_response
from parsa.tasks import TASKS

SABK_OPTIONS = ["غزل/قصیده/قطعه", "مثنوی", "رباعی", "دوبیتی"]
LOOP_REFERENCE = "امروز هوا خیلی خوب است"


def _records(task, docs, responses):
    return [score_response(task, doc, response) for doc, response in zip(docs, responses)]


def _all(task, records):
    return {metric: aggregate(task, metric, records) for metric in metric_names(task)}


def test_metric_names_are_valid_lmms_eval_keys_with_the_headline_first():
    for name, spec in TASKS.items():
        names = metric_names(name)
        assert names[0] == spec.headline_metric
        assert len(names) == len(set(names))
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names)
        assert {"scored", "excluded", "refused", "json_fallback", "signature"} <= set(names)
    assert "macro_f1" in metric_names("sabk") and "macro_f1" not in metric_names("mcqa")


def test_register_paper_rule_strict_figures_baseline_and_counts():
    docs = [{"id": str(i), "reference": gold} for i, gold in enumerate(["formal", "formal", "informal", "informal"])]
    responses = ['{"register": "formal"}', '{"register": "informal"}', "```json\n{'register': 'محاوره‌ای'}\n```", "I'm sorry, I can't do that."]
    result = _all("register", _records("register", docs, responses))
    # scored 3: gold [F,F,I], pred [F,I,I]; F: P=1 R=1/2 F1=2/3; I: P=1/2 R=1 F1=2/3 -> macro 2/3
    assert result["macro_f1"] == pytest.approx(2 / 3)
    assert result["accuracy"] == pytest.approx(2 / 3)
    # strict: gold [F,F,I,I], pred [F,I,I,-]; F: P=1 R=1/2 F1=2/3; I: P=1/2 R=1/2 F1=1/2 -> (2/3+1/2)/2 = 7/12
    assert result["macro_f1_strict"] == pytest.approx(7 / 12)
    assert result["accuracy_strict"] == pytest.approx(0.5)
    # 2 formal / 2 informal -> majority 0.5; normalised (2/3 - 1/2) / (1/2) = 1/3
    assert result["majority_baseline"] == pytest.approx(0.5)
    assert result["normalised_score"] == pytest.approx(1 / 3)
    assert (result["scored"], result["excluded"], result["refused"], result["json_fallback"]) == (3, 0, 1, 1)
    low, high = result["macro_f1_ci95"]
    assert 0.0 <= low <= high <= 1.0


def test_sabk_accuracy_majority_baseline_and_option_text_macro_f1():
    golds = ["1", "1", "1", "2"]
    docs = [{"id": str(i), "reference": g, "options": SABK_OPTIONS} for i, g in enumerate(golds)]
    responses = ['{"answer": 1}', '{"answer": "Masnavi"}', '{"answer": "۱"}', '{"answer": "a ghazal, I think"}']
    result = _all("sabk", _records("sabk", docs, responses))
    # scored 3 (gold 1,1,1; pred 1,2,1): accuracy 2/3; strict 2/4
    assert result["accuracy"] == pytest.approx(2 / 3)
    assert result["accuracy_strict"] == pytest.approx(0.5)
    # gold option texts over all 4 items: 3x ghazal, 1x masnavi -> majority 3/4; normalised (2/3-3/4)/(1/4) = -1/3
    assert result["majority_baseline"] == pytest.approx(0.75)
    assert result["normalised_score"] == pytest.approx(-1 / 3)
    # option-text macro-F1 on scored: gold [g,g,g], pred [g,m,g]: g: P=1 R=2/3 F1=0.8; m: F1=0 -> 0.4
    assert result["macro_f1"] == pytest.approx(0.4)
    assert (result["scored"], result["excluded"], result["refused"]) == (3, 1, 0)


def test_mcqa_baseline_is_one_over_four_options():
    docs = [{"id": "1", "reference": "2", "options": ["a", "b", "c", "d"]}]
    result = _all("mcqa", _records("mcqa", docs, ['{"answer": 2}']))
    assert (result["accuracy"], result["majority_baseline"], result["normalised_score"]) == (1.0, 0.25, 1.0)


def test_asr_wer_cer_repetition_refusal_and_werfix():
    docs = [
        {"id": "1", "reference": "من به خانه رفتم"},
        {"id": "2", "reference": LOOP_REFERENCE},
        {"id": "3", "reference": "سلام"},
        {"id": "4", "reference": "كتاب خوبي است"},
    ]
    responses = [
        '{"transcription": "من خانه رفتم"}',
        LOOP_REFERENCE + " خیلی خوب است" * 20,  # plain text, a repetition loop
        "I'm sorry, I can't transcribe this audio.",
        '{"transcription": "کتاب خوبی است"}',
    ]
    records = _records("asr", docs, responses)
    result = _all("asr", records)
    # per item WER: 1/4, 60/5 = 12, refused, 0  -> mean (0.25 + 12 + 0)/3 = 4.083..., median 0.25
    assert result["wer_mean"] == pytest.approx(12.25 / 3)
    assert result["wer_median"] == pytest.approx(0.25)
    # CER: 3/15 = 0.2; 260 inserted chars (20 x " خیلی خوب است" = 20 x 13) / 22 ref chars; 0 -> mean
    assert result["cer_mean"] == pytest.approx((0.2 + 260 / 22 + 0.0) / 3)
    # WERfix: the loop collapses to the reference -> (0.25 + 0 + 0)/3
    assert result["wer_fix"] == pytest.approx(0.25 / 3)
    assert result["repetition_rate"] == pytest.approx(1 / 3)
    assert result["refusal_rate"] == pytest.approx(1 / 4)
    # strict: the refused item counts as WER 1 -> (0.25 + 12 + 1 + 0)/4
    assert result["wer_mean_strict"] == pytest.approx(13.25 / 4)
    assert (result["scored"], result["excluded"], result["refused"], result["json_fallback"]) == (3, 0, 1, 2)
    assert records[1]["repetition_loop"] is True and records[2]["wer"] is None


def test_asr_all_refused_reports_why_no_score():
    docs = [{"id": "1", "reference": "سلام"}, {"id": "2", "reference": "سلام"}]
    records = _records("asr", docs, ["I cannot help with that.", ""])
    assert aggregate("asr", "wer_median", records) == "not computed: no scored items (0 excluded, 2 refused of 2)"
    assert aggregate("asr", "refusal_rate", records) == 1.0
    assert aggregate("asr", "wer_mean_strict", records) == 1.0


def test_ner_f1_exact_and_strict():
    docs = [
        {"id": "1", "reference": json.dumps([{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت هفت"}], ensure_ascii=False)},
        {"id": "2", "reference": json.dumps([{"type": "person", "span": "علی"}], ensure_ascii=False)},
        {"id": "3", "reference": "[]"},
    ]
    responses = [
        '{"entities": [{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت"}]}',
        "Sorry, I cannot process this request.",
        '{"entities": []}',
    ]
    result = _all("ner", _records("ner", docs, responses))
    # scored items 1 and 3: matches 1, predicted 2, gold 2 -> P = R = F1 = 0.5
    assert (result["f1_exact"], result["precision_exact"], result["recall_exact"]) == (0.5, 0.5, 0.5)
    # strict adds item 2's gold entity as missed: P = 1/2, R = 1/3, F1 = 0.4
    assert result["f1_exact_strict"] == pytest.approx(0.4)
    assert (result["scored"], result["refused"]) == (2, 1)


def test_translation_chrf_bleu_refusal_and_comet_string(monkeypatch):
    monkeypatch.delenv("PARSA_COMET_MODEL", raising=False)
    docs = [
        {"id": "1", "transcript": "The weather is very nice today.", "reference": "امروز هوا خیلی خوب است"},
        {"id": "2", "transcript": "I am going home.", "reference": "من به خانه می‌روم"},
    ]
    responses = ['{"translation": "امروز هوا خیلی خوب است"}', '{"translation": "I am sorry, I cannot translate audio."}']
    result = _all("s2tt_en_fa", _records("s2tt_en_fa", docs, responses))
    assert result["chrf_pp"] == pytest.approx(100.0) and result["bleu"] == pytest.approx(100.0)  # the one scored item is exact
    assert 0.0 < result["chrf_pp_strict"] < 100.0  # the refused item enters as an empty hypothesis
    assert result["refusal_rate"] == 0.5
    assert isinstance(result["comet"], str) and result["comet"].startswith("not computed: ")
    assert "chrf_pp:{nrefs:1|case:mixed|eff:yes|nc:6|nw:2" in result["signature"] and "comet:not-computed" in result["signature"]


def test_records_are_json_serialisable_and_carry_id_status_prediction_gold():
    record = score_response("vazn", {"id": "v1", "reference": "2", "options": [str(i) for i in range(10)]}, "{'answer': 2,}")
    json.dumps(record, ensure_ascii=False)
    assert {k: record[k] for k in ("task", "id", "status", "prediction", "gold", "correct")} == {"task": "vazn", "id": "v1", "status": "scored", "prediction": 2, "gold": 2, "correct": True}


def test_invalid_gold_names_the_item():
    with pytest.raises(ValueError, match=r"PARSA emotion item 'e7': gold label 'joy' is not one of anger, fear"):
        score_response("emotion", {"id": "e7", "reference": "joy"}, '{"emotion": "anger"}')
    with pytest.raises(ValueError, match=r"PARSA mcqa item 'm1': reference '5' is not an option number 1..4"):
        score_response("mcqa", {"id": "m1", "reference": "5", "options": ["a", "b", "c", "d"]}, "1")


def test_aggregate_rejects_unknown_metrics_and_foreign_records():
    record = score_response("gender", {"id": "g", "reference": "male"}, '{"gender": "male"}')
    with pytest.raises(KeyError, match="has no metric 'wer_mean'"):
        aggregate("gender", "wer_mean", [record])
    with pytest.raises(ValueError, match="belongs to task 'gender', not 'emotion'"):
        aggregate("emotion", "macro_f1", [record])


def test_signature_states_rules_normaliser_versions_and_unit():
    signature = aggregate("emotion", "signature", [])
    assert signature.startswith("parsa-scoring:5|task:emotion|label=key|alias;macro_f1=sklearn-macro(labels=gold|pred,zero_division=0)")
    assert "|read=reasoning-removed,answer-tags-read,unfinished-excluded;several=last-if-retracted-else-excluded;near-json=json-repair(counted)" in signature
    assert "|norm:parsa-fa-2(" in signature and ";zwnj=join;ezafe-y=drop;affixes=join)" in signature and "|scikit-learn-" in signature and signature.endswith("|bootstrap:1000,seed:0,percentile95|unit:fraction")


# ------------------------------------------------------------------ Persian spelling variants (issue 8 item 4)
def _asr_record(reference, hypothesis):
    return score_response("asr", {"id": "a", "reference": reference}, json.dumps({"transcription": hypothesis}, ensure_ascii=False))


@pytest.mark.parametrize(
    ("reference", "hypothesis"),
    [("بندر\u200cها شلوغ است", "بندرها شلوغ است"),  # the example (WER 0.5 before)
     ("بندر\u200cها شلوغ است", "بندر ها شلوغ است"),
     ("من هر روز به مدرسه می\u200cروم", "من هر روز به مدرسه میروم"),
     ("من هر روز به مدرسه می\u200cروم", "من هر روز به مدرسه می روم"),
     ("این کتاب بزرگ\u200cتر است", "این کتاب بزرگتر است"),
     ("آنها نمی\u200cتوانند بیایند", "آنها نمی توانند بیایند"),
     ("نامه\u200cای نوشتم", "نامه ای نوشتم"),
     ("خانهٔ ما کوچک است", "خانه\u200cی ما کوچک است"),
     ("كتاب\u200cهاي من", "کتاب های من")],
)  # fmt: skip
def test_asr_one_word_in_zwnj_joined_or_spaced_spelling_is_wer_and_cer_zero(reference, hypothesis):
    record = _asr_record(reference, hypothesis)
    assert (record["wer"], record["cer"]) == (0.0, 0.0)


def test_asr_real_errors_still_count_after_joining():
    # ref بندرها|شلوغ|است (3 words), hyp بندرها|خلوت|است: one substitution -> WER 1/3
    assert _asr_record("بندر\u200cها شلوغ است", "بندر ها خلوت است")["wer"] == pytest.approx(1 / 3)
    # a dropped plural is a real error: بندرها vs بندر -> 1 substitution of 3 words
    assert _asr_record("بندر\u200cها شلوغ است", "بندر شلوغ است")["wer"] == pytest.approx(1 / 3)
    # CER: "بندرها شلوغ است" (15 chars) vs "بندر شلوغ است": 2 deletions -> 2/15
    assert _asr_record("بندر\u200cها شلوغ است", "بندر شلوغ است")["cer"] == pytest.approx(2 / 15)


@pytest.mark.parametrize("answer", ["گزینهٔ 2", "گزینه\u200cی 2", "گزینه ی ۲", "گزینۀ 2", "گزینه\u200c2", "گزینه شماره ۲", "گزینهٔ ۲)", "2"])
def test_option_number_with_ezafe_in_any_spelling_is_option_2(answer):
    doc = {"id": "m", "reference": "2", "options": ["اصفهان", "تهران", "شیراز", "تبریز"]}
    record = score_response("mcqa", doc, json.dumps({"answer": answer}, ensure_ascii=False))
    assert (record["status"], record["prediction"], record["correct"]) == ("scored", 2, True)


@pytest.mark.parametrize("answer", ["خانهٔ پدری", "خانه\u200cی پدری", "خانه ی پدری", "خانه پدری", "خانۀ پدري"])
def test_option_text_with_ezafe_zwnj_or_arabic_letters_matches_its_option(answer):
    doc = {"id": "m", "reference": "3", "options": ["مدرسه", "کتاب\u200cخانه", "خانه\u200cی پدری", "بازار"]}
    record = score_response("mcqa", doc, json.dumps({"answer": answer}, ensure_ascii=False))
    assert (record["prediction"], record["correct"]) == (3, True)
    record = score_response("mcqa", doc, json.dumps({"answer": "کتاب خانه"}, ensure_ascii=False))
    assert record["prediction"] == 2


@pytest.mark.parametrize("answer", ["غیر\u200cرسمی", "غیررسمی", "غیر رسمی", "محاوره ای", "محاوره\u200cای", "محاورهای"])
def test_persian_label_in_any_zwnj_spelling_is_the_same_label(answer):
    record = score_response("register", {"id": "r", "reference": "informal"}, json.dumps({"register": answer}, ensure_ascii=False))
    assert (record["prediction"], record["correct"]) == ("informal", True)


def test_ner_span_in_another_zwnj_spelling_matches():
    doc = {"id": "n", "reference": json.dumps([{"type": "place_name", "span": "کتاب\u200cخانهٔ ملی"}], ensure_ascii=False)}
    record = score_response("ner", doc, json.dumps({"entities": [{"type": "place_name", "span": "کتاب خانه ی ملي"}]}, ensure_ascii=False))
    assert (record["matches"], record["n_predicted"], record["n_gold"]) == (1, 1, 1)
    record = score_response("ner", doc, json.dumps({"entities": [{"type": "place_name", "span": "کتابخانه مرکزی"}]}, ensure_ascii=False))
    assert record["matches"] == 0  # another library is another entity


EN_FA_REFERENCES = ["آیا امروز به کتابخانه می\u200cروی؟", "کودکان در پارک بازی می\u200cکنند و مادرشان کتاب می\u200cخواند."]
EN_FA_HYPOTHESES = ["آیا امروز به کتابخانه می\u200cروی ؟",  # a space before ؟
                    "كودكان در پارك بازي مي\u200cكنند و مادرشان كتاب مي\u200cخواند."]  # Arabic kaf and yeh  # fmt: skip


def _translation_result(task, references, hypotheses):
    docs = [{"id": str(i), "reference": r, "transcript": "source"} for i, r in enumerate(references)]
    return _all(task, _records(task, docs, [json.dumps({"translation": h}, ensure_ascii=False) for h in hypotheses]))


def test_en_fa_spelling_variants_cost_nothing_and_the_raw_sacrebleu_figure_is_reported_beside():
    result = _translation_result("s2tt_en_fa", EN_FA_REFERENCES[:1], EN_FA_HYPOTHESES[:1])
    assert result["bleu"] == pytest.approx(100.0) and result["chrf_pp"] == pytest.approx(100.0)
    # raw 13a BLEU: ref 5 tokens, hyp 6 (the ؟ split off); matches 4/6, 3/5, 2/4, 1/3; BP 1
    # -> (4/6 * 3/5 * 2/4 * 1/3) ** (1/4) = (1/15) ** 0.25 = 0.50813 -> 50.81
    assert result["bleu_raw"] == pytest.approx(100 * (1 / 15) ** 0.25)
    result = _translation_result("s2tt_en_fa", EN_FA_REFERENCES[1:], EN_FA_HYPOTHESES[1:])
    assert result["bleu"] == pytest.approx(100.0) and result["chrf_pp"] == pytest.approx(100.0) and result["chrf_pp_strict"] == pytest.approx(100.0)
    # raw: only در، و، مادرشان match (3 of 9 unigrams, no longer n-gram in common): sacrebleu's exp smoothing
    # gives 9.98 BLEU; chrF++ 43.75 (sacrebleu 2.6.0)
    assert result["bleu_raw"] == pytest.approx(9.980099403873663)
    assert result["chrf_pp_raw"] == pytest.approx(43.75387058189809)
    assert result["chrf_pp_ci95"] == [pytest.approx(100.0), pytest.approx(100.0)]
    assert "text(fa-target)=norm-both-sides,raw=unnormalised" in result["signature"] and "|norm:parsa-fa-2(" in result["signature"]


def test_en_fa_real_differences_still_count():
    result = _translation_result("s2tt_en_fa", ["کودکان در پارک بازی می\u200cکنند."], ["کودکان در خانه بازی می\u200cکنند."])
    # normalised: کودکان در پارک بازی میکنند vs کودکان در خانه بازی میکنند: 4/5, 2/4, 1/3, 0/2 -> smoothed, < 100
    assert result["bleu"] < 60 and result["chrf_pp"] < 80


def test_fa_en_is_not_normalised_so_raw_equals_reported():
    result = _translation_result("s2tt_fa_en", ["Are you going to the library today?"], ["are you going to the library today ?"])
    assert result["bleu"] == result["bleu_raw"] and result["chrf_pp"] == result["chrf_pp_raw"]
    assert result["bleu"] < 100  # case and the space before ? count, as in plain sacrebleu


# ------------------------------------------------------------------ issue 17: readings counted; intervals honest
def test_out_of_set_label_is_excluded_from_the_headline_and_kept_as_a_class_beside_it():
    docs = [{"id": str(i), "reference": gold} for i, gold in enumerate(["anger", "fear", "sadness"])]
    responses = ['{"emotion": "anger"}', '{"emotion": "fear"}', '{"emotion": "contempt"}']
    result = _all("emotion", _records("emotion", docs, responses))
    # headline (§4.2, no valid label -> excluded): scored anger->anger, fear->fear: macro-F1 1.0
    assert (result["macro_f1"], result["scored"], result["excluded"], result["out_of_set_labels"]) == (1.0, 2, 1, 1)
    # invented as a class: labels {anger, fear, sadness, contempt}: F1 1, 1, 0, 0 -> 0.5
    assert result["macro_f1_invented_as_classes"] == pytest.approx(0.5)
    # strict: gold [a, f, s], pred [a, f, -] over {a, f, s}: F1 1, 1, 0 -> 2/3
    assert result["macro_f1_strict"] == pytest.approx(2 / 3)


def test_ambiguous_and_repaired_answers_are_counted():
    docs = [{"id": str(i), "reference": "1", "options": ["a", "b", "c", "d"]} for i in range(4)]
    responses = ['{"answer": 1}\n{"answer": 2}', '{"answer": 1}\nWait, no.\n{"answer": 1, }', '{"answer": 1', '{"answer": "1 or 3"}']
    result = _all("mcqa", _records("mcqa", docs, responses))
    assert (result["scored"], result["excluded"], result["ambiguous_answers"], result["repaired_json"]) == (2, 2, 2, 2)
    assert result["accuracy"] == 1.0


def test_unfinished_reasoning_is_excluded_with_its_own_reason():
    record = score_response("asr", {"id": "a", "reference": "سلام"}, '{"transcription": "سلام"}', unfinished_reasoning=True)
    assert (record["status"], record["reason"], record["wer"]) == ("excluded", "unfinished_reasoning", None)


@pytest.mark.parametrize(("correct", "n", "interval"), [(4, 4, [0.5101091635454027, 1.0]), (0, 4, [0.0, 0.4898908364545973]), (1, 1, [0.20654931437723745, 1.0])])
def test_accuracy_interval_is_wilson_with_width_at_0_of_n_and_n_of_n(correct, n, interval):
    # Wilson (1927) 95 %: centre (k + z²/2) / (n + z²), half-width z/(n + z²) * sqrt(k(n-k)/n + z²/4), z = 1.95996
    docs = [{"id": str(i), "reference": "1", "options": ["a", "b", "c", "d"]} for i in range(n)]
    responses = ['{"answer": 1}'] * correct + ['{"answer": 2}'] * (n - correct)
    result = _all("mcqa", _records("mcqa", docs, responses))
    assert result["accuracy_ci95"] == [pytest.approx(interval[0]), pytest.approx(interval[1])]
    assert result["ci_flags"] == {"accuracy_ci95": f"{n} scored items, fewer than 30: a rough guide, not a 95% interval"}


def test_degenerate_bootstrap_and_small_samples_are_flagged_and_large_ones_are_not():
    one = _all("asr", _records("asr", [{"id": "a", "reference": "سلام دنیا"}], ['{"transcription": "سلام دنیا"}']))
    assert one["wer_median_ci95"] == [0.0, 0.0]
    assert one["ci_flags"]["wer_median_ci95"].startswith("1 scored items, fewer than 30") and "degenerate bootstrap" in one["ci_flags"]["wer_median_ci95"]
    docs = [{"id": str(i), "reference": "1", "options": ["a", "b", "c", "d"]} for i in range(40)]
    many = _all("mcqa", _records("mcqa", docs, ['{"answer": 1}'] * 30 + ['{"answer": 2}'] * 10))
    assert many["ci_flags"] == {} and many["accuracy_ci95"][0] < 0.75 < many["accuracy_ci95"][1]


def test_every_metric_has_one_aggregation_and_one_hook_that_runs_it():
    # the hooks bind each parsa_agg_<metric> to its scoring.agg_<metric> by name (the export keeps only those its YAML
    # lists), so a metric added to a task without its hook would fail here, not in an lmms-eval run
    from lmms_eval_tasks.parsa import hooks
    from parsa import scoring

    names = {metric for task in TASKS for metric in scoring.metric_names(task)}
    assert set(scoring.AGGREGATIONS) == names
    assert {metric: getattr(hooks, f"parsa_agg_{metric}").args[0] for metric in names} == {metric: scoring.AGGREGATIONS[metric] for metric in names}
