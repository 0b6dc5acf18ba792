"""Response diagnostics through the real ``lmms-eval`` CLI (``--model replay``, predictions built here in tmp_path):
counts in the results JSON, warnings in the log, failed generations scored as empty answers, lone surrogates made
valid in the samples files, and a mostly-failed run exiting non-zero.

Every run passes ``--verbosity DEBUG`` (without it lmms-eval 0.7 exits 0 when an exception escapes) and runs from a
temporary folder (from the repository root, ``--tasks parsa`` would be read as the package folder).
"""

import json
import subprocess

import pytest

from audio_bench_core import responses
from mcga import data as mcga_data
from mcga import metrics as mcga_metrics
from parsa import data as parsa_data
from parsa.prompts import demo_answer_json

pytestmark = pytest.mark.cli
REQUEST_FAILED = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."
ASR_INSTRUCTION = "Transcribe the Chinese audio into Chinese text."


@pytest.fixture
def offline_env(offline_env):
    return {k: v for k, v in offline_env.items() if not k.startswith("PARSA_")}


def run(cli, env, tmp_path, tasks, answers):
    """Replay ``answers`` (``{task: {key: response}}``: MCGA by document key, since ids repeat across speakers;
    PARSA by id) on ``tasks``; returns (exit code, log, results or None, out)."""
    predictions = tmp_path / "predictions.jsonl"
    rows = [{"task": task, "key" if task.startswith("mcga") else "id": i, "response": r} for task, by_key in answers.items() for i, r in by_key.items()]
    # ensure_ascii=True writes a lone surrogate as the JSON escape \ud800, which json.loads reads back as it was
    predictions.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    out = tmp_path / "out"
    command = [cli, "--tasks", tasks, "--model", "replay", "--model_args", f"predictions={predictions}", "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG"]
    result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
    found = sorted(out.rglob("*_results.json"))
    results = json.loads(found[0].read_text(encoding="utf-8")) if found else None
    return result.returncode, result.stdout + result.stderr, results, out


def metrics_of(results):
    return {task: {k.split(",")[0]: v for k, v in values.items()} for task, values in results["results"].items()}


def logged(out, task):
    [file] = out.rglob(f"*_samples_{task}.jsonl")
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]


def test_mcga_failed_echoed_placeholder_and_invalid_responses_are_counted(lmms_eval_cli, offline_env, tmp_path):
    asr_rows = mcga_data.load_task_rows("asr", data_dir=mcga_data.SAMPLE_DATA_DIR)
    sqa_rows = mcga_data.load_task_rows("sqa", data_dir=mcga_data.SAMPLE_DATA_DIR)
    sec_rows = mcga_data.load_task_rows("sec", data_dir=mcga_data.SAMPLE_DATA_DIR)
    key = mcga_data.DOC_KEY_FIELD
    n_asr, n_sqa, n_sec = len(asr_rows), len(sqa_rows), len(sec_rows)  # 14, 5, 3 in the shipped sample
    answers = {
        # 4 request failures, then replies that are the ASR instruction (audio never reached the model)
        "mcga_asr": {row[key]: REQUEST_FAILED if i < 4 else ASR_INSTRUCTION for i, row in enumerate(asr_rows)},
        # one failure, one right answer with a lone surrogate after it, the others right
        "mcga_sqa": {row[key]: [REQUEST_FAILED, row["sqa_a"] + "\ud800"][i] if i < 2 else row["sqa_a"] for i, row in enumerate(sqa_rows)},
        # one reply that fills the line template with the template itself
        "mcga_sec": {row[key]: "男声。\n思乡。\n原文|情感意境分析" if i == 0 else row["sec"] for i, row in enumerate(sec_rows)},
    }
    code, log, results, out = run(lmms_eval_cli, offline_env, tmp_path, "mcga_asr,mcga_sqa,mcga_sec", answers)
    assert code == 0, log[-4000:]
    r = metrics_of(results)

    asr = r["mcga_asr"]
    assert {m: asr[m] for m in responses.DIAGNOSTIC_METRICS} == {
        "failed_generations": 4, "empty_responses": 0, "unfinished_reasoning": 0, "echoed_prompts": n_asr - 4, "placeholder_copies": 0, "identical_answers": n_asr - 4, "invalid_text_replaced": 0,
        "scoring_errors": 0, "long_answers": 0,
    }  # fmt: skip
    # The paper-rule CER is unchanged by the diagnostics; the failures are scored as empty hypotheses, never as text.
    refs = [row["asr"] for row in asr_rows]
    assert asr["cer_official"] == pytest.approx(mcga_metrics.official_cer_percent(refs, [""] * 4 + [ASR_INSTRUCTION] * (n_asr - 4)))
    assert asr["cer_official"] != pytest.approx(mcga_metrics.official_cer_percent(refs, [REQUEST_FAILED] * 4 + [ASR_INSTRUCTION] * (n_asr - 4)))
    assert [s["cer_official"]["output"] for s in logged(out, "mcga_asr")][:4] == [""] * 4
    first = asr_rows[0][key]  # documents are named by their key (the clip) in warnings
    assert f"mcga_asr: 4 of {n_asr} responses ({400 / n_asr:.1f}%) are failed generations, scored as empty answers; first (document {first}): request failed after 5 retries: Connection error." in log
    assert f"mcga_asr: {n_asr - 4} of {n_asr} responses ({100 * (n_asr - 4) / n_asr:.1f}%) echo the prompt instead of answering" in log
    assert f"mcga_asr: {n_asr - 4} of {n_asr} responses ({100 * (n_asr - 4) / n_asr:.1f}%) give the same answer 'Transcribe the Chinese audio into Chinese text.' across distinct inputs" in log

    sqa = r["mcga_sqa"]
    assert (sqa["failed_generations"], sqa["invalid_text_replaced"], sqa["empty_responses"]) == (1, 1, 0)
    # official containment F1 per item: failed -> "" -> 0; "元\ufffd" contains 元 -> P 1/2, R 1 -> 2/3; the others 1
    outputs = ["", sqa_rows[1]["sqa_a"] + "\ufffd", *(row["sqa_a"] for row in sqa_rows[2:])]
    f1 = [100 * mcga_metrics.official_sqa_f1(row["sqa_a"], output) for row, output in zip(sqa_rows, outputs)]
    assert sqa["f1_official"] == pytest.approx(sum(f1) / n_sqa)
    sqa_samples = logged(out, "mcga_sqa")
    assert len(sqa_samples) == n_sqa and sqa_samples[1]["filtered_resps"] == sqa_rows[1]["sqa_a"] + "\ufffd"  # written, not lost
    assert "mcga_sqa: 1 invalid code point(s) (lone surrogates) in 1 response(s) replaced by U+FFFD" in log

    assert r["mcga_sec"]["placeholder_copies"] == 1 and r["mcga_sec"]["echoed_prompts"] == 0
    assert f"mcga_sec: 1 of {n_sec} responses ({100 / n_sec:.1f}%) copy the prompt's format placeholder; first (document {sec_rows[0][key]}): '原文|情感意境分析'" in log


def gold(task):
    return {doc["id"]: demo_answer_json(task, doc) for doc in parsa_data.load_task_docs(task)}


def test_parsa_echoes_placeholders_identical_labels_and_failures_are_counted(lmms_eval_cli, offline_env, tmp_path):
    answers = {
        "parsa_s2tt_fa_en": {i: '{"translation": "Listen to the Persian audio and translate what is said into English."}' for i in gold("s2tt_fa_en")},
        "parsa_s2tt_en_fa": {i: '{"translation": "your Persian translation here"}' for i in gold("s2tt_en_fa")},
        "parsa_register": {i: '{"register": "formal"}' for i in gold("register")},  # gold: 3 formal, 3 informal
        # the right answers as models write them (issue 27 item 2): inside formatting, beside the option's text, as a
        # concluding sentence with no JSON, as a list of text parts (a wrapper's content); one failed generation
        "parsa_vazn": {**gold("vazn"), "vazn_01": '{"answer": "**1**"}', "vazn_02": '{"answer": "2 (متقارب مثمن محذوف)"}', "vazn_03": REQUEST_FAILED,
                       "vazn_04": [{"type": "text", "text": '{"answer": "\\\\boxed{4}"}'}], "vazn_05": "وزن را بررسی کردم؛ بنابراین گزینه ۵ درست است.",
                       "vazn_06": '{"answer": "«۷»"}'},
        "parsa_emotion": {**gold("emotion"), "emotion_01": '{"emotion": "anger (خشم)"}', "emotion_02": ['{"emotion": "**fear**"}'], "emotion_03": '{"emotion": "「happiness」"}'},
    }
    code, log, results, out = run(lmms_eval_cli, offline_env, tmp_path, ",".join(answers), answers)
    assert code == 0, log[-4000:]
    r = metrics_of(results)
    for task in answers:
        assert set(responses.DIAGNOSTIC_METRICS) <= set(r[task]), task

    # The echoed instruction is still scored under the paper's rule (4 of 4 scored); the echo count sits beside it.
    fa_en = r["parsa_s2tt_fa_en"]
    assert (fa_en["scored"], fa_en["echoed_prompts"], fa_en["placeholder_copies"], fa_en["identical_answers"]) == (4, 4, 0, 0)  # 4 clips < 5
    assert "parsa_s2tt_fa_en: 4 of 4 responses (100.0%) echo the prompt instead of answering" in log
    en_fa = r["parsa_s2tt_en_fa"]
    assert (en_fa["refused"], en_fa["placeholder_copies"], en_fa["echoed_prompts"]) == (4, 4, 0)
    assert "parsa_s2tt_en_fa: 4 of 4 responses (100.0%) copy the prompt's format placeholder; first (document en_fa_01): 'your Persian translation here'" in log
    # One label for every clip of a balanced task: 100 % > max(90 %, 50 % + 10 points). Gold labels: not flagged.
    assert r["parsa_register"]["identical_answers"] == 6 and r["parsa_register"]["macro_f1"] == pytest.approx(1 / 3)
    assert "parsa_register: 6 of 6 responses (100.0%) give the same answer" in log
    assert r["parsa_emotion"]["identical_answers"] == 0 and r["parsa_emotion"]["macro_f1"] == 1.0
    # A failed generation is not parsed: excluded under the paper's rule, with its reason in the logged record.
    vazn = r["parsa_vazn"]
    assert (vazn["failed_generations"], vazn["scored"], vazn["excluded"], vazn["accuracy"]) == (1, 5, 1, 1.0)
    records = {s["accuracy"]["id"]: s["accuracy"] for s in logged(out, "parsa_vazn")}
    assert (records["vazn_03"]["status"], records["vazn_03"]["reason"]) == ("excluded", "generation_failed")
    assert {i: (r["prediction"], r["reading"]) for i, r in records.items() if i != "vazn_03"} == {
        "vazn_01": (1, "unwrapped"), "vazn_02": (2, "gloss"), "vazn_04": (4, "unwrapped"), "vazn_05": (5, "conclusion"), "vazn_06": (7, "unwrapped")}  # fmt: skip
    emotion = {s["macro_f1"]["id"]: (s["macro_f1"]["prediction"], s["macro_f1"]["reading"]) for s in logged(out, "parsa_emotion")}
    assert emotion["emotion_01"] == ("anger", "gloss") and emotion["emotion_02"][0] == "fear" and emotion["emotion_03"][0] == "happiness"


def test_one_failed_task_costs_only_itself_and_every_file_is_written(lmms_eval_cli, offline_env, tmp_path):
    """Issue 27 item 1: a failed run of one task (here two: every mcga_asr answer an unfinished reasoning block, and
    parsa_gender mostly request failures) is marked failed with its figures withheld; parsa_vazn is scored; every
    results and samples file is written; the run exits 1 after writing, the cause last."""
    asr_rows = mcga_data.load_task_rows("asr", data_dir=mcga_data.SAMPLE_DATA_DIR)
    answers = {
        "mcga_asr": {row[mcga_data.DOC_KEY_FIELD]: "<think>\n这段音频读的是一首诗，我先听第一句，" for row in asr_rows},
        "parsa_vazn": gold("vazn"),
        "parsa_gender": {**gold("gender"), "gender_01": REQUEST_FAILED, "gender_02": REQUEST_FAILED, "gender_04": ""},
    }
    code, log, results, out = run(lmms_eval_cli, offline_env, tmp_path, ",".join(answers), answers)
    assert code == 1 and results is not None, log[-4000:]
    r = metrics_of(results)
    assert r["parsa_vazn"]["accuracy"] == 1.0 and r["parsa_vazn"]["failed_generations"] == 0  # the good task keeps its scores
    status = results["lmms_eval_audio_plugin"]["task_status"]
    assert set(status) == {"mcga_asr", "parsa_gender"} and {s["status"] for s in status.values()} == {"failed"}
    asr_reason = f"FailedRunError: mcga_asr: failed run: {len(asr_rows)} of {len(asr_rows)} responses (100.0%) are failed generations (0) or empty (0), unfinished reasoning ({len(asr_rows)})"
    assert status["mcga_asr"]["reasons"][0].startswith(asr_reason)
    # every figure of a failed task withheld, the reason beside it; the document count kept
    for task in ("mcga_asr", "parsa_gender"):
        figures = {k: v for k, v in r[task].items() if k not in ("alias", "samples") and "_stderr" not in k}
        assert figures and all(v == f"not computed: {status[task]['reasons'][0]}" for v in figures.values()), (task, figures)
    assert results["n-samples"]["mcga_asr"]["effective"] == len(asr_rows)
    assert status["parsa_gender"]["reasons"][0].startswith(
        "FailedRunError: parsa_gender: failed run: 3 of 4 responses (75.0%) are failed generations (2) or empty (1), more than 50%"
    )
    assert "First error (document gender_01): request failed after 5 retries: Connection error." in status["parsa_gender"]["reasons"][0]
    # every task's samples, the failed ones included (the answers that made them fail can be read)
    for task, by_key in answers.items():
        assert len(logged(out, task)) == len(by_key), task
    assert all(s["diagnostics"]["unfinished_reasoning"] and s["unfinished_reasoning"] == 1 for s in logged(out, "mcga_asr"))
    # the printed table shows it, then the causes come last
    assert "not computed (1)" in log and "mcga_asr: failed run" in log
    last = sorted(log.strip().splitlines()[-2:])
    assert last[0].startswith("lmms-eval run failed: FailedRunError: mcga_asr: failed run:"), last
    assert last[1].startswith("lmms-eval run failed: FailedRunError: parsa_gender: failed run: 3 of 4 responses"), last