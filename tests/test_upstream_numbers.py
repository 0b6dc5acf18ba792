"""Numbers only, never a raise, for the exported tasks (issue 28 item 3): the runtime wrapper
(:mod:`audio_bench_core.numbers`) and the YAML transformation (:mod:`lmms_eval_tasks.upstream_numbers`). The exported
run in plain lmms-eval is tests/test_upstream_cli.py."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from audio_bench_core import responses
from audio_bench_core.numbers import as_number, numbers_only, without_metrics
from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks import upstream_export as ex
from lmms_eval_tasks import upstream_numbers as un
from lmms_eval_tasks.mmac.hooks import mmac_agg_category_macro

# mmac.hooks is imported here, not in a test: importing lmms-eval replaces loguru's sinks, log_lines' among them.


# ------------------------------------------------------------------------------------------- the wrapper
def _records(answers: list[str], task: str = "mcga_asr") -> list[dict]:
    """Diagnostics records of :func:`audio_bench_core.responses.check_response`, one per answer."""
    return [responses.check_response(a, task=task, doc_id=i, clip=f"clip{i}.wav", gold=f"gold {i}").record for i, a in enumerate(answers)]


@pytest.mark.parametrize(("value", "expected", "kind"), [(3, 3, int), (0.25, 0.25, float), (np.float32(0.5), 0.5, float), (np.int64(7), 7, int), (-0.0, 0.0, float)])
def test_numbers_pass_through_as_python_numbers(value, expected, kind, log_lines):
    out = numbers_only(lambda items: value, "m")([{"task": "t"}])
    assert out == expected and type(out) is kind
    assert log_lines == []


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("not computed: no judge configured (AUDIO_JUDGE_MODEL unset)", "not computed: no judge configured (AUDIO_JUDGE_MODEL unset)"),
        (float("nan"), "undefined here (the aggregation gave nan)"),
        (float("inf"), "undefined here (the aggregation gave inf)"),
        ({"poetry": 12.5}, "the aggregation gave a dict, not a number"),
        ([0.1, 0.2], "the aggregation gave a list, not a number"),
        ("mcga-cer:1|opencc-t2s", "the aggregation gave a str, not a number"),
        (True, "the aggregation gave a bool, not a number"),
        (None, "the aggregation gave a NoneType, not a number"),
    ],
)
def test_what_is_not_a_number_is_none_with_one_warning_naming_task_metric_and_reason(value, reason, log_lines):
    assert numbers_only(lambda items: value, "llm_b")([{"task": "mcga_s2tt"}]) is None
    assert len(log_lines) == 1 and log_lines[0].startswith("mcga_s2tt llm_b: ") and reason in log_lines[0] and log_lines[0].endswith("written as null")


def test_an_exception_costs_its_figure_only_and_is_named(log_lines):
    def broken(items):
        raise ZeroDivisionError("division by zero")

    assert numbers_only(broken, "cer_official")(["asr"]) is None  # items without a task field: "?"
    assert log_lines == ["? cer_official: not computed: the aggregation raised ZeroDivisionError: division by zero; written as null"]


def test_flagged_responses_counts_each_document_once_and_logs_each_kind(log_lines):
    # 7 documents: 2 empty, 1 failed, 1 echoing the prompt "Transcribe the audio." exactly (a prompt text under 25
    # characters counts only when echoed whole), 1 of 12,500 characters (over 10,000), 2 answers. Flagged: 5 documents;
    # 3 of 7 empty/failed (42.9 %) is not a failed run (over 50 %), 3 of 3 is.
    texts = ["", " ", "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error.", "Transcribe the audio.", "床前明月光" * 2500, "床前明月光", "疑是地上霜"]
    records = [responses.check_response(text, task="mcga_asr", doc_id=i, clip=f"{i}.wav", gold="床前明月光", prompt_texts=("Transcribe the audio.",)).record for i, text in enumerate(texts)]
    assert (responses.agg_echoed_prompts(records), responses.agg_long_answers(records)) == (1, 1)
    log_lines.clear()
    assert responses.agg_flagged_responses(records) == 5
    assert [line.split(" (")[0] for line in log_lines] == ["mcga_asr: 1 of 7 responses", "mcga_asr: 2 of 7 responses", "mcga_asr: 1 of 7 responses", "mcga_asr: 1 of 7 responses"]
    assert ["(14.3%) are failed" in log_lines[0], "(28.6%) are empty" in log_lines[1], "echo the prompt" in log_lines[2] and "(document 3)" in log_lines[2], "longest: document 4, 12,500 characters" in log_lines[3]] == [True] * 4
    log_lines.clear()
    assert numbers_only(responses.agg_flagged_responses, "flagged_responses")(records[:3]) == 3
    assert [line.split(": (")[0][:60] for line in log_lines] == ["mcga_asr flagged_responses: mcga_asr: failed run: 3 of 3 res", "mcga_asr: 1 of 3 responses (33.3%) are failed generations, s", "mcga_asr: 2 of 3 responses (66.7%) are empty"]


def test_a_failed_run_is_reported_by_its_counts_and_other_figures_are_null(log_lines):
    records = _records(["", "", "", "  ", "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error.", "an answer"])
    with pytest.raises(responses.FailedRunError):  # the plugin's form is unchanged: it raises
        responses.agg_empty_responses(records)
    assert numbers_only(responses.agg_empty_responses, "empty_responses")(records) == 4
    assert numbers_only(responses.agg_failed_generations, "failed_generations")(records) == 1
    assert numbers_only(responses.agg_unfinished_reasoning, "unfinished_reasoning")(records) == 0
    assert numbers_only(responses.agg_echoed_prompts, "echoed_prompts")(records) == 0  # never checks: a plain count
    failed = [line for line in log_lines if "failed run" in line]
    assert len(failed) == 3 and all(line.startswith("mcga_asr ") and "5 of 6 responses (83.3%)" in line and "the count is reported" in line for line in failed)

    def judged(items):
        responses.check_failed_run(items)
        return 50.0

    log_lines.clear()
    assert numbers_only(judged, "llm_b")(records) is None
    assert len(log_lines) == 1 and log_lines[0].startswith("mcga_asr llm_b: not computed: mcga_asr: failed run: 5 of 6 responses")


def test_the_wrapper_keeps_the_signature_lmms_eval_inspects_and_passes_arguments():
    def with_args(items, args=None):
        return len(items) + (args or 0)

    def group(values, sizes, weight_by_size=False):
        return sum(v * s for v, s in zip(values, sizes)) / sum(sizes) if weight_by_size else sum(values) / len(values)

    wrapped = numbers_only(with_args, "n")
    assert "args" in inspect.signature(wrapped).parameters  # lmms-eval then calls agg_fn(items, args=task.args)
    assert wrapped([1, 2], args=10) == 12
    assert numbers_only(group, "mmac group")([10.0, 20.0], [1, 3], True) == 17.5
    assert numbers_only(group, "mmac group")([10.0, 20.0], [1, 3]) == 15.0


def test_the_mmac_group_aggregation_of_a_null_category_is_null(log_lines):
    macro = numbers_only(mmac_agg_category_macro, "mmac group")
    assert math.isclose(macro([50.0, 60.0, 70.0, 80.0, 90.0, 100.0], [2] * 6, False), 75.0)
    assert macro([50.0, None, 70.0, 80.0, 90.0, 100.0], [2] * 6, False) is None
    assert len(log_lines) == 1 and "1 of 6 categories have no number (one is NoneType)" in log_lines[0]


def test_as_number_names_where():
    assert as_number(2.5, "x") == 2.5 and as_number("not computed: no items", "parsa_asr wer_mean") is None


# ------------------------------------------------------------------------------------------- the YAML
def _exported(name: str, benchmark: str = "mcga") -> dict:
    """The task YAML ``name`` of ``benchmark`` as export_yaml writes it (before numbers_only_yaml)."""
    path = TASKS_DIR / benchmark / name
    hooks = f"lmms_eval_tasks.{benchmark}.hooks"
    return ex.export_yaml(ex.read_yaml(path), path, ex.BENCHMARKS[benchmark], hooks, ex.module_closure(benchmark), {})


def test_mcga_asr_keeps_its_numbers_and_drops_breakdowns_and_signature():
    config, path = _exported("mcga_asr.yaml"), TASKS_DIR / "mcga/mcga_asr.yaml"
    before = [e["metric"] for e in config["metric_list"]]
    collected = un.Collected()
    out = un.numbers_only_yaml(config, path, collected)
    wrapped, dropped = collected.aggregations, collected.dropped
    assert [e["metric"] for e in config["metric_list"]] == before  # the input (and the plugin's YAML) untouched
    kept = [e["metric"] for e in out["metric_list"]]
    assert sorted(set(before) - set(kept)) == ["cer_official_by_dynasty", "cer_official_by_genre", "n_by_dynasty", "n_by_genre", "signature"]
    assert kept[:2] == ["cer_official", "cer_strict"] and "flagged_responses" in kept and "failed_generations" not in kept and len(kept) == 3
    assert dropped == {m: ["mcga_asr.yaml"] for m in ("cer_official_by_genre", "cer_official_by_dynasty", "n_by_genre", "n_by_dynasty", "signature")}
    assert wrapped["mcga_agg_cer_official"] == {"cer_official"} and wrapped["agg_flagged_responses"] == {"flagged_responses"}
    assert {str(e["aggregation"]) for e in out["metric_list"]} == {f"utils.{f}" for f in wrapped} and len(wrapped) == len(kept)


def test_parsa_intervals_flags_signature_and_data_source_leave_the_metric_list():
    config = _exported("_asr_metrics_yaml", "parsa")
    collected = un.Collected()
    out = un.numbers_only_yaml(config, TASKS_DIR / "parsa/_asr_metrics_yaml", collected)
    assert sorted(collected.dropped) == ["ci_flags", "data_source", "signature", "wer_mean_ci95", "wer_median_ci95"]
    assert [e["metric"] for e in out["metric_list"]][:7] == ["wer_median", "wer_mean", "cer_mean", "wer_mean_strict", "wer_fix", "repetition_rate", "refusal_rate"]


def test_a_group_aggregation_is_wrapped_and_lmms_evals_own_are_left_alone():
    config = _exported("mmac.yaml", "mmac")
    collected = un.Collected()
    out = un.numbers_only_yaml(config, TASKS_DIR / "mmac/mmac.yaml", collected)
    assert collected.aggregations == {"mmac_agg_category_macro": {"mmac group"}} and [e["metric"] for e in out["aggregate_metric_list"]] == ["accuracy", "precision", "coverage"]
    builtin = {"task": "t", "metric_list": [{"metric": "acc", "aggregation": "mean"}]}
    collected = un.Collected()
    assert un.numbers_only_yaml(builtin, TASKS_DIR / "t.yaml", collected) == builtin and collected == un.Collected()


def test_an_aggregation_outside_utils_or_an_entry_without_metric_is_an_error_naming_the_yaml():
    with pytest.raises(ValueError, match=r"t\.yaml: acc: aggregation !function other\.f is not in utils\.py"):
        un.numbers_only_yaml({"metric_list": [{"metric": "acc", "aggregation": ex.FunctionRef("other.f")}]}, TASKS_DIR / "t.yaml", un.Collected())
    with pytest.raises(ValueError, match=r"t\.yaml: a metric_list entry without 'metric'"):
        un.numbers_only_yaml({"metric_list": [{"aggregation": "mean"}]}, TASKS_DIR / "t.yaml", un.Collected())


def test_every_declared_non_number_is_a_metric_of_the_plugin():
    names = {e["metric"] for path in TASKS_DIR.glob("*/*") if path.suffix == ".yaml" or path.name.endswith("_yaml") for e in (ex.read_yaml(path) or {}).get("metric_list", [])}
    assert set(un.NOT_NUMBERS) <= names, set(un.NOT_NUMBERS) - names
    assert sorted(n for n in names if not un.is_number_metric(n) and n not in un.NOT_NUMBERS) == ["accuracy_ci95", "chrf_pp_ci95", "f1_exact_ci95", "macro_f1_ci95", "wer_mean_ci95", "wer_median_ci95"]


def test_the_utils_lines_rebind_each_aggregation_and_process_results_to_their_wrapped_forms():
    collected = un.Collected({"mcga_agg_llm_b": {"llm_b"}, "mmac_agg_category_macro": {"mmac group"}}, {"signature": ["a.yaml"], "judge": ["a.yaml", "b.yaml"]}, {"hook"})
    text = un.wrapper_lines(collected, "lmms_eval.tasks._task_utils.audio_bench.numbers")
    assert "from lmms_eval.tasks._task_utils.audio_bench.numbers import numbers_only, without_metrics\n" in text
    assert text.endswith("mcga_agg_llm_b = numbers_only(mcga_agg_llm_b, 'llm_b')\nmmac_agg_category_macro = numbers_only(mmac_agg_category_macro, 'mmac group')\nhook = without_metrics(hook, ('judge', 'signature'))\n")
    namespace = {
        "numbers_only": numbers_only,
        "without_metrics": without_metrics,
        "mcga_agg_llm_b": lambda items: "not computed: no judge configured",
        "mmac_agg_category_macro": lambda v, s, w: 1.0,
        "hook": lambda doc, results: {"llm_b": doc, "judge": doc, "signature": "s2tt", "failed_generations": results[0]},
    }
    exec(text.replace("from lmms_eval.tasks._task_utils.audio_bench.numbers import numbers_only, without_metrics", ""), namespace)  # noqa: S102 - our own generated lines
    assert namespace["mcga_agg_llm_b"]([{}]) is None and namespace["mmac_agg_category_macro"]([1.0], [1], False) == 1.0
    assert namespace["hook"]({"key": "a.wav"}, ["r"]) == {"llm_b": {"key": "a.wav"}, "failed_generations": "r"}
    assert un.wrapper_lines(un.Collected(), "x") == ""


def test_the_exported_folder_has_no_non_number_metric_and_wraps_every_aggregation(tmp_path):
    (tmp_path / "lmms_eval/tasks").mkdir(parents=True)
    (tmp_path / "lmms_eval/tasks/__init__.py").write_text("", encoding="utf-8")
    result = ex.export_benchmark("mmac", tmp_path, tests_dir=tmp_path / "tests")
    utils = (result.task_dir / "utils.py").read_text(encoding="utf-8")
    numbers = ex.module_closure("mmac")[ex.NUMBERS_MODULE]
    assert f"from {numbers.target} import (\n    numbers_only,\n    without_metrics,\n)\n" in utils and ex.target_file(tmp_path, numbers).is_file()  # isort: 88 columns
    assert "\nmmac_process_results = without_metrics(mmac_process_results, (\"caption_length\", \"dimensions\", \"judge\", \"signature\"), flagged=True)\n" in utils
    named = set()
    for path in result.task_dir.iterdir():
        if path.suffix == ".yaml" or path.name.endswith("_yaml"):
            config = ex.read_yaml(path)
            entries = config.get("metric_list", []) + config.get("aggregate_metric_list", [])
            assert not [e["metric"] for e in entries if not un.is_number_metric(e["metric"])], path
            named |= {str(e["aggregation"])[len("utils.") :] for e in entries}
    assert len(named) == 10 and all(f"\n{f} = numbers_only({f}, " in utils for f in named), sorted(named)  # 9 of 13 task metrics (the nine response counts one), 1 group
    readme = (result.task_dir / "README.md").read_text(encoding="utf-8")
    assert "- `caption_length`: MMAC: caption lengths" in readme and "- `judge`: judged tasks" in readme and "not computed: ..." not in readme
