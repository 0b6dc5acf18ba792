"""Reading answers from messy model output (parsa.parsing)."""

import pytest

from parsa.parsing import (
    extract_json_object,
    has_persian_script,
    looks_like_refusal,
    match_label,
    match_option,
    parse_entities,
    parse_response,
)

VAZN_OPTIONS = [
    "فاعلاتن فاعلاتن فاعلن (رمل مسدس محذوف)",
    "فعولن فعولن فعولن فعل (متقارب مثمن محذوف)",
    "مفاعیلن مفاعیلن مفاعیلن مفاعیلن (هزج مثمن سالم)",
    "فاعلاتن فاعلاتن فاعلاتن فاعلن (رمل مثمن محذوف)",
    "مستفعلن مستفعلن مستفعلن مستفعلن (رجز مثمن سالم)",
    "مفاعیلن مفاعیلن فعولن (هزج مسدس محذوف)",
    "فاعلاتن فعلاتن فعلاتن فعلن (رمل مثمن مخبون محذوف)",
    "مفعول مفاعلن مفاعیلن فع (هزج مثمن اخرب)",
    "مفعول فاعلات مفاعیل فاعلن (مضارع مثمن اخرب مکفوف محذوف)",
    "مفاعلن فعلاتن مفاعلن فعلن (مجتث مثمن مخبون محذوف)",
]
SABK_OPTIONS = ["غزل/قصیده/قطعه", "مثنوی", "رباعی", "دوبیتی"]


def _parse(task, response, options=None):
    return parse_response(task, {"id": "x", "options": options or []}, response)


@pytest.mark.parametrize(
    "response",
    [
        '```json\n{"emotion": "anger"}\n```',
        'Sure! Here is my answer: {"emotion": "anger"} Let me know if you need more.',
        "{'emotion': 'anger'}",
        '{"emotion": "anger",}',
        '{"Emotion": "ANGER"}',
        '{"emotion": "خشم"}',
        '{"emotion": "angry"}',
        '{"reasoning": "The voice is loud and tense, so {fear} is unlikely.", "emotion": "anger"}',
    ],
)
def test_messy_but_valid_emotion_answers_read_as_anger(response):
    parsed = _parse("emotion", response)
    assert (parsed.status, parsed.value, parsed.json_fallback) == ("scored", "anger", False)


def test_bare_label_without_json_is_read_and_flagged_as_fallback():
    parsed = _parse("gender", "Female.")
    assert (parsed.status, parsed.value, parsed.json_fallback) == ("scored", "female", True)


def test_invented_label_is_excluded_not_guessed():
    parsed = _parse("emotion", '{"emotion": "boredom"}')
    assert (parsed.status, parsed.reason, parsed.raw_value) == ("excluded", "invalid_label", "boredom")


def test_label_mentioned_in_prose_is_not_searched():
    parsed = _parse("emotion", "I think the speaker sounds like anger or maybe fear")
    assert (parsed.status, parsed.reason) == ("excluded", "no_json")


def test_apology_without_answer_is_a_refusal():
    parsed = _parse("intent", "I'm sorry, I cannot process audio content.")
    assert (parsed.status, parsed.reason) == ("refused", "refusal_phrase")


def test_empty_response_is_excluded_for_classification():
    assert _parse("register", "   ").status == "excluded"


def test_code_switch_accepts_booleans_and_persian_yes_no():
    assert _parse("code_switch", '{"code_switching": true}').value == "code_switched"
    assert _parse("code_switch", '{"code_switching": "ندارد"}').value == "monolingual"
    assert _parse("code_switch", '{"code_switching": "Code-Switched"}').value == "code_switched"


def test_age_alias_forties_maps_to_common_voice_spelling():
    assert match_label("age", "forties") == "fourties"
    assert match_label("age", "دهه ۳۰") == "thirties"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"answer": 3}', 3),
        ('{"answer": "3"}', 3),
        ('{"answer": "۳"}', 3),  # Persian digit
        ('{"answer": "٣"}', 3),  # Arabic-Indic digit
        ('{"answer": "Option 3"}', 3),
        ('{"answer": "3. مفاعیلن مفاعیلن مفاعیلن مفاعیلن"}', 3),
        ('{"answer": "مفاعیلن مفاعیلن مفاعیلن مفاعیلن (هزج مثمن سالم)"}', 3),  # full option text
        ('{"answer": "هزج مثمن سالم"}', 3),  # the name in parentheses
        ('{"answer": "hazaj mosamman salem"}', 3),  # transliterated name
        ('{"answer": 3.0}', 3),
        ("۳", 3),  # bare number, no JSON
        ('{"reasoning": "Option 1 has 3 feet, option 2 ...", "answer": 4}', 4),  # chain of thought
    ],
)
def test_vazn_answers_by_number_or_option_text(answer, expected):
    parsed = _parse("vazn", answer, VAZN_OPTIONS)
    assert (parsed.status, parsed.value) == ("scored", expected)


def test_out_of_range_option_number_is_excluded():
    parsed = _parse("vazn", '{"answer": 11}', VAZN_OPTIONS)
    assert (parsed.status, parsed.reason) == ("excluded", "invalid_option")


def test_option_letter_is_not_accepted():
    assert _parse("mcqa", '{"answer": "B"}', ["الف", "ب", "پ", "ت"]).status == "excluded"


def test_sabk_part_of_merged_option_and_transliteration_match():
    # "غزل" is one part of option 1 "غزل/قصیده/قطعه"; "Masnavi" is option 2 through the alias table.
    assert match_option("sabk", "غزل", SABK_OPTIONS) == (1, "")
    assert match_option("sabk", "Masnavi", SABK_OPTIONS) == (2, "")
    assert match_option("sabk", "ruba'i", SABK_OPTIONS) == (3, "")


def test_text_matching_two_options_is_ambiguous():
    # "رمل مثمن محذوف" is option 4's name only; "فاعلاتن" alone is in no option as a whole variant.
    assert match_option("vazn", "رمل مثمن محذوف", VAZN_OPTIONS) == (4, "")
    assert match_option("mcqa", "بله", ["بله", "خیر", "بله", "شاید"]) == (None, "ambiguous_option")


def test_asr_json_transcription_is_used():
    parsed = _parse("asr", '{"transcription": "سلام دنیا"}')
    assert (parsed.status, parsed.value, parsed.json_fallback) == ("scored", "سلام دنیا", False)


def test_asr_plain_persian_text_falls_back_to_raw_and_is_counted():
    parsed = _parse("asr", "سلام دنیا")
    assert (parsed.status, parsed.value, parsed.json_fallback) == ("scored", "سلام دنیا", True)


@pytest.mark.parametrize("response", ["I'm sorry, I cannot transcribe this audio.", '{"transcription": "hello world"}', ""])
def test_asr_answer_without_persian_script_is_a_refusal(response):
    parsed = _parse("asr", response)
    assert (parsed.status, parsed.reason) == ("refused", "no_persian_script")


def test_en_fa_translation_in_english_is_a_refusal_but_fa_en_in_english_is_scored():
    assert _parse("s2tt_en_fa", '{"translation": "I cannot translate this"}').status == "refused"
    parsed = _parse("s2tt_fa_en", '{"translation": "I am sorry, I was late."}')
    assert (parsed.status, parsed.value) == ("scored", "I am sorry, I was late.")  # a translation that apologises


def test_fa_en_refusal_without_json_is_refused():
    assert _parse("s2tt_fa_en", "I'm sorry, but I can't help with that.").status == "refused"


def test_ner_entities_in_three_shapes():
    listed, skipped = parse_entities([{"type": "date", "span": "فردا"}, {"label": "time", "text": "ساعت هفت"}, {"type": "person"}])
    assert listed == [{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت هفت"}] and skipped == 1
    assert parse_entities([["date", "فردا"]]) == ([{"type": "date", "span": "فردا"}], 0)
    assert parse_entities({"person": ["علی", "مریم"]}) == ([{"type": "person", "span": "علی"}, {"type": "person", "span": "مریم"}], 0)
    assert parse_entities("فردا") == (None, 0)


def test_ner_empty_list_is_a_valid_answer_and_missing_json_is_excluded():
    assert _parse("ner", '{"entities": []}').value == []
    assert (_parse("ner", "فردا ساعت هفت").status, _parse("ner", "فردا ساعت هفت").reason) == ("excluded", "no_json")


def test_extract_json_prefers_the_object_holding_the_answer_key():
    text = 'Format: {"x": 1}. Answer: {"answer": 2}'
    assert extract_json_object(text, "answer") == {"answer": 2}
    assert extract_json_object(text) == {"x": 1}
    assert extract_json_object("no braces here") is None


def test_persian_script_and_refusal_detectors():
    assert has_persian_script("hello سلام") and not has_persian_script("hello ۱۲۳")  # digits are not letters
    assert looks_like_refusal("متاسفم، نمی‌توانم") and not looks_like_refusal("The answer is 3")


def _extract_json_object_by_scanning(response, answer_key=None):
    """The full path of extract_json_object: every balanced candidate scanned, a truncated last object closed."""
    from parsa import parsing

    text = parsing.strip_wrappers(response)
    spans, open_start, closers = parsing._object_spans(text)
    objects = [obj for obj, _ in (parsing._load_object(text[start:end]) for start, end in spans) if obj is not None]
    if open_start >= 0 and parsing._closed_object(text[open_start:], closers) is not None:
        objects.append(parsing._closed_object(text[open_start:], closers))
    if not objects:
        return None
    if answer_key:
        keyed = [obj for obj in objects if parsing._find_key(obj, answer_key) is not None]
        if keyed:
            return keyed[-1]
    return objects[0]


@pytest.mark.filterwarnings("ignore:invalid escape sequence")  # ast.literal_eval of random fragments with backslashes
def test_whole_object_shortcut_reads_what_the_full_scan_reads():
    import json
    import random

    rng = random.Random(31)
    pieces = ['{', '}', '"', "'", "\\", ":", ",", " ", "\n", "a", "ب", "{}", '\\"', "[", "]", "transcription", "```json", "```", "<think>x</think>", "true", "None", "I'm"]
    values = ["سلام دنیا", 'he said "hi" {ok}', "a\\b", "'quoted'", "}{", "", "line\nbreak", "\u200c", "😀"]
    responses_ = []
    for _ in range(3000):
        kind = rng.random()
        if kind < 0.5:  # valid JSON objects, nested, with braces, quotes and escapes in strings
            obj = {rng.choice(["transcription", "Transcription", "answer", "reasoning", "x"]): rng.choice(values) for _ in range(rng.randint(0, 3))}
            if rng.random() < 0.3:
                obj["nested"] = {"inner": rng.choice(values), "list": [rng.choice(values), {"k": "}"}]}
            text = json.dumps(obj, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
            text = rng.choice(["", " ", "```json\n", "<think>{\"a\": 1}</think>", "Answer: "]) + text + rng.choice(["", "\n", "```", " done", ' {"answer": "b"}', "."])
        else:  # fragments: unbalanced, single-quoted, several objects, prose
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        responses_.append(text)
    responses_ += ["{{}: 1}", '{"transcription": "x"} {{}: 1}', '{"a": 1} {"transcription": "x"}', "{'transcription': 'y',}", '{"transcription": "x",}', "{}", "{1: 2}", '{"a": [1, 2}', "[{}]", '{"a": NaN}']
    for response in responses_:
        for key in (None, "transcription"):
            assert extract_json_object(response, key) == _extract_json_object_by_scanning(response, key), (response, key)
    assert extract_json_object("{{}: 1}") is None  # a literal with an unhashable key is no object (it raised TypeError)


# ------------------------------------------------------------------ issue 17: repaired JSON, several answers, questions
ASR_DOC = {"id": "a", "options": []}


@pytest.mark.parametrize(
    ("task", "response", "value"),
    [
        # unescaped inner quotes, as models quote names inside a transcription or translation
        ("asr", '{"transcription": "امروز در "ایران" هوا خوب است"}', 'امروز در "ایران" هوا خوب است'),
        ("s2tt_fa_en", '{"translation": "He said "hello" to me."}', 'He said "hello" to me.'),
        # the closing brace never came (generation stopped)
        ("asr", '{"transcription": "امروز هوا خوب است', "امروز هوا خوب است"),
        ("ner", '{"entities": [{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت هفت', [{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت هفت"}]),
        # comments and single quotes with a trailing comma
        ("mcqa", '{"answer": 2 // the second option\n}', 2),
        ("emotion", "{'emotion': 'anger',}", "anger"),
    ],
)
def test_near_json_is_repaired_read_and_flagged(task, response, value):
    parsed = _parse(task, response, ["الف", "ب", "پ", "ت"])
    assert (parsed.status, parsed.value, parsed.json_repaired, parsed.json_fallback) == ("scored", value, True, False)


def test_plain_json_is_not_flagged_as_repaired():
    assert _parse("asr", '{"transcription": "سلام"}').json_repaired is False


def test_a_truncated_answer_longer_than_the_repair_bound_is_still_read_in_linear_time():
    import time

    from parsa import parsing

    loop = "سلام " * (parsing.REPAIR_MAX_CHARS // 2)  # 50,000 characters: past what json-repair is given
    start = time.perf_counter()
    parsed = _parse("asr", '{"transcription": "' + loop)
    assert (parsed.status, parsed.value, parsed.json_repaired) == ("scored", loop.strip(), True)
    assert time.perf_counter() - start < 2.0


def test_json_naming_the_answer_key_that_cannot_be_read_is_excluded_never_scored_as_text():
    from parsa import parsing

    for response in ('"translation": "He said hello"', '{"translation": "He said "hi" ' + "and more " * parsing.REPAIR_MAX_CHARS + '"}'):
        parsed = _parse("s2tt_fa_en", response)  # braces forgotten; broken and past the repair bound
        assert (parsed.status, parsed.reason) == ("excluded", "invalid_json")
    # an object without the answer field is not scored as its wrapper either
    assert _parse("s2tt_fa_en", '{"english": "He said hello"}').reason == "missing_key"


def test_hostile_nesting_is_not_handed_to_the_recursive_repairer():
    from parsa import parsing

    text = "The answer: " + '{"answer": ' + "[" * 1_000 + "1"
    assert parsing.repair_json_object(text) is None  # nested past REPAIR_MAX_DEPTH: not tried, no RecursionError
    assert _parse("mcqa", text, ["a", "b", "c", "d"]).status == "excluded"


@pytest.mark.parametrize(
    ("task", "response", "value"),
    [
        ("mcqa", '{"answer": 1}\nWait, that is wrong. The passage says otherwise.\n{"answer": 2}', 2),
        ("mcqa", '{"answer": 1}\nCorrection:\n{"answer": 3}', 3),
        ("emotion", '{"emotion": "anger"}\nActually, listening again, it is sadness.\n{"emotion": "sadness"}', "sadness"),
        ("emotion", '{"emotion": "anger"} Final answer: {"emotion": "fear"}', "fear"),
        ("gender", '{"gender": "male"}\nببخشید، اشتباه کردم:\n{"gender": "female"}', "female"),
        ("asr", '{"transcription": "سلام دنیا"}\nنه، درستش این است:\n{"transcription": "سلام به دنیا"}', "سلام به دنیا"),
        ("mcqa", '{"answer": 2}\n{"answer": "2"}', 2),  # the same answer twice is one answer
    ],
)
def test_a_retracted_answer_gives_way_to_the_final_one(task, response, value):
    parsed = _parse(task, response, ["الف", "ب", "پ", "ت"])
    assert (parsed.status, parsed.value) == ("scored", value)


@pytest.mark.parametrize(
    ("task", "response"),
    [
        ("mcqa", '{"answer": 1}\n{"answer": 2}'),
        ("mcqa", '{"answer": 1, "answer": 2}'),
        ("mcqa", '{"answer": [1, 3]}'),
        ("mcqa", '{"answer": "1 or 2"}'),
        ("mcqa", '{"answer": "۱ یا ۲"}'),
        ("mcqa", '{"answer": "1، 2"}'),
        ("emotion", '{"emotion": "anger or sadness"}'),
        ("emotion", '{"emotion": ["anger", "fear"]}'),
        ("emotion", '{"emotion": "anger"}\n{"emotion": "sadness"}'),
        ("asr", '{"transcription": "سلام دنیا"}\n{"transcription": "سلام به دنیا"}'),
    ],
)
def test_several_answers_without_a_clear_final_one_are_excluded_as_ambiguous(task, response):
    parsed = _parse(task, response, ["الف", "ب", "پ", "ت"])
    assert (parsed.status, parsed.reason) == ("excluded", "ambiguous_answer")


@pytest.mark.parametrize(("task", "value"), [("emotion", "anger?"), ("emotion", "خشم؟"), ("mcqa", "2?"), ("mcqa", "۲؟"), ("sabk", "رباعی؟")])
def test_an_answer_written_as_a_question_is_not_an_answer(task, value):
    parsed = _parse(task, '{"%s": "%s"}' % ("emotion" if task == "emotion" else "answer", value), SABK_OPTIONS if task == "sabk" else ["الف", "ب", "پ", "ت"])
    assert (parsed.status, parsed.reason) == ("excluded", "question")


def test_an_option_whose_text_holds_a_slash_is_still_one_answer():
    assert _parse("sabk", '{"answer": "غزل/قصیده/قطعه"}', SABK_OPTIONS).value == 1


def test_out_of_set_labels_and_options_are_recorded_for_counting():
    assert _parse("emotion", '{"emotion": "Contempt"}').out_of_set == "contempt"
    assert _parse("mcqa", '{"answer": 7}', ["a", "b", "c", "d"]).out_of_set == "7"
    assert _parse("emotion", "contempt").out_of_set is None  # a bare word is no JSON answer: counted as no_json only
