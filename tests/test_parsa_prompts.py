"""PARSA task registry (parsa.tasks) and prompt assembly (parsa.prompts)."""

import json

import pytest

from parsa.prompts import answer_schema, build_user_text, demo_answer_json, prompt_table
from parsa.tasks import DECODING, DIMENSIONS, TASKS, get_task, tasks_in_dimension

PAPER_ASR_PROMPT = (
    "You are an expert Persian speech recognition system. Listen to the Persian audio and transcribe exactly what you "
    'hear in Persian. Return your response as a JSON object with this exact format: {"transcription": "your Persian '
    'transcription here"}. Provide ONLY the JSON object, nothing else. Be accurate and precise in your transcription.'
)
OPTIONS = ["گزینه یک", "گزینه دو", "گزینه سه", "گزینه چهار"]


def _doc(task):
    spec = get_task(task)
    options = [f"option {i}" for i in range(1, spec.n_options + 1)]
    return {"id": "q1", "transcript": "متن نمونه", "question": "", "options": options, "reference": "1"}


def test_sixteen_tasks_with_table_1_label_set_sizes():
    assert list(TASKS) == ["asr", "s2tt_fa_en", "s2tt_en_fa", "intent", "ner", "register", "code_switch", "mcqa", "rc_wiki", "rc_tiny", "age", "gender", "emotion", "vazn", "sabk", "music"]
    sizes = {name: len(spec.labels) or spec.n_options for name, spec in TASKS.items() if spec.kind in ("classification", "multiple_choice")}
    # intent: MASSIVE's 60 (the paper scores the 56 present in its items); the others are Table 1's sizes
    assert sizes == {"intent": 60, "register": 2, "code_switch": 2, "mcqa": 4, "rc_wiki": 4, "rc_tiny": 4, "age": 6, "gender": 2, "emotion": 6, "vazn": 10, "sabk": 4, "music": 4}
    assert TASKS["emotion"].labels == ("anger", "fear", "happiness", "sadness", "surprise", "neutral")
    assert sum(spec.eval_items for spec in TASKS.values()) == 7645  # Table 1 total


def test_dimensions_follow_table_1():
    assert [len(tasks_in_dimension(d)) for d in DIMENSIONS] == [10, 3, 3]
    assert tasks_in_dimension("cultural") == ["vazn", "sabk", "music"]


def test_settings_text_on_11_tasks_audio_ref_on_14_and_asr_audio_only():
    with_text = [n for n, s in TASKS.items() if "text" in s.settings]
    with_ref = [n for n, s in TASKS.items() if "audio_ref" in s.settings]
    assert len(with_text) == 11 and len(with_ref) == 14
    assert set(with_ref) - set(with_text) == {"age", "gender", "emotion"}
    assert TASKS["asr"].settings == ("audio",)
    assert all({"audio", "fewshot", "cot"} <= set(s.settings) for n, s in TASKS.items() if n != "asr")


def test_decoding_is_temperature_zero_and_8192_tokens():
    assert DECODING == {"temperature": 0.0, "max_new_tokens": 8192}


def test_asr_prompt_is_the_paper_prompt_verbatim():
    assert build_user_text("asr", {"id": "a", "transcript": "سلام"}) == PAPER_ASR_PROMPT


def test_every_task_and_setting_has_the_three_part_shape():
    for name, spec in TASKS.items():
        for setting in spec.settings:
            text = build_user_text(name, _doc(name), setting)
            assert text.startswith("You are an expert"), (name, setting)
            assert "Return your response as a JSON object with this exact format: {" in text, (name, setting)
            assert "Provide ONLY the JSON object, nothing else." in text, (name, setting)
            assert f'"{spec.answer_key}"' in text, (name, setting)


def test_classification_prompt_enumerates_every_label():
    text = build_user_text("intent", _doc("intent"))
    assert "Choose exactly one label from this list: alarm_query, alarm_remove, alarm_set," in text
    assert all(label in text for label in TASKS["intent"].labels)


def test_multiple_choice_prompt_numbers_the_options_and_asks_for_an_integer():
    doc = {"id": "q", "transcript": "", "question": "کدام درست است؟", "options": OPTIONS}
    text = build_user_text("mcqa", doc)
    assert "Answer with a single integer: the number of the correct option (1 to 4)." in text
    assert "Question: کدام درست است؟\nOptions:\n1. گزینه یک\n2. گزینه دو\n3. گزینه سه\n4. گزینه چهار\n" in text


def test_text_setting_embeds_the_transcript_instead_of_audio():
    text = build_user_text("register", {"id": "r", "transcript": "داری میای؟"}, "text")
    assert "Persian text: داری میای؟" in text and "audio" not in text.lower()


def test_audio_ref_setting_adds_the_transcript_beside_the_audio():
    text = build_user_text("emotion", {"id": "e", "transcript": "وای چه خبر خوبی"}, "audio_ref")
    assert "Listen to the Persian audio" in text and "Transcript of the audio: وای چه خبر خوبی" in text


def test_fewshot_query_text_equals_the_audio_text():
    assert build_user_text("vazn", _doc("vazn"), "fewshot") == build_user_text("vazn", _doc("vazn"), "audio")


def test_cot_schema_puts_reasoning_before_the_answer_field():
    schema = answer_schema("sabk", "cot")
    assert schema == '{"reasoning": "your step-by-step reasoning", "answer": <option number>}'
    text = build_user_text("sabk", _doc("sabk"), "cot")
    assert text.index('"reasoning"') < text.index('"answer"')


def test_unsupported_setting_and_wrong_option_count_raise():
    with pytest.raises(ValueError, match="not run in setting 'text'"):
        build_user_text("asr", {"id": "a"}, "text")
    with pytest.raises(ValueError, match="item 'q': 10 options expected, got 4"):
        build_user_text("vazn", {"id": "q", "options": OPTIONS})
    with pytest.raises(KeyError, match="unknown PARSA-Bench task"):
        build_user_text("nope", {})


def test_demo_answers_are_the_json_the_model_should_write():
    assert demo_answer_json("asr", {"transcript": "سلام دنیا", "reference": "سلام دنیا"}) == '{"transcription": "سلام دنیا"}'
    assert demo_answer_json("vazn", {"id": "d", "reference": "3"}) == '{"answer": 3}'
    assert demo_answer_json("emotion", {"reference": "anger"}) == '{"emotion": "anger"}'
    assert demo_answer_json("s2tt_fa_en", {"reference": "Hello world"}) == '{"translation": "Hello world"}'
    ner = demo_answer_json("ner", {"reference": '[{"type": "date", "span": "فردا"}]'})
    assert json.loads(ner) == {"entities": [{"type": "date", "span": "فردا"}]} and "فردا" in ner
    with pytest.raises(ValueError, match="reference '12' is not an option number 1..10"):
        demo_answer_json("vazn", {"id": "d", "reference": "12"})


def test_prompt_data_has_an_instruction_for_every_mode_a_task_uses():
    table = prompt_table()["tasks"]
    for name, spec in TASKS.items():
        assert "audio" in table[name]["instruction"]
        assert ("text" in table[name]["instruction"]) == ("text" in spec.settings), name
