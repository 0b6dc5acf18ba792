"""Persian normaliser (parsa.normalize): each step pinned with a hand-written example."""

from parsa.normalize import (
    join_affixes,
    label_key,
    normalize_orthography,
    normalize_persian,
    normalizer_signature,
    to_ascii_digits,
)


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


def test_zwnj_joins_and_other_invisibles_vanish():
    assert normalize_persian("می\u200cروم") == "میروم"
    assert normalize_persian("کتاب\u200dها\u200f") == "کتابها"


# One word written with a ZWNJ, joined, or with a space is one word (issue 8 item 4). Each row: the three
# spellings and the hand-written normal form.
ONE_WORD_SPELLINGS = [
    ("بندر\u200cها", "بندرها", "بندر ها", "بندرها"),  # plural -ها
    ("کتاب\u200cهای", "کتابهای", "کتاب های", "کتابهای"),  # plural + ezafe -های
    ("گل\u200cهایی", "گلهایی", "گل هایی", "گلهایی"),  # -هایی
    ("دوست\u200cهایشان", "دوستهایشان", "دوست هایشان", "دوستهایشان"),
    ("می\u200cروم", "میروم", "می روم", "میروم"),  # prefix می
    ("نمی\u200cتوانند", "نمیتوانند", "نمی توانند", "نمیتوانند"),  # prefix نمی
    ("بی\u200cکار", "بیکار", "بی کار", "بیکار"),  # prefix بی
    ("بزرگ\u200cتر", "بزرگتر", "بزرگ تر", "بزرگتر"),  # comparative
    ("بزرگ\u200cترین", "بزرگترین", "بزرگ ترین", "بزرگترین"),  # superlative
    ("خسته\u200cام", "خستهام", "خسته ام", "خستهام"),  # copula after silent h
    ("خانه\u200cاش", "خانهاش", "خانه اش", "خانهاش"),
    ("رفته\u200cاند", "رفتهاند", "رفته اند", "رفتهاند"),
    ("نامه\u200cای", "نامهای", "نامه ای", "نامهای"),  # indefinite ای after ه
    ("کتاب\u200cشان", "کتابشان", "کتاب شان", "کتابشان"),
    ("خانه\u200cمان", "خانهمان", "خانه مان", "خانهمان"),
]


def test_zwnj_joined_and_spaced_spellings_of_one_word_are_equal():
    for zwnj, joined, spaced, expected in ONE_WORD_SPELLINGS:
        assert normalize_persian(zwnj) == normalize_persian(joined) == normalize_persian(spaced) == expected, zwnj


def test_issue_example_sentence_in_three_spellings():
    for text in ("بندر\u200cها شلوغ است", "بندرها شلوغ است", "بندر ها شلوغ است"):
        assert normalize_persian(text) == "بندرها شلوغ است"


def test_ezafe_written_four_ways_is_dropped():
    # ه + hamza above (U+0654), ZWNJ + ی, space + ی, heh-with-yeh-above U+06C0: all the ezafe of خانه
    for text in ("خانهٔ من", "خانه\u200cی من", "خانه ی من", "خانۀ من", "خانه من"):
        assert normalize_persian(text) == "خانه من", text


def test_real_separate_words_are_not_merged():
    # vocative ای (no preceding word, or after a word not ending in ه) stays a word
    assert normalize_persian("ای ساربان آهسته ران") == "ای ساربان آهسته ران"
    assert normalize_persian("گفت ای دوست") == "گفت ای دوست"
    # a joined هی is a different word (ماهی "fish"), not an ezafe
    assert normalize_persian("ماهی") == "ماهی"
    assert normalize_persian("ماه ی") == "ماه"
    # words that merely begin or end with an affix's letters are untouched; ordinary words stay separate
    assert normalize_persian("هوا امروز تمیز است") == "هوا امروز تمیز است"
    assert normalize_persian("میز تازه ترک خورده") == "میز تازه ترک خورده"
    assert normalize_persian("ما آنها را دیدیم") == "ما آنها را دیدیم"
    # an affix with no Persian neighbour stays
    assert normalize_persian("ها") == "ها"
    assert normalize_persian("hello ها") == "hello ها"
    assert normalize_persian("می") == "می"


def test_join_affixes_chains_prefix_and_suffixes():
    assert join_affixes(["نمی", "خواهم"]) == ["نمیخواهم"]
    assert join_affixes(["کتاب", "ها", "شان", "را"]) == ["کتابهاشان", "را"]
    assert join_affixes(["ای", "خدا"]) == ["ای", "خدا"]
    assert join_affixes(["خانه", "ای", "خرید"]) == ["خانهای", "خرید"]


def test_orthography_keeps_punctuation_but_unifies_letters_ezafe_and_zwnj():
    assert normalize_orthography("گزینهٔ ۲)") == "گزینه 2)"
    assert normalize_orthography("گزینه\u200cی ٢.") == "گزینه 2."
    assert normalize_orthography("كتاب") == "کتاب"
    assert normalize_orthography(None) == ""


def test_arabic_letters_and_space_before_persian_punctuation_do_not_count():
    assert normalize_persian("آیا امروز به کتابخانه می\u200cروی ؟") == normalize_persian("آیا امروز به كتابخانه مي\u200cروي؟") == "آیا امروز به کتابخانه میروی"
    assert normalize_persian("من ، برادرم") == normalize_persian("من، برادرم") == "من برادرم"


def test_punctuation_becomes_space_and_latin_is_casefolded():
    assert normalize_persian("«سلام»، دنیا! Hello WORLD؟") == "سلام دنیا hello world"


def test_empty_and_none_give_empty_string():
    assert normalize_persian(None) == ""
    assert normalize_persian("  ،  ") == ""


def test_label_key_ignores_case_spaces_and_separators():
    assert label_key("Alarm Set") == label_key("alarm-set") == label_key("ALARM_SET") == "alarmset"
    assert label_key("غیر رسمی") == label_key("غیر\u200cرسمی") == "غیررسمی"


def test_signature_names_every_step_and_the_zwnj_policy():
    assert normalizer_signature() == (
        "norm:parsa-fa-2(nfkc+letters+digits+diacritics+ezafe+zwnj+punctuation+casefold+whitespace+affixes;"
        "zwnj=join;ezafe-y=drop;affixes=join)"
    )
