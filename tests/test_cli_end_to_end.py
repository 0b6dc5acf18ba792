"""End-to-end runs of the real ``lmms-eval`` CLI in a subprocess, on the shipped sample.

Every run passes ``--verbosity DEBUG``: without it lmms-eval exits 0 even when the evaluation fails.
"""

import json
import subprocess
import sys

import pytest

from lmms_eval_tasks import TASKS_DIR
from mcga import data, metrics
from mcga.report import main as report_main
from tests.conftest import FIXTURES

pytestmark = pytest.mark.cli
OFFICIAL_ROWS = FIXTURES / "official_runner_rows"
EXPECTED = json.loads((OFFICIAL_ROWS / "expected_official.json").read_text(encoding="utf-8"))


def run_cli(command, env, cwd, timeout=600):
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


def lmms_eval(cli, env, out, tasks, model, model_args, *extra):
    command = [cli, "--tasks", tasks, "--model", model, "--model_args", model_args, "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG", *extra]
    code, log = run_cli(command, env, cwd=out.parent)
    assert code == 0, log[-4000:]
    [results_file] = sorted(out.rglob("*_results.json"))
    return json.loads(results_file.read_text(encoding="utf-8")), log


def samples(out, task):
    [file] = out.rglob(f"*_samples_{task}.jsonl")
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]


def test_replaying_official_runner_rows_gives_the_official_scripts_numbers(lmms_eval_cli, offline_env, tmp_path):
    out = tmp_path / "out"
    results, _ = lmms_eval(lmms_eval_cli, offline_env, out, "mcga", "replay", f"predictions={OFFICIAL_ROWS}")  # the group
    assert sorted(results["group_subtasks"]["mcga"]) == ["mcga_asr", "mcga_s2tt", "mcga_sec", "mcga_sqa", "mcga_sr", "mcga_su"]
    r = results["results"]
    assert r["mcga_asr"]["cer_official,none"] == pytest.approx(EXPECTED["asr_cer_total"], abs=1e-9)
    assert r["mcga_asr"]["cer_official_by_genre,none"] == pytest.approx(EXPECTED["asr_cer_by_genre"], abs=1e-9)
    assert r["mcga_asr"]["cer_official_by_dynasty,none"] == pytest.approx(EXPECTED["asr_cer_by_dynasty"], abs=1e-9)
    assert r["mcga_sqa"]["f1_official,none"] == pytest.approx(EXPECTED["sqa_f1"], abs=1e-9)
    assert r["mcga_su"]["acc_official,none"] == pytest.approx(EXPECTED["su_acc"], abs=1e-9)
    assert r["mcga_sr"]["acc_official,none"] == pytest.approx(EXPECTED["sr_acc"], abs=1e-9)
    # Strict variants beside them: su answers are "B", "答案：C，因为A选项错误" (both right) and "ABCD" (unparseable).
    assert r["mcga_su"]["acc_strict,none"] == pytest.approx(200 / 3) and r["mcga_su"]["strict_parse_failures,none"] == 1
    assert r["mcga_asr"]["empty_responses,none"] == 1
    assert r["mcga_asr"]["signature,none"] == metrics.task_signature("asr")
    logged = samples(out, "mcga_asr")
    assert sorted(s["cer_official"]["id"] for s in logged) == sorted(row["id"] for row in data.load_task_rows("asr", data_dir=data.SAMPLE_DATA_DIR))


def test_include_path_works_too(lmms_eval_cli, offline_env, tmp_path):
    results, _ = lmms_eval(lmms_eval_cli, offline_env, tmp_path / "out", "mcga_su", "replay", f"predictions={OFFICIAL_ROWS}", "--include_path", str(TASKS_DIR))
    assert results["results"]["mcga_su"]["acc_official,none"] == pytest.approx(EXPECTED["su_acc"])


def test_faster_whisper_runs_on_the_sample_and_its_scores_match_its_logged_outputs(lmms_eval_cli, offline_env, tmp_path):
    out = tmp_path / "out"
    results, _ = lmms_eval(lmms_eval_cli, offline_env, out, "mcga_asr,mcga_su", "faster_whisper", "language=zh", "--limit", "3")
    logged = samples(out, "mcga_asr")
    outputs = [s["cer_official"]["output"] for s in logged]
    assert len(outputs) == 3 and all(o.strip() for o in outputs)
    refs = [s["cer_official"]["ref"] for s in logged]
    assert results["results"]["mcga_asr"]["cer_official,none"] == pytest.approx(metrics.official_cer_percent(refs, outputs))
    assert results["results"]["mcga_asr"]["cer_strict,none"] == pytest.approx(metrics.strict_cer_percent(refs, outputs))
    assert results["results"]["mcga_su"]["strict_parse_failures,none"] == 3  # transcripts are not option letters


def test_text_mode_twins_and_cmc_from_one_run(lmms_eval_cli, offline_env, tmp_path, capsys):
    answers = {"mcga_sqa": ["李白", "元", "x", "x"], "mcga_sqa_text": ["李白", "元", "陋室铭", "x"],
               "mcga_su": ["B", "C", "A"], "mcga_su_text": ["B", "C", "D"], "mcga_sr": ["B", "A", "A"], "mcga_sr_text": ["B", "A", "D"]}  # fmt: skip
    rows = []
    for task, replies in answers.items():
        ids = [r["id"] for r in data.load_task_rows(task.split("_")[1], data_dir=data.SAMPLE_DATA_DIR)]
        rows += [{"task": task, "id": i, "response": a} for i, a in zip(ids, replies)]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    results, _ = lmms_eval(lmms_eval_cli, offline_env, out, "mcga_cmc", "replay", f"predictions={predictions}")
    assert results["results"]["mcga_sqa_text"]["f1_official,none"] == pytest.approx(75.0)
    assert report_main([str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # SQA/QA = 50/75, SU/LU = 66.7/100, SR/LR = 66.7/100
    assert report["cmc"] == pytest.approx((50 / 75 + 2 / 3 + 2 / 3) / 3 * 100)


def test_two_processes_give_the_same_results_as_one(lmms_eval_cli, offline_env, tmp_path):
    tasks, args = "mcga_asr,mcga_sr", f"predictions={OFFICIAL_ROWS}"
    single, _ = lmms_eval(lmms_eval_cli, offline_env, tmp_path / "one", tasks, "replay", args)
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "lmms_eval", "--tasks", tasks, "--model", "replay",
               "--model_args", args, "--output_path", str(tmp_path / "two"), "--log_samples", "--verbosity", "DEBUG"]  # fmt: skip
    code, log = run_cli(command, offline_env, cwd=tmp_path)
    assert code == 0, log[-4000:]
    assert "world_size2" in log
    [two_file] = (tmp_path / "two").rglob("*_results.json")
    sharded = json.loads(two_file.read_text(encoding="utf-8"))
    for task in ("mcga_asr", "mcga_sr"):
        assert sharded["results"][task] == single["results"][task]
    assert sharded["n-samples"] == single["n-samples"]


def test_bad_data_fails_the_run_with_the_row_id(lmms_eval_cli, offline_env, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    row = {"id": "escape-1", "asr": "床前明月光", "audio": "../../etc/passwd", "genre": "诗", "dynasty": "唐"}
    (folder / "MCGA_asr_test.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    code, log = run_cli([lmms_eval_cli, "--tasks", "mcga_asr", "--model", "replay", "--model_args", f"predictions={OFFICIAL_ROWS}",
                         "--verbosity", "DEBUG"], {**offline_env, "MCGA_DATA_DIR": str(folder)}, cwd=tmp_path)  # fmt: skip
    assert code != 0
    assert "(id 'escape-1'): audio path '../../etc/passwd' escapes the data folder" in log


def test_missing_predictions_fail_the_run_naming_the_ids(lmms_eval_cli, offline_env, tmp_path):
    partial = tmp_path / "p.jsonl"
    partial.write_text(json.dumps({"task": "mcga_su", "id": "su_01", "response": "B"}) + "\n", encoding="utf-8")
    code, log = run_cli([lmms_eval_cli, "--tasks", "mcga_su", "--model", "replay", "--model_args", f"predictions={partial}", "--verbosity", "DEBUG"], offline_env, cwd=tmp_path)
    assert code != 0
    assert "no prediction for 2 document(s) of mcga_su: su_02, su_03" in log
