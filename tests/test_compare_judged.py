"""``audio-bench-compare`` on judged metrics (issue 26): MCGA LLM-B / LLM-C (official and strict readings) and MMAC
Coverage / Precision / Accuracy, from the per-document judge scores the plugin writes into the results file
(``results["lmms_eval_audio_plugin"]["judged_documents"]``, audio_bench_core/judged_documents.py).

Fixtures, all through the real lmms-eval CLI with the judge pointed at a local chat-completions server
(tests/chat_server.py):

- MCGA: the 150 synthetic S2TT and SEC rows of tests/judged_mcga.py replayed three times. A: the judge replies of
  ``judged_mcga.server_reply`` (reasoning wraps, replies without a digit, unfinished reasoning: judge_failed items);
  B: another judge (the same reply shapes, picked by the prompt's hash with " (B)" appended, so other scores and
  other judge_failed items), ``--limit 140``; A140: A's judge (from A's cache, no call) with ``--limit 140``. So
  compare(A, B) pairs 140 documents (10 in A only), and A140's own results-file figure is A's over the paired ones.
- MMAC: the shipped sample's captions (tests/fixtures/mmac) judged by the fixture's scripted replies (A) and by a
  hashed-reply judge (B, some replies off the binary gender scale: judge_failed).

The expected numbers are each run's own figures in its results file (computed by the task's aggregation, not by
compare), and a reference bootstrap that recomputes LLM-B with mcga.judging.llm_b on each resample's documents.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from audio_bench_report import compare as cmp
from mcga import judging
from tests.chat_server import ChatServer, scripted_replies
from tests.conftest import FIXTURES
from tests.judged_mcga import judge_reply, server_reply, write_judged
from tests.test_cli_end_to_end import lmms_eval
from tests.test_judge_cli import judge_env

pytestmark = pytest.mark.cli
RESAMPLES = 300
SEED = 11


def reply_b(messages: list[dict]) -> str:
    """Judge B: the judged_mcga reply shapes, chosen by another hash of the same prompt."""
    return judge_reply(messages[-1]["content"] + " (B)")[0]


def mmac_reply_b(messages: list[dict]) -> str:
    """MMAC judge B: by the prompt's sha256, not mentioned (1 in 3), else mentioned with score 0, 1 or 2 (2 is off the
    binary gender scale: judge_failed there)."""
    number = int(hashlib.sha256(messages[-1]["content"].encode("utf-8")).hexdigest()[:8], 16)
    if number % 3 == 0:
        return json.dumps({"mentioned": False, "score": None, "reason": "judge B"})
    return json.dumps({"mentioned": True, "score": (number // 3) % 3, "reason": "judge B"})


@pytest.fixture(scope="module")
def runs(tmp_path_factory, lmms_eval_cli):
    root = tmp_path_factory.mktemp("compare_judged")
    data_dir, runner, _ = write_judged(root / "judged")
    env = {k: v for k, v in os.environ.items() if k not in ("DEEPSEEK_API_KEY",) and not k.startswith(("AUDIO_JUDGE_", "PARSA_", "MCGA_", "MMAC_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(root / "hf"), PYTHONUNBUFFERED="1")
    results = {}
    mcga = {**env, "MCGA_DATA_DIR": str(data_dir)}
    tasks = "mcga_s2tt,mcga_sec"
    with ChatServer(server_reply) as server:
        judged = {**judge_env(mcga, server, root / "a.sqlite3"), "AUDIO_JUDGE_CONCURRENCY": "8"}
        results["a"], _ = lmms_eval(lmms_eval_cli, judged, root / "a", tasks, "replay", f"predictions={runner}")
        results["a140"], _ = lmms_eval(lmms_eval_cli, judged, root / "a140", tasks, "replay", f"predictions={runner}", "--limit", "140")
    with ChatServer(reply_b) as server:
        judged = {**judge_env(mcga, server, root / "b.sqlite3"), "AUDIO_JUDGE_CONCURRENCY": "8"}
        results["b"], _ = lmms_eval(lmms_eval_cli, judged, root / "b", tasks, "replay", f"predictions={runner}", "--limit", "140")
    captions = f"predictions={FIXTURES / 'mmac' / 'captions.jsonl'}"
    with ChatServer(scripted_replies(FIXTURES / "mmac" / "judge_replies.json")) as server:
        results["mmac_a"], _ = lmms_eval(lmms_eval_cli, judge_env(env, server, root / "ma.sqlite3"), root / "mmac_a", "mmac", "replay", captions)
    with ChatServer(mmac_reply_b) as server:
        results["mmac_b"], _ = lmms_eval(lmms_eval_cli, judge_env(env, server, root / "mb.sqlite3"), root / "mmac_b", "mmac", "replay", captions)
    compared = cmp.compare(root / "a", root / "b", resamples=RESAMPLES, seed=SEED)
    compared_mmac = cmp.compare(root / "mmac_a", root / "mmac_b", resamples=RESAMPLES, seed=SEED)
    return {"root": root, **{k: v["results"] for k, v in results.items()}, "full": results, "result": compared, "mmac": compared_mmac}


def row(result: dict, task: str, metric: str) -> dict:
    [found] = [c for c in result["comparisons"] if c["task"] == task and c["metric"] == metric]
    return found


@pytest.mark.parametrize(("task", "metric"), [("mcga_s2tt", "llm_b"), ("mcga_s2tt", "llm_b_strict"), ("mcga_sec", "llm_c"), ("mcga_sec", "llm_c_strict")])
def test_judged_difference_is_the_difference_of_the_runs_own_figures_over_the_paired_documents(runs, task, metric):
    c = row(runs["result"], task, metric)
    own_a, own_b, own_a_all = (runs[k][task][f"{metric},none"] for k in ("a140", "b", "a"))
    assert isinstance(own_a, float) and isinstance(own_b, float)
    assert (c["n_paired"], c["n_only_a"], c["n_only_b"]) == (140, 10, 0)
    assert c["a"] == pytest.approx(own_a, abs=1e-9) and c["b"] == pytest.approx(own_b, abs=1e-9)
    assert c["difference"] == pytest.approx(own_b - own_a, abs=1e-9) and c["difference"] != 0
    assert c["a_run"] == pytest.approx(own_a_all) and c["a_run"] != pytest.approx(c["a"])  # A's own figure over its 150 documents
    assert c["ci95"][0] <= c["difference"] <= c["ci95"][1] and c["unit"] == "0-100"
    assert "paired permutation" in c["test"] and "paired bootstrap of documents" in c["test"]


def test_documents_judge_failed_in_one_run_only_are_counted_and_left_out_of_that_run(runs):
    """S2TT replies without a digit or with unfinished reasoning are judge_failed; the two judges fail on different
    documents. The note counts them from the results files' per-document records, by hand here."""
    records = {}
    for side in ("a", "b"):
        [path] = (runs["root"] / side).rglob("*_results.json")
        records[side] = json.loads(path.read_text(encoding="utf-8"))["lmms_eval_audio_plugin"]["judged_documents"]["mcga_s2tt"]
    a, b = records["a"], records["b"]
    assert a["dimensions"] == b["dimensions"] == list(judging.S2TT_DIMENSIONS) and len(a["official"]) == 150 and len(b["official"]) == 140
    failed = {side: {key for key, scores in r["official"].items() if None in scores} for side, r in records.items()}
    paired = set(b["official"])
    a_only, b_only, both = len((failed["a"] - failed["b"]) & paired), len(failed["b"] - failed["a"]), len(failed["a"] & failed["b"])
    assert a_only > 0 and b_only > 0
    c = row(runs["result"], "mcga_s2tt", "llm_b")
    assert f"judge_failed: {a_only} docs in A only, {b_only} in B only, {both} in both" in "; ".join(c["notes"])
    # judge_failed counts in the records are the run's own (left out of the means, counted in judge_failed)
    assert sum(s is None for scores in a["official"].values() for s in scores) == runs["a"]["mcga_s2tt"]["judge_failed,none"]
    assert sum(s is None for scores in a["strict"].values() for s in scores) == runs["a"]["mcga_s2tt"]["judge_failed_strict,none"]


def test_llm_b_interval_and_p_come_from_resampling_whole_documents(runs):
    """Reference: the same random draws as the comparison (the task's measures share one group: seed + 0),
    each resample's LLM-B recomputed with mcga.judging.llm_b on the means of the resampled documents' scores (judge_failed
    left out), not from summed parts."""
    records = {}
    for side in ("a", "b"):
        [path] = (runs["root"] / side).rglob("*_results.json")
        records[side] = json.loads(path.read_text(encoding="utf-8"))["lmms_eval_audio_plugin"]["judged_documents"]["mcga_s2tt"]["official"]
    def logged(side):
        return [json.loads(line) for line in next((runs["root"] / side).rglob("*_samples_mcga_s2tt.jsonl")).read_text(encoding="utf-8").splitlines()]

    in_b = {s["doc_id"] for s in logged("b")}
    keys = [s["llm_b"]["key"] for s in logged("a") if s["doc_id"] in in_b]  # the paired documents, in A's order

    def llm_b(scores, docs):
        means = {}
        for d, name in enumerate(judging.S2TT_DIMENSIONS):
            values = [scores[keys[i]][d] for i in docs if scores[keys[i]][d] is not None]
            means[name] = sum(values) / len(values) if values else None
        value = judging.llm_b(means)
        return float("nan") if value is None else value

    n = len(keys)
    boot_seed, perm_seed = np.random.SeedSequence(SEED).spawn(2)  # the bootstrap's and the permutation's streams (docs/report.md)
    draws = np.random.default_rng(boot_seed).integers(0, n, size=(RESAMPLES, n))
    swaps = np.random.default_rng(perm_seed).integers(0, 2, size=(RESAMPLES, n), dtype=bool)
    boot = [llm_b(records["b"], draw) - llm_b(records["a"], draw) for draw in draws]
    perm = []
    for swap in swaps:
        mixed_a = {keys[i]: (records["b"] if swap[i] else records["a"])[keys[i]] for i in range(n)}
        mixed_b = {keys[i]: (records["a"] if swap[i] else records["b"])[keys[i]] for i in range(n)}
        perm.append(llm_b(mixed_b, range(n)) - llm_b(mixed_a, range(n)))
    c = row(runs["result"], "mcga_s2tt", "llm_b")
    assert c["difference"] == pytest.approx(llm_b(records["b"], range(n)) - llm_b(records["a"], range(n)), abs=1e-9)
    assert c["ci95"] == pytest.approx(list(np.percentile(boot, [2.5, 97.5])), abs=1e-9)
    assert c["p_value"] == pytest.approx((1 + sum(abs(d) >= abs(c["difference"]) - 1e-12 for d in perm)) / (RESAMPLES + 1))


@pytest.mark.parametrize("metric", ["coverage", "precision", "accuracy"])
def test_mmac_category_figures_are_the_runs_own_on_every_category(runs, metric):
    differences = []
    for category in ("content", "background", "persona", "paralinguistic", "dynamic", "implication"):
        task = f"mmac_{category}"
        own_a, own_b = runs["mmac_a"][task][f"{metric},none"], runs["mmac_b"][task][f"{metric},none"]
        if isinstance(own_b, str):  # B mentioned nothing of implication: its Precision is "not computed"; so is the comparison
            assert (task, metric) == ("mmac_implication", "precision") and own_b.startswith("not computed")
            [skipped] = [r for r in runs["mmac"]["not_compared"] if (r["task"], r["metric"]) == (task, metric)]
            assert skipped["reason"].startswith("not defined over the 2 paired documents in B (nothing enters a denominator")
            continue
        c = row(runs["mmac"], task, metric)
        assert (c["a"], c["b"]) == (pytest.approx(own_a, abs=1e-9), pytest.approx(own_b, abs=1e-9)), task
        assert c["difference"] == pytest.approx(own_b - own_a, abs=1e-9) and c["n_only_a"] == c["n_only_b"] == 0 and c["unit"] == "percent"
        differences.append(c["difference"])
    assert len(differences) == (5 if metric == "precision" else 6) and any(d != 0 for d in differences)
    # the fixture's hand-computed paralinguistic figures (tests/fixtures/mmac/README.md) are A's
    assert row(runs["mmac"], "mmac_paralinguistic", metric)["a"] == pytest.approx({"coverage": 90, "precision": 80, "accuracy": 75}[metric])


def test_mmac_category_macro_is_compared_over_the_six_category_tasks(runs):
    """The group ``mmac``: the mean of the six category figures, recomputed on the documents of all six tasks (22
    captions); equal to the group's own figure in each results file. B's Precision is not computed (implication has
    no mention), so neither is its comparison."""
    for metric in ("accuracy", "coverage"):
        c = row(runs["mmac"], "mmac", metric)
        own_a, own_b = runs["mmac_a"]["mmac"][f"{metric},none"], runs["mmac_b"]["mmac"][f"{metric},none"]
        assert (c["a"], c["b"], c["n_paired"]) == (pytest.approx(own_a, abs=1e-9), pytest.approx(own_b, abs=1e-9), 22)
        assert c["a"] == pytest.approx({"accuracy": 350 / 6, "coverage": 440 / 6}[metric])  # the fixture's hand-computed values
        assert c["difference"] == pytest.approx(own_b - own_a, abs=1e-9) and c["ci95"][0] <= c["difference"] <= c["ci95"][1]
    assert runs["mmac_b"]["mmac"]["precision,none"].startswith("not computed")
    assert [r["reason"] for r in runs["mmac"]["not_compared"] if (r["task"], r["metric"]) == ("mmac", "precision")][0].startswith("not defined over the 22")
    assert "|mmac " in cmp.text_report(runs["mmac"])


def test_a_run_without_a_judge_is_named_per_run_and_the_rest_compared(runs, tmp_path, lmms_eval_cli):
    """A run scored without a judge: its LLM-B reads "not computed: ..."; compare says so for that run, compares the
    judge-free figures, and the printed table names it."""
    env = {k: v for k, v in os.environ.items() if k not in ("DEEPSEEK_API_KEY",) and not k.startswith(("AUDIO_JUDGE_", "PARSA_", "MCGA_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(runs["root"] / "hf"), MCGA_DATA_DIR=str(runs["root"] / "judged" / "data"))
    lmms_eval(lmms_eval_cli, env, tmp_path / "nojudge", "mcga_s2tt", "replay", f"predictions={runs['root'] / 'judged' / 'runner'}", "--limit", "140")
    result = cmp.compare(runs["root"] / "b", tmp_path / "nojudge", tasks=["mcga_s2tt"], resamples=50)
    reasons = {r["metric"]: r["reason"] for r in result["not_compared"]}
    assert set(reasons) == {"llm_b", "llm_b_strict"} and reasons["llm_b"].startswith("B: not computed: no judge configured")
    assert {c["metric"] for c in result["comparisons"]} == {"chrf_pp", "bleu"}
    assert all(c["difference"] == 0 for c in result["comparisons"])  # the same outputs
    assert "not compared: mcga_s2tt llm_b: B: not computed" in cmp.text_report(result)


# ------------------------------------------------------------------------------------------ unit tests
def test_llm_b_and_llm_c_from_parts_equal_mcga_judging_on_random_scores_with_judge_failures():
    rng = np.random.default_rng(4)
    for metric, combine, top in (("llm_b", judging.llm_b, 5), ("llm_c", judging.llm_c, 3)):
        [official, _] = [m for m in cmp.measures_for("mcga_s2tt" if metric == "llm_b" else "mcga_sec") if m.judged]
        names = list(judging.S2TT_DIMENSIONS if metric == "llm_b" else judging.SEC_DIMENSIONS)
        for _ in range(30):
            n = int(rng.integers(2, 20))
            scores = [[None if rng.random() < 0.25 else int(rng.integers(0, top + 1)) for _ in names] for _ in range(n)]
            values = [{"scores": s} if rng.random() < 0.9 else None for s in scores]  # None: no record (not judged)
            means = {}
            for d, name in enumerate(names):
                judged = [v["scores"][d] for v in values if v is not None and v["scores"][d] is not None]
                means[name] = sum(judged) / len(judged) if judged else None
            expected = combine(means)
            got = official.value(official.parts(values).sum(0))[0]
            assert (np.isnan(got) and expected is None) or got == pytest.approx(expected, abs=1e-12)


def test_mmac_figures_from_parts_equal_mmac_metrics_on_random_outcomes():
    from mmac import metrics
    from mmac.schema import CATEGORIES

    rng = np.random.default_rng(8)
    measures = {m.metric: m for m in cmp.measures_for("mmac_paralinguistic")}
    dimensions = list(CATEGORIES["paralinguistic"])
    for _ in range(40):
        values = []
        for _ in range(int(rng.integers(1, 15))):
            rows = []
            for dimension in rng.choice(dimensions, int(rng.integers(1, 3)), replace=False):
                draw = rng.random()
                rows.append([str(dimension), None, None] if draw < 0.2 else [str(dimension), False, None] if draw < 0.5 else [str(dimension), True, float(rng.integers(0, 5)) / 4])
            values.append({"outcomes": rows} if rng.random() < 0.9 else None)  # None: generation failed (no outcome)
        outcomes = [metrics.Outcome(d, m, s) for v in values if v is not None for d, m, s in v["outcomes"]]
        expected = metrics.category_scores(metrics.dimension_scores(outcomes)).get("paralinguistic", dict.fromkeys(metrics.METRICS))
        for metric, measure in measures.items():
            got = measure.value(measure.parts(values).sum(0))[0]
            assert (np.isnan(got) and expected[metric] is None) or got == pytest.approx(expected[metric], abs=1e-9), metric
