"""Issue 12 pieces without the CLI: failure lines, task names before same-named folders, the task listing,
the report's newest-run choice, the torch install's two paths, the shipped weights' hashes, faster_whisper's
language choice."""

import json
import subprocess
import sys
import types
from argparse import Namespace
from pathlib import Path

import pytest

from lmms_eval_tasks import TASKS_DIR, plugin
from lmms_eval_tasks import listing as task_list
from mcga import report
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import install_torch  # noqa: E402


# --- failure lines and exit status ------------------------------------------------------------------------


def test_failure_line_unwraps_tenacity_retry_errors_to_the_real_error():
    import tenacity

    class MCGADataError(ValueError):
        pass

    @tenacity.retry(stop=tenacity.stop_after_attempt(2))
    def download():
        raise MCGADataError("/data/MCGA_asr_test.jsonl: file not found\n(set MCGA_DATA_DIR)")

    with pytest.raises(tenacity.RetryError) as caught:
        download()
    assert plugin.failure_line(caught.value) == "lmms-eval run failed: MCGADataError: /data/MCGA_asr_test.jsonl: file not found (set MCGA_DATA_DIR)"


def test_failure_line_for_unknown_tasks_names_close_names_of_ours():
    lmms_eval_message = "Tasks not found: mcga_asrr. Try `lmms-eval --tasks {list_groups,list_subtasks,list_tags,list}` to list ..."
    assert plugin.failure_line(ValueError(lmms_eval_message)) == (
        "lmms-eval run failed: ValueError: Tasks not found: mcga_asrr; did you mean mcga_asr, mcga_sr? (ours: lmms-eval-audio-tasks; all: lmms-eval --tasks list)"
    )


def test_a_failed_run_exits_1_with_the_cause_last_and_a_good_run_returns(capsys):
    def cli_evaluate_single(args):
        if args.tasks == "mcga_bad":
            raise ValueError("boom\nsecond line")
        return "results", None

    wrapped = plugin._exit_nonzero_on_failure(cli_evaluate_single)
    assert wrapped(Namespace(tasks="mcga_asr")) == ("results", None)
    with pytest.raises(SystemExit) as exit_info:
        wrapped(Namespace(tasks="mcga_bad"))  # names one of our benchmarks: the plugin's exit status applies
    assert exit_info.value.code == 1
    assert not isinstance(exit_info.value, Exception)  # so lmms-eval's `except Exception` cannot swallow it
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "lmms-eval run failed: ValueError: boom second line"
    assert "Traceback (most recent call last):" in err
    with pytest.raises(SystemExit):
        wrapped(Namespace(tasks=None))
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("lmms-eval run failed: ValueError: no --tasks given")


def test_the_cli_module_is_wrapped_once_it_is_loaded():
    """While ``lmms_eval.__main__`` imports (it loads our entry point before defining its functions), the wrap
    waits for the CLI's fetch of ``cli_evaluate``."""
    module = types.ModuleType("lmms_eval.__main__")
    sys.modules["lmms_eval.__main__"], saved = module, sys.modules.get("lmms_eval.__main__")
    try:
        plugin.exit_nonzero_on_failed_run()  # mid-import: nothing defined yet
        assert type(module) is plugin._WrapOnceLoaded
        exec("def cli_evaluate_single(args):\n    raise ValueError('x')\ndef cli_evaluate():\n    return cli_evaluate_single(None)", module.__dict__)
        fetched = module.cli_evaluate  # what `from lmms_eval.__main__ import cli_evaluate` does
        assert type(module) is types.ModuleType
        assert module.cli_evaluate_single._lmms_eval_audio_plugin
        with pytest.raises(SystemExit):
            fetched()
    finally:
        if saved is None:
            sys.modules.pop("lmms_eval.__main__", None)
        else:
            sys.modules["lmms_eval.__main__"] = saved


def test_task_name_wins_over_a_folder_without_task_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mcga").mkdir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my_task.yaml").write_text("task: my_task\n", encoding="utf-8")
    for given, expected in [("mcga", "mcga,mcga"), ("mine", "mine"), ("mcga,parsa", "mcga,parsa"), ("mcga_asr", "mcga_asr")]:
        args = Namespace(tasks=given)
        plugin._prefer_task_name_over_empty_folder(args)
        assert args.tasks == expected, given


def test_lmms_eval_models_lists_ours():
    import lmms_eval.models as models

    for name, path in plugin.MODEL_CLASSES.items():
        assert models.AVAILABLE_SIMPLE_MODELS.get(name) == path


# --- listing ------------------------------------------------------------------------------------------------


def test_every_task_and_group_of_ours_has_a_one_line_description():
    found = task_list.benchmarks()
    assert {"mcga", "parsa"} <= set(found)
    entries = [e for es in found.values() for e in es]
    assert len(entries) >= 11 + 75
    assert [e.name for e in entries if not e.description] == []
    by_name = {e.name: e for e in entries}
    assert by_name["parsa_vazn"].description == "Metre (vazn) of two recited beits of Persian poetry, 10 options (accuracy)"
    assert by_name["mcga"].kind == "group" and by_name["mcga_su_text"].kind == "task"


def test_listing_discovers_benchmark_folders(tmp_path):
    (tmp_path / "newbench").mkdir()
    (tmp_path / "newbench" / "newbench_a.yaml").write_text("# description: A task\ntask: newbench_a\ndoc_to_text: !function x.y\n", encoding="utf-8")
    (tmp_path / "newbench" / "newbench.yaml").write_text("group: newbench\ntask: [newbench_a]\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    found = task_list.benchmarks(tmp_path)
    assert list(found) == ["newbench"]
    text = task_list.format_listing(found)
    assert "NEWBENCH  (1 tasks, 1 group; lmms_eval_tasks/newbench/)" in text
    assert "newbench [group]" in text and "(no description)" in text and "A task" in text


def test_listing_command_runs(capsys):
    assert task_list.main(["mcga"]) == 0
    out = capsys.readouterr().out
    assert "mcga_asr" in out and "PARSA" not in out
    assert task_list.main(["nope"]) == 2


# --- the report takes the newest run of each task -----------------------------------------------------------


def write_results(folder: Path, date: str, tasks: dict, model_args: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{date}_results.json"
    results = {t: {"alias": t, **{f"{m},none": v for m, v in metrics.items()}} for t, metrics in tasks.items()}
    path.write_text(json.dumps({"results": results, "date": date, "config": {"model": "faster_whisper", "model_args": model_args}}), encoding="utf-8")
    return path


def test_report_takes_the_newest_run_per_task_and_says_so(tmp_path, capsys):
    old = write_results(tmp_path / "out", "20260101_100000", {"mcga_asr": {"cer_official": 90.0}, "mcga_su": {"acc_official": 25.0}})
    new = write_results(tmp_path / "out", "20260101_110000", {"mcga_asr": {"cer_official": 66.5}})
    notes = []
    tasks = report.collect_mcga_results(report.find_results_files([tmp_path / "out"]), notes)
    assert tasks == {"mcga_asr": {"cer_official": 66.5}, "mcga_su": {"acc_official": 25.0}}
    assert notes == [f"note: mcga_asr found in 2 runs; using the newest, {new}; left out: {old}"]
    assert report.main([str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "|mcga_asr|cer_official|66.50   |" in out and "90.00" not in out and "{" not in out  # a table, not a Python dict


def test_report_names_mixed_models_and_refuses_two_files_of_one_run(tmp_path, capsys):
    write_results(tmp_path / "a", "20260101_100000", {"mcga_asr": {"cer_official": 90.0}}, "pretrained=x")
    write_results(tmp_path / "b", "20260101_110000", {"mcga_su": {"acc_official": 25.0}}, "pretrained=y")
    notes = []
    report.collect_mcga_results(report.find_results_files([tmp_path]), notes)
    assert notes == ["note: these scores come from runs of different models: faster_whisper (pretrained=x); faster_whisper (pretrained=y)"]
    write_results(tmp_path / "c", "20260101_110000", {"mcga_su": {"acc_official": 50.0}}, "pretrained=y")
    assert report.main([str(tmp_path)]) == 1
    assert "runs of the same time 20260101_110000; pass only one of them" in capsys.readouterr().err


# --- install: torch from the CPU index, or the fallback, and what was installed -----------------------------


class FakeRun:
    def __init__(self, index_ok: bool, cuda: str):
        self.index_ok, self.cuda, self.commands = index_ok, cuda, []

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        if command[1] == "-c":
            return subprocess.CompletedProcess(command, 0, stdout=f"2.13.0{'+cu128' if self.cuda else '+cpu'}\n{self.cuda}\n", stderr="")
        ok = self.index_ok or "--index-url" not in command
        return subprocess.CompletedProcess(command, 0 if ok else 1)


def test_install_torch_uses_the_cpu_index_when_it_answers():
    run, said = FakeRun(index_ok=True, cuda=""), []
    assert install_torch.install("py", "2.13.0", install_torch.CPU_INDEX, run=run, say=said.append) == 0
    assert [c for c in run.commands if c[1] == "-m"] == [["py", "-m", "pip", "install", "--quiet", "torch==2.13.0", "--index-url", install_torch.CPU_INDEX, "--retries", "1", "--timeout", "30"]]
    assert said == ["install_torch: torch 2.13.0+cpu: CPU-only build"]


def test_install_torch_falls_back_and_says_loudly_that_it_got_a_cuda_build():
    run, said = FakeRun(index_ok=False, cuda="12.8"), []
    assert install_torch.install("py", "2.13.0", install_torch.CPU_INDEX, run=run, say=said.append) == 0
    assert [c for c in run.commands if c[1] == "-m"][-1] == ["py", "-m", "pip", "install", "--quiet", "torch==2.13.0"]
    assert said[0].startswith("install_torch: torch==2.13.0 from https://download.pytorch.org/whl/cpu failed")
    assert "a CPU-only torch was asked for, but this is installed:\n! torch 2.13.0+cu128: CUDA 12.8 build" in said[1]


def test_the_torch_installed_here_is_the_cpu_build():
    import torch

    assert torch.version.cuda is None


# --- faster_whisper: shipped weights and language -----------------------------------------------------------


def test_shipped_whisper_weights_match_the_recorded_hashes_and_a_changed_file_is_refused(tmp_path):
    pytest.importorskip("faster_whisper")
    from lmms_eval_tasks.models import faster_whisper as fw

    folder = fw.shipped_whisper_base_dir()  # verifies every file
    assert sorted(fw.SHIPPED_SHA256) == ["config.json", "model.bin", "tokenizer.json", "vocabulary.txt"]
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (copy / name).write_bytes((folder / name).read_bytes())
    (copy / "model.bin").write_bytes(b"not the model")
    with pytest.raises(fw.ShippedWeightsError, match=r"model\.bin has sha256 [0-9a-f]{64}, expected d01c3014"):
        fw.verify_shipped_files(copy)


def test_faster_whisper_language_comes_from_the_argument_then_the_task():
    pytest.importorskip("faster_whisper")
    from lmms_eval_tasks.models.faster_whisper import FasterWhisper

    model = FasterWhisper.__new__(FasterWhisper)
    model._languages_logged = set()
    model.language = None
    assert model.language_for("mcga_asr", {"language": "zh", "until": []}) == "zh"
    assert model.language_for("x", {}) is None
    model.language = "fa"
    assert model.language_for("mcga_asr", {"language": "zh"}) == "fa"


def test_task_yaml_gives_faster_whisper_its_language():
    import yaml

    for template, language in (("mcga/_default_template_yaml", "zh"), ("parsa/_default_template_yaml", "fa")):
        text = (TASKS_DIR / template).read_text(encoding="utf-8")
        config = yaml.load(text, Loader=task_list._IgnoreTags)
        assert config["model_specific_generation_kwargs"] == {"faster_whisper": {"language": language}}
    config = yaml.load((TASKS_DIR / "parsa" / "parsa_s2tt_en_fa.yaml").read_text(encoding="utf-8"), Loader=task_list._IgnoreTags)
    assert config["model_specific_generation_kwargs"] == {"faster_whisper": {"language": "en"}}  # English audio


def test_mcga_report_prints_tables_with_cmc_ratios_and_breakdowns_with_n(tmp_path, capsys):
    genre = {"诗": 12.5, "词": 8.25}
    tasks = {"mcga_asr": {"cer_official": 10.0, "cer_strict": 12.5, "cer_official_by_genre": genre, "n_by_genre": {"诗": 4, "词": 3}, "empty_responses": 2,
                          "failed_generations": 0, "signature": "mcga-scoring:..."},
             "mcga_s2tt": {"llm_b": "not computed: no judge configured (set DEEPSEEK_API_KEY; see docs/judge.md)", "chrf_pp": 31.0, "bleu": 7.5},
             "mcga_sqa": {"f1_official": 40.0}, "mcga_sqa_text": {"f1_official": 80.0}, "mcga_su": {"acc_official": 60.0, "acc_strict": 50.0},
             "mcga_su_text": {"acc_official": 100.0, "acc_strict": 100.0}, "mcga_sr": {"acc_official": 30.0, "acc_strict": 20.0},
             "mcga_sr_text": {"acc_official": 60.0, "acc_strict": 40.0}}  # fmt: skip
    write_results(tmp_path / "out", "20260101_100000", tasks)
    assert report.main([str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[2:4] == ["|mcga_asr     |cer_official|10.00       |12.50 |empty_responses 2   |",  # strict beside official, counts not 0
                          "|mcga_s2tt    |llm_b       |not computed|      |                    |"]
    assert "  not computed: no judge configured (set DEEPSEEK_API_KEY; see docs/judge.md)" in lines
    assert lines[lines.index("  " + report.SCALE_NOTE) - 1].startswith("|mcga_") and "percent (0-100)" in report.SCALE_NOTE  # issue 27: the scale, under the table
    assert "|诗 Shi|4|12.50         |" in lines and "|词 Ci |3|8.25          |" in lines  # per genre with n
    # CMC (eq. 1): (40/80 + 60/100 + 30/60) / 3 × 100 = 53.33; strict accuracies: (0.5 + 0.5 + 0.5) / 3 × 100 = 50.00
    assert "|SQA/QA (F1)           |40.00|80.00 |0.500|0.500                   |" in lines
    assert "|SU/LU (accuracy)      |60.00|100.00|0.600|0.500                   |" in lines
    assert "|CMC = mean ratio × 100|     |      |53.33|50.00                   |" in lines
    assert max(map(len, lines)) < 160 and "{" not in out
