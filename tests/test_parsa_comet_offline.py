"""parsa.comet_offline reads the logged translation records and scores the scored items with COMET.
``unbabel-comet`` cannot be installed beside lmms-eval, so a stand-in ``comet`` module records what it is given."""

from __future__ import annotations

import json
import math
import sys
import types

import numpy as np
import pytest

from parsa import comet_offline


def record(status, source, prediction, gold, doc_id=0):
    return {"doc_id": doc_id, "comet": {"task": "s2tt_fa_en", "status": status, "source": source, "prediction": prediction, "gold": gold}}


def test_scores_only_scored_items_and_counts_the_rest(tmp_path, monkeypatch, capsys):
    run = tmp_path / "out" / "model"
    run.mkdir(parents=True)
    rows = [record("scored", "سلام", "Hello", "Hi", 0), record("refused", "خوبی؟", None, "How are you?", 1), record("scored", "ممنون", "Thanks", "Thank you", 2)]
    (run / "20261129_000000_samples_parsa_s2tt_fa_en.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (run / "20261129_000000_samples_parsa_vazn.jsonl").write_text("{}\n", encoding="utf-8")  # not a translation task: ignored
    seen = {}

    class Model:
        def predict(self, data, batch_size, gpus, progress_bar):
            seen.update(data=data, gpus=gpus)
            return types.SimpleNamespace(scores=[0.5, 1.0], system_score=0.75)

    fake = types.ModuleType("comet")
    fake.load_from_checkpoint = lambda path: seen.setdefault("checkpoint", path) and Model()
    monkeypatch.setitem(sys.modules, "comet", fake)
    assert comet_offline.main(["--model", "/ckpt/model.ckpt", "--gpus", "0", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert seen["data"] == [{"src": "سلام", "mt": "Hello", "ref": "Hi"}, {"src": "ممنون", "mt": "Thanks", "ref": "Thank you"}]
    assert seen["checkpoint"] == "/ckpt/model.ckpt" and seen["gpus"] == 0
    entry = report["parsa_s2tt_fa_en"]
    assert (entry["comet"], entry["scored"], entry["excluded_or_refused"]) == (0.75, 2, 1) and list(report) == ["parsa_s2tt_fa_en"]


def test_samples_without_records_are_an_error_naming_the_line(tmp_path):
    file = tmp_path / "x_samples_parsa_s2tt_en_fa.jsonl"
    file.write_text(json.dumps({"doc_id": 0, "filtered_resps": "سلام"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x_samples_parsa_s2tt_en_fa.jsonl:1: no 'comet' record"):
        comet_offline.translation_triples(file)
    with pytest.raises(ValueError, match="no \\*_samples_parsa_s2tt_\\*.jsonl"):
        comet_offline.find_samples_files([str(tmp_path / "empty")])


# ------------------------------------------------------------------ segment scores and audio-bench-compare
# Fixture: two runs of parsa_s2tt_fa_en written by hand in lmms-eval's layout (a results file, a samples file of
# parsa.scoring.score_response records under each logged metric), 12 documents in A, B without doc 11; doc 3 refused in
# A, doc 5 excluded (empty answer) in B. The stand-in COMET model gives each hypothesis the segment score chosen in
# SEGMENT_SCORE and, as unbabel-comet does, the mean of them as system score.
TASK = "parsa_s2tt_fa_en"
SEGMENT_SCORE = {**{f"A says {i}": 0.50 + 0.03 * ((5 * i) % 7) for i in range(12)}, **{f"B says {i}": 0.55 + 0.04 * ((3 * i) % 5) for i in range(12)}}


def _answer(side: str, i: int) -> str:
    if side == "A" and i == 3:
        return "I am sorry, I cannot help with that."
    if side == "B" and i == 5:
        return ""
    return json.dumps({"translation": f"{side} says {i}"})


def _write_run(folder, side: str, n: int):
    from parsa import scoring

    folder.mkdir(parents=True)
    lines = []
    for i in range(n):
        doc = {"id": f"fa_en_{i:03d}", "reference": f"the reference {i}", "transcript": f"منبع {i}"}
        item = scoring.score_response("s2tt_fa_en", doc, _answer(side, i))
        lines.append(json.dumps({"doc_id": i, **{m: item for m in ("comet", "chrf_pp", "bleu", "chrf_pp_strict")}}, ensure_ascii=False) + "\n")
    (folder / f"20261129_00000{side == 'B':d}_samples_{TASK}.jsonl").write_text("".join(lines), encoding="utf-8")
    results = {"results": {TASK: {"alias": TASK, "comet,none": "not computed: unbabel-comet is not installed here", "chrf_pp,none": 1.0}},
               "configs": {TASK: {"process_docs": "parsa_docs(data=sha256:0123abcd)"}}, "config": {"model": "replay", "model_args": f"predictions={side}"},
               "date": f"20261129_00000{side == 'B':d}"}  # fmt: skip
    (folder / f"20261129_00000{side == 'B':d}_results.json").write_text(json.dumps(results), encoding="utf-8")


class _StandIn:
    def __init__(self, calls):
        self.calls = calls

    def predict(self, data, batch_size, gpus, progress_bar):
        self.calls.append(data)
        scores = [SEGMENT_SCORE[d["mt"]] for d in data]
        return types.SimpleNamespace(scores=scores, system_score=sum(scores) / len(scores))


@pytest.fixture
def comet_runs(tmp_path, monkeypatch, capsys):
    calls = []
    fake = types.ModuleType("comet")
    fake.load_from_checkpoint = lambda path: _StandIn(calls)
    monkeypatch.setitem(sys.modules, "comet", fake)
    _write_run(tmp_path / "a", "A", 12)
    _write_run(tmp_path / "b", "B", 11)
    for side in ("a", "b"):
        assert comet_offline.main(["--model", "/ckpt/wmt22/model.ckpt", "--gpus", "0", str(tmp_path / side)]) == 0
    printed = capsys.readouterr().out
    return {"root": tmp_path, "calls": calls, "printed": printed}


def _segments(folder):
    [file] = folder.glob(f"*_comet_{TASK}.json")
    return json.loads(file.read_text(encoding="utf-8"))


def test_segment_scores_are_written_beside_the_samples_keyed_by_doc_id(comet_runs):
    root = comet_runs["root"]
    data = _segments(root / "a")
    [samples] = (root / "a").glob(f"*_samples_{TASK}.jsonl")
    assert data["samples_file"] == samples.name and data["samples_sha256"] == comet_offline.sha256_of(samples)
    assert comet_offline.segments_path(samples).name == f"20261129_000000_comet_{TASK}.json"
    assert list(data["segments"]) == [str(i) for i in range(12)]
    assert data["segments"]["3"] == {"id": "fa_en_003", "status": "refused", "score": None}
    assert data["segments"]["4"] == {"id": "fa_en_004", "status": "scored", "score": pytest.approx(SEGMENT_SCORE["A says 4"])}
    scored = [SEGMENT_SCORE[f"A says {i}"] for i in range(12) if i != 3]
    assert [data["segments"][str(i)]["score"] for i in range(12) if i != 3] == pytest.approx(scored)
    assert (data["scored"], data["excluded"], data["refused"]) == (11, 0, 1)
    assert data["system_score"] == pytest.approx(sum(scored) / 11) and data["checkpoint"] == "/ckpt/wmt22/model.ckpt"
    assert [d["mt"] for d in comet_runs["calls"][0]] == [f"A says {i}" for i in range(12) if i != 3]  # COMET's order = file order of scored items
    b = _segments(root / "b")
    assert (b["scored"], b["excluded"], b["refused"], b["segments"]["5"]["score"]) == (10, 1, 0, None)


def _mean_over(side: str, docs) -> float:
    scores = [SEGMENT_SCORE[f"{side} says {d}"] for d in docs if not (side == "A" and d == 3) and not (side == "B" and d == 5)]
    return sum(scores) / len(scores) if scores else float("nan")


def test_compared_comet_is_the_difference_of_mean_segment_scores_over_the_paired_docs(comet_runs):
    from audio_bench_report import compare as cmp

    result = cmp.compare(comet_runs["root"] / "a", comet_runs["root"] / "b", resamples=200, seed=3)
    [row] = [c for c in result["comparisons"] if c["metric"] == "comet"]
    paired = range(11)
    assert (row["n_paired"], row["n_only_a"], row["n_only_b"]) == (11, 1, 0)
    assert row["a"] == pytest.approx(_mean_over("A", paired), abs=1e-12) and row["b"] == pytest.approx(_mean_over("B", paired), abs=1e-12)
    assert row["difference"] == pytest.approx(_mean_over("B", paired) - _mean_over("A", paired), abs=1e-12)
    assert row["a_run"] == pytest.approx(_mean_over("A", range(12))) and row["b_run"] == pytest.approx(_mean_over("B", paired))
    assert "10 in A, 10 in B of 11 paired" in " ".join(row["notes"]) and "comet" not in {s["metric"] for s in result["not_compared"]}

    # Reference: COMET is the task's first measure, so its draws are the first group's (seed + 0) streams of
    # stats.resample_differences; each resample's two means recomputed from the drawn documents' segment scores.
    boot_seed, perm_seed = np.random.SeedSequence(3).spawn(2)
    draws = np.random.default_rng(boot_seed).integers(0, 11, size=(200, 11))
    swaps = np.random.default_rng(perm_seed).integers(0, 2, size=(200, 11), dtype=bool)
    boot = [_mean_over("B", draw) - _mean_over("A", draw) for draw in draws]
    boot = [d for d in boot if not math.isnan(d)]
    assert row["ci95"] == pytest.approx(list(np.percentile(boot, [2.5, 97.5])), abs=1e-12)

    def side_score(side, d):
        return None if (side == "A" and d == 3) or (side == "B" and d == 5) else SEGMENT_SCORE[f"{side} says {d}"]

    perm = []
    for swap in swaps:
        mixed_b = [side_score("A" if swap[d] else "B", d) for d in paired]
        mixed_a = [side_score("B" if swap[d] else "A", d) for d in paired]
        perm.append(np.mean([s for s in mixed_b if s is not None]) - np.mean([s for s in mixed_a if s is not None]))
    expected_p = (1 + sum(abs(d) >= abs(row["difference"]) - 1e-12 for d in perm)) / 201
    assert row["p_value"] == pytest.approx(expected_p) and row["test"].startswith("paired permutation")


def test_comet_without_a_file_or_from_other_samples_is_not_compared_with_the_reason(comet_runs):
    from audio_bench_report import compare as cmp

    root = comet_runs["root"]
    [file_b] = (root / "b").glob(f"*_comet_{TASK}.json")
    file_b.unlink()
    result = cmp.compare(root / "a", root / "b", resamples=20)
    [entry] = [s for s in result["not_compared"] if s["metric"] == "comet"]
    assert "no COMET file in run B" in entry["reason"] and f"python -m parsa.comet_offline --model CHECKPOINT {root / 'b'}" in entry["reason"]
    assert "run A" not in entry["reason"] and {c["metric"] for c in result["comparisons"]} == {"chrf_pp", "bleu", "chrf_pp_strict"}
    [samples_a] = (root / "a").glob(f"*_samples_{TASK}.jsonl")
    samples_a.write_text(samples_a.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # the samples changed after COMET scored them
    [entry] = [s for s in cmp.compare(root / "a", root / "b", resamples=20)["not_compared"] if s["metric"] == "comet"]
    assert "run A:" in entry["reason"] and "another version of" in entry["reason"] and "no COMET file in run B" in entry["reason"]


def test_comet_scored_with_different_checkpoints_is_not_compared(comet_runs):
    from audio_bench_report import compare as cmp

    [file_b] = (comet_runs["root"] / "b").glob(f"*_comet_{TASK}.json")
    data = json.loads(file_b.read_text(encoding="utf-8"))
    file_b.write_text(json.dumps({**data, "checkpoint": "/ckpt/wmt20/model.ckpt"}), encoding="utf-8")
    result = cmp.compare(comet_runs["root"] / "a", comet_runs["root"] / "b", resamples=20)
    [entry] = [s for s in result["not_compared"] if s["metric"] == "comet"]
    assert "different COMET checkpoints (A: /ckpt/wmt22/model.ckpt, B: /ckpt/wmt20/model.ckpt)" in entry["reason"]
    data["segments"]["4"]["score"] = None  # a scored item without its segment score: an error naming file and document
    file_b.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(cmp.ReportInputError, match=r"_comet_parsa_s2tt_fa_en.json: doc_id 4: a scored item needs a numeric score"):
        cmp.compare(comet_runs["root"] / "a", comet_runs["root"] / "b", resamples=20)
