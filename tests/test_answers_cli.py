"""Answers as today's reasoning models write them, through the real ``lmms-eval`` CLI (``--model replay``), and
lmms-eval's response cache (``--use_cache``) across two data folders (issue 17 items 1-5, 8, 9).

The answers are written the way the named models write them when served without a reasoning parser: Qwen3 /
DeepSeek-R1 ``<think>…</think>`` blocks, a chat template that pre-filled ``<think>`` so only ``</think>`` appears
(Qwen3-Thinking-2507), Kimi-Audio's ``◁think▷…◁/think▷``, ``<thinking>``/``<reasoning>`` blocks, a block cut off
by the token limit, a JSON answer retracted and restated, a quoted name breaking the JSON, a truncated JSON object.

Three runs share one response cache, each with ``--verbosity DEBUG`` (otherwise lmms-eval exits 0 on failure) from
a temporary folder: (1) data folders A (copies of the shipped samples) with the reasoning answers X; (2) data folders
B (the same documents, one gold text changed per benchmark) with the plain gold answers Y in the same predictions
file; (3) folders A again with answers Y. Run 2 must get Y (a cache hit would have served run 1's answers to B's
documents, as before the fix); run 3 must get X back from the cache (the same data keeps the same keys).
"""

import json
import shutil
import subprocess

import pytest

from audio_bench_core.answers import response_text
from mcga import data as mcga_data
from mcga import metrics as mcga_metrics
from mmac import data as mmac_data
from parsa import data as parsa_data
from parsa import metrics as parsa_metrics
from parsa.prompts import demo_answer_json

pytestmark = pytest.mark.cli
TASKS = "mcga_asr,mcga_su,parsa_emotion,parsa_mcqa,parsa_asr,parsa_s2tt_fa_en,mmac_content"
KEY = mcga_data.DOC_KEY_FIELD


def _mcga_gold(task: str, field: str) -> dict[str, str]:
    return {row[KEY]: row[field] for row in mcga_data.load_task_rows(task, data_dir=mcga_data.SAMPLE_DATA_DIR)}


def _parsa_gold(task: str) -> dict[str, str]:
    return {doc["id"]: demo_answer_json(task, doc) for doc in parsa_data.load_task_docs(task, data_dir=parsa_data.SAMPLE_DATA_DIR)}


ASR_GOLD = _mcga_gold("asr", "asr")
WEN = "upload/espeak-f/asr_wen_01.wav"  # 山不在高，有仙则名。……惟吾德馨。
# MCGA ASR: four reasoning spellings, one block cut off by the token limit, and two variant characters (僊 for 仙:
# not in OpenCC's tables, an error; 徳 for 德: Japanese shinjitai, folded by cer_strict)
MCGA_ASR = {
    **ASR_GOLD,
    "upload/espeak-f/asr_ci_01.wav": "<think>\n用户让我转写这段音频。这是苏轼的《水调歌头》，开头应该是“明月几时有”。\n</think>\n\n" + ASR_GOLD["upload/espeak-f/asr_ci_01.wav"],
    "upload/espeak-m/asr_ci_01.wav": "◁think▷这是一首词，我逐句听写。◁/think▷" + ASR_GOLD["upload/espeak-m/asr_ci_01.wav"],
    "upload/espeak-m/asr_ci_02.wav": "好的，我来听一下这段音频，应该是李清照的《如梦令》。\n</think>\n\n" + ASR_GOLD["upload/espeak-m/asr_ci_02.wav"],
    "upload/espeak-m/asr_fu_01.wav": "<think>\n音频读的是《阿房宫赋》，开头是“六王毕，四海一”，我需要仔细分辨后面的",
    "upload/espeak-m/asr_fu_02.wav": "<thinking>草稿：壬戌之秋……</thinking>" + ASR_GOLD["upload/espeak-m/asr_fu_02.wav"],
    WEN: ASR_GOLD[WEN].replace("仙", "僊").replace("德", "徳"),
    # the final answer inside answer tags: an R1-style template, and Audio-Reasoner's (tags nested in its THINK)
    "upload/espeak-f/asr_shi_01.wav": "<think>\n是李白的《静夜思》。\n</think>\n<answer>" + ASR_GOLD["upload/espeak-f/asr_shi_01.wav"] + "</answer>",
    "upload/espeak-m/asr_shi_01.wav": "<THINK><PLANNING>逐句听写。</PLANNING><REASONING>五言绝句。</REASONING></THINK><RESPONSE>"
    + ASR_GOLD["upload/espeak-m/asr_shi_01.wav"] + "</RESPONSE>",
    # responses that are not strings, as model wrappers and replay files give them (issue 27 item 2): a list of one
    # transcript (its repr scored CER 100) and a chat message of text parts; read as their text
    "upload/espeak-m/asr_qu_02.wav": [ASR_GOLD["upload/espeak-m/asr_qu_02.wav"]],
    "upload/espeak-m/asr_shi_02.wav": {"role": "assistant", "content": [{"type": "text", "text": ASR_GOLD["upload/espeak-m/asr_shi_02.wav"]}]},
}
# what the scorers must see: reasoning removed; the unfinished block leaves nothing
MCGA_ASR_READ = {**MCGA_ASR, **{k: ASR_GOLD[k] for k in MCGA_ASR if k.endswith(("ci_01.wav", "ci_02.wav", "fu_02.wav", "shi_01.wav", "shi_02.wav", "qu_02.wav"))}, "upload/espeak-m/asr_fu_01.wav": ""}
MCGA_SU = {
    "upload/espeak-f/asr_qu_01.wav": "<think>\n选项A写边塞，选项B写思乡。枯藤老树昏鸦写的是游子。\n</think>\n\n答案是A。不对，答案是B。",  # gold B: retracted, B
    "upload/espeak-m/asr_qu_01.wav": "答案是B嗎？",  # gold B: a question, not an answer
    "upload/espeak-f/asr_wen_01.wav": "答案是A。答案是C。",  # gold C: two answers, none final
    "upload/espeak-m/asr_wen_01.wav": "<think>\n斯是陋室，惟吾德馨，意思是品德高尚，答案应该是C，不过我再看看选项",  # cut off
    "upload/espeak-m/asr_wen_02.wav": "<think>陶渊明独爱菊。</think>原文说“予独爱莲”，A、B、C都与原文不符，D项符合题意。",  # gold D: a concluding statement
}
PARSA_EMOTION = {
    "emotion_01": '<think>\nThe speaker sounds tense... maybe fear? No, the pitch is raised and loud.\n</think>\n\n{"emotion": "anger"}',
    "emotion_02": '◁think▷Breathy, trembling voice.◁/think▷{"emotion": "fear"}',
    "emotion_03": '<reasoning>My first guess was {"emotion": "sadness"}, but the laughter says otherwise.</reasoning>\n{"emotion": "happiness"}',
    "emotion_04": '<think>\nLow energy, slow tempo. I would answer {"emotion": "sadness"} but let me listen to the second half',
    "emotion_05": '{"emotion": "contempt"}',  # gold surprise: a label outside SHEMO's six
    "emotion_06": '{"emotion": "anger"}\nWait, listening again, the delivery is flat.\n{"emotion": "neutral"}',
}
PARSA_MCQA = {
    "mcqa_01": '{"answer": 1}\nWait, I misread the question: the passage names Tehran.\n{"answer": 2}',  # gold 2
    "mcqa_02": '{"answer": 1}\n{"answer": 3}',  # gold 3: two answers, none final
    "mcqa_03": '{"answer": "4?"}',  # gold 4: a question
    "mcqa_04": 'Option 1 is Damavand, the highest peak of Iran.\n</think>\n\n{"answer": 1}',  # gold 1, pre-filled <think>
}
PARSA_ASR = {
    **_parsa_gold("asr"),
    "asr_04": '{"transcription": "تهران پایتخت "ایران" است."}',  # unescaped inner quotes
    "asr_01": '{"transcription": "امروز هوا آفتابی و گرم است.',  # the closing brace never came
    "asr_02": '<think>The speaker says the library opens at eight.</think>' + _parsa_gold("asr")["asr_02"],
}
FA_EN_QUOTED = 'The train leaves at "five o\'clock".'
PARSA_FA_EN = {**_parsa_gold("s2tt_fa_en"), "fa_en_03": '{"translation": "%s"}' % FA_EN_QUOTED,
               "fa_en_02": "<think>About food.</think>\n<answer>" + json.loads(_parsa_gold("s2tt_fa_en")["fa_en_02"])["translation"] + "</answer>"}  # fmt: skip
MMAC_CONTENT = {
    "content_en_01": "<think>The audio is a woman reading an announcement about the library opening hours, I should",
    "content_zh_01": "<think>Chinese recitation, probably Li Bai.</think>A man recites Li Bai's poem Quiet Night Thoughts.",
}
ANSWERS_X = {"mcga_asr": MCGA_ASR, "mcga_su": MCGA_SU, "parsa_emotion": PARSA_EMOTION, "parsa_mcqa": PARSA_MCQA, "parsa_asr": PARSA_ASR,
             "parsa_s2tt_fa_en": PARSA_FA_EN, "mmac_content": MMAC_CONTENT}  # fmt: skip
ANSWERS_Y = {
    "mcga_asr": ASR_GOLD,
    "mcga_su": _mcga_gold("su", "su_a"),
    **{f"parsa_{t}": _parsa_gold(t) for t in ("emotion", "mcqa", "asr", "s2tt_fa_en")},
    "mmac_content": {"content_en_01": "A woman reads a library announcement.", "content_zh_01": "A man recites a Chinese poem."},
}


def _write_predictions(path, answers) -> None:
    rows = [{"task": task, "key" if task.startswith("mcga") else "id": key, "response": response} for task, by_key in answers.items() for key, response in by_key.items()]
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows), encoding="utf-8")


def _data_folders(root, changed: bool) -> dict[str, str]:
    """Copies of the three shipped samples; ``changed``: one gold text per benchmark differs (another release)."""
    mcga, parsa, mmac = root / "mcga", root / "parsa", root / "mmac"
    shutil.copytree(mcga_data.SAMPLE_DATA_DIR, mcga)
    shutil.copytree(parsa_data.SAMPLE_DATA_DIR, parsa)
    shutil.copytree(mmac_data.SAMPLE_DATA_DIR, mmac)
    if changed:
        asr = mcga / "MCGA_asr_test.jsonl"
        asr.write_text(asr.read_text(encoding="utf-8").replace("明月几时有？把酒问青天。", "明月何时有？把酒问苍天。", 1), encoding="utf-8")
        csv = parsa / "ASR" / "ASR.csv"
        csv.write_text(csv.read_text(encoding="utf-8").replace("امروز هوا آفتابی و گرم است.", "امروز هوا ابری و سرد است."), encoding="utf-8")
        rows = mmac / "mmac.jsonl"
        rows.write_text(rows.read_text(encoding="utf-8").replace("every morning", "every weekday morning"), encoding="utf-8")
    return {"MCGA_DATA_DIR": str(mcga), "PARSA_DATA_DIR": str(parsa), "MMAC_DATA_DIR": str(mmac)}


def _run(cli, env, out, predictions, cache) -> dict:
    command = [cli, "--tasks", TASKS, "--model", "replay", "--model_args", f"predictions={predictions}", "--output_path", str(out), "--log_samples",
               "--use_cache", str(cache), "--verbosity", "DEBUG"]  # fmt: skip
    result = subprocess.run(command, env=env, cwd=out.parent, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    [results_file] = sorted(out.rglob("*_results.json"))
    metrics = {task: {k.split(",")[0]: v for k, v in values.items()} for task, values in json.loads(results_file.read_text(encoding="utf-8"))["results"].items()}
    samples = {}
    for task in TASKS.split(","):
        [file] = out.rglob(f"*_samples_{task}.jsonl")
        samples[task] = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    return {"metrics": metrics, "samples": samples}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, lmms_eval_cli):
    import os

    root = tmp_path_factory.mktemp("answers")
    env = {k: v for k, v in os.environ.items() if k not in ("MCGA_DATA_DIR", "MMAC_DATA_DIR", "DEEPSEEK_API_KEY") and not k.startswith(("AUDIO_JUDGE_", "PARSA_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(root / "hf"), PYTHONUNBUFFERED="1")
    folders_a, folders_b = _data_folders(root / "a", changed=False), _data_folders(root / "b", changed=True)
    predictions, cache = root / "predictions.jsonl", root / "response_cache"
    _write_predictions(predictions, ANSWERS_X)
    first = _run(lmms_eval_cli, {**env, **folders_a}, root / "out1", predictions, cache)
    _write_predictions(predictions, ANSWERS_Y)  # same file, same model_args: only the data decides a cache hit
    second = _run(lmms_eval_cli, {**env, **folders_b}, root / "out2", predictions, cache)
    third = _run(lmms_eval_cli, {**env, **folders_a}, root / "out3", predictions, cache)
    return {"first": first, "second": second, "third": third}


def _by_key(samples):
    """``{document key: logged sample}``; the key is the diagnostics record's ``id`` (MCGA's clip key, else the id)."""
    return {s["diagnostics"]["id"]: s for s in samples}


# ------------------------------------------------------------------------------------------- item 1, 2, 9: MCGA
def test_mcga_reads_the_answer_after_the_reasoning_and_scores_an_unfinished_one_as_empty(runs):
    asr, su = runs["first"]["metrics"]["mcga_asr"], runs["first"]["metrics"]["mcga_su"]
    refs = list(ASR_GOLD.values())
    read = [MCGA_ASR_READ[k] for k in ASR_GOLD]
    assert asr["cer_official"] == pytest.approx(mcga_metrics.official_cer_percent(refs, read), abs=1e-9)
    # cer_strict: only the unfinished clip (empty) and 僊 count; 徳 folds onto 德 (OpenCC's Japanese variant table)
    strict_read = [r.replace("徳", "德") for r in read]
    assert asr["cer_strict"] == pytest.approx(mcga_metrics.strict_cer_percent(refs, strict_read), abs=1e-9)
    # by hand: every reference character of the cut-off clip (22 after normalisation) plus 僊: 23 of 397 characters
    assert asr["cer_strict"] == pytest.approx(100 * 23 / 397)
    assert (asr["unfinished_reasoning"], asr["empty_responses"]) == (1, 0)
    logged = _by_key(runs["first"]["samples"]["mcga_asr"])
    assert logged["upload/espeak-m/asr_fu_01.wav"]["cer_official"]["output"] == "" and logged["upload/espeak-m/asr_fu_01.wav"]["diagnostics"]["unfinished_reasoning"]
    assert logged["upload/espeak-m/asr_fu_01.wav"]["unfinished_reasoning"] == 1  # the counter: this document's count
    # the trace length is kept per document (Kimi's spelling: lmms-eval's default --reasoning_tags leaves it to us)
    kimi = MCGA_ASR["upload/espeak-m/asr_ci_01.wav"]
    assert logged["upload/espeak-m/asr_ci_01.wav"]["diagnostics"]["reasoning_chars"] == kimi.index("◁/think▷") + len("◁/think▷")
    # SU: retracted A -> B right; the question, the two answers and the cut-off draft are not answers (strict)
    assert su["acc_strict"] == pytest.approx(100 * 2 / 5) and su["acc_official"] == pytest.approx(100 * 4 / 5)
    assert (su["strict_parse_failures"], su["ambiguous_answers"], su["unfinished_reasoning"]) == (3, 1, 1)
    reasons = {k: s["strict_parse_failures"]["strict_reason"] for k, s in _by_key(runs["first"]["samples"]["mcga_su"]).items()}
    assert reasons == {"upload/espeak-f/asr_qu_01.wav": "", "upload/espeak-m/asr_qu_01.wav": "question", "upload/espeak-f/asr_wen_01.wav": "ambiguous",
                       "upload/espeak-m/asr_wen_01.wav": "no_letter", "upload/espeak-m/asr_wen_02.wav": ""}  # fmt: skip


# ------------------------------------------------------------------------------------------- items 1-5: PARSA
def test_parsa_strips_reasoning_excludes_unfinished_counts_out_of_set_and_takes_the_retracted_answer(runs):
    emotion = runs["first"]["metrics"]["parsa_emotion"]
    # scored: 01, 02, 03, 06 (all right); excluded: 04 (unfinished reasoning), 05 (contempt, out of set)
    assert (emotion["scored"], emotion["excluded"], emotion["refused"], emotion["macro_f1"]) == (4, 2, 0, 1.0)
    assert (emotion["unfinished_reasoning"], emotion["out_of_set_labels"]) == (1, 1)
    # the other reading: contempt a class of its own; classes anger, fear, happiness, neutral (F1 1), surprise, contempt (F1 0)
    assert emotion["macro_f1_invented_as_classes"] == pytest.approx(4 / 6)
    reasons = {s["macro_f1"]["id"]: s["macro_f1"]["reason"] for s in runs["first"]["samples"]["parsa_emotion"]}
    assert (reasons["emotion_04"], reasons["emotion_05"], reasons["emotion_06"]) == ("unfinished_reasoning", "invalid_label", "")
    mcqa = runs["first"]["metrics"]["parsa_mcqa"]
    assert (mcqa["scored"], mcqa["excluded"], mcqa["ambiguous_answers"], mcqa["accuracy"]) == (2, 2, 1, 1.0)
    assert mcqa["accuracy_ci95"] == [pytest.approx(parsa_metrics.proportion_ci(2, 2)[0]), 1.0] and mcqa["accuracy_ci95"][0] == pytest.approx(0.3424, abs=1e-4)
    assert mcqa["ci_flags"] == {"accuracy_ci95": "2 scored items, fewer than 30: a rough guide, not a 95% interval"}


def test_parsa_repairs_broken_json_and_never_scores_the_wrapper(runs):
    asr, fa_en = runs["first"]["metrics"]["parsa_asr"], runs["first"]["metrics"]["parsa_s2tt_fa_en"]
    assert (asr["scored"], asr["wer_mean"], asr["repaired_json"], asr["json_fallback"]) == (5, 0.0, 2, 0)
    predictions = {s["chrf_pp"]["id"]: s["chrf_pp"]["prediction"] for s in runs["first"]["samples"]["parsa_s2tt_fa_en"]}
    assert predictions["fa_en_03"] == FA_EN_QUOTED and fa_en["repaired_json"] == 1
    # inside its answer tags, read as a bare (non-JSON) answer: its final full stop dropped (parsing.bare_answer)
    assert predictions["fa_en_02"] == json.loads(_parsa_gold("s2tt_fa_en")["fa_en_02"])["translation"].removesuffix(".")
    references = {doc["id"]: doc["reference"] for doc in parsa_data.load_task_docs("s2tt_fa_en", data_dir=parsa_data.SAMPLE_DATA_DIR)}
    ids = sorted(references)
    assert fa_en["bleu"] == pytest.approx(parsa_metrics.bleu([predictions[i] for i in ids], [references[i] for i in ids]))
    assert fa_en["bleu"] > 80  # the wrapper scored as the hypothesis gave about 60


# ------------------------------------------------------------------------------------------- item 1: MMAC
def test_mmac_caption_is_the_text_after_the_reasoning_and_an_unfinished_one_is_an_omission(runs):
    content = runs["first"]["metrics"]["mmac_content"]
    assert (content["unfinished_reasoning"], content["empty_responses"]) == (1, 0)
    captions = {s["coverage"]["id"]: s["coverage"]["caption"] for s in runs["first"]["samples"]["mmac_content"]}
    assert captions == {"content_en_01": "", "content_zh_01": "A man recites Li Bai's poem Quiet Night Thoughts."}


# ------------------------------------------------------------------------------------------- item 8: --use_cache
def _responses(run, task):
    """``{document key: response}`` as the hooks got it (after lmms-eval's default reasoning-tag stripping)."""
    return {key: s["filtered_resps"][0] if isinstance(s["filtered_resps"], list) else s["filtered_resps"] for key, s in _by_key(run["samples"][task]).items()}


def _as_hooks_get(answers: dict[str, str]) -> dict[str, str]:
    from lmms_eval.api.reasoning import strip_reasoning_tags

    defaults = [["<think>", "</think>"], ["<analysis>", "</analysis>"]]  # lmms-eval 0.7's --reasoning_tags default
    return {key: strip_reasoning_tags(response_text(answer), defaults) for key, answer in answers.items()}


def test_the_response_cache_never_serves_another_data_folders_answers_and_still_serves_the_same_data(runs):
    for task in TASKS.split(","):
        assert _responses(runs["second"], task) == _as_hooks_get(ANSWERS_Y[task]), task  # folders B: nothing from run 1's cache
        assert _responses(runs["third"], task) == _as_hooks_get(ANSWERS_X[task]), task  # folders A again: every answer from the cache
    assert runs["third"]["metrics"]["mcga_asr"]["cer_official"] == runs["first"]["metrics"]["mcga_asr"]["cer_official"]
    # folders B: the first clip's transcript changed, the gold answers of A were given: scored against B's rows
    refs_b = list(ASR_GOLD.values())
    refs_b[0] = refs_b[0].replace("明月几时有？把酒问青天。", "明月何时有？把酒问苍天。", 1)
    expected = mcga_metrics.official_cer_percent(refs_b, list(ASR_GOLD.values()))
    assert expected > 0 and runs["second"]["metrics"]["mcga_asr"]["cer_official"] == pytest.approx(expected, abs=1e-9)
