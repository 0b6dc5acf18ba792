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
from tests.release_shaped_mcga import write_release

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
    assert r["mcga_asr"]["n_by_genre,none"] == EXPECTED["asr_n_by_genre"] and r["mcga_asr"]["n_by_dynasty,none"] == EXPECTED["asr_n_by_dynasty"]
    assert list(r["mcga_asr"]["n_by_genre,none"]) == list(r["mcga_asr"]["cer_official_by_genre,none"]) == ["诗", "词", "曲", "赋", "文"]
    assert r["mcga_sqa"]["f1_official,none"] == pytest.approx(EXPECTED["sqa_f1"], abs=1e-9)
    assert r["mcga_su"]["acc_official,none"] == pytest.approx(EXPECTED["su_acc"], abs=1e-9)
    assert r["mcga_sr"]["acc_official,none"] == pytest.approx(EXPECTED["sr_acc"], abs=1e-9)
    # Strict variants beside them: su answers are "B", "答案是B。选项A的说法与原文不符。", "答案：C，因为A选项错误", the text of
    # option C (all right) and "ABCD" (unparseable).
    assert r["mcga_su"]["acc_strict,none"] == pytest.approx(80.0) and r["mcga_su"]["strict_parse_failures,none"] == 1
    assert r["mcga_asr"]["empty_responses,none"] == 1
    assert r["mcga_asr"]["signature,none"] == metrics.task_signature("asr")
    logged = samples(out, "mcga_asr")
    rows = data.load_task_rows("asr", data_dir=data.SAMPLE_DATA_DIR)
    assert sorted((s["cer_official"]["key"], s["cer_official"]["id"], s["cer_official"]["speaker"]) for s in logged) == sorted(
        (row["doc_key"], row["id"], row["source"]) for row in rows)  # fmt: skip
    assert len({s["cer_official"]["id"] for s in logged}) == 10 and len(logged) == 14  # ids repeat, clips do not


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
    # Rows in file order: sqa_01 (espeak-f: 《静夜思》), sqa_01 (李白), sqa_02 (元), sqa_03 x2 (陋室铭), sqa_04 (词);
    # su golds B B C C D; sr golds B A D D.
    answers = {"mcga_sqa": ["x", "李白", "元", "x", "x", "x"], "mcga_sqa_text": ["静夜思", "李白", "元", "陋室铭", "x", "x"],
               "mcga_su": ["B", "B", "A", "C", "A"], "mcga_su_text": ["B", "B", "C", "C", "D"],
               "mcga_sr": ["B", "A", "A", "A"], "mcga_sr_text": ["B", "A", "D", "D"]}  # fmt: skip
    rows = []
    for task, replies in answers.items():
        docs = data.load_task_rows(task.split("_")[1], data_dir=data.SAMPLE_DATA_DIR)
        assert len(docs) == len(replies)
        rows += [{"task": task, "key": d["doc_key"], "id": d["id"], "response": a} for d, a in zip(docs, replies)]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    results, _ = lmms_eval(lmms_eval_cli, offline_env, out, "mcga_cmc", "replay", f"predictions={predictions}")
    assert results["results"]["mcga_sqa_text"]["f1_official,none"] == pytest.approx(400 / 6)
    assert report_main([str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # SQA/QA = (2/6)/(4/6), SU/LU = 60/100, SR/LR = 50/100
    assert report["cmc"] == pytest.approx((0.5 + 0.6 + 0.5) / 3 * 100)


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
    assert "(id 'escape-1', audio '../../etc/passwd'): audio path '../../etc/passwd' escapes the data folder" in log


def test_missing_predictions_fail_the_run_naming_the_keys(lmms_eval_cli, offline_env, tmp_path):
    partial = tmp_path / "p.jsonl"
    rows = [{"task": "mcga_su", "key": "upload/espeak-m/asr_qu_01.wav", "response": "B"}, {"task": "mcga_su", "id": "su_03", "response": "D"}]
    partial.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, log = run_cli([lmms_eval_cli, "--tasks", "mcga_su", "--model", "replay", "--model_args", f"predictions={partial}", "--verbosity", "DEBUG"], offline_env, cwd=tmp_path)
    assert code != 0
    assert ("no prediction for 3 document(s) of mcga_su: upload/espeak-f/asr_qu_01.wav, upload/espeak-f/asr_wen_01.wav, "
            "upload/espeak-m/asr_wen_01.wav") in log  # fmt: skip


RELEASE_EXPECTED = json.loads((FIXTURES / "mcga_release_shaped_expected.json").read_text(encoding="utf-8"))


def test_release_shaped_set_passes_check_and_replay_reproduces_the_official_scorer(lmms_eval_cli, offline_env, tmp_path):
    # 1,000 rows per task in the release's shape (repeated ids, extra fields); expected numbers from the unmodified
    # official scorer on the same runner rows (tests/fixtures/README_mcga_release_shaped.md).
    data_dir, runner, digests = write_release(tmp_path / "release")
    assert digests == RELEASE_EXPECTED["runner_rows_sha256"]  # the rows the official scorer saw
    check = subprocess.run([sys.executable, "-m", "mcga.data", "check", str(data_dir)], env=offline_env, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    assert "asr: 1000 rows OK (915 distinct ids" in check.stdout and "sqa: 1000 rows OK (999 distinct ids" in check.stdout
    out = tmp_path / "out"
    env = {**offline_env, "MCGA_DATA_DIR": str(data_dir)}
    command = [lmms_eval_cli, "--tasks", "mcga_asr,mcga_sqa,mcga_su,mcga_sr", "--model", "replay", "--model_args", f"predictions={runner}",
               "--output_path", str(out), "--verbosity", "DEBUG"]  # fmt: skip
    code, log = run_cli(command, env, cwd=tmp_path)
    assert code == 0, log[-4000:]
    [results_file] = out.rglob("*_results.json")
    r = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    assert r["mcga_asr"]["cer_official,none"] == pytest.approx(RELEASE_EXPECTED["asr_cer_total"], abs=1e-9)
    for metric, group in (("genre", "asr_cer_by_genre"), ("dynasty", "asr_cer_by_dynasty")):
        expected = RELEASE_EXPECTED[group]
        assert r["mcga_asr"][f"cer_official_by_{metric},none"] == pytest.approx({g: v["cer"] for g, v in expected.items()}, abs=1e-9)
        assert r["mcga_asr"][f"n_by_{metric},none"] == {g: v["n"] for g, v in expected.items()}
    assert r["mcga_sqa"]["f1_official,none"] == pytest.approx(RELEASE_EXPECTED["sqa_f1"], abs=1e-9)
    assert r["mcga_su"]["acc_official,none"] == pytest.approx(RELEASE_EXPECTED["su_acc"], abs=1e-9)
    assert r["mcga_sr"]["acc_official,none"] == pytest.approx(RELEASE_EXPECTED["sr_acc"], abs=1e-9)
