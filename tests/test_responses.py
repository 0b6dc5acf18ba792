"""Response diagnostics shared by every benchmark (audio_bench_core/responses.py): failed generations, empty, echoed
prompts, copied format placeholders, identical answers, invalid text; and their integration in the MCGA and PARSA
hooks. Expected values are counted by hand in the comments."""

import json

import pytest
from loguru import logger

from audio_bench_core import responses
from lmms_eval_tasks import results_writer
from lmms_eval_tasks.mcga import hooks as mcga_hooks
from lmms_eval_tasks.parsa import hooks as parsa_hooks
from mcga import prompts as mcga_prompts
from parsa import prompts as parsa_prompts
from parsa.tasks import TASKS

REQUEST_FAILED = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."
ASR_SYSTEM = "You are a speech recognition model. Do not provide any explanations or notes."
ASR_INSTRUCTION = "Transcribe the Chinese audio into Chinese text."


@pytest.fixture
def warnings():
    messages = []
    handler = logger.add(lambda m: messages.append(str(m)), level="WARNING")
    yield messages
    logger.remove(handler)


# ------------------------------------------------------------------------------------------- one response
def test_failure_placeholders_are_read_with_their_error():
    assert responses.generation_failure(REQUEST_FAILED) == "request failed after 5 retries: Connection error."
    assert responses.generation_failure(f"{responses.GENERATION_FAILED_PREFIX} AttributeError: 'talker'") == "generation raised: AttributeError: 'talker'"
    assert responses.generation_failure("") is None and responses.generation_failure("李白") is None
    assert responses.generation_failure(f"The server said {REQUEST_FAILED}") is None  # only a response that *is* the placeholder


def test_lone_surrogates_are_replaced_and_counted_pairs_are_joined():
    assert responses.valid_text("李白\ud800") == ("李白\ufffd", 1)
    assert responses.valid_text("\udfff a \ud83d") == ("\ufffd a \ufffd", 2)
    assert responses.valid_text("x\ud83d\ude00y") == ("x\U0001f600y", 0)  # a UTF-16 pair is one character, not invalid
    assert responses.valid_text("\ufffd\udc00") == ("\ufffd\ufffd", 1)  # a U+FFFD already there is not counted
    assert responses.valid_text("ok") == ("ok", 0)


def test_results_writer_replaces_lone_surrogates_and_leaves_valid_data_untouched(monkeypatch):
    received = []
    writer = results_writer._valid_utf8_writer(lambda self, *args, **kwargs: received.append((args, kwargs)), "save_results_samples")
    walks = []
    walk = results_writer._make_valid_in_place
    monkeypatch.setattr(results_writer, "_make_valid_in_place", lambda value, counter: walks.append(value) or walk(value, counter))

    clean = [{"resps": [["李白"]], "doc": {"id": 3, "score": 0.5, "tags": ("a", None)}}]
    writer(None, clean, task_name="mcga_sqa")
    assert received[-1] == ((clean,), {"task_name": "mcga_sqa"}) and received[-1][0][0] is clean and walks == []

    dirty = [{"resps": [["李白\ud800"]], "doc": {"k\udfff": ("x\ud83d\ude00y",)}}]
    writer(None, dirty, task_name="mcga_sqa")
    assert received[-1][0][0] is dirty  # fixed in place: lmms-eval goes on using the objects it passed
    assert dirty == [{"resps": [["李白\ufffd"]], "doc": {"k\ufffd": ("x\U0001f600y",)}}] and walks
    walks.clear()
    writer(None, {(1, 2): "tuple keys: json.dumps refuses, so the walk decides"})
    assert walks

    # lmms-eval's aggregated writer gets every task's samples only to hash them: they are neither checked nor walked
    aggregated = results_writer._valid_utf8_writer(lambda self, results, samples: received.append((results, samples)), "save_results_aggregated", ("samples",))
    walks.clear()
    samples = {"mcga_sqa": [{"doc_hash": "ab\ud800"}]}
    aggregated(None, {"results": {"mcga_sqa": {"alias": "a\ud800"}}}, samples)
    assert received[-1] == ({"results": {"mcga_sqa": {"alias": "a\ufffd"}}}, {"mcga_sqa": [{"doc_hash": "ab\ud800"}]})
    assert received[-1][1] is samples and walks and not any(value is samples or value == "ab\ud800" for value in walks)


def test_normalised_text_keeps_letters_and_digits_only():
    assert responses.normalised_text('{"answer": 3}') == "answer 3"
    assert responses.normalised_text("  Code_Switched!! ") == "code switched"
    assert responses.normalised_text("床前明月光，疑是地上霜。") == "床前明月光 疑是地上霜"


def test_echo_overlap_counts_character_trigrams():
    alphabet = "abcdefghijklmnopqrstuvwxyz"  # 24 distinct 3-grams
    assert responses.echo_overlap("abcdefghijklm", alphabet) == (1.0, pytest.approx(11 / 24))  # 11 3-grams, all in it
    assert responses.echo_overlap("abcdefghijklmnopqr", alphabet) == (1.0, pytest.approx(16 / 24))
    # 20 3-grams: abc..pqr (16) and xyz are in the alphabet, qrx, rxy, yzw are not
    assert responses.echo_overlap("abcdefghijklmnopqrXYZW", alphabet) == (pytest.approx(17 / 20), pytest.approx(17 / 24))
    assert not responses.echoes_prompt("abcdefghijklm", [alphabet])  # covers 46 % < 60 %
    assert responses.echoes_prompt("abcdefghijklmnopqr", [alphabet]) and responses.echoes_prompt("abcdefghijklmnopqrXYZW", [alphabet])


@pytest.mark.parametrize(
    ("response", "echo"),
    [
        (ASR_INSTRUCTION, True),
        ("Transcribe this Chinese audio into Chinese text", True),  # one word changed, no full stop
        ("Sure: transcribe the Chinese audio into Chinese text.", True),
        (f"{ASR_INSTRUCTION} {ASR_INSTRUCTION} {ASR_INSTRUCTION}", True),  # an echo loop
        (f"{ASR_SYSTEM}\n{ASR_INSTRUCTION}", True),  # system and user text together
        ("Do not provide any explanations or notes.", True),  # one sentence of the system prompt
        ("Transcribe the audio", False),  # too little of any prompt text
        ("床前明月光，疑是地上霜。举头望明月，低头思故乡。", False),
        ("", False),
    ],
)
def test_echo_of_the_mcga_asr_prompt(response, echo):
    texts = [ASR_SYSTEM, ASR_INSTRUCTION, *responses.sentences(ASR_SYSTEM), *responses.sentences(ASR_INSTRUCTION)]
    assert responses.echoes_prompt(response, texts) is echo


def test_short_instructions_count_only_when_echoed_exactly():
    question = "这首诗的体裁是什么？"
    assert responses.echoes_prompt("这首诗的体裁是什么", [question])
    assert not responses.echoes_prompt("这首诗的体裁是诗", [question])  # restates the question, then answers


def test_sentences_split_instructions_not_words():
    assert responses.sentences(ASR_SYSTEM) == ["You are a speech recognition model.", "Do not provide any explanations or notes."]
    assert responses.sentences("请将这段语音翻译为英文。翻译时：\n形美：工整。\n\n原文：") == ["请将这段语音翻译为英文。", "翻译时：", "形美：工整。", "原文："]


def test_format_placeholders_and_copies():
    schema = parsa_prompts.answer_schema("ner")
    assert responses.format_placeholders(schema) == ["entity type from the list", "entity text in Persian"]
    assert responses.format_placeholders(parsa_prompts.answer_schema("mcqa")) == ["<option number>"]
    assert responses.format_placeholders(parsa_prompts.answer_schema("emotion", "cot")) == ["your step-by-step reasoning", "one emotion from the list"]
    translation = responses.format_placeholders(parsa_prompts.answer_schema("s2tt_fa_en"))
    assert translation == ["your English translation here"]
    assert responses.copied_placeholder('{"translation": "your English translation here"}', translation) == "your English translation here"
    assert responses.copied_placeholder('{"translation": "Your english   translation HERE"}', translation) == "your English translation here"
    assert responses.copied_placeholder('{"translation": "The weather is nice today."}', translation) is None
    assert responses.copied_placeholder('{"answer": <option number>}', ["<option number>"]) == "<option number>"
    assert responses.copied_placeholder("The option number is 3", ["<option number>"]) is None  # the brackets belong to it
    assert responses.copied_placeholder("床前明月光｜情感意境分析", mcga_hooks.FORMAT_PLACEHOLDERS["sec"]) is None
    assert responses.copied_placeholder("原文｜情感意境分析", mcga_hooks.FORMAT_PLACEHOLDERS["sec"]) == "原文|情感意境分析"  # full-width bar


def test_every_placeholder_comes_from_its_prompt():
    for task, placeholders in mcga_hooks.FORMAT_PLACEHOLDERS.items():
        assert all(p in mcga_prompts.task_prompt(task).instruction for p in placeholders)
    for task, spec in TASKS.items():
        for setting in spec.settings:
            schema = parsa_prompts.answer_schema(task, "cot" if setting == "cot" else "audio")
            assert responses.format_placeholders(schema), (task, setting)  # every PARSA format has a placeholder


# ------------------------------------------------------------------------------------------- identical answers
def records(answers, golds, closed=False, clips=None):
    clips = clips or [f"clip{i}.wav" for i in range(len(answers))]
    return [
        responses.check_response(a, task="t", doc_id=i, clip=c, gold=g, closed_answer_set=closed).record
        for i, (a, g, c) in enumerate(zip(answers, golds, clips))
    ]


def test_one_answer_for_many_distinct_clips_is_flagged():
    # open answers: 6 clips, 6 different golds, the same text 4 times (67 % > 50 % and > 1/6 + 10 points)
    count, example = responses.identical_answer_count(records(["好", "好", "好", "好", "甲", "乙"], list("abcdef")))
    assert count == 4 and example["preview"] == "好"
    # normalised: case, spaces and punctuation do not make answers different
    assert responses.identical_answer_count(records(['{"answer": 1}', "{'answer':1}", "ANSWER 1", '{"answer": 1}', "x"], list("abcde")))[0] == 4


def test_legitimately_identical_answers_are_not_flagged():
    # one text read by three speakers, transcribed identically: the gold repeats as much as the answer (50 %, not > 50 %)
    assert responses.identical_answer_count(records(["甲", "甲", "甲", "乙", "丙", "丁"], ["甲", "甲", "甲", "乙", "丙", "丁"]))[0] == 0
    # open answers at exactly half: not more than 50 %
    assert responses.identical_answer_count(records(["x", "x", "x", "y", "z", "w"], list("abcdef")))[0] == 0
    # fewer than 5 distinct inputs: too few to tell
    assert responses.identical_answer_count(records(["x"] * 4, list("abcd")))[0] == 0
    # failed and empty responses are counted elsewhere, not as an identical answer
    assert responses.identical_answer_count(records([REQUEST_FAILED] * 4 + ["", "a", "b"], list("abcdefg")))[0] == 0


def test_closed_answer_sets_flag_only_a_near_constant_answer():
    # gender, gold 5 male / 5 female: a working but biased model (8 of 10 "male") is not flagged; 10 of 10 is
    golds = ["male"] * 5 + ["female"] * 5
    assert responses.identical_answer_count(records(["male"] * 8 + ["female"] * 2, golds, closed=True))[0] == 0
    assert responses.identical_answer_count(records(["male"] * 10, golds, closed=True))[0] == 10
    # the same 10 of 10 on an open task would be flagged at 80 % already
    assert responses.identical_answer_count(records(["male"] * 8 + ["a", "b"], golds))[0] == 8
    # gold 85 % neutral: answering neutral 95 % is within gold share + 10 points, not flagged
    golds = ["neutral"] * 17 + ["anger"] * 3
    assert responses.identical_answer_count(records(["neutral"] * 19 + ["anger"], golds, closed=True))[0] == 0


# ------------------------------------------------------------------------------------------- counts and failed runs
def test_aggregations_count_and_warn(warnings):
    items = records([REQUEST_FAILED, "", "  ", "甲\ud800", "乙", "丙"], list("abcdef"))  # 3 of 6 failed or empty: not a failed run
    assert [r["failure"] is not None for r in items] == [True, False, False, False, False, False]
    assert responses.agg_failed_generations(items) == 1 and responses.agg_empty_responses(items) == 2
    assert responses.agg_invalid_text_replaced(items) == 1 and responses.agg_echoed_prompts(items) == 0 and responses.agg_identical_answers(items) == 0
    text = "\n".join(warnings)
    assert "t: 1 of 6 responses (16.7%) are failed generations, scored as empty answers; first (document 0): request failed after 5 retries: Connection error." in text
    assert "t: 2 of 6 responses (33.3%) are empty" in text
    assert "t: 1 invalid code point(s) (lone surrogates) in 1 response(s) replaced by U+FFFD" in text


def test_failed_generation_is_scored_as_the_empty_answer():
    checked = responses.check_response(REQUEST_FAILED, task="t", doc_id="x", clip=None, gold="李白", prompt_texts=["这首诗的作者是谁？"])
    assert checked.answer == "" and checked.record["failure"] and not checked.record["empty"] and checked.record["answer_key"] is None
    assert set(checked.metrics()) == set(responses.DIAGNOSTIC_METRICS)


def test_mostly_failed_or_empty_task_is_a_failed_run():
    # 2 failed + 1 empty of 5 = 60 % > 50 %
    with pytest.raises(responses.FailedRunError, match=r"^t: failed run: 3 of 5 responses \(60.0%\) are failed generations \(2\) or empty \(1\).*First error \(document 1\): request failed after 5 retries: Connection error\.$"):
        responses.agg_failed_generations(records(["a", REQUEST_FAILED, REQUEST_FAILED, "", "b"], list("abcde")))
    with pytest.raises(responses.FailedRunError, match="No error was returned: the model gave empty text"):
        responses.agg_empty_responses(records(["", "", "x"], list("abc")))
    assert responses.agg_failed_generations(records(["a", REQUEST_FAILED, "", "b"], list("abcd"))) == 1  # 50 % is not more than half


def test_unclosed_think_block_counts_as_unfinished_reasoning_and_leaves_no_answer(warnings):
    # Qwen3-style draft cut at the token limit, a Kimi draft closed, a pre-filled </think>, a plain answer
    cut = '<think>\nThe speaker sounds angry, so {"emotion": "anger"} but'
    items = records([cut, "◁think▷草稿◁/think▷诗", "draft</think>\n\nB", "A"], list("abcd"))
    # the whole cut-off draft, the Kimi block with its tags, the pre-filled draft with its closing tag, nothing
    expected = [(True, False, len(cut)), (False, False, len("◁think▷草稿◁/think▷")), (False, False, len("draft</think>")), (False, False, 0)]
    assert [(r["unfinished_reasoning"], r["empty"], r["reasoning_chars"]) for r in items] == expected
    checked = responses.check_response("<think>it is B", task="t", doc_id="x", clip=None, gold="B")
    assert (checked.answer, checked.record["unfinished_reasoning"], checked.record["answer_key"]) == ("", True, None)
    assert responses.agg_unfinished_reasoning(items) == 1
    assert "t: 1 of 4 responses (25.0%) stopped inside their reasoning with no final answer (token limit?); first (document 0, 61 reasoning characters)" in "\n".join(warnings)


def test_mostly_unfinished_reasoning_is_a_failed_run_that_says_to_raise_the_limit():
    with pytest.raises(responses.FailedRunError, match=r"^t: failed run: 2 of 3 responses \(66.7%\) are failed generations \(0\) or empty \(0\), unfinished reasoning \(2\).*raise the generation limit"):
        responses.agg_unfinished_reasoning(records(["<think>a", "<thinking>b", "C"], list("abc")))


# ------------------------------------------------------------------------------------------- the hooks
def mcga_docs(task, mode="audio"):
    return list(getattr(mcga_hooks, f"mcga_{task}{'_text' if mode == 'text' else ''}_docs")(None))


def test_mcga_hooks_score_a_failed_generation_as_empty_and_flag_echoes():
    doc = mcga_docs("asr")[0]
    result = mcga_hooks.mcga_process_results(doc, [REQUEST_FAILED])
    assert list(result)[: len(responses.DIAGNOSTIC_METRICS)] == list(responses.DIAGNOSTIC_METRICS)  # diagnostics first
    assert result["failed_generations"]["task"] == "mcga_asr" and result["cer_official"]["output"] == ""
    assert mcga_hooks.mcga_process_results(doc, [ASR_INSTRUCTION])["echoed_prompts"]["echo"] is True
    sqa = mcga_docs("sqa", "text")[0]
    assert mcga_hooks.mcga_process_results(sqa, [REQUEST_FAILED])["f1_official"] == 0.0
    assert mcga_hooks.mcga_process_results(sqa, ["这首诗的作者是谁？"])["echoed_prompts"]["task"] == "mcga_sqa_text"


def test_gold_answers_of_every_mcga_task_are_never_degenerate():
    answers = {"asr": "asr", "s2tt": "s2tt", "sec": "sec", "sqa": "sqa_a", "su": "su_a", "sr": "sr_a"}
    for task, field in answers.items():
        for mode in ("audio", "text") if task in ("sqa", "su", "sr") else ("audio",):
            for doc in mcga_docs(task, mode):
                record = mcga_hooks._checked_response(doc, doc[field]).record
                assert (record["echo"], record["placeholder"]) == (False, None), (task, mode, doc["id"])
    su = mcga_docs("su")[0]  # the full text of the right option instead of its letter is an answer, not an echo
    assert mcga_hooks._checked_response(su, "B. 漂泊天涯的游子的思乡愁苦").record["echo"] is False
    assert mcga_hooks._checked_response(su, su["su"]).record["echo"] is True


def parsa_docs(task, setting):
    return list(getattr(parsa_hooks, f"{parsa_hooks.lmms_task_name(task, setting)}_docs")(None))


def test_parsa_gold_answers_pass_and_echoes_and_placeholders_are_caught_in_every_task_and_setting():
    for task, spec in TASKS.items():
        for setting in spec.settings:
            for doc in parsa_docs(task, setting):
                gold = parsa_prompts.demo_answer_json(task, doc)
                record = parsa_hooks._checked_response(doc, gold).record
                assert (record["echo"], record["placeholder"]) == (False, None), (task, setting, doc["id"])
                user_text = parsa_hooks._user_text(doc)
                assert parsa_hooks._checked_response(doc, user_text).record["echo"] is True, (task, setting)
                first_sentence = responses.sentences(user_text.split("\n")[0])[1]  # the instruction after the role sentence
                assert parsa_hooks._checked_response(doc, first_sentence).record["echo"] is True, (task, setting)
                schema = parsa_prompts.answer_schema(task, "cot" if setting == "cot" else "audio")
                assert parsa_hooks._checked_response(doc, schema).record["placeholder"], (task, setting)


def test_parsa_failed_generation_is_excluded_with_its_reason_not_parsed():
    doc = parsa_docs("vazn", "audio")[0]
    result = parsa_hooks.parsa_process_results(doc, [f'{REQUEST_FAILED} {{"answer": 1}}'])
    assert result["accuracy"]["status"] == "excluded" and result["accuracy"]["reason"] == "generation_failed"
    assert result["failed_generations"]["task"] == "parsa_vazn" and result["failed_generations"]["failure"].startswith("request failed")
    asr = parsa_docs("asr", "audio")[0]  # an empty ASR answer is a refusal under the paper's rule (no Persian script)
    assert parsa_hooks.parsa_process_results(asr, [REQUEST_FAILED])["wer_mean"]["status"] == "refused"


def test_logged_records_are_json():
    doc = parsa_docs("gender", "audio")[0]
    json.dumps(parsa_hooks.parsa_process_results(doc, ['{"gender": "male"}\ud800']), ensure_ascii=False).encode("utf-8")


# ------------------------------------------------------------------------------------------- shortcuts equal the definitions
def _echoes_prompt_as_defined(response, prompt_texts):
    """echoes_prompt without shortcuts: every source normalised and compared in full (the former implementation)."""
    answer = responses.normalised_text(response)
    if len(answer) < 2:
        return False
    sources = [t for t in prompt_texts if t] + ([" ".join(prompt_texts)] if len(prompt_texts) > 1 else [])
    for source in sources:
        normalised = responses.normalised_text(source)
        if answer == normalised:
            return True
        if len(normalised) >= responses.ECHO_MIN_SOURCE_CHARS:
            from_prompt, covered = responses.echo_overlap(answer, source)
            if from_prompt >= responses.ECHO_RESPONSE_FROM_PROMPT and covered >= responses.ECHO_PROMPT_COVERED:
                return True
    return False


def _copied_placeholder_as_defined(response, placeholders):
    text = responses._placeholder_form(response)
    for placeholder in placeholders:
        if placeholder.strip() and responses._placeholder_form(placeholder) in text:
            return placeholder
    return None


def test_echo_and_placeholder_shortcuts_give_the_defined_answers_on_random_texts():
    import random

    rng = random.Random(41)
    words = ["Transcribe", "the", "Chinese", "audio", "into", "text.", "你好", "世界。", "答案", "سلام", "دنیا،", "A", "a", "1", "_", "  ", "\u200c", "Ｆｕｌｌ", "ﻻ"]
    prompt_pool = [ASR_SYSTEM, ASR_INSTRUCTION, *responses.sentences(ASR_SYSTEM), "这首诗的体裁是什么？", "Answer with the option number."]
    echoes = 0
    for _ in range(4000):
        texts = rng.sample(prompt_pool, rng.randint(0, 3)) + [" ".join(rng.choice(words) for _ in range(rng.randint(0, 14))) for _ in range(rng.randint(0, 2))]
        rng.shuffle(texts)
        if texts and rng.random() < 0.5:  # near the thresholds: a prompt text cut, edited, prefixed, repeated
            source = rng.choice(texts)
            cut = source[rng.randint(0, len(source) // 2):len(source) - rng.randint(0, len(source) // 3)]
            response = rng.choice(["", "Sure: ", "你好 "]) + cut * rng.randint(1, 3) + rng.choice(["", " ok", " 世界"])
        else:
            response = " ".join(rng.choice(words) for _ in range(rng.randint(0, 20)))
        expected = _echoes_prompt_as_defined(response, texts)
        echoes += expected
        assert responses.echoes_prompt(response, texts) is expected, (response, texts)
        assert responses.check_response(response, task="t", doc_id=1, clip=None, gold="g", prompt_texts=texts).record["echo"] == (bool(response.strip()) and expected)
        placeholders = rng.sample(["", " ", "your answer here", "<option number>", "答案", "Ｔｅｘｔ"], rng.randint(0, 3))
        assert responses.copied_placeholder(response, placeholders) == _copied_placeholder_as_defined(response, placeholders)
    assert 300 < echoes < 3700  # both outcomes are well represented


def test_memoised_sentences_are_a_fresh_list_each_time():
    first = responses.sentences(ASR_SYSTEM)
    first.append("changed")
    assert responses.sentences(ASR_SYSTEM) == ["You are a speech recognition model.", "Do not provide any explanations or notes."]


def _tricky_strings(count):
    """Random short strings of characters that decompose, combine (every non-zero combining class), compose
    (Hangul jamo, Latin and Greek bases) or have compatibility forms: where NFC of NFKD could differ from NFKC."""
    import random
    import unicodedata

    pool = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and (unicodedata.combining(chr(c)) or unicodedata.decomposition(chr(c)))]
    pool += [chr(c) for c in [*range(0x1100, 0x1200), *range(0xAC00, 0xAC40), *range(0x41, 0x7B), *range(0x3B1, 0x3CA), *range(0x4E00, 0x4E10), *range(0xFF01, 0xFF20)]]
    rng = random.Random(43)
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 8))) for _ in range(count)]


def test_nfkc_as_nfc_of_nfkd_is_nfkc_on_every_code_point_and_combining_sequences():
    import unicodedata

    for code in range(0x110000):
        character = chr(code)
        assert responses.nfkc(character) == unicodedata.normalize("NFKC", character), hex(code)
    for text in _tricky_strings(50000):
        assert responses.nfkc(text) == unicodedata.normalize("NFKC", text), [hex(ord(c)) for c in text]


# ------------------------------------------------------------------------------------------- samples file (issue 27 item 6)
def test_the_samples_file_holds_each_documents_diagnostics_once_and_counters_that_sum_to_the_figures():
    docs = mcga_docs("asr")  # 14 documents, 14 distinct clips in the shipped sample
    answers = [REQUEST_FAILED, "", "<think>听一下", ASR_INSTRUCTION + "\ud800", "x" * (responses.SAMPLE_TEXT_MAX_CHARS + 1)] + ["同一个回答"] * (len(docs) - 5)
    logged = [{"doc_id": i, "resps": [[a]], **mcga_hooks.mcga_process_results(doc, [a])} for i, (doc, a) in enumerate(zip(docs, answers))]
    written = responses.samples_with_diagnostics_once(logged)
    records = [s["failed_generations"] for s in logged]
    assert all(isinstance(s["failed_generations"], dict) for s in logged)  # lmms-eval's objects unchanged (aggregations read them)
    # by hand: doc 0 failed, 1 empty, 2 unfinished, 3 echo + 1 code point replaced, 4 long; docs 5-13 give one same
    # answer: 9 of the 11 answered documents (82 % > 50 %, and > the gold share + 10 points)
    expected = {"failed_generations": [0], "empty_responses": [1], "unfinished_reasoning": [2], "echoed_prompts": [3], "long_answers": [4],
                "identical_answers": list(range(5, len(docs))), "placeholder_copies": [], "scoring_errors": []}  # fmt: skip
    for metric, positions in expected.items():
        assert [i for i, s in enumerate(written) if s[metric]] == positions, metric
        assert sum(s[metric] for s in written) == getattr(responses, f"agg_{metric}")(records), metric
    assert [s["invalid_text_replaced"] for s in written][:4] == [0, 0, 0, 1]
    assert all(s["diagnostics"] is r and responses.diagnostics_of(s) is r for s, r in zip(written, records))
    assert responses.diagnostics_of(logged[0]) is records[0]  # an earlier samples file: the copy under each counter
    assert written[0]["cer_official"] is logged[0]["cer_official"]  # the scored metrics' per-document values as they were
    # once, not nine times: the line is shorter by eight copies of the record, less nine one-digit counts and one key
    before, now = (len(json.dumps(results_writer.bounded_for_samples(s), ensure_ascii=False)) for s in (logged[6], written[6]))
    assert before - now == 8 * len(json.dumps(records[6], ensure_ascii=False)) - 9 - len(', "diagnostics": ')
    other = [{"doc_id": 0, "wer": {"ref": "a", "hyp": "b"}}]
    assert responses.samples_with_diagnostics_once(other) is other  # other benchmarks' samples: untouched
