"""Issue 27 items 4 and 1: CMC over the documents both modes scored (mcga-report and audio-bench-report, one function),
valid JSON wherever a figure is undefined, a task the run marked failed shown as such in the report's health table, and
MMAC's group figure guarded like every task's.

Inputs: small hand-made per-document tables, three replay runs through the real lmms-eval CLI (described above the
fixture ``cli_runs``), and lmms-eval's own group step on hand-made category results; the expected values are worked
out in the comments.
"""

import contextlib
import csv
import io
import json
import math
import os
import shutil

import pytest

from audio_bench_core.json_text import finite_or_null, json_text
from audio_bench_report.cli import write_report
from audio_bench_report.runs import read_runs
from mcga import data as mcga_data
from mcga import metrics as mcga_metrics
from mcga import report as mcga_report
from mcga.report import CMC_TASKS, cmc_over_shared_documents
from tests.test_cli_end_to_end import run_cli
from tests.test_parsa_cli import gold


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


# ------------------------------------------------------------------ through the real CLI and audio-bench-report
# Three replay runs of one "model" (one predictions file, so one report run per folder):
#   A: mcga_sqa, mcga_su, mcga_sr on the shipped sample (6/5/4 documents), every answer wrong (score 0) except the
#      first two documents of each task, and of those SR's second is wrong too;
#   B: their text twins with --limit 2, every answer gold;
#   C: the audio tasks with --limit 2 on the sample with its rows reversed (its last two documents, which B never ran),
#      plus mcga_asr where every answer is unfinished reasoning (a failed run by our rule: exit 1, task_status failed).
# Folder "matched" = A + B: the same-document CMC over the two documents B ran is
#   SQA/QA = 100/100, SU/LU = 100/100, SR/LR = 50/100  ->  (1 + 1 + 0.5) / 3 * 100 = 83.33 (n = 2/2/2);
#   the results alone would give (33.33 + 40 + 25) / 3 = 32.78 (A over 6/5/4 documents against B's 100).
# PARSA's audio − text gap (paper Table 4) likewise: parsa_vazn in A (6 documents), parsa_vazn_text in B (--limit 2).
# Folder "disjoint" = B + C: no document in common -> refused, the reason named.

ANSWER = {"sqa": "sqa_a", "su": "su_a", "sr": "sr_a"}
WRONG_SQA = "ABC"  # no character of any gold SQA answer: official F1 0 (asserted below)
UNFINISHED = "<think>\n这段音频读的是一首诗，我先听第一句，"


def _wrong_letter(gold: str) -> str:
    return "A" if gold.strip() != "A" else "B"


def _predictions(path):
    rows, key = [], mcga_data.DOC_KEY_FIELD
    for task, field in ANSWER.items():
        for index, row in enumerate(mcga_data.load_task_rows(task, data_dir=mcga_data.SAMPLE_DATA_DIR)):
            right = index == 0 or (index == 1 and task != "sr")
            wrong = WRONG_SQA if task == "sqa" else _wrong_letter(row[field])
            assert task != "sqa" or mcga_metrics.official_sqa_f1(row[field], WRONG_SQA) == 0
            rows.append({"task": f"mcga_{task}", "key": row[key], "response": row[field] if right else wrong})
            rows.append({"task": f"mcga_{task}_text", "key": row[key], "response": row[field]})
    rows += [{"task": "mcga_asr", "key": r[key], "response": UNFINISHED} for r in mcga_data.load_task_rows("asr", data_dir=mcga_data.SAMPLE_DATA_DIR)]
    rows += [{"task": task, "id": i, "response": answer} for task in ("parsa_vazn", "parsa_vazn_text") for i, answer in gold("vazn").items()]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")


def _reversed_sample(folder):
    """The shipped sample with the SQA/SU/SR rows in reverse order (the audio and the other files copied: a link out of
    the data folder is refused by the data check)."""
    folder.mkdir()
    for source in mcga_data.SAMPLE_DATA_DIR.iterdir():
        if source.is_dir():
            shutil.copytree(source, folder / source.name)
        elif any(f"_{task}_" in source.name for task in ANSWER):
            lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
            (folder / source.name).write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
        else:
            shutil.copy(source, folder / source.name)
    return folder


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory, lmms_eval_cli):
    root = tmp_path_factory.mktemp("combined")
    env = {k: v for k, v in os.environ.items() if k not in ("MCGA_DATA_DIR", "DEEPSEEK_API_KEY") and not k.startswith(("AUDIO_JUDGE_", "PARSA_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(root / "hf"), PYTHONUNBUFFERED="1")
    predictions = root / "predictions.jsonl"
    _predictions(predictions)

    def lmms_eval(out, tasks, *extra, data_dir=None):
        command = [lmms_eval_cli, "--tasks", tasks, "--model", "replay", "--model_args", f"predictions={predictions}", "--output_path", str(out),
                   "--log_samples", "--verbosity", "DEBUG", *extra]  # fmt: skip
        return run_cli(command, {**env, **({"MCGA_DATA_DIR": str(data_dir)} if data_dir else {})}, cwd=root)

    code_a, log_a = lmms_eval(root / "a", "mcga_sqa,mcga_su,mcga_sr,parsa_vazn")
    code_b, log_b = lmms_eval(root / "b", "mcga_sqa_text,mcga_su_text,mcga_sr_text,parsa_vazn_text", "--limit", "2")
    code_c, log_c = lmms_eval(root / "c", "mcga_sqa,mcga_su,mcga_sr,mcga_asr", "--limit", "2", data_dir=_reversed_sample(root / "reversed"))
    assert code_a == 0, log_a[-3000:]
    assert code_b == 0, log_b[-3000:]
    assert code_c == 1 and "lmms-eval run failed: FailedRunError: mcga_asr: failed run" in log_c, log_c[-3000:]  # exit 1, after writing every file
    assert len(list((root / "c").rglob("*_results.json"))) == 1 and len(list((root / "c").rglob("*_samples_*.jsonl"))) == 4
    assert len(list((root / "a").rglob("*_samples_*.jsonl"))) == 4 and len(list((root / "b").rglob("*_samples_*.jsonl"))) == 4
    folders = {"matched": ("a", "b"), "disjoint": ("b", "c")}
    for name, parts in folders.items():
        for part in parts:
            shutil.copytree(root / part, root / name / part)
    report = root / "report"
    write_report([root / "matched", root / "disjoint"], report, ["matched", "disjoint"])
    return {"root": root, "report": report}


def _csv(report, key) -> list[dict]:
    with open(report / "tables" / f"{key}.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.cli
def test_the_report_cmc_is_over_the_documents_both_modes_scored(cli_runs):
    root, report = cli_runs["root"], cli_runs["report"]
    [run] = read_runs(root / "matched")
    # the results alone: A over 6/5/4 documents, B over 2/2/2
    assert (run.get("mcga_sqa").number("f1_official"), run.get("mcga_su").number("acc_official"), run.get("mcga_sr").number("acc_official")) == (
        pytest.approx(200 / 6), pytest.approx(40.0), pytest.approx(25.0))  # fmt: skip
    assert {t: run.get(t).n_effective for t in CMC_TASKS} == {"mcga_sqa": 6, "mcga_su": 5, "mcga_sr": 4, "mcga_sqa_text": 2, "mcga_su_text": 2, "mcga_sr_text": 2}
    results_alone = (200 / 6 + 40 + 25) / 3  # 32.78: what a CMC from the two tasks' results alone would say
    for key in ("mcga_main", "mcga_cmc"):
        [row] = [r for r in _csv(report, key) if r["kind"] == "run" and r["label"] == "matched"]
        assert float(row["cmc"]) == pytest.approx(250 / 3) and float(row["cmc_strict"]) == pytest.approx(250 / 3), key
        assert float(row["cmc"]) != pytest.approx(results_alone)
        assert row["cmc_n"] == "2/2/2" and row["cmc_strict_n"] == "2/2/2"
    markdown = (report / "tables" / "mcga_main.md").read_text(encoding="utf-8")
    assert "CMC over the documents both modes scored (matched by document, from the samples files): SQA/QA 2, SU/LU 2, SR/LR 2" in markdown
    # mcga-report gives the same figure (one implementation)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert mcga_report.main([str(root / "matched"), "--json"]) == 0
    out = json.loads(printed.getvalue())
    assert out["cmc"] == pytest.approx(250 / 3) and out["cmc_documents"] == {"SQA/QA": 2, "SU/LU": 2, "SR/LR": 2}


@pytest.mark.cli
def test_the_report_refuses_cmc_when_the_modes_share_no_document(cli_runs):
    root, report = cli_runs["root"], cli_runs["report"]
    [run] = read_runs(root / "disjoint")
    assert all(run.get(t).n_effective == 2 for t in CMC_TASKS)  # both modes ran 2 documents each: the counts alone look alike
    for key in ("mcga_main", "mcga_cmc"):
        [row] = [r for r in _csv(report, key) if r["kind"] == "run" and r["label"] == "disjoint"]
        assert row["cmc"] == "n/c" and row["cmc_strict"] == "n/c" and "N" in row["cmc_marks"].split(), key
    markdown = (report / "tables" / "mcga_main.md").read_text(encoding="utf-8")
    assert ("CMC: not computed: mcga_sqa and mcga_sqa_text share no scored document (2 and 2 scored); mcga_su and mcga_su_text share no scored "
            "document (2 and 2 scored); mcga_sr and mcga_sr_text share no scored document (2 and 2 scored): CMC compares one set of documents in both modes") in markdown


@pytest.mark.cli
def test_the_health_table_shows_a_task_the_run_marked_failed_with_its_reason(cli_runs):
    root, report = cli_runs["root"], cli_runs["report"]
    [results_file] = (root / "disjoint" / "c").rglob("*_results.json")
    status = json.loads(results_file.read_text(encoding="utf-8"))["lmms_eval_audio_plugin"]["task_status"]
    assert list(status) == ["mcga_asr"] and status["mcga_asr"]["status"] == "failed"
    reason = status["mcga_asr"]["reasons"][0]
    assert reason.startswith("FailedRunError: mcga_asr: failed run: 2 of 2 responses (100.0%)")
    [health] = [r for r in _csv(report, "health") if r["label"] == "disjoint" and r["detail"] == "mcga_asr"]
    # every count of a failed task is withheld ("not computed"), so only the run's own record can say it failed
    assert health["empty_failed"] in ("0", "0.0", "", "–") and "F" in health["marks"].split()
    assert f"marked failed by the run: {reason}" in health["why"]
    [asr] = [r for r in _csv(report, "mcga_main") if r["kind"] == "run" and r["label"] == "disjoint"]
    assert asr["asr_cer"] == "n/c" and {"F", "N"} <= set(asr["asr_cer_marks"].split())
    assert (report / "report.md").is_file() and "disjoint: FAILED tasks (mark F), marked failed by the run: mcga_asr" in (report / "report.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ MMAC's group figure (lmms-eval's own group step)
# lmms-eval computes a group's figures in evaluator_utils.consolidate_group_results, after every task's aggregation and
# outside lmms_eval_tasks.plugin.guard_aggregations: it calls the YAML's aggregation with (values, sizes, weight_by_size)
# for every subtask metric whose name CONTAINS the configured one ("accuracy" also picks "accuracy_by_length").


def _consolidate(aggregation, category_results: dict, metrics=("accuracy", "coverage")):
    import collections

    from lmms_eval.api.group import ConfigurableGroup
    from lmms_eval.api.task import ConfigurableTask
    from lmms_eval.evaluator_utils import consolidate_group_results

    class _Category(ConfigurableTask):  # only its name is read by the group step
        def __init__(self, name):
            self._name = name

        @property
        def task_name(self):
            return self._name

    group = ConfigurableGroup(config={"group": "mmac", "task": [], "aggregate_metric_list": [{"metric": m, "aggregation": aggregation, "weight_by_size": False} for m in metrics]})
    results = collections.defaultdict(dict, {task: dict(values) for task, values in category_results.items()})
    consolidated, *_ = consolidate_group_results(results, {}, {group: {task: _Category(task) for task in category_results}})
    return consolidated


@pytest.fixture
def _clean_status():
    from audio_bench_core import run_status

    run_status.clear()
    yield run_status
    run_status.clear()


def test_mmac_category_macro_is_not_computed_for_a_withheld_or_non_number_category(_clean_status):
    from lmms_eval_tasks.mmac.hooks import mmac_agg_category_macro

    withheld = "not computed: FailedRunError: mmac_background: failed run: 3 of 3 responses"
    categories = {
        "mmac_content": {"accuracy,none": 50.0, "accuracy_stderr,none": "N/A", "coverage,none": 80.0, "coverage_stderr,none": "N/A",
                         "accuracy_by_length,none": {"short": 40.0}, "accuracy_by_length_stderr,none": "N/A", "samples": 3},  # lmms-eval writes a stderr for every metric
        "mmac_background": {"accuracy,none": withheld, "accuracy_stderr,none": "N/A", "coverage,none": 60.0, "coverage_stderr,none": "N/A", "samples": 3},
    }  # fmt: skip
    group = _consolidate(mmac_agg_category_macro, categories)["mmac"]
    assert group["coverage,none"] == pytest.approx(70.0)  # (80 + 60) / 2
    assert group["accuracy,none"] == f"not computed: 1 of 2 categories have no value ({withheld})"
    # a dict under a matching name no longer raises TypeError inside lmms-eval (which lost the whole run)
    assert group["accuracy_by_length,none"] == "not computed: 1 of 1 categories have no number (one is dict)"
    assert _clean_status.statuses() == {}  # a figure without a value is not a failure of the group
    assert categories["mmac_content"]["accuracy,none"] == 50.0


def test_an_exception_in_a_group_aggregation_costs_only_that_figure_and_marks_the_group_failed(_clean_status):
    from audio_bench_core.run_status import guarded_group_aggregation

    @guarded_group_aggregation("mmac")
    def breaks_on_coverage(values, sizes, weight_by_size):
        if max(values) > 75:
            raise KeyError("coverage bucket")
        return sum(values) / len(values)

    categories = {"mmac_content": {"accuracy,none": 50.0, "accuracy_stderr,none": "N/A", "coverage,none": 80.0, "coverage_stderr,none": "N/A", "samples": 3},
                  "mmac_background": {"accuracy,none": 30.0, "accuracy_stderr,none": "N/A", "coverage,none": 60.0, "coverage_stderr,none": "N/A", "samples": 3}}  # fmt: skip
    group = _consolidate(breaks_on_coverage, categories)["mmac"]
    assert group["accuracy,none"] == pytest.approx(40.0)  # kept
    assert group["coverage,none"] == "not computed: mmac group aggregation raised KeyError: 'coverage bucket'"
    assert _clean_status.statuses() == {"mmac": {"status": "failed", "reasons": ["mmac group aggregation raised KeyError: 'coverage bucket'"]}}
    nan = guarded_group_aggregation("mmac")(lambda values, sizes, weight: float("nan"))
    assert nan([1.0], [1], False) == "not computed: mmac group aggregation is undefined here (it gave nan)"


@pytest.mark.cli
def test_the_parsa_audio_text_gap_is_refused_over_different_documents(cli_runs):
    # both settings answered gold: each scores 1.0 over its own documents, so a gap 0.0 would look right; but the audio
    # side is over 6 documents and the text side over 2 (--limit 2): not the same documents, so not computed
    report = cli_runs["report"]
    [row] = [r for r in _csv(report, "parsa_settings") if r["kind"] == "run" and r["label"] == "matched"]
    assert (float(row["audio"]), row["audio_n"], float(row["text"]), row["text_n"]) == (1.0, "6", 1.0, "2")
    assert row["gap"] == "n/c" and "N" in row["gap_marks"].split()
    markdown = (report / "tables" / "parsa_settings.md").read_text(encoding="utf-8")
    assert ("parsa_vazn gap: not computed: parsa_vazn and parsa_vazn_text ran different documents (6 and 2, 2 shared, matched by id from the samples "
            "files): the figure compares one set of documents") in markdown


@pytest.mark.cli
def test_a_task_the_run_marked_incomplete_shows_mark_i_with_its_reason(cli_runs, tmp_path):
    # No shipped path marks a task incomplete yet (run_status.INCOMPLETE: a judge budget reached); the record is the one
    # the plugin writes (results["lmms_eval_audio_plugin"]["task_status"]), added here to run C's real results file.
    from audio_bench_report.health import build as health_section
    from audio_bench_report.tables import Context

    source = cli_runs["root"] / "disjoint" / "c"
    folder = shutil.copytree(source, tmp_path / "c")
    [results_file] = folder.rglob("*_results.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))
    results["lmms_eval_audio_plugin"]["task_status"]["mcga_sqa"] = {"status": "incomplete", "reasons": ["judge budget reached after 1 of 2 documents"]}
    results_file.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    [run] = read_runs(folder)
    rows = {row.detail: row.cells for row in health_section([run], Context()).tables[0].rows}
    assert rows["mcga_sqa"]["marks"].text == "I L" and rows["mcga_sqa"]["why"].text.startswith("marked incomplete by the run: judge budget reached after 1 of 2 documents")
    assert rows["mcga_asr"]["marks"].text.split()[0] == "F" and rows["mcga_su"]["marks"].text == "L"


def test_cmc_refuses_a_part_the_run_withheld_even_with_per_document_values():
    # a failed run's samples still hold per-document values; its figures read "not computed: ..." and CMC must not use them
    qa, mc = ("f1_official",), ("acc_official", "acc_strict")
    per_document = {task: _docs({"d1": 100.0}, qa if "sqa" in task else mc) for task in CMC_TASKS}
    tasks = _tasks()
    tasks["mcga_su"]["acc_official"] = tasks["mcga_su"]["acc_strict"] = "not computed: FailedRunError: mcga_su: failed run: 5 of 5 responses"
    out = cmc_over_shared_documents(tasks, per_document, {})
    assert out["cmc"] is None and out["cmc_strict"] is None
    assert out["error"] == ("a part is not computed (mcga_su acc_official: not computed: FailedRunError: mcga_su: failed run: 5 of 5 responses; "
                            "mcga_su acc_strict: not computed: FailedRunError: mcga_su: failed run: 5 of 5 responses)")
    assert cmc_over_shared_documents(_tasks(), per_document, {})["cmc"] == pytest.approx(100.0)  # the same values, not withheld


def test_the_parsa_gap_is_not_computed_when_a_side_is_withheld_and_computed_over_the_same_full_data():
    from pathlib import Path

    from audio_bench_report.runs import Run, TaskResult
    from audio_bench_report.tables import Context, load_published
    from parsa.report_layout import settings_table

    def run(text_accuracy, text_n=6):
        tasks = {"parsa_vazn": TaskResult("parsa_vazn", {"accuracy": 0.5, "scored": 6}, 6, 6, Path("x_results.json")),
                 "parsa_vazn_text": TaskResult("parsa_vazn_text", {"accuracy": text_accuracy, "scored": text_n}, text_n, 6, Path("x_results.json"))}  # fmt: skip
        return Run("r", "replay", "", Path("out"), None, tasks)  # no samples files beside x_results.json: counts decide

    def gap(r):
        table = settings_table([r], load_published("parsa"), Context())
        [row] = [row for row in table.rows if row.kind == "run"]
        return row.cells["gap"]

    full = gap(run(0.75))
    assert full.value == pytest.approx(0.5 - 0.75) and full.n == 6  # both over their whole data of 6 documents
    withheld = gap(run("not computed: FailedRunError: parsa_vazn_text: failed run: 6 of 6 responses"))
    assert withheld.text == "n/c" and "N" in withheld.marks and withheld.value is None
    limited = gap(run(1.0, text_n=2))  # text with --limit 2, no samples to match the documents
    assert limited.text == "n/c" and limited.notes[0].startswith("parsa_vazn gap: not computed: parsa_vazn ran 6 of 6 documents and parsa_vazn_text 2 of 6 (--limit?)")
