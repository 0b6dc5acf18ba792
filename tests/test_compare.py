"""``audio-bench-compare`` (audio_bench_report/compare.py, stats.py) on real lmms-eval output.

Fixture: the MCGA release-shaped set (tests/release_shaped_mcga.py) replayed through the real CLI twice, mcga_asr and
mcga_su only: A = the official runner rows with ``--limit 200``; B = a copy of those rows with chosen answers changed
(every 7th ASR output replaced by its reference, every 11th emptied; every 5th SU answer the gold letter, every 13th
a wrong one) with ``--limit 190``, so 10 documents are in A only. Two CLI runs in all (about 40 s of CPU); the
comparisons use few resamples except where a test pins them against a reference loop.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from audio_bench_report import compare as cmp
from audio_bench_report import stats
from mcga import metrics as mcga_metrics
from tests.release_shaped_mcga import write_release
from tests.test_cli_end_to_end import lmms_eval, samples

pytestmark = pytest.mark.cli
RESAMPLES = 200


def _changed(rows: list[dict], task: str) -> list[dict]:
    out = []
    for number, row in enumerate(rows):
        row = dict(row)
        if task == "asr" and number % 7 == 0:
            row["asr_r"] = row["asr"]
        elif task == "asr" and number % 11 == 0:
            row["asr_r"] = ""
        elif task == "su" and number % 5 == 0:
            row["su_r"] = row["su_a"]
        elif task == "su" and number % 13 == 0:
            row["su_r"] = "A" if row["su_a"] != "A" else "B"
        out.append(row)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory, lmms_eval_cli):
    import os

    root = tmp_path_factory.mktemp("compare")
    data_dir, runner, _ = write_release(root / "release")
    env = {k: v for k, v in os.environ.items() if k not in ("DEEPSEEK_API_KEY",) and not k.startswith(("AUDIO_JUDGE_", "PARSA_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(root / "hf"), PYTHONUNBUFFERED="1", MCGA_DATA_DIR=str(data_dir))
    runner_b = root / "runner_b"
    for task in ("asr", "su"):
        rows = [json.loads(line) for line in (runner / task / "synthetic_audio.jsonl").read_text(encoding="utf-8").splitlines()]
        (runner_b / task).mkdir(parents=True)
        (runner_b / task / "synthetic_audio.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _changed(rows, task)), encoding="utf-8")
    results_a, _ = lmms_eval(lmms_eval_cli, env, root / "out_a", "mcga_asr,mcga_su", "replay", f"predictions={runner}", "--limit", "200")
    results_b, _ = lmms_eval(lmms_eval_cli, env, root / "out_b", "mcga_asr,mcga_su", "replay", f"predictions={runner_b}", "--limit", "190")
    result = cmp.compare(root / "out_a", root / "out_b", resamples=RESAMPLES, seed=7)
    return {"root": root, "a": results_a["results"], "b": results_b["results"], "result": result}


def row(result: dict, task: str, metric: str) -> dict:
    [found] = [c for c in result["comparisons"] if c["task"] == task and c["metric"] == metric]
    return found


def test_ten_documents_missing_from_one_run_are_counted_and_the_rest_compared(runs):
    for metric in ("cer_official", "cer_strict", "acc_official", "acc_strict"):
        c = row(runs["result"], "mcga_asr" if metric.startswith("cer") else "mcga_su", metric)
        assert (c["n_paired"], c["n_only_a"], c["n_only_b"]) == (190, 10, 0)


def test_exact_mcnemar_p_equals_the_hand_computation_on_the_discordant_counts(runs):
    a = {s["doc_id"]: s["acc_official"] for s in samples(runs["root"] / "out_a", "mcga_su")}
    b = {s["doc_id"]: s["acc_official"] for s in samples(runs["root"] / "out_b", "mcga_su")}
    a_only = sum(1 for d in b if a[d] == 100 and b[d] == 0)
    b_only = sum(1 for d in b if a[d] == 0 and b[d] == 100)
    assert a_only > 0 and b_only > a_only  # the changes made B right more often
    n, k = a_only + b_only, min(a_only, b_only)
    expected = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)  # statsmodels mcnemar(exact=True)
    c = row(runs["result"], "mcga_su", "acc_official")
    assert c["p_value"] == pytest.approx(expected, rel=1e-12)
    assert f"{a_only} right in A only, {b_only} in B only" in c["test"]
    assert c["a"] == pytest.approx(100 * sum(a[d] == 100 for d in b) / len(b)) and c["b"] == pytest.approx(runs["b"]["mcga_su"]["acc_official,none"])


def test_corpus_cer_difference_is_the_difference_of_the_runs_own_corpus_cers(runs):
    items_a = [s["cer_official"] for s in samples(runs["root"] / "out_a", "mcga_asr")][:190]
    c = row(runs["result"], "mcga_asr", "cer_official")
    own_a = mcga_metrics.official_cer_percent([i["ref"] for i in items_a], [i["output"] for i in items_a])
    assert c["a"] == pytest.approx(own_a, abs=1e-9)
    assert c["b"] == pytest.approx(runs["b"]["mcga_asr"]["cer_official,none"], abs=1e-9) == c["b_run"]  # B ran on the paired docs only
    assert c["a_run"] == pytest.approx(runs["a"]["mcga_asr"]["cer_official,none"]) and c["a_run"] != pytest.approx(c["a"])
    assert c["difference"] == pytest.approx(c["b"] - c["a"], abs=1e-12) and c["difference"] > 0  # B: 1 in 11 answers emptied outweighs 1 in 7 made exact


def test_cer_interval_and_p_come_from_resampling_whole_text_clusters(runs):
    """Reference: the same random draws, each resample's corpus CERs recomputed with mcga.metrics.official_cer_percent on
    the resampled documents' texts (whole clusters of one text id), not from summed parts."""
    a = [s["cer_official"] for s in samples(runs["root"] / "out_a", "mcga_asr")][:190]
    b = [s["cer_official"] for s in samples(runs["root"] / "out_b", "mcga_asr")]
    ids = list(dict.fromkeys(i["id"] for i in a))
    members = [[n for n, i in enumerate(a) if i["id"] == text] for text in ids]
    assert any(len(m) > 1 for m in members)  # the release shape: one text read by several speakers

    def cer(items, docs):
        return mcga_metrics.official_cer_percent([items[d]["ref"] for d in docs], [items[d]["output"] for d in docs])

    # cer_official is the task's first measure group: seed + 0; stats.resample_differences' streams (its docstring)
    boot_seed, perm_seed = np.random.SeedSequence(7).spawn(2)
    draws = np.random.default_rng(boot_seed).integers(0, len(ids), size=(RESAMPLES, len(ids)))
    swaps = np.random.default_rng(perm_seed).integers(0, 2, size=(RESAMPLES, len(ids)), dtype=bool)
    boot, perm = [], []
    for draw, swap in zip(draws, swaps):
        docs = [d for cluster in draw for d in members[cluster]]
        boot.append(cer(b, docs) - cer(a, docs))
        mixed_a = {d: (b if swap[c] else a)[d] for c, m in enumerate(members) for d in m}
        mixed_b = {d: (a if swap[c] else b)[d] for c, m in enumerate(members) for d in m}
        everything = list(range(len(a)))
        perm.append(cer(mixed_b, everything) - cer(mixed_a, everything))
    c = row(runs["result"], "mcga_asr", "cer_official")
    assert c["clusters"] == len(ids) and "text clusters" in c["test"] and "permutation of clusters" in c["test"]
    assert c["ci95"] == pytest.approx(list(np.percentile(boot, [2.5, 97.5])), abs=1e-9)
    observed = c["difference"]
    assert c["p_value"] == pytest.approx((1 + sum(abs(d) >= abs(observed) - 1e-12 for d in perm)) / (RESAMPLES + 1))


def test_holm_and_signs_and_the_json_command(runs, tmp_path, capsys):
    result = runs["result"]
    assert [c["p_value_adjusted"] for c in result["comparisons"]] == pytest.approx(stats.holm([c["p_value"] for c in result["comparisons"]]))
    out = tmp_path / "c.json"
    assert cmp.main([str(runs["root"] / "out_a"), str(runs["root"] / "out_b"), "--tasks", "mcga_su", "--resamples", "50", "--json", str(out), "--tables", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "mcga_su" in printed and "acc_strict" in printed and "exact McNemar" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    keys = {"task", "metric", "a", "b", "difference", "ci95", "p_value", "p_value_adjusted", "test", "n_paired", "n_only_a", "n_only_b"}
    assert {c["task"] for c in data["comparisons"]} == {"mcga_su"} and all(keys <= set(c) for c in data["comparisons"])
    assert (tmp_path / "comparison.csv").read_text(encoding="utf-8").count("\n") == 3 and (tmp_path / "comparison.tex").exists()


def test_runs_over_different_data_are_refused_with_the_reason(runs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(runs["root"] / "out_b", other)
    [results] = other.rglob("*_results.json")
    data = json.loads(results.read_text(encoding="utf-8"))
    data["configs"]["mcga_su"]["process_docs"] = "mcga_su_docs(data=sha256:0000000000000000)"
    results.write_text(json.dumps(data), encoding="utf-8")
    result = cmp.compare(runs["root"] / "out_a", other, resamples=20)
    [refused] = result["refused"]
    assert refused["task"] == "mcga_su" and "different data" in refused["reason"] and "sha256:0000000000000000" in refused["reason"]
    assert {c["task"] for c in result["comparisons"]} == {"mcga_asr"}


# ------------------------------------------------------------------------------------------ unit tests
def test_exact_mcnemar_and_holm_against_hand_values():
    a = np.array([1] * 7 + [0] * 2 + [1] * 5, bool)
    b = np.array([0] * 7 + [1] * 2 + [1] * 5, bool)
    p, a_only, b_only = stats.mcnemar_exact(a, b)
    assert (a_only, b_only) == (7, 2) and p == pytest.approx(2 * (1 + 9 + 36) / 2**9)  # 2 * P(X <= 2), X ~ Bin(9, 1/2)
    assert stats.mcnemar_exact(a, a)[0] == 1.0
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    assert stats.holm([0.01, 0.04, 0.03, 0.005, float("nan")])[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_parsa_macro_f1_from_parts_equals_parsa_own_figure_on_random_labels():
    from parsa import scoring

    rng = np.random.default_rng(3)
    labels = ["happy", "sad", "angry", "neutral"]
    [official, strict] = [m for m in cmp.measures_for("parsa_emotion") if m.metric.startswith("macro_f1")][:2]
    for _ in range(20):
        records = []
        for number in range(int(rng.integers(3, 25))):
            status = "scored" if rng.random() < 0.8 else "excluded"
            gold, predicted = str(rng.choice(labels)), str(rng.choice(labels))
            records.append({"task": "emotion", "id": str(number), "status": status, "reason": "", "gold": gold, "prediction": predicted if status == "scored" else None,
                            "correct": gold == predicted if status == "scored" else None, "out_of_set": None})  # fmt: skip
        scored = [r for r in records if r["status"] == "scored"]
        if scored:
            assert official.value(official.parts(records).sum(0))[0] == pytest.approx(scoring.agg_macro_f1("emotion", records, scored), abs=1e-12)
        assert strict.value(strict.parts(records).sum(0))[0] == pytest.approx(scoring.agg_macro_f1_strict("emotion", records, scored), abs=1e-12)


def test_a_row_whose_official_and_strict_readings_disagree_in_sign_says_so():
    # 12 docs: B is right by the official rule where A was not (romanised answers the official rule accepts), and wrong
    # by the strict rule where A was right.
    docs_a = {str(n): {"doc_id": n, "acc_official": 0.0 if n < 6 else 100.0, "acc_strict": 100.0} for n in range(12)}
    docs_b = {str(n): {"doc_id": n, "acc_official": 100.0, "acc_strict": 0.0 if n < 3 else 100.0} for n in range(12)}
    rows, _ = cmp.compare_task("mcga_su", cmp.TaskDocs("sha256:x", docs_a, None), cmp.TaskDocs("sha256:x", docs_b, None), 50, 0)
    official, strict = rows
    assert (official.difference, strict.difference) == (pytest.approx(50.0), pytest.approx(-25.0))
    assert "disagree in sign (acc_strict: -25)" in official.notes[-1] and "disagree in sign (acc_official: +50)" in strict.notes[-1]
    assert official.p_value == pytest.approx(2 / 2**6) and official.small_n  # 6 discordant, all for B: 2 * (1/2)^6
    with pytest.raises(cmp.ReportInputError, match="different data"):
        cmp.compare_task("mcga_su", cmp.TaskDocs("sha256:x", docs_a, None), cmp.TaskDocs("sha256:y", docs_b, None), 50, 0)


def test_vectorised_chrf_equals_sacrebleu_on_random_sentences():
    rng = np.random.default_rng(5)
    metric = cmp._sacrebleu_metric("chrf_pp")
    words = ["the", "moon", "light", "gleams", "frost", "ground", "x", ""]
    refs = [" ".join(rng.choice(words, 6)) for _ in range(40)]
    hyps = [" ".join(rng.choice(words, int(rng.integers(0, 8)))) for _ in range(40)]
    stats_ = np.array(metric._extract_corpus_statistics(hyps, [refs]), float)
    for _ in range(30):
        chosen = rng.integers(0, 40, int(rng.integers(1, 40)))
        total = stats_[chosen].sum(0)
        assert cmp.chrf_from_sums(total)[0] == metric._compute_score_from_stats(list(total)).score  # sacrebleu's operations, in its order
    assert cmp.chrf_from_sums(np.zeros(24))[0] == metric._compute_score_from_stats([0] * 24).score == 0.0


def _sentences(seed: int, n: int) -> tuple[list[str], list[str], list[str]]:
    """Random references and two systems' hypotheses over a small vocabulary; B keeps ~85 % of A's sentences."""
    rng = np.random.default_rng(seed)
    words = ["the", "moon", "light", "gleams", "frost", "ground", "x", "on", "a", ""]
    refs = [" ".join(rng.choice(words, int(rng.integers(1, 12)))) for _ in range(n)]
    hyps_a = [" ".join(rng.choice(words, int(rng.integers(0, 12)))) for _ in range(n)]
    hyps_b = [h if rng.random() < 0.85 else " ".join(rng.choice(words, int(rng.integers(0, 12)))) for h in hyps_a]
    return refs, hyps_a, hyps_b


def test_vectorised_bleu_equals_sacrebleu_on_random_sentences():
    refs, hyps, _ = _sentences(6, 60)
    metric = cmp._sacrebleu_metric("bleu")
    stats_ = np.array(metric._extract_corpus_statistics(hyps, [refs]), float)
    rng = np.random.default_rng(8)
    for _ in range(200):
        total = stats_[rng.integers(0, 60, int(rng.integers(1, 60)))].sum(0)
        assert cmp.bleu_from_sums(total)[0] == pytest.approx(metric._compute_score_from_stats(list(total)).score, rel=1e-12, abs=1e-9)
    # the edge cases: nothing matches (0), a zero-match order (exp smoothing), no 4-grams at all, an empty hypothesis side (BP 0)
    for row in ([0, 5, 0, 0, 0, 0, 0, 0, 0, 0], [9, 10, 6, 2, 0, 0, 9, 8, 7, 6], [3, 3, 3, 1, 0, 0, 3, 2, 1, 0], [12, 9, 8, 4, 2, 1, 12, 11, 10, 9]):
        assert cmp.bleu_from_sums(np.array(row, float))[0] == pytest.approx(metric._compute_score_from_stats(list(row)).score, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("name", ["chrf_pp", "bleu"])
def test_approximate_randomisation_p_equals_sacrebleu_paired_test(name, monkeypatch):
    """Reference: sacrebleu's own PairedTest(test_type="ar") on the same texts (its seed, 12345 by default). Ours draws
    the same selections (chunks of multiples of 32 draws) and scores them vectorised: the p-values are equal, also
    when the draws come in many small chunks."""
    from sacrebleu.significance import PairedTest

    refs, hyps_a, hyps_b = _sentences(5, 77)
    measure = cmp.Measure(name, "official", "", "0-100", cmp._sacrebleu_parts(name, cmp._mcga_texts), cmp._sacrebleu_value(name), sacrebleu=(name, cmp._mcga_texts))
    values_a = [{"translation": h, "reference": r} for h, r in zip(hyps_a, refs)]
    values_b = [{"translation": h, "reference": r} for h, r in zip(hyps_b, refs)]
    for resamples in (1000, 999):
        _, scores = PairedTest([("A", hyps_a), ("B", hyps_b)], {name: cmp._sacrebleu_metric(name)}, [refs], test_type="ar", n_samples=resamples)()
        [key] = [k for k in scores if k != "System"]
        expected = scores[key][1].p_value
        assert 0.05 < expected < 0.95  # a case where the count of larger differences matters, not the floor 1/(R+1)
        assert cmp._sacrebleu_p(measure, values_a, values_b, resamples) == expected
        monkeypatch.setattr(stats, "CHUNK_ELEMENTS", 100)  # 32 resamples per chunk
        assert cmp._sacrebleu_p(measure, values_a, values_b, resamples) == expected
        monkeypatch.undo()


def test_resampled_medians_and_sums_equal_a_loop_over_the_same_draws(monkeypatch):
    """Reference: the draws of stats.resample_differences' docstring, each resample's figures recomputed with
    np.nanmedian / from the summed parts of the drawn (or swapped) documents; the same in any chunking. The third
    figure is PARSA intent's macro-F1 (60 classes, one-hot parts: the sparse product)."""
    from parsa.tasks import get_task

    rng = np.random.default_rng(1)
    n, resamples = 53, 300
    va, vb = rng.random(n), rng.random(n)
    va[rng.random(n) < 0.2] = np.nan  # documents out of the figure (PARSA's non-scored items)
    vb[rng.random(n) < 0.2] = np.nan
    va[:5], vb[3:8] = 0.5, 0.5  # ties
    pa, pb = rng.integers(0, 5, (n, 2)).astype(float), rng.integers(0, 5, (n, 2)).astype(float)
    pa[:, 1] += 5
    pb[:, 1] += 5
    ratio = cmp._ratio(1.0)
    labels = list(get_task("intent").labels)
    gold = [str(rng.choice(labels)) for _ in range(n)]

    def records():
        out = []
        for number, g in enumerate(gold):
            status = "scored" if rng.random() < 0.9 else "excluded"
            predicted = g if rng.random() < 0.5 else str(rng.choice(labels))
            out.append({"task": "intent", "id": str(number), "status": status, "reason": "", "gold": g, "prediction": predicted if status == "scored" else None,
                        "correct": g == predicted if status == "scored" else None, "out_of_set": None})  # fmt: skip
        return out

    [macro] = [m for m in cmp.measures_for("parsa_intent") if m.metric == "macro_f1_strict"]
    both = macro.parts(records() + records())  # the two runs' parts in one call share their class columns, as compare_task does
    ma, mb = both[:n], both[n:]
    assert not isinstance(stats._operand(np.hstack([pa, pb, ma, mb])), np.ndarray)  # sparse
    boot_seed, perm_seed = np.random.SeedSequence(3).spawn(2)
    index = np.random.default_rng(boot_seed).integers(0, n, (resamples, n))
    swaps = np.random.default_rng(perm_seed).integers(0, 2, (resamples, n), dtype=bool)

    def summed(value, a, b):
        boot = [value(b[i].sum(0)[None])[0] - value(a[i].sum(0)[None])[0] for i in index]
        perm = [value(np.where(w[:, None], a, b).sum(0)[None])[0] - value(np.where(w[:, None], b, a).sum(0)[None])[0] for w in swaps]
        return boot, perm

    expected_median = ([np.nanmedian(vb[i]) - np.nanmedian(va[i]) for i in index],
                       [np.nanmedian(np.where(w, va, vb)) - np.nanmedian(np.where(w, vb, va)) for w in swaps])  # fmt: skip
    expected = [summed(ratio, pa, pb), summed(macro.value, ma, mb)]
    for chunk in (stats.CHUNK_ELEMENTS, 32 * n, 100):
        monkeypatch.setattr(stats, "CHUNK_ELEMENTS", chunk)
        (boot_median, perm_median), *found = stats.resample_differences(
            [stats.Figure(va[:, None], vb[:, None], median=True), stats.Figure(pa, pb, ratio), stats.Figure(ma, mb, macro.value)], None, resamples, 3)
        assert np.array_equal(boot_median, expected_median[0], equal_nan=True) and np.array_equal(perm_median, expected_median[1], equal_nan=True)
        for (boot, perm), (boot_expected, perm_expected) in zip(found, expected):
            assert boot == pytest.approx(boot_expected, abs=1e-12) and perm == pytest.approx(perm_expected, abs=1e-12)


def test_macro_f1_classes_predicted_by_one_run_only_are_compared_as_themselves():
    """A predicts 'fear' where B predicts 'surprise', neither ever gold: each run's classes differ, so the parts of
    both runs must share columns (one call over both). Reference: the permutation p-value recomputed with PARSA's own
    macro-F1 (parsa.scoring.agg_macro_f1) on the swapped records, with the draws of stats.resample_differences."""
    from parsa import scoring

    gold = ["anger", "happiness", "sadness", "neutral"] * 6

    def record(number, g, predicted, status="scored"):
        return {"task": "emotion", "id": str(number), "status": status, "reason": "", "gold": g, "prediction": predicted if status == "scored" else None,
                "correct": g == predicted if status == "scored" else None, "out_of_set": None}  # fmt: skip

    rng = np.random.default_rng(4)
    records_a = [record(n, g, "fear" if n % 5 == 0 else (g if rng.random() < 0.6 else "sadness")) for n, g in enumerate(gold)]
    records_b = [record(n, g, "surprise" if n % 7 == 0 else (g if rng.random() < 0.7 else "anger"), "excluded" if n == 3 else "scored") for n, g in enumerate(gold)]
    docs = [{str(n): {"doc_id": n, "macro_f1": r, "macro_f1_strict": r, "accuracy": r, "accuracy_strict": r} for n, r in enumerate(run)} for run in (records_a, records_b)]
    rows, _ = cmp.compare_task("parsa_emotion", cmp.TaskDocs("sha256:x", docs[0], None), cmp.TaskDocs("sha256:x", docs[1], None), RESAMPLES, 0)
    [row_] = [r for r in rows if r.metric == "macro_f1"]

    def figure(records):
        return scoring.agg_macro_f1("emotion", records, [r for r in records if r["status"] == "scored"])

    assert (row_.a, row_.b) == (pytest.approx(figure(records_a), abs=1e-12), pytest.approx(figure(records_b), abs=1e-12))
    _, perm_seed = np.random.SeedSequence(0).spawn(2)  # the task's one group of measures: seed + 0
    swaps = np.random.default_rng(perm_seed).integers(0, 2, (RESAMPLES, len(gold)), dtype=bool)
    permuted = [figure([a if s else b for a, b, s in zip(records_a, records_b, w)]) - figure([b if s else a for a, b, s in zip(records_a, records_b, w)]) for w in swaps]
    assert row_.p_value == pytest.approx((1 + sum(abs(d) >= abs(row_.difference) - 1e-12 for d in permuted)) / (RESAMPLES + 1), abs=1e-12)
