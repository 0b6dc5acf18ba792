"""PARSA metrics (parsa.metrics) against hand-computed values."""

import sys
import types

import pytest

from parsa import metrics

LOOP_REFERENCE = "امروز هوا خیلی خوب است"
LOOP_HYPOTHESIS = LOOP_REFERENCE + " خیلی خوب است" * 20  # the last three words repeated 20 more times


def test_macro_f1_counts_an_invented_label_as_a_zero_class():
    # gold [a,a,b], pred [a,c,b]; labels {a,b,c}
    # a: TP=1 FP=0 FN=1 -> P=1, R=1/2, F1=2/3;  b: TP=1 -> F1=1;  c: TP=0 FP=1 -> F1=0
    # macro = (2/3 + 1 + 0) / 3 = 5/9
    assert metrics.macro_f1(["a", "a", "b"], ["a", "c", "b"]) == pytest.approx(5 / 9)


def test_macro_f1_without_invented_label_averages_gold_classes_only():
    # gold [a,a,b], pred [a,b,b]: a: P=1 R=1/2 F1=2/3; b: P=1/2 R=1 F1=2/3 -> 2/3
    assert metrics.macro_f1(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(2 / 3)


def test_strict_macro_f1_costs_recall_without_adding_a_class():
    # gold [a,a,b], pred [a,None,b]; labels {a,b}: a: P=1 R=1/2 F1=2/3; b: F1=1 -> (2/3+1)/2 = 5/6
    assert metrics.macro_f1_strict(["a", "a", "b"], ["a", None, "b"]) == pytest.approx(5 / 6)


def test_accuracy_and_strict_accuracy():
    assert metrics.accuracy(["a", "a", "b"], ["a", "c", "b"]) == pytest.approx(2 / 3)
    assert metrics.accuracy([1, 2, 3, 4], [1, 2, None, 1]) == pytest.approx(0.5)


def test_empty_or_unaligned_lists_raise():
    with pytest.raises(ValueError, match="empty"):
        metrics.macro_f1([], [])
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        metrics.accuracy(["a", "b"], ["a"])


def test_majority_baseline_and_normalised_score():
    assert metrics.majority_baseline(["a", "a", "b", "c"]) == 0.5
    # (0.75 - 0.5) / (1 - 0.5) = 0.5 ; (0.25 - 0.5) / 0.5 = -0.5
    assert metrics.normalised_score(0.75, 0.5) == pytest.approx(0.5)
    assert metrics.normalised_score(0.25, 0.5) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="baseline is 1"):
        metrics.normalised_score(1.0, 1.0)


def test_ner_partial_span_earns_nothing_and_type_case_and_letter_variants_do_not_matter():
    gold = [{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت هفت"}]
    predicted = [{"type": "Date", "span": "فردا"}, {"type": "time", "span": "ساعت"}]
    assert metrics.ner_counts(gold, predicted) == (1, 2, 2)
    # Arabic yeh/kaf in the prediction still match the Persian gold span
    assert metrics.ner_counts([{"type": "person", "span": "کریمی"}], [{"type": "person", "span": "كريمي"}]) == (1, 1, 1)


def test_ner_matching_is_a_multiset_intersection():
    gold = [{"type": "person", "span": "علی"}, {"type": "person", "span": "علی"}]
    assert metrics.ner_counts(gold, [{"type": "person", "span": "علی"}]) == (1, 1, 2)
    assert metrics.ner_counts(gold[:1], gold) == (1, 2, 1)


def test_micro_prf_sums_counts_over_items():
    # matches 1, predicted 2, gold 3: P = 1/2, R = 1/3, F1 = 2*(1/6)/(5/6) = 0.4
    precision, recall, f1 = metrics.micro_prf([(1, 2, 2), (0, 0, 1)])
    assert (precision, recall, f1) == (pytest.approx(0.5), pytest.approx(1 / 3), pytest.approx(0.4))
    assert metrics.micro_prf([(0, 0, 0)]) == (0.0, 0.0, 0.0)


def test_wer_and_cer_treat_yeh_kaf_variants_as_equal():
    assert metrics.word_error_rate("كتاب خوبي است", "کتاب خوبی است") == 0.0
    assert metrics.character_error_rate("كتاب خوبي است", "کتاب خوبی است") == 0.0


def test_wer_and_cer_hand_values():
    # 4 reference words, "به" deleted -> WER 1/4
    assert metrics.word_error_rate("من به خانه رفتم", "من خانه رفتم") == pytest.approx(0.25)
    # reference "من به خانه رفتم" = 2+1+2+1+4+1+4 = 15 characters; "به " deleted = 3 edits -> CER 3/15 = 0.2
    assert metrics.character_error_rate("من به خانه رفتم", "من خانه رفتم") == pytest.approx(0.2)
    # punctuation and ZWNJ-vs-space differences are not errors
    assert metrics.word_error_rate("می‌روم، خانه.", "می روم خانه") == 0.0


def test_empty_reference_raises():
    with pytest.raises(ValueError, match="empty after normalisation"):
        metrics.word_error_rate("،", "سلام")


def test_repetition_loop_wer_and_wer_fix():
    # reference 5 words; hypothesis 5 + 20*3 = 65 words -> 60 insertions -> WER 60/5 = 12
    assert metrics.word_error_rate(LOOP_REFERENCE, LOOP_HYPOTHESIS) == pytest.approx(12.0)
    # "خیلی خوب است" occurs 21 times in a row; collapsed to one copy the hypothesis equals the reference
    assert metrics.wer_after_collapse(LOOP_REFERENCE, LOOP_HYPOTHESIS) == 0.0
    assert metrics.is_repetition_loop(LOOP_HYPOTHESIS)
    assert not metrics.is_repetition_loop(LOOP_REFERENCE)


def test_loop_threshold_is_five_consecutive_copies():
    assert metrics.longest_immediate_repeat(["a", "b", "a", "b", "a", "b", "c"]) == 3
    assert not metrics.is_repetition_loop("x " + "a b " * 4 + "y")
    assert metrics.is_repetition_loop("x " + "a b " * 5 + "y")


def test_collapse_repeats_keeps_one_copy_of_each_repeated_ngram():
    assert metrics.collapse_repeats(["a", "b", "a", "b", "a", "b", "c"]) == ["a", "b", "c"]
    assert metrics.collapse_repeats(["x", "x", "y"]) == ["x", "y"]
    assert metrics.collapse_repeats(["a", "b", "c", "a", "b", "d"]) == ["a", "b", "c", "a", "b", "d"]  # not immediate


def test_chrf_pp_and_bleu_are_on_sacrebleus_0_to_100_scale():
    hypotheses = ["the cat sat on the mat today"]
    assert metrics.chrf_pp(hypotheses, hypotheses) == pytest.approx(100.0)
    assert metrics.bleu(hypotheses, hypotheses) == pytest.approx(100.0)
    assert metrics.chrf_pp(["xyz"], ["abc"]) == 0.0


def test_sacrebleu_signatures_name_chrf_plus_plus_and_bleu_settings():
    signatures = metrics.sacrebleu_signatures()
    assert signatures["chrf_pp"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:")
    assert signatures["bleu"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")


def test_comet_without_package_is_not_computed(monkeypatch):
    monkeypatch.setitem(sys.modules, "comet", None)  # import comet -> ImportError
    assert metrics.comet_score(["س"], ["h"], ["r"]) == (
        "not computed: unbabel-comet is not installed here; score the logged samples in a COMET venv with `python -m parsa.comet_offline` (lmms_eval_tasks/parsa/README.md, 'COMET')"
    )


def test_comet_without_checkpoint_path_is_not_computed(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "comet", types.ModuleType("comet"))
    monkeypatch.delenv("PARSA_COMET_MODEL", raising=False)
    assert metrics.comet_score(["س"], ["h"], ["r"]).startswith("not computed: PARSA_COMET_MODEL is not set")
    monkeypatch.setenv("PARSA_COMET_MODEL", str(tmp_path / "missing.ckpt"))
    assert metrics.comet_score(["س"], ["h"], ["r"]) == f"not computed: PARSA_COMET_MODEL={tmp_path / 'missing.ckpt'} is not an existing checkpoint file"
    assert metrics.comet_signature() == "comet:not-computed"


def test_bootstrap_ci_is_deterministic_for_a_seed():
    items = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    mean = lambda xs: sum(xs) / len(xs)
    first = metrics.bootstrap_ci(items, mean)
    assert first == metrics.bootstrap_ci(items, mean)
    assert first != metrics.bootstrap_ci(items, mean, seed=1)
    low, high = first
    assert 0.0 <= low < 0.7 < high <= 1.0  # the sample mean 0.7 lies inside
    assert metrics.bootstrap_ci([0.5, 0.5, 0.5], mean) == [0.5, 0.5]  # no spread, no interval
    with pytest.raises(ValueError, match="empty"):
        metrics.bootstrap_ci([], mean)


def test_chrf_bootstrap_from_sentence_statistics_equals_recomputing_the_corpus_score():
    hypotheses = ["a cat sat on a mat", "the dog barked", "it rained all day", "birds sing"]
    references = ["the cat sat on the mat", "a dog barked loudly", "it rained the whole day", "birds were singing"]
    fast = metrics.chrf_pp_bootstrap_ci(hypotheses, references, n_resamples=50)
    slow = metrics.bootstrap_ci(list(zip(hypotheses, references)), lambda s: metrics.chrf_pp([h for h, _ in s], [r for _, r in s]), n_resamples=50)
    assert fast == pytest.approx(slow)


def test_vectorised_bootstrap_of_medians_and_means_equals_the_generic_path_bit_for_bit():
    import random
    import statistics

    rng = random.Random(3)
    for n in (1, 2, 7, 300, 1001):  # odd and even sizes (odd n: the index draws must stay one call per resample)
        items = [rng.choice([0.0, 1.0, rng.random(), rng.random() * 3]) for _ in range(n)]
        for statistic in (statistics.median, statistics.fmean):
            generic = metrics.bootstrap_ci(items, lambda xs, f=statistic: f(xs), n_resamples=300)  # a lambda takes the generic path
            assert metrics.bootstrap_ci(items, statistic, n_resamples=300) == generic, (n, statistic)


def test_wer_and_cer_equal_jiwer_on_the_normalised_pair():
    import random

    import jiwer
    from parsa.normalize import normalize_persian

    words = ["می", "روم", "کتاب", "ها", "خانه", "ای", "بندر", "شلوغ", "است", "!", "A", "b", "۳"]
    rng = random.Random(11)
    for _ in range(300):
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        hyp = " ".join(rng.choice(words) for _ in range(rng.randint(0, 15)))
        if not normalize_persian(ref):
            continue
        r, h = normalize_persian(ref), normalize_persian(hyp)
        assert metrics.word_error_rate(ref, hyp) == float(jiwer.wer(r, h)), (ref, hyp)
        assert metrics.character_error_rate(ref, hyp) == float(jiwer.cer(r, h)), (ref, hyp)
        collapsed = " ".join(metrics.collapse_repeats(h.split()))
        assert metrics.wer_after_collapse(ref, hyp) == float(jiwer.wer(r, collapsed)), (ref, hyp)


def _longest_repeat_by_definition(words, max_n=metrics.MAX_REPEAT_NGRAM):
    """The definition, slice by slice on every phase of every n-gram grid (the former implementation)."""
    best = 1
    for n in range(1, min(max_n, len(words) // 2) + 1):
        for start in range(n):
            copies = 1
            for i in range(start + n, len(words) - n + 1, n):
                copies = copies + 1 if words[i:i + n] == words[i - n:i] else 1
                best = max(best, copies)
    return best


def test_longest_immediate_repeat_and_collapse_agree_with_the_definition_on_random_word_lists():
    import random

    rng = random.Random(5)
    assert metrics.longest_immediate_repeat("a b a b a b c".split()) == 3
    for _ in range(2000):
        words = [rng.choice("abc") for _ in range(rng.randint(0, 40))]
        if rng.random() < 0.3:
            words += words[-rng.randint(1, 4):] * rng.randint(1, 6)
        max_n = rng.choice([1, 2, 5, metrics.MAX_REPEAT_NGRAM])
        assert metrics.longest_immediate_repeat(words, max_n) == _longest_repeat_by_definition(words, max_n), (words, max_n)
    assert metrics.collapse_repeats("a b c".split()) == ["a", "b", "c"] and metrics.collapse_repeats("a b a b a b c".split()) == ["a", "b", "c"]


def test_resampled_means_from_value_counts_equal_fmean_of_each_resample_bit_for_bit():
    import random
    import statistics

    import numpy as np

    rng = random.Random(9)
    cases = [(1, "few"), (7, "few"), (500, "few"), (501, "all"), (64, "wide"), (300, "wide"), (40, "zeros"), (200, "negative")]
    for n, kind in cases:
        if kind == "few":
            items = [rng.choice([0.0, 1 / 3, 0.2, 1.0, 2 / 7, 12.5]) for _ in range(n)]
        elif kind == "all":
            items = [rng.random() for _ in range(n)]
        elif kind == "wide":  # cancellation, tiny and huge values: many 26-bit levels
            items = [rng.choice([1e-200, 1e280, -1e280, 3.0, 1e-12, 0.1, -1e-250, 1e290]) for _ in range(n)]
        elif kind == "zeros":
            items = [0.0] * n
        else:
            items = [rng.choice([-1.5, 2 / 3, -1e-9, 7.0, 1e20]) for _ in range(n)]
        values = np.asarray(items, dtype=np.float64)
        draws = metrics._bootstrap_index_matrix(n, 200, 0)
        expected = [statistics.fmean([items[i] for i in row]) for row in draws.tolist()]
        distinct, counts = metrics._resample_counts(values.tobytes(), 200, 0)
        assert distinct.tolist() == sorted(set(items)) and counts.shape == (200, len(distinct))
        assert counts.tolist() == [[sum(1 for i in row if items[i] == value) for value in distinct.tolist()] for row in draws.tolist()]
        assert metrics._means_from_counts(distinct, counts, n) == expected, (n, kind)
        assert [float(x).hex() for x in metrics._means_from_counts(distinct, counts, n)] == [x.hex() for x in expected]
        assert metrics.bootstrap_ci(items, statistics.fmean, n_resamples=200) == metrics.bootstrap_ci(items, lambda xs: statistics.fmean(xs), n_resamples=200)
    assert not metrics._safe_for_exact_means(np.array([1e300, 1.0])) and not metrics._safe_for_exact_means(np.array([float("inf")]))
    assert metrics.bootstrap_ci([1e300, 1.0, 2.0], statistics.fmean, n_resamples=50) == metrics.bootstrap_ci([1e300, 1.0, 2.0], lambda xs: statistics.fmean(xs), n_resamples=50)


def test_resampled_medians_from_value_counts_equal_statistics_median_bit_for_bit():
    import random
    import statistics

    import numpy as np

    rng = random.Random(21)
    for n in (1, 2, 3, 4, 10, 11, 300, 921, 1000):
        for kind in ("few", "all", "ints", "huge"):
            if kind == "few":
                items = [rng.choice([0.0, 1 / 3, 0.2, 1.0, 2 / 7, 12.5, -4.0]) for _ in range(n)]
            elif kind == "all":
                items = [rng.random() for _ in range(n)]
            elif kind == "ints":
                items = [rng.randint(-3, 9) for _ in range(n)]
            else:  # (a + b) / 2 overflows to inf exactly as statistics.median does
                items = [rng.choice([1.7e308, 1.6e308, 1e-300, 5e-324]) for _ in range(n)]
            values = np.asarray(items, dtype=np.float64)
            draws = metrics._bootstrap_index_matrix(n, 150, 0)
            expected = [float(statistics.median([items[i] for i in row])) for row in draws.tolist()]
            distinct, counts = metrics._resample_counts(values.tobytes(), 150, 0)
            got = metrics._medians_from_counts(distinct, counts, n)
            assert [x.hex() for x in got] == [x.hex() for x in expected], (n, kind)


def test_bootstrap_falls_back_where_counts_cannot_stand_for_the_values():
    import statistics

    import numpy as np

    for items in ([-0.0, 0.0, 1.0], [float("nan"), 1.0, 2.0], [float("inf"), 1.0], [2**60 + 1, 3, 5]):
        assert not metrics._countable(items, np.asarray(items, dtype=np.float64)), items
    assert metrics._countable([0.0, 1.0, 3], np.asarray([0.0, 1.0, 3.0]))
    items = [-0.0, -0.0, 0.0, 0.5, -0.0]
    for statistic in (statistics.median, statistics.fmean):
        got = metrics.bootstrap_ci(items, statistic, n_resamples=100)
        assert [x.hex() for x in got] == [x.hex() for x in metrics.bootstrap_ci(items, lambda xs, f=statistic: f(xs), n_resamples=100)]


def test_one_draw_of_all_resamples_is_the_per_resample_draws():
    """numpy draws bounded integers below 2**32 from one 32-bit stream of the bit generator, so one
    ``integers(0, n, size=(R, n))`` call gives the numbers of R calls of ``size=n``, odd n included."""
    import numpy as np

    for seed in (0, 1, 7):
        for n in (1, 2, 3, 7, 128, 921, 1000, 1001):
            rng = np.random.default_rng(seed)
            per_resample = np.stack([rng.integers(0, n, size=n) for _ in range(300)])
            assert (metrics._bootstrap_index_matrix(n, 300, seed) == per_resample).all(), (seed, n)
            assert (np.stack(list(metrics._bootstrap_indices(n, 300, seed))) == per_resample).all(), (seed, n)
    with pytest.raises(ValueError, match="empty"):
        metrics._bootstrap_index_matrix(0, 10, 0)

def _collapse_repeats_as_defined(words, max_n=metrics.MAX_REPEAT_NGRAM):
    """The definition, pass after pass until a full pass changes nothing (the former implementation)."""
    out = list(words)
    changed = True
    while changed:
        changed = False
        for n in range(1, max_n + 1):
            i = 0
            while i + 2 * n <= len(out):
                if out[i:i + n] == out[i + n:i + 2 * n]:
                    del out[i + n:i + 2 * n]
                    changed = True
                else:
                    i += 1
    return out


def _random_word_lists(seed, count):
    """Random lists over small vocabularies, with appended loops, nested repeats (a repeat of a repeated block) and
    long runs of one word: lengths 0 to about 200, both sides of the pair-count bound (40 words)."""
    import random

    rng = random.Random(seed)
    for _ in range(count):
        vocabulary = rng.choice(["ab", "abc", "abcd", "abcdefghij"])
        words = [rng.choice(vocabulary) for _ in range(rng.randint(0, 60))]
        shape = rng.random()
        if shape < 0.3 and words:
            words += words[-rng.randint(1, min(8, len(words))):] * rng.randint(1, 25)
        elif shape < 0.45 and words:
            block = words[-rng.randint(1, min(4, len(words))):] * rng.randint(2, 4)
            words += (block + [rng.choice(vocabulary)]) * rng.randint(2, 6)
        elif shape < 0.55:
            words = [rng.choice(vocabulary)] * rng.randint(0, 200)
        yield words


def test_collapse_repeats_equals_the_pass_by_pass_definition_on_random_and_adversarial_lists():
    import random

    rng = random.Random(17)
    for words in _random_word_lists(3, 3000):
        max_n = rng.choice([1, 2, 3, 5, metrics.MAX_REPEAT_NGRAM])
        assert metrics.collapse_repeats(words, max_n) == _collapse_repeats_as_defined(words, max_n), (words, max_n)
    assert metrics.collapse_repeats(["a", "a", "b", "a", "a", "b", "c"]) == ["a", "b", "c"]  # n = 1 first, then n = 2 on the result


def test_longest_immediate_repeat_equals_the_definition_on_long_and_adversarial_lists():
    import random

    rng = random.Random(19)
    for words in _random_word_lists(4, 2000):
        max_n = rng.choice([1, 2, 5, metrics.MAX_REPEAT_NGRAM])
        assert metrics.longest_immediate_repeat(words, max_n) == _longest_repeat_by_definition(words, max_n), (words, max_n)
    assert metrics.longest_immediate_repeat(list("aabbaabbaabb")) == 3  # n = 4: no two consecutive occurrences are 4 apart
    assert metrics.longest_immediate_repeat(["a"] * 100) == 100


def test_asr_item_scores_equal_the_single_metrics():
    import random

    words = ["می", "روم", "کتاب", "ها", "خانه", "ای", "بندر", "شلوغ", "است", "!", "A", "b", "۳", "ي", "\u200c"]
    rng = random.Random(23)
    for _ in range(1500):
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        hyp = " ".join(rng.choice(words) for _ in range(rng.randint(0, 15)))
        if rng.random() < 0.3:
            hyp += (" " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))) * rng.randint(2, 20)
        if not metrics.normalize_persian(ref):
            with pytest.raises(ValueError):
                metrics.asr_item_scores(ref, hyp)
            continue
        expected = {
            "wer": metrics.word_error_rate(ref, hyp),
            "cer": metrics.character_error_rate(ref, hyp),
            "wer_fix": metrics.wer_after_collapse(ref, hyp),
            "repetition_loop": metrics.is_repetition_loop(hyp),
        }
        assert metrics.asr_item_scores(ref, hyp) == expected, (ref, hyp)
    assert metrics.asr_item_scores(LOOP_REFERENCE, LOOP_HYPOTHESIS) == {"wer": 12.0, "cer": metrics.character_error_rate(LOOP_REFERENCE, LOOP_HYPOTHESIS), "wer_fix": 0.0, "repetition_loop": True}
