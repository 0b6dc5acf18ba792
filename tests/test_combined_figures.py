"""Issue 27 item 4: CMC over the documents both modes scored, and valid JSON wherever a figure is undefined.

Inputs are small hand-made per-document tables; the expected CMC values are worked out in the comments.
"""

import json
import math

import pytest

from audio_bench_core.json_text import finite_or_null, json_text
from mcga.report import CMC_TASKS, cmc_over_shared_documents


def _docs(values: dict[str, float], metric_names: tuple[str, ...]) -> dict[str, dict]:
    return {doc: {name: value for name in metric_names} for doc, value in values.items()}


def _tasks() -> dict[str, dict]:
    return {task: {"f1_official": 50.0, "acc_official": 50.0, "acc_strict": 50.0} for task in CMC_TASKS}


def test_cmc_uses_only_documents_both_modes_scored():
    # Audio scored d1..d3, text only d1..d2 (a --limit 2 text run). On the shared d1, d2 both sides score 100, so CMC
    # over the same documents is 100; the audio-only d3 (score 0) must not drag the audio side down to 66.7.
    qa = ("f1_official",)
    mc = ("acc_official", "acc_strict")
    per_document = {
        "mcga_sqa": _docs({"d1": 100.0, "d2": 100.0, "d3": 0.0}, qa),
        "mcga_sqa_text": _docs({"d1": 100.0, "d2": 100.0}, qa),
        "mcga_su": _docs({"d1": 100.0, "d2": 100.0, "d3": 0.0}, mc),
        "mcga_su_text": _docs({"d1": 100.0, "d2": 100.0}, mc),
        "mcga_sr": _docs({"d1": 100.0, "d2": 0.0, "d3": 0.0}, mc),
        "mcga_sr_text": _docs({"d1": 100.0, "d2": 100.0}, mc),
    }
    out = cmc_over_shared_documents(_tasks(), per_document, {})
    assert out["error"] is None and out["matched_by"] == "document"
    assert out["documents"] == {"SQA/QA": 2, "SU/LU": 2, "SR/LR": 2}
    # SQA/QA = 100/100, SU/LU = 100/100, SR/LR = 50/100  ->  (1 + 1 + 0.5) / 3 * 100 = 83.33...
    assert out["cmc"] == pytest.approx(250 / 3)
    assert out["cmc_strict"] == pytest.approx(250 / 3)


def test_cmc_refuses_modes_without_a_shared_document():
    qa, mc = ("f1_official",), ("acc_official", "acc_strict")
    per_document = {task: _docs({"a1": 100.0}, qa if "sqa" in task else mc) for task in CMC_TASKS}
    per_document["mcga_su_text"] = _docs({"b1": 100.0}, mc)
    out = cmc_over_shared_documents(_tasks(), per_document, {})
    assert out["cmc"] is None and "share no scored document" in out["error"]


def test_cmc_without_samples_refuses_limited_runs_and_accepts_full_data():
    limited = {task: (2 if task.endswith("_text") else 5, 5) for task in CMC_TASKS}
    refused = cmc_over_shared_documents(_tasks(), {task: None for task in CMC_TASKS}, limited)
    assert refused["cmc"] is None and "--limit" in refused["error"]
    full = {task: (5, 5) for task in CMC_TASKS}
    accepted = cmc_over_shared_documents(_tasks(), {task: None for task in CMC_TASKS}, full)
    assert accepted["error"] is None and accepted["matched_by"] == "full data"
    assert accepted["cmc"] == pytest.approx(100.0)  # every score 50 in both modes


def test_json_text_writes_null_and_the_reason_for_non_finite_numbers():
    text = json_text({"kendall_w": math.nan, "rows": [1.0, math.inf], "ok": 0.5})
    assert ": NaN" not in text and "Infinity" not in text  # the bare tokens json.dumps writes by default
    assert json.loads(text) == {
        "kendall_w": None,
        "kendall_w_reason": "undefined (the computation gave NaN)",
        "rows": [1.0, None],
        "ok": 0.5,
    }
    # an existing note is kept as the reason, not doubled
    assert finite_or_null({"w": math.nan, "w_note": "one rater"}) == {"w": None, "w_note": "one rater"}
