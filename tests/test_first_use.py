"""Issue 27 item 5: what a new user tripped on, pinned without the CLI (the CLI tests of test_cli_failures and
test_newcomer_walk assert the same lines on real runs): the printed table's scale labels and strict figures over
0 scored items, the Ctrl-C line, a second run into an output folder, a forced language that is not the task's,
and the offline hint for lmms-eval's own datasets. Values are hand-written inputs; each expected line is the rule
applied by hand."""

from __future__ import annotations

import os
from argparse import Namespace

import pytest
import yaml

from lmms_eval_tasks import TASKS_DIR, plugin
from lmms_eval_tasks.hub_access import local_dataset_copy_hint, unreachable_line
from lmms_eval_tasks.models import language_mismatch_line
from lmms_eval_tasks.printed_table import metric_scale, plugin_table


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines() if line.startswith("|")][2:]


# --- printed table: scale, strict over 0 scored items ---------------------------------------------------------


@pytest.mark.parametrize(
    "task, metric, scale",
    [("parsa_vazn", "accuracy", "0-1"), ("parsa_asr", "wer_median", "0-1"), ("parsa_s2tt_fa_en", "comet", "0-1"), ("parsa_s2tt_en_fa_text", "chrf_pp", "0-100"),
     ("parsa_s2tt_fa_en", "bleu", "0-100"), ("mcga_asr", "cer_official", "%"), ("mcga_su_text", "acc_official", "%"), ("mcga_s2tt", "chrf_pp", "0-100"),
     ("mcga_s2tt", "llm_b", "%"), ("mmac_persona", "coverage", "%"), ("mmac", "accuracy", "%"), ("other_task", "acc", ""), ("parsa_vazn", "scored", "")],
)  # fmt: skip
def test_each_benchmark_declares_the_scale_of_its_figures(task, metric, scale):
    assert metric_scale(task, metric) == scale


def test_printed_table_labels_the_scale_and_never_prints_a_strict_figure_over_0_scored_items():
    results = {
        "results": {
            # every item excluded: the official figure is "not computed", the strict one (all wrong) must not read 0
            "parsa_vazn": {"alias": "parsa_vazn", "accuracy,none": "not computed: no scored items (3 excluded, 0 refused of 3)", "accuracy_strict,none": 0.0,
                           "scored,none": 0, "excluded,none": 3},
            # every item refused: the strict mean WER (refusals as WER 1) is 1.0, also not a figure over 0 scored items
            "parsa_asr": {"alias": "parsa_asr", "wer_median,none": "not computed: no scored items (0 excluded, 2 refused of 2)", "wer_median_strict,none": 1.0,
                          "scored,none": 0, "refused,none": 2},
            "parsa_intent": {"alias": "parsa_intent", "macro_f1,none": 0.5, "macro_f1_strict,none": 0.25, "scored,none": 2, "excluded,none": 2},
            "mcga_su": {"alias": "mcga_su", "acc_official,none": 80.0, "acc_strict,none": "not computed: strict reader off"},
            "mcga_s2tt": {"alias": "mcga_s2tt", "llm_b,none": "not computed: no judge configured", "chrf_pp,none": 41.5, "bleu,none": 12.25},
        },
        "n-samples": {"mcga_su": {"effective": 5}, "mcga_s2tt": {"effective": 3}},
        "higher_is_better": {"parsa_asr": {"wer_median": False}, "mcga_su": {"acc_official": True}},
    }  # fmt: skip
    table = plugin_table(results)
    rows = _rows(table)
    assert rows[0][:5] == ["parsa_vazn", "0", "accuracy (0-1)", "not computed (1)", "not computed (1)"]  # the twin gets the official's reason
    assert rows[1][:5] == ["parsa_asr", "0", "wer_median ↓ (0-1)", "not computed (2)", "not computed (2)"]
    assert rows[2][:5] == ["parsa_intent", "2", "macro_f1 (0-1)", "0.5000", "0.2500"]  # scored items: the strict number stays
    assert rows[3][:5] == ["mcga_su", "5", "acc_official ↑ (%)", "80.0000", "not computed (3)"]  # a not-computed twin: numbered, not blank
    assert [r[2:4] for r in rows[4:7]] == [["llm_b (%)", "not computed (4)"], ["chrf_pp (0-100)", "41.5000"], ["bleu (0-100)", "12.2500"]]
    assert "(1) not computed: no scored items (3 excluded, 0 refused of 3) [parsa_vazn accuracy, parsa_vazn accuracy_strict]" in table
    assert "(3) not computed: strict reader off [mcga_su acc_strict]" in table
    assert "(0-1) fraction, (%) percent, (0-100) sacrebleu's chrF++/BLEU" in table
    assert max(len(line) for line in table.splitlines()) <= 150
    assert results["results"]["parsa_vazn"]["accuracy_strict,none"] == 0.0  # the JSON's value is untouched


# --- Ctrl-C: say what is kept, and resume only from that -------------------------------------------------------


@pytest.fixture
def no_judge_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / "never_written.sqlite3"))
    return tmp_path


def test_ctrl_c_with_nothing_kept_says_a_new_run_starts_from_the_beginning(no_judge_cache):
    line = plugin.interrupted_line(Namespace(model="faster_whisper", model_args="language=zh", use_cache=None))
    assert line == ("lmms-eval run interrupted (Ctrl-C) while the run. Nothing was kept (lmms-eval writes results only at the end). Not kept: transcripts "
                    "(add transcript_cache=default to --model_args to keep them); model answers (only with --use_cache DIR are they kept). "
                    "Running the same command again starts from the beginning.")  # fmt: skip
    assert "resume" not in plugin.interrupted_line(Namespace(model="qwen2_5_omni", model_args="", use_cache=None))


def test_ctrl_c_with_use_cache_names_what_is_kept_and_what_is_redone(no_judge_cache, monkeypatch):
    cache = no_judge_cache / "judge.sqlite3"
    cache.write_bytes(b"")
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(cache))
    line = plugin.interrupted_line(Namespace(model="faster_whisper", model_args="transcript_cache=default", use_cache="answers"))
    assert line == (f"lmms-eval run interrupted (Ctrl-C) while the run. Kept: judge replies so far ({cache}); transcripts (transcript_cache); "
                    "model answers (--use_cache answers). Running the same command again reuses what is kept and redoes the rest.")  # fmt: skip


# --- a second run into an output folder that holds results -----------------------------------------------------


def test_an_output_folder_holding_results_is_said_in_one_line(tmp_path):
    out = tmp_path / "out"
    assert plugin.existing_results_line(str(out)) is None  # not there yet
    (out / "replay").mkdir(parents=True)
    (out / "replay" / "20261201_100000_samples_mcga_asr.jsonl").write_text("{}\n")
    assert plugin.existing_results_line(str(out)) is None  # samples alone: no run's results
    for stamp in ("20261201_100000", "20261201_110000"):
        (out / "replay" / f"{stamp}_results.json").write_text("{}")
    os.utime(out / "replay" / "20261201_100000_results.json", (1, 1))
    line = plugin.existing_results_line(str(out))
    assert line == f"--output_path {out} already holds 2 results file(s) (newest replay/20261201_110000_results.json): this run is added beside them, none replaced"
    assert "\n" not in line and plugin.existing_results_line(None) is None


# --- a forced language that is not the task's ------------------------------------------------------------------


def _declared_language(yaml_file) -> str | None:
    """The language a task YAML (or the template it includes) gives faster_whisper."""
    loader = type("L", (yaml.SafeLoader,), {})
    loader.add_multi_constructor("!", lambda *_: None)
    config = yaml.load(yaml_file.read_text(encoding="utf-8"), Loader=loader) or {}
    block = (config.get("model_specific_generation_kwargs") or {}).get("faster_whisper")
    if block:
        return block.get("language")
    return _declared_language(yaml_file.parent / config["include"]) if config.get("include") else None


@pytest.mark.parametrize(
    "task, forced, warned",
    [("mcga_asr", "fa", True), ("parsa_vazn", "zh", True), ("parsa_s2tt_en_fa", "fa", True), ("parsa_s2tt_en_fa_cot", "en", False),
     ("parsa_s2tt_fa_en", "fa", False), ("parsa_asr", "FA", False), ("mcga_sr", "zh-CN", False), ("mcga_su", None, False), ("mmac_content", "zh", False)],
)  # fmt: skip
def test_a_forced_language_is_checked_against_the_task_yaml(task, forced, warned):
    [yaml_file] = [p for p in TASKS_DIR.glob(f"*/{task}.yaml")]
    declared = _declared_language(yaml_file)
    line = language_mismatch_line("faster_whisper", task, forced, declared)
    assert (line is not None) is warned, (declared, line)
    if warned:
        assert line == (f"faster_whisper: {task}: language={forced} (model argument) but the task's audio is {declared}: transcripts will be in the wrong "
                        "language; drop language= to use the task's")  # fmt: skip


def test_faster_whisper_warns_once_per_task_when_its_language_is_not_the_tasks():
    pytest.importorskip("faster_whisper")
    from loguru import logger

    from lmms_eval_tasks.models.faster_whisper import FasterWhisper

    model = FasterWhisper.__new__(FasterWhisper)
    model._languages_logged, model.language = set(), "zh"
    seen = []
    handler = logger.add(lambda message: seen.append(message.record["message"]), level="WARNING")
    try:
        assert model.language_for("parsa_vazn", {"language": "fa"}) == "zh"  # the argument still wins
        model.language_for("parsa_vazn", {"language": "fa"})
        model.language_for("mcga_asr", {"language": "zh"})
    finally:
        logger.remove(handler)
    assert seen == [language_mismatch_line("faster_whisper", "parsa_vazn", "zh", "fa")]


# --- lmms-eval's own datasets offline: the local-folder way ----------------------------------------------------


def test_an_unreachable_hub_dataset_names_the_local_folder_datasets_reads(tmp_path):
    hint = local_dataset_copy_hint("lmms-lab-audio/librispeech", str(tmp_path))
    assert hint == (f", or put a copy in the hub's layout (its README.md and parquet files, e.g. a git clone) in {tmp_path}/lmms-lab-audio/librispeech "
                    "(README: Mixing with lmms-eval's own audio benchmarks)")  # fmt: skip
    line = unreachable_line("dataset", "lmms-lab-audio/librispeech", "HF_HUB_OFFLINE=1", argument=None) + hint
    assert line.count("\n") == 0 and "download it where the hub is reachable" in line
