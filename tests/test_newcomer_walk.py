"""A newcomer's first hour, scripted (issue 12 "Done means"): the README's quick start from another folder,
the usual mistakes, ``--tasks mcga`` from the repository root, and the demo's report run twice.

No run passes ``--verbosity DEBUG``: every failure must exit non-zero with its cause as the LAST line of the
output (``lmms_eval_tasks.plugin`` arranges that), and every success must print a summary.

``make demo`` twice is scoped to its report step: the two successful runs below write into one output
folder, as two demo runs do (the quick start's ``mcga_asr`` with faster_whisper, then the root run's six
tasks with ``replay``), and ``mcga-report`` over that folder must pick the newest run per task instead of
failing. A full ``make demo`` takes minutes of CPU; this walk takes about two.

The two ``mcga-data check`` steps test the MCGA engineer's fix of issue 12 item 2; they fail on a branch
without it.
"""

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.cli
OFFICIAL_ROWS = FIXTURES / "official_runner_rows"
MCGA_TASKS = ("mcga_asr", "mcga_s2tt", "mcga_sec", "mcga_sqa", "mcga_su", "mcga_sr")


def run(command, env, cwd):
    """``(exit status, stdout+stderr interleaved as written, last non-empty line)``."""
    result = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    return result.returncode, result.stdout, lines[-1] if lines else ""


@pytest.fixture(scope="module")
def walk(lmms_eval_cli, tmp_path_factory):
    """Environment, a folder outside the repository, and one output folder shared by the two successful runs."""
    import os

    base = tmp_path_factory.mktemp("walk")
    env = {k: v for k, v in os.environ.items() if k not in ("MCGA_DATA_DIR", "PARSA_DATA_DIR", "DEEPSEEK_API_KEY") and not k.startswith("AUDIO_JUDGE_")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(base / "hf_datasets"), PYTHONUNBUFFERED="1")
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return {"env": env, "elsewhere": elsewhere, "out": base / "out" / "mcga", "cli": lmms_eval_cli}


@pytest.fixture(scope="module")
def quick_start(walk):
    """The README's quick start, from a folder outside the repository (plus an output folder)."""
    command = [walk["cli"], "--tasks", "mcga_asr", "--model", "faster_whisper", "--limit", "1", "--output_path", str(walk["out"])]
    return run(command, walk["env"], walk["elsewhere"])


@pytest.fixture(scope="module")
def root_run(walk, quick_start):
    """``--tasks mcga`` from the repository root, into the quick start's output folder (a second run). The
    model is ``replay`` on the official runner's rows: the group's name is what is tested, and Whisper on
    six tasks would cost minutes of CPU."""
    command = [walk["cli"], "--tasks", "mcga", "--model", "replay", "--model_args", f"predictions={OFFICIAL_ROWS}", "--limit", "1", "--output_path", str(walk["out"])]
    return run(command, walk["env"], ROOT)


def assert_failed_with(result, *needles):
    code, log, last = result
    assert code != 0, log[-3000:]
    assert last.startswith("lmms-eval run failed: "), log[-3000:]
    for needle in needles:
        assert needle in last, last


def test_quick_start_from_another_folder_prints_a_summary_in_chinese(quick_start):
    code, log, _ = quick_start
    assert code == 0, log[-3000:]
    assert "faster_whisper: mcga_asr: language=zh (task)" in log  # not Whisper's guess (Thai, CER 130.7)
    assert "|mcga_asr|" in log and "cer_official" in log  # the summary table


def test_wrong_task_name_fails_naming_it_and_the_close_names(walk):
    result = run([walk["cli"], "--tasks", "mcga_asrr", "--model", "faster_whisper", "--limit", "1"], walk["env"], walk["elsewhere"])
    assert_failed_with(result, "Tasks not found: mcga_asrr", "did you mean mcga_asr")


def test_misspelt_model_argument_fails_naming_it(walk):
    result = run([walk["cli"], "--tasks", "mcga_asr", "--model", "faster_whisper", "--model_args", "langauge=zh", "--limit", "1"], walk["env"], walk["elsewhere"])
    assert_failed_with(result, "ValueError: faster_whisper: unknown model argument(s) langauge; known: pretrained, language,")


def test_missing_data_folder_fails_with_the_data_error_not_a_retry_error(walk):
    env = {**walk["env"], "MCGA_DATA_DIR": str(walk["elsewhere"] / "no_such_folder")}
    result = run([walk["cli"], "--tasks", "mcga_asr", "--model", "faster_whisper", "--limit", "1"], env, walk["elsewhere"])
    assert_failed_with(result, "MCGADataError", "no_such_folder")
    assert "RetryError" not in result[2]


def test_text_only_task_on_an_audio_only_model_fails_in_one_line(walk):
    result = run([walk["cli"], "--tasks", "mcga_su_text", "--model", "faster_whisper", "--limit", "1"], walk["env"], walk["elsewhere"])
    assert_failed_with(result, "faster_whisper is audio-only, but task mcga_su_text sends no audio")


@pytest.mark.parametrize("where", ["missing", "parent"])
def test_data_check_on_a_wrong_folder_fails_clearly(walk, where):
    """Issue 12 item 2 (the MCGA engineer's fix): ``mcga-data check`` on a missing folder, or on the parent of
    the ``data/`` folder, exits non-zero and says what is wrong in its last line."""
    folder = walk["elsewhere"] / "nothing_here" if where == "missing" else ROOT / "mcga" / "sample_data"
    code, log, last = run([sys.executable, "-m", "mcga.data", "check", str(folder)], walk["env"], walk["elsewhere"])
    assert code != 0, log[-3000:]
    assert str(folder) in last or folder.name in last, log[-3000:]
    if where == "parent":
        assert "data" in last.replace(str(folder), ""), last  # suggests the data/ folder below


def test_group_name_from_the_repository_root_runs_the_group(walk, root_run):
    code, log, _ = root_run
    assert code == 0, log[-3000:]
    assert "No tasks found" not in log
    from tests.test_report import assert_printed_table_is_short

    [results_file] = [p for p in walk["out"].rglob("*_results.json") if "mcga_sr" in json.loads(p.read_text(encoding="utf-8"))["results"]]
    assert_printed_table_is_short(log, json.loads(results_file.read_text(encoding="utf-8")), max_rows=20)  # 7 rows + S2TT/SEC judge-free
    for task in MCGA_TASKS:
        assert f"|{task}" in log or f"| - {task}" in log, task


def test_a_second_run_into_an_output_folder_says_so_in_one_line_before_inference(walk, quick_start, root_run):
    """Issue 27 item 5: the quick start wrote one results file into walk["out"]; the root run adds a second."""
    assert "already holds" not in quick_start[1]  # the first run: an empty folder, nothing said
    log = root_run[1]
    [line] = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in log.splitlines() if "already holds" in line]  # loguru's colours dropped
    found = re.search(r"--output_path (\S+) already holds 1 results file\(s\) \(newest (\S+_results\.json)\): this run is added beside them, none replaced$", line)
    assert found and found[1] == str(walk["out"]) and (walk["out"] / found[2]).is_file(), line
    assert log.index("already holds") < log.index("Building contexts")  # said before any document is read


def test_the_report_of_two_runs_in_one_folder_takes_the_newest_run_per_task(walk, quick_start, root_run):
    results = sorted(walk["out"].rglob("*_results.json"))
    assert len(results) == 2, results  # the quick start and the root run
    newest = max(results, key=lambda p: json.loads(p.read_text(encoding="utf-8"))["date"])
    code, log, last = run([sys.executable, "-m", "mcga.report", str(walk["out"])], walk["env"], walk["elsewhere"])
    assert code == 0, log
    assert f"note: mcga_asr found in 2 runs; using the newest, {newest};" in log
    assert all(re.search(rf"^\|{task} *\|", log, re.M) for task in MCGA_TASKS)  # a table row per task
    assert last == "CMC: not computed, missing tasks mcga_sqa_text, mcga_su_text, mcga_sr_text (run --tasks mcga_cmc)"
