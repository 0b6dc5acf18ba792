"""The macro-F1 bootstrap interval counts classes itself (one ``f1_score`` call per resample cost ~2 s per task of
500 items): it must give the same floats as scikit-learn, bit for bit, and the same interval as before."""

import random

import pytest

from parsa import metrics
from parsa.scoring import agg_macro_f1, aggregate, macro_f1_of_pairs


def test_hand_checked_example_of_the_docstring_of_macro_f1():
    # gold [a, a, b], predicted [a, c, b]: F1(a) = 2/3, F1(b) = 1, F1(c) = 0 -> 5/9
    assert macro_f1_of_pairs([("a", "a"), ("a", "c"), ("b", "b")]) == pytest.approx(5 / 9, abs=1e-15)


@pytest.mark.parametrize("seed", range(300))
def test_equals_scikit_learn_bit_for_bit_on_random_label_lists(seed):
    rng = random.Random(seed)
    labels = [f"label_{i}" for i in range(rng.randint(1, 60))]  # up to intent's 60 classes
    n = rng.randint(1, 600)
    gold = [rng.choice(labels) for _ in range(n)]
    # predictions: often right, sometimes another class, sometimes a class no gold has (counts as an extra class)
    predicted = [g if rng.random() < rng.random() else rng.choice(labels + ["invented"]) for g in gold]
    assert macro_f1_of_pairs(list(zip(gold, predicted))) == metrics.macro_f1(gold, predicted)


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        macro_f1_of_pairs([])


def _records(task, n, seed):
    rng = random.Random(seed)
    labels = {"emotion": ["anger", "fear", "happiness", "sadness", "surprise", "neutral"], "gender": ["male", "female"]}[task]
    records = []
    for i in range(n):
        gold = rng.choice(labels)
        prediction = gold if rng.random() < 0.6 else rng.choice(labels)
        records.append({"task": task, "id": str(i), "status": "scored", "gold": gold, "prediction": prediction, "correct": gold == prediction})
    return records


@pytest.mark.parametrize(("task", "n", "seed"), [("emotion", 388, 1), ("gender", 500, 2), ("emotion", 7, 3)])
def test_interval_equals_the_former_per_resample_scikit_learn_computation(task, n, seed):
    records = _records(task, n, seed)
    former = metrics.bootstrap_ci(records, lambda sample: agg_macro_f1(task, sample, sample))
    assert aggregate(task, "macro_f1_ci95", records) == former
