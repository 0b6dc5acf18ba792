"""Hostile answers (issue 20 items 2 and 3): no answer, however built, stops the scoring of the others; very long
answers are scored, counted, and written bounded to the samples file; the rewritten linear steps give the same
results as the definitions they replace (collapse_repeats against its deleting definition: tests/test_parsa_metrics.py).

The CLI test replays, in one run, answers written the way they arise: prose followed by a thousand nested brackets
(a model looping on ``[``), a JSON answer nested a thousand levels, a 5,000-digit "option number", 200,000 characters
of a repetition loop, ``答案`` followed by runs of spaces, and 50,000 ``[`` as an MCGA transcript.
"""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from audio_bench_core import responses
from lmms_eval_tasks import results_writer
from lmms_eval_tasks.parsa import hooks as parsa_hooks
from mcga import data as mcga_data
from mcga import metrics as mcga_metrics
from mcga import normalize
from parsa import data as parsa_data
from parsa import scoring
from parsa.prompts import demo_answer_json

NESTED_AFTER_PROSE = "Let me think about the transcript. " + "[" * 1000 + "]" * 1000
NESTED_JSON = '{"transcription": ' + "[" * 1000 + "]" * 1000 + "}"


def _parsa_doc(task: str, index: int = 0) -> dict:
    doc = parsa_data.load_task_docs(task)[index]
    return {**doc, parsa_hooks.TASK_FIELD: task, parsa_hooks.SETTING_FIELD: "audio", parsa_hooks.DEMOS_FIELD: "[]", parsa_hooks.SOURCE_FIELD: "sample"}


# ------------------------------------------------------------------------------------------- the guard
def test_a_json_answer_nested_a_thousand_levels_is_excluded_alone_and_the_others_are_scored():
    docs = [_parsa_doc("asr", i) for i in range(3)]
    answers = [NESTED_JSON, demo_answer_json("asr", docs[1]), demo_answer_json("asr", docs[2])]
    results = [parsa_hooks.parsa_process_results(doc, [answer]) for doc, answer in zip(docs, answers)]
    first = results[0]["wer_mean"]
    # the reader bounds what it hands to recursive parsers (parsa.parsing.REPAIR_MAX_DEPTH): no object can be read
    assert (first["status"], first["reason"]) == ("excluded", "invalid_json")
    records = [r["wer_mean"] for r in results]
    assert parsa_hooks.parsa_agg_excluded(records) == 1 and parsa_hooks.parsa_agg_scored(records) == 2
    assert parsa_hooks.parsa_agg_wer_mean(records) == 0.0  # the two gold answers


def test_an_answer_whose_scoring_raises_is_excluded_and_counted_with_its_reason_and_the_others_are_scored(monkeypatch):
    # Fault injection (named as such): the parser raises RecursionError on the first answer, as the pre-guard reader
    # did on NESTED_JSON; the guard around process_results must exclude that document alone.
    docs = [_parsa_doc("asr", i) for i in range(3)]
    answers = ["raise here", demo_answer_json("asr", docs[1]), demo_answer_json("asr", docs[2])]
    real_parse = scoring.parse_response

    def parse_or_raise(task, doc, response):
        if response == "raise here":
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON array from a unicode string")
        return real_parse(task, doc, response)

    monkeypatch.setattr(scoring, "parse_response", parse_or_raise)
    results = [parsa_hooks.parsa_process_results(doc, [answer]) for doc, answer in zip(docs, answers)]
    first = results[0]["wer_mean"]
    assert first["status"] == "excluded" and first["reason"].startswith("scoring_error: RecursionError: maximum recursion depth exceeded")
    assert results[0]["scoring_errors"]["scoring_error"].startswith("RecursionError")
    records = [r["wer_mean"] for r in results]
    assert parsa_hooks.parsa_agg_excluded(records) == 1 and parsa_hooks.parsa_agg_scored(records) == 2
    assert parsa_hooks.parsa_agg_wer_mean(records) == 0.0  # the two gold answers
    assert responses.agg_scoring_errors([r["scoring_errors"] for r in results]) == 1
    assert responses.agg_failed_generations([r["failed_generations"] for r in results]) == 0


def test_the_guard_keeps_other_diagnostics_of_the_failed_document():
    @responses.scoring_guard(lambda doc: ("t", doc["id"]))
    def process_results(doc, results):
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    result = process_results({"id": "d1"}, [""])
    assert set(result) == set(responses.DIAGNOSTIC_METRICS)
    record = result["empty_responses"]
    assert record["empty"] is True and record["scoring_error"] == "ValueError: Exceeds the limit (4300 digits) for integer string conversion"


# ------------------------------------------------------------------------------------------- bounded samples
def test_samples_are_written_bounded_with_the_full_length_and_nothing_deeper_than_the_limit():
    long = "x" * (responses.SAMPLE_TEXT_MAX_CHARS + 5)
    deep: list = []
    node = deep
    for _ in range(200):
        node.append([])
        node = node[0]
    sample = {"resps": [[long]], "record": {"output": long, "raw": deep}, "short": "ok"}
    bounded = results_writer.bounded_for_samples(sample)
    assert bounded["resps"][0][0] == "x" * responses.SAMPLE_TEXT_MAX_CHARS + " … [cut in the samples file: 10,005 characters in all]"
    assert bounded["short"] == "ok" and sample["record"]["output"] is long  # the original is not changed
    depth, node = 0, bounded["record"]["raw"]
    while isinstance(node, list):
        node, depth = node[0], depth + 1
    assert node == f"[nested deeper than {responses.SAMPLE_MAX_DEPTH} levels: not written]" and depth == responses.SAMPLE_MAX_DEPTH - 2
    assert results_writer._bounded_samples([{"a": "short"}, sample]) == ([{"a": "short"}, bounded], 1)


# ------------------------------------------------------------------------------------------- linear rewrites
def test_whisper_normaliser_equals_the_library_on_unclosed_and_nested_brackets():
    from whisper_normalizer.basic import BasicTextNormalizer

    library = BasicTextNormalizer()
    rng = random.Random(3)
    texts = ["[" * 300 + "a", "a (b (c) d", "<[x]> y ] z [", "()(a)((b)", "İ[ab]ç(d)", "((((((x", "[a>b]c<d]e"]
    texts += ["".join(rng.choice("[]<>()ab İ") for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    assert [normalize._whisper_basic()(t) for t in texts] == [library(t) for t in texts]


def test_strict_reader_reads_the_same_letter_across_long_whitespace_runs():
    assert mcga_metrics.strict_mcq_letter("答案" + " " * 300 + "B") == "B"
    assert mcga_metrics.strict_mcq_letter("选项" + " " * 300 + "C" + "\n" * 50 + "正确") == "C"
    assert mcga_metrics.strict_mcq_letter("答案" + " " * 300 + "!") is None
    assert mcga_metrics.strict_mcq_letter("答案是A\n\n\n  或  B") is None  # two letters offered, as before


def test_a_thousands_digit_option_number_is_an_invalid_option_not_a_crash():
    doc = _parsa_doc("mcqa")
    record = parsa_hooks.parsa_process_results(doc, ['{"answer": "' + "7" * 5000 + '"}'])["accuracy"]
    assert record["status"] == "excluded" and record["reason"] == "invalid_option"


# ------------------------------------------------------------------------------------------- through the CLI
@pytest.fixture
def clean_env(offline_env):
    return {k: v for k, v in offline_env.items() if not k.startswith(("PARSA_", "MMAC_"))}


@pytest.mark.cli
def test_cli_run_with_hostile_answers_scores_everything_else_counts_them_and_bounds_the_samples_file(lmms_eval_cli, clean_env, tmp_path):
    asr = parsa_data.load_task_docs("asr")
    su = mcga_data.load_task_rows("su")
    mcga_asr = mcga_data.load_task_rows("asr")
    loop = (asr[1]["transcript"] + " ") * 5_000  # about 200,000 characters: the gold sentence looped, as a model writes it when it cannot stop
    rows = [{"task": "parsa_asr", "id": d["id"], "response": demo_answer_json("asr", d)} for d in asr]
    rows[0]["response"] = NESTED_AFTER_PROSE + ' {"transcription": ' + "[" * 1000 + "]" * 1000 + "}"
    rows[1]["response"] = json.dumps({"transcription": loop}, ensure_ascii=False)
    rows += [{"task": "mcga_su", "key": r[mcga_data.DOC_KEY_FIELD], "response": f"答案{' ' * 400}{r['su_a']}"} for r in su]
    rows += [{"task": "mcga_asr", "key": r[mcga_data.DOC_KEY_FIELD], "response": r["asr"]} for r in mcga_asr]
    rows[-1]["response"] = "[" * 50_000  # a model stuck on one token; the strict CER normalises all of it
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    command = [lmms_eval_cli, "--tasks", "parsa_asr,mcga_su,mcga_asr", "--model", "replay", "--model_args", f"predictions={predictions}",
               "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG"]  # fmt: skip
    result = subprocess.run(command, env=clean_env, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    [results_file] = out.rglob("*_results.json")
    r = {task: {k.split(",")[0]: v for k, v in values.items()} for task, values in json.loads(results_file.read_text(encoding="utf-8"))["results"].items()}
    parsa = r["parsa_asr"]
    assert (parsa["scoring_errors"], parsa["long_answers"], parsa["excluded"], parsa["scored"]) == (0, 1, 1, len(asr) - 1)
    assert parsa["repetition_rate"] == pytest.approx(1 / (len(asr) - 1)) and parsa["wer_fix"] == 0.0  # the loop collapses to the gold
    assert r["mcga_su"]["acc_strict"] == 100.0 and r["mcga_su"]["scoring_errors"] == 0  # read across 400 spaces
    assert r["mcga_asr"]["long_answers"] == 1 and r["mcga_asr"]["scoring_errors"] == 0
    mcga_outputs = [row["response"] for row in rows if row["task"] == "mcga_asr"]  # "[" are symbols: the normaliser drops them all
    assert r["mcga_asr"]["cer_strict"] == pytest.approx(mcga_metrics.strict_cer_percent([x["asr"] for x in mcga_asr], mcga_outputs))
    assert r["mcga_asr"]["cer_official"] == pytest.approx(mcga_metrics.official_cer_percent([x["asr"] for x in mcga_asr], mcga_outputs))
    [samples_file] = out.rglob("*_samples_parsa_asr.jsonl")
    lines = samples_file.read_text(encoding="utf-8").splitlines()
    assert max(len(line) for line in lines) < 40 * responses.SAMPLE_TEXT_MAX_CHARS  # the 200,000-character answer is not written in full (x 15 copies)
    logged = {json.loads(line)["wer_mean"]["id"]: json.loads(line) for line in lines}
    excluded = logged[asr[0]["id"]]["wer_mean"]
    # read without recursing past parsa.parsing.REPAIR_MAX_DEPTH: the JSON cannot be read, so the answer is excluded alone
    assert (excluded["status"], excluded["reason"]) == ("excluded", "invalid_json")
    assert logged[asr[1]["id"]]["wer_mean"]["prediction"].endswith(f" … [cut in the samples file: {len(loop.strip()):,} characters in all]")

