"""Persian normaliser (parsa.normalize): each step pinned with a hand-written example."""

from parsa.normalize import label_key, normalize_persian, normalizer_signature, to_ascii_digits


def test_arabic_yeh_and_kaf_become_persian_letters():
    # ي U+064A -> ی U+06CC, ك U+0643 -> ک U+06A9
    assert normalize_persian("\u064a\u0643") == "\u06cc\u06a9"
    assert normalize_persian("كتاب خوبي") == normalize_persian("کتاب خوبی") == "کتاب خوبی"


def test_persian_and_arabic_indic_digits_become_ascii():
    assert to_ascii_digits("۱۲۳ ٤٥٦") == "123 456"
    assert normalize_persian("سال ۱۴۰۲") == "سال 1402"


def test_harakat_superscript_alef_and_tatweel_are_removed():
    # kasra U+0650 on ک, tatweel U+0640 inside, superscript alef U+0670 in "موسیٰ"
    assert normalize_persian("کِتـــاب") == "کتاب"
    assert normalize_persian("موسی\u0670") == "موسی"


def test_hamza_forms_and_heh_with_yeh_are_unified():
    assert normalize_persian("أحمد إسلام") == "احمد اسلام"
    assert normalize_persian("خانۀ") == normalize_persian("خانهٔ") == "خانه"


def test_zwnj_becomes_a_space_and_other_invisibles_vanish():
    assert normalize_persian("می\u200cروم") == "می روم"
    assert normalize_persian("کتاب\u200dها\u200f") == "کتابها"


def test_punctuation_becomes_space_and_latin_is_casefolded():
    assert normalize_persian("«سلام»، دنیا! Hello WORLD؟") == "سلام دنیا hello world"


def test_empty_and_none_give_empty_string():
    assert normalize_persian(None) == ""
    assert normalize_persian("  ،  ") == ""


def test_label_key_ignores_case_spaces_and_separators():
    assert label_key("Alarm Set") == label_key("alarm-set") == label_key("ALARM_SET") == "alarmset"
    assert label_key("غیر رسمی") == label_key("غیر\u200cرسمی") == "غیررسمی"


def test_signature_names_every_step_and_the_zwnj_policy():
    assert normalizer_signature() == "norm:parsa-fa-1(nfkc+letters+digits+diacritics+zwnj+punctuation+casefold+whitespace;zwnj=space)"
