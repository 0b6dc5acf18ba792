"""One failed task costs only itself (issue 27 item 1): lmms-eval's aggregation step for our tasks never raises.

Fast checks of :func:`lmms_eval_tasks.plugin.guard_aggregations` on lmms-eval's real ``TaskOutput`` (a stand-in
task object giving the aggregations), :mod:`audio_bench_core.run_status`, and the exit after writing; the real-CLI
run is ``tests/test_responses_cli.py::test_one_failed_task_costs_only_itself_and_every_file_is_written``.
"""

from __future__ import annotations

import pytest
from lmms_eval.evaluator_utils import TaskOutput

from audio_bench_core import responses, run_status
from lmms_eval_tasks import plugin


class _Task:
    def __init__(self, aggregations):
        self._aggregations = aggregations
        self.args = None

    def aggregation(self):
        return self._aggregations


def _record(doc_id, failure=None, empty=False):
    return {"task": "t", "id": str(doc_id), "failure": failure, "empty": empty, "echo": False, "placeholder": None, "invalid_text_replaced": 0,
            "answer_key": None, "gold_key": "", "input_key": str(doc_id), "closed_answer_set": False, "preview": "", "chars": 0}  # fmt: skip


def _aggregate(name, metrics, aggregations):
    """lmms-eval's aggregation step for one task: ``metrics`` = ``{metric: per-document values}``."""
    output = TaskOutput(task=_Task(aggregations), task_name=name)
    for metric, items in metrics.items():
        output.sample_metrics[(metric, "none")] = items
    output.calculate_aggregate_metric(bootstrap_iters=0)
    return output.agg_metrics


@pytest.fixture(autouse=True)
def _guarded():
    plugin.guard_aggregations()
    run_status.clear()
    yield
    run_status.clear()


def test_a_raising_aggregation_costs_only_its_own_figure_and_marks_the_task_failed():
    def broken(items):
        raise KeyError("gold")

    records = [_record(i) for i in range(3)]
    agg = _aggregate("parsa_vazn", {"failed_generations": records, "accuracy": [1, 0, 1], "macro_f1": [1, 0, 1]},
                     {"failed_generations": responses.agg_failed_generations, "accuracy": lambda items: sum(items) / len(items), "macro_f1": broken})  # fmt: skip
    assert agg["accuracy,none"] == pytest.approx(2 / 3) and agg["failed_generations,none"] == 0  # kept
    assert agg["macro_f1,none"] == "not computed: macro_f1 aggregation raised KeyError: 'gold'"
    assert run_status.statuses() == {"parsa_vazn": {"status": "failed", "reasons": ["macro_f1 aggregation raised KeyError: 'gold'"]}}


def test_a_failed_run_withholds_every_figure_and_calls_no_aggregation_after_it():
    called = []
    records = [_record(0, failure="request failed: boom"), _record(1, empty=True), _record(2)]
    agg = _aggregate("mcga_sqa", {"failed_generations": records, "empty_responses": records, "f1_official": [0.0, 0.0, 100.0]},
                     {"failed_generations": responses.agg_failed_generations, "empty_responses": responses.agg_empty_responses,
                      "f1_official": lambda items: called.append(items) or 1.0})  # fmt: skip
    assert called == []  # e.g. no judge call on a failed run
    [reason] = run_status.status_of("mcga_sqa")["reasons"]
    assert reason.startswith("FailedRunError: t: failed run: 2 of 3 responses (66.7%) are failed generations (1) or empty (1)")
    assert {k: v for k, v in agg.items() if "_stderr" not in k} == dict.fromkeys(["failed_generations,none", "empty_responses,none", "f1_official,none"], f"not computed: {reason}")
    assert {v for k, v in agg.items() if "_stderr" in k} == {"N/A"}


def test_other_benchmarks_tasks_keep_lmms_eval_behaviour_unless_our_model_failed_them():
    def broken(items):
        raise ValueError("their bug")

    with pytest.raises(ValueError, match="their bug"):  # not ours: lmms-eval's behaviour, unchanged
        _aggregate("librispeech_test_clean", {"wer": [1, 2]}, {"wer": broken})
    run_status.mark("librispeech_test_clean", run_status.FAILED, "librispeech_test_clean: failed run: generation failed for 3 of 3 documents")
    agg = _aggregate("librispeech_test_clean", {"wer": [1, 2]}, {"wer": broken})
    assert agg["wer,none"] == "not computed: librispeech_test_clean: failed run: generation failed for 3 of 3 documents"


def test_statuses_keep_every_reason_failed_wins_and_the_exit_lines_name_each_task():
    run_status.mark("mmac_content", run_status.INCOMPLETE, "judge budget reached after 40 of 60 documents")
    run_status.mark("mmac_content", run_status.INCOMPLETE, "judge budget reached after 40 of 60 documents")  # once
    run_status.mark("mcga_asr", run_status.FAILED, "FailedRunError: mcga_asr: failed run: 14 of 14")
    assert run_status.statuses() == {"mmac_content": {"status": "incomplete", "reasons": ["judge budget reached after 40 of 60 documents"]},
                                     "mcga_asr": {"status": "failed", "reasons": ["FailedRunError: mcga_asr: failed run: 14 of 14"]}}  # fmt: skip
    assert plugin.failed_tasks_lines() == [
        "lmms-eval run incomplete: mmac_content: judge budget reached after 40 of 60 documents",
        "lmms-eval run failed: FailedRunError: mcga_asr: failed run: 14 of 14",
    ]
    run_status.mark("mmac_content", run_status.FAILED, "x aggregation raised ValueError: y")
    assert run_status.status_of("mmac_content")["status"] == "failed" and len(run_status.status_of("mmac_content")["reasons"]) == 2
    with pytest.raises(ValueError, match="one of failed, incomplete"):
        run_status.mark("t", "done", "")


def test_the_command_exits_1_after_its_tables_when_a_task_failed(capsys):
    printed = []
    evaluate = plugin._exit_nonzero_after_tables(lambda: printed.append("tables"))
    assert evaluate() is None and printed == ["tables"]  # nothing failed: lmms-eval's own ending
    run_status.mark("mcga_asr", run_status.FAILED, "FailedRunError: mcga_asr: failed run: 14 of 14")
    with pytest.raises(SystemExit) as exit_:
        evaluate()
    assert exit_.value.code == 1 and printed == ["tables", "tables"]
    assert capsys.readouterr().err.strip().splitlines()[-1] == "lmms-eval run failed: FailedRunError: mcga_asr: failed run: 14 of 14"
