"""End-to-end runs of the real ``lmms-eval`` CLI on the shipped PARSA-Bench sample.

Every run passes ``--verbosity DEBUG`` (otherwise lmms-eval exits 0 when the evaluation fails) and runs from a
temporary folder, not the repository root: there, ``--tasks parsa`` would be read as the ``parsa/`` package folder.
The runs are few and batched: one CLI start costs 10-30 s on a small machine.
"""

import json
import subprocess

import pytest

from mcga import data as mcga_data
from parsa import data
from parsa.prompts import demo_answer_json
from parsa.tasks import TASKS

pytestmark = pytest.mark.cli
SOURCE = "sample:parsa/sample_data (synthetic espeak-ng audio; not for measuring models)"


@pytest.fixture
def offline_env(offline_env):
    """The shared offline environment without the user's PARSA settings (data folder, column map, hub revision)."""
    return {k: v for k, v in offline_env.items() if not k.startswith("PARSA_")}


def lmms_eval(cli, env, out, tasks, model, model_args, expect_ok=True):
    command = [cli, "--tasks", tasks, "--model", model, "--model_args", model_args, "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG"]
    result = subprocess.run(command, env=env, cwd=out.parent, capture_output=True, text=True, timeout=900, check=False)
    log = result.stdout + result.stderr
    if not expect_ok:
        return result.returncode, log
    assert result.returncode == 0, log[-4000:]
    [results_file] = sorted(out.rglob("*_results.json"))
    return json.loads(results_file.read_text(encoding="utf-8")), log


def logged(out, task):
    [file] = out.rglob(f"*_samples_{task}.jsonl")
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]


def gold(task: str) -> dict[str, str]:
    """``{id: the gold answer written as the JSON the model should output}`` for every sample item of a task."""
    return {doc["id"]: demo_answer_json(task, doc) for doc in data.load_task_docs(task)}


def write_predictions(path, answers: dict[str, dict[str, str]]) -> None:
    rows = [{"task": task, "id": i, "response": r} for task, by_id in answers.items() for i, r in by_id.items()]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")


# Deliberately messy, refused and invalid answers; every other item of the run gets its gold JSON.
MESSY = {
    "parsa_asr": {
        "asr_02": '{"transcription": "کتابخانه‌ی شهر ساعت نه صبح باز می‌شود."}',  # هشت -> نه
        "asr_03": "I'm sorry, I can't help with that.",  # no Persian script: refused
        "asr_04": '```json\n{"transcription": "تهران پایتخت ایران است."}\n```',  # fenced JSON: fine
        "asr_05": "من هر روز با اتوبوس به دانشگاه می‌روم",  # no JSON: read as the transcript (json_fallback)
    },
    "parsa_intent": {"intent_02": '{"intent": "Weather Query"}', "intent_03": '{"intent": "play_radio"}', "intent_04": '{"intent": "turn_off_lights"}'},
    "parsa_mcqa": {"mcqa_02": '{"answer": "3"}', "mcqa_03": '{"answer": 7}', "mcqa_04": "I cannot answer this question."},
    "parsa_vazn": {"vazn_02": '{"answer": 1}', "vazn_05": '{"answer": 1}', "vazn_06": '{"answer": "مفاعیلن مفاعیلن فعولن (هزج مسدس محذوف)"}'},
    "parsa_sabk": {"sabk_02": '{"answer": "رباعی"}', "sabk_03": '{"answer": 1}', "sabk_06": ""},
    "parsa_ner": {"ner_02": '{"entities": [{"type": "place_name", "span": "تهران"}]}', "ner_03": '{"entities": []}'},
    "parsa_s2tt_en_fa": {"en_fa_02": "Sorry, I cannot translate this."},
    "parsa_register_text": {"register_06": '{"register": "formal"}'},
    "parsa_emotion_cot": {
        "emotion_03": '{"reasoning": "The speaker sounds cheerful.", "emotion": "happy"}',
        "emotion_04": '{"reasoning": "Flat delivery.", "emotion": "neutral"}',
    },
}
VARIANTS = {"parsa_vazn_fewshot": "vazn", "parsa_register_text": "register", "parsa_intent_audio_ref": "intent", "parsa_emotion_cot": "emotion"}


def test_replay_on_all_16_tasks_and_one_variant_of_each_kind(lmms_eval_cli, offline_env, tmp_path):
    answers = {f"parsa_{t}": gold(t) for t in TASKS}
    answers.update({name: gold(task) for name, task in VARIANTS.items()})
    answers["parsa_emotion_cot"] = {i: '{"reasoning": "...", ' + a[1:] for i, a in answers["parsa_emotion_cot"].items()}
    for task, messy in MESSY.items():
        answers[task].update(messy)
    predictions = tmp_path / "predictions.jsonl"
    write_predictions(predictions, answers)
    out = tmp_path / "out"
    results, log = lmms_eval(lmms_eval_cli, offline_env, out, "parsa," + ",".join(VARIANTS), "replay", f"predictions={predictions}")
    assert sorted(results["group_subtasks"]["parsa"]) == sorted(f"parsa_{t}" for t in TASKS)
    from tests.test_report import assert_printed_table_is_short

    assert_printed_table_is_short(log, results, max_rows=30)  # 16 tasks, 4 variants, 4 group rows, wrapped counts
    r = {task: {k.split(",")[0]: v for k, v in values.items()} for task, values in results["results"].items()}
    approx = pytest.approx

    # ASR: per-item WER [0, 1/7, -, 0, 0] (asr_02: one of 7 words wrong: the normaliser joins می‌شود into one word and
    # drops the ezafe of کتابخانه‌ی, so the reference is کتابخانه شهر ساعت هشت صبح باز میشود); asr_03 refused.
    asr = r["parsa_asr"]
    assert (asr["scored"], asr["excluded"], asr["refused"], asr["json_fallback"]) == (4, 0, 1, 2)  # fallback: asr_03, asr_05
    assert asr["wer_mean"] == approx(1 / 28) and asr["wer_median"] == 0.0 and asr["refusal_rate"] == approx(1 / 5)
    assert asr["wer_mean_strict"] == approx((1 / 7 + 1) / 5)  # the refusal counts as WER 1
    # Intent: scored gold [alarm_set, weather_query, play_music, datetime_query], predicted play_radio for play_music;
    # intent_04 invalid -> excluded. Macro-F1 over the union of 5 labels: (1 + 1 + 0 + 1 + 0) / 5.
    intent = r["parsa_intent"]
    assert (intent["scored"], intent["excluded"], intent["refused"]) == (4, 1, 0)
    assert intent["macro_f1"] == approx(0.6) and intent["accuracy"] == approx(0.75) and intent["accuracy_strict"] == approx(0.6)
    assert intent["majority_baseline"] == approx(0.2) and intent["normalised_score"] == approx((0.6 - 0.2) / 0.8)
    # MCQA: 2 right, option 7 of 4 excluded, an apology refused; chance 1/4.
    mcqa = r["parsa_mcqa"]
    assert (mcqa["scored"], mcqa["excluded"], mcqa["refused"]) == (2, 1, 1)
    assert mcqa["accuracy"] == 1.0 and mcqa["accuracy_strict"] == approx(0.5) and mcqa["majority_baseline"] == approx(0.25)
    # Vazn: gold options [1, 2, 3, 4, 5, 7], predicted [1, 1, 3, 4, 1, 7] -> 4/6. Majority baseline: every gold metre
    # once -> 1/6. Macro-F1 over option texts: option 1 P=1/3 R=1 -> 0.5; options 2, 5 -> 0; 3, 4, 7 -> 1: 3.5/6.
    vazn = r["parsa_vazn"]
    assert vazn["accuracy"] == approx(4 / 6) and vazn["majority_baseline"] == approx(1 / 6) and vazn["macro_f1"] == approx(3.5 / 6)
    assert vazn["normalised_score"] == approx((4 / 6 - 1 / 6) / (5 / 6))
    # Sabk: gold [2, 3, 4, 1, 1, 2]; sabk_03 wrong, sabk_06 empty -> excluded: 4 of 5 scored right.
    # Majority: ghazal/qasideh/qat'eh and masnavi twice each of 6 -> 1/3 (the paper's point: sabk is imbalanced).
    sabk = r["parsa_sabk"]
    assert (sabk["scored"], sabk["excluded"], sabk["refused"]) == (5, 1, 0)
    assert sabk["accuracy"] == approx(0.8) and sabk["accuracy_strict"] == approx(4 / 6) and sabk["majority_baseline"] == approx(1 / 3)
    # NER: 8 gold entities, 6 predicted, all 6 match: P 1, R 6/8, F1 2*0.75/1.75.
    ner = r["parsa_ner"]
    assert ner["precision_exact"] == 1.0 and ner["recall_exact"] == approx(0.75) and ner["f1_exact"] == approx(1.5 / 1.75)
    # Translation: gold references score 1; En->Fa refusal (no Persian script) is counted, not scored.
    en_fa, fa_en = r["parsa_s2tt_en_fa"], r["parsa_s2tt_fa_en"]
    assert (en_fa["scored"], en_fa["refused"], en_fa["refusal_rate"]) == (3, 1, approx(0.25)) and en_fa["chrf_pp"] == approx(100.0)
    assert fa_en["scored"] == 4 and fa_en["chrf_pp"] == approx(100.0) and str(fa_en["comet"]).startswith("not computed")
    # Every other task: gold answers -> perfect; majority baselines from the sample's label counts.
    for task, n, baseline in [("register", 6, 0.5), ("code_switch", 4, 0.5), ("age", 4, 0.25), ("gender", 4, 0.5), ("emotion", 6, 1 / 6)]:
        assert (r[f"parsa_{task}"]["scored"], r[f"parsa_{task}"]["macro_f1"], r[f"parsa_{task}"]["majority_baseline"]) == (n, 1.0, approx(baseline))
    for task, n in [("rc_wiki", 4), ("rc_tiny", 4), ("music", 5)]:
        assert (r[f"parsa_{task}"]["scored"], r[f"parsa_{task}"]["accuracy"], r[f"parsa_{task}"]["majority_baseline"]) == (n, 1.0, approx(0.25))

    # Variants. Few-shot: gold everywhere. Text: register_06 informal -> formal: F1 formal 6/7 (P 3/4, R 1), informal 0.8.
    assert r["parsa_vazn_fewshot"]["accuracy"] == 1.0 and r["parsa_intent_audio_ref"]["macro_f1"] == 1.0
    assert r["parsa_register_text"]["macro_f1"] == approx((6 / 7 + 0.8) / 2)
    # CoT: "happy" is an alias of happiness; emotion_04 (sadness) answered neutral: F1 sadness 0, neutral 2/3, others 1.
    assert r["parsa_emotion_cot"]["macro_f1"] == approx((4 + 2 / 3) / 6) and r["parsa_emotion_cot"]["accuracy"] == approx(5 / 6)
    for task, values in r.items():
        if task != "parsa":
            assert values["data_source"] == SOURCE and values["signature"].startswith("parsa-scoring:")

    # Logged per-item records carry id and status; the simple-model few-shot prompt holds 2 other items' gold JSON first.
    record = logged(out, "parsa_asr")[2]["refused"]
    assert (record["id"], record["status"]) == ("asr_03", "refused")
    sample = logged(out, "parsa_vazn_fewshot")[0]
    demos = data.fewshot_demos(data.load_task_docs("vazn"))["vazn_01"]
    context = sample["input"]
    assert [context.count(demo_answer_json("vazn", d)) >= 1 for d in demos] == [True, True] and context.count("Options:") == 3


def test_mcga_and_parsa_tasks_in_one_run(lmms_eval_cli, offline_env, tmp_path):
    """The user's example: ``lmms-eval --tasks mcga_asr,parsa_vazn --model <model>``."""
    rows = mcga_data.load_task_rows("asr", data_dir=mcga_data.SAMPLE_DATA_DIR)
    answers = {"parsa_vazn": gold("vazn")}
    answers["parsa_vazn"]["vazn_01"] = '{"answer": 2}'  # gold 1
    predictions = tmp_path / "predictions.jsonl"
    write_predictions(predictions, answers)
    # MCGA ids repeat (one text, several speakers): its answers are keyed by the document key (the clip path)
    mcga_rows = [{"task": "mcga_asr", "key": row["doc_key"], "response": row["asr"]} for row in rows]
    with predictions.open("a", encoding="utf-8") as handle:
        handle.write("".join("\n" + json.dumps(r, ensure_ascii=False) for r in mcga_rows))
    results, _ = lmms_eval(lmms_eval_cli, offline_env, tmp_path / "out", "mcga_asr,parsa_vazn", "replay", f"predictions={predictions}")
    assert results["results"]["mcga_asr"]["cer_official,none"] == 0.0
    assert results["results"]["parsa_vazn"]["accuracy,none"] == pytest.approx(5 / 6)


def test_faster_whisper_transcribes_the_persian_sample(lmms_eval_cli, offline_env, tmp_path):
    out = tmp_path / "out"
    results, _ = lmms_eval(lmms_eval_cli, offline_env, out, "parsa_asr", "faster_whisper", "language=fa")
    r = {k.split(",")[0]: v for k, v in results["results"]["parsa_asr"].items()}
    records = [sample["wer_mean"] for sample in logged(out, "parsa_asr")]
    assert len(records) == 5
    refused = [rec for rec in records if rec["status"] == "refused"]
    scored = [rec for rec in records if rec["status"] == "scored"]
    assert r["refused"] == len(refused) and r["scored"] == len(scored) and r["scored"] + r["excluded"] + r["refused"] == 5
    assert isinstance(r["wer_mean"], float) and r["wer_mean"] == pytest.approx(sum(rec["wer"] for rec in scored) / len(scored))
    assert r["json_fallback"] == r["scored"]  # Whisper writes plain text, never the JSON the prompt asks for


def test_hub_route_offline_fails_the_run_with_the_gate_instructions(lmms_eval_cli, offline_env, tmp_path):
    env = {**offline_env, data.DATA_DIR_ENV: "hub", "HF_HOME": str(tmp_path / "hf_home")}
    predictions = tmp_path / "predictions.jsonl"
    write_predictions(predictions, {"parsa_gender": gold("gender")})
    code, log = lmms_eval(lmms_eval_cli, env, tmp_path / "out", "parsa_gender", "replay", f"predictions={predictions}", expect_ok=False)
    assert code != 0
    assert f"hub dataset {data.HUB_REPO_ID} at revision 'main': not in the local Hugging Face cache" in log
    assert "export HF_TOKEN=" in log
