"""``audio-bench-report`` on results files made by the real lmms-eval CLI with ``--model replay`` on the shipped
samples: two "models" (A: the official-runner rows of tests/fixtures/official_runner_rows for the six MCGA tasks,
gold answers for the MCGA text twins and for PARSA with four answers spoiled; B: the same tasks' gold for ASR,
fixed answers elsewhere, run with ``--limit 2``), and the MMAC results file of tests/fixtures/report (README).

Two CLI runs in all (about 30 s of CPU); every other test reads their output.
"""

from __future__ import annotations

import csv
import json
import shutil
import struct
import subprocess
import sys
import warnings

import pytest

from audio_bench_report.cli import main as report_main
from audio_bench_report.cli import write_report
from audio_bench_report.plots import safe_label
from audio_bench_report.runs import read_runs
from audio_bench_report.tables import Context, load_published
from lmms_eval_tasks.printed_table import MAX_WIDTH, plugin_table, readable_make_table
from mcga import data as mcga_data
from tests.conftest import FIXTURES
from tests.test_cli_end_to_end import lmms_eval
from tests.test_parsa_cli import gold

pytestmark = pytest.mark.cli
OFFICIAL = json.loads((FIXTURES / "official_runner_rows" / "expected_official.json").read_text(encoding="utf-8"))
MMAC_RESULTS = FIXTURES / "report" / "20261130_193808_results.json"
SPOILED = {"parsa_intent": ("intent_02", '{"intent": "nonsense_label"}'), "parsa_vazn": ("vazn_02", '{"answer": 99}')}
FIGURES = ["mcga_cer_by_genre", "mcga_cer_by_dynasty", "parsa_normalised_score", "judge_failures_and_exclusions", "mmac_coverage_precision", "mmac_dimension_heatmap", "paired_differences"]


def _text_twin_gold() -> dict:
    fields = {"sqa": "sqa_a", "su": "su_a", "sr": "sr_a"}
    return {f"mcga_{t}_text": {row[mcga_data.DOC_KEY_FIELD]: row[fields[t]] for row in mcga_data.load_task_rows(t, data_dir=mcga_data.SAMPLE_DATA_DIR)} for t in fields}


def write_predictions(path, answers: dict[str, dict[str, str]]) -> None:
    """Replay rows: MCGA answers by document key (ids repeat across speakers), PARSA answers by id."""
    rows = [{"task": task, "key" if task.startswith("mcga") else "id": i, "response": r} for task, by_key in answers.items() for i, r in by_key.items()]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, lmms_eval_cli):
    import os

    root = tmp_path_factory.mktemp("report")
    env = {k: v for k, v in os.environ.items() if k not in ("MCGA_DATA_DIR", "DEEPSEEK_API_KEY") and not k.startswith(("AUDIO_JUDGE_", "PARSA_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(root / "hf"), PYTHONUNBUFFERED="1")
    # Model A: official-runner rows (a folder), plus one jsonl with the text twins and PARSA answers.
    predictions_a = root / "predictions_a"
    shutil.copytree(FIXTURES / "official_runner_rows", predictions_a, ignore=shutil.ignore_patterns("*.json", "*.md"))
    answers = {**_text_twin_gold(), "parsa_intent": gold("intent"), "parsa_vazn": gold("vazn"), "parsa_asr": gold("asr"), "parsa_gender": gold("gender")}
    for task, (item, answer) in SPOILED.items():
        answers[task][item] = answer
    answers["parsa_vazn_text"] = {**gold("vazn"), "vazn_03": '{"answer": 1}'}  # gold option 3: one wrong of 6
    write_predictions(predictions_a / "ours.jsonl", answers)
    tasks_a = "mcga_asr,mcga_s2tt,mcga_sec,mcga_sqa,mcga_su,mcga_sr,mcga_sqa_text,mcga_su_text,mcga_sr_text,parsa_intent,parsa_vazn,parsa_asr,parsa_gender,parsa_vazn_text"
    results_a, log_a = lmms_eval(lmms_eval_cli, env, root / "out_a", tasks_a, "replay", f"predictions={predictions_a}")
    # Model B: --limit 2 on four tasks.
    rows = mcga_data.load_task_rows("asr", data_dir=mcga_data.SAMPLE_DATA_DIR)
    answers_b = {"mcga_asr": {r[mcga_data.DOC_KEY_FIELD]: r["asr"] for r in rows}, "mcga_su": {r[mcga_data.DOC_KEY_FIELD]: "A" for r in mcga_data.load_task_rows("su", data_dir=mcga_data.SAMPLE_DATA_DIR)},
                 "parsa_vazn": {i: '{"answer": 1}' for i in gold("vazn")}, "parsa_intent": gold("intent")}  # fmt: skip
    write_predictions(root / "predictions_b.jsonl", answers_b)
    results_b, _ = lmms_eval(lmms_eval_cli, env, root / "out_b", "mcga_asr,mcga_su,parsa_vazn,parsa_intent", "replay", f"predictions={root / 'predictions_b.jsonl'}", "--limit", "2")
    mmac = root / "out_mmac"
    mmac.mkdir()
    shutil.copy(MMAC_RESULTS, mmac)
    report = root / "report"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = write_report([root / "out_a", root / "out_b", mmac], report, ["A", "B", "M"], Context(same_model={"A": "Qwen2.5-Omni-7B", "M": "Qwen2.5-Omni-7B"}))
    return {"a": results_a["results"], "b": results_b["results"], "log_a": log_a, "report": report, "written": written, "warnings": [str(w.message) for w in caught], "root": root}


def table(report, key) -> list[dict]:
    with open(report / "tables" / f"{key}.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def row(rows, kind, label) -> dict:
    [found] = [r for r in rows if r["kind"] == kind and r["label"] == label]
    return found


def test_table_values_are_the_results_json_values(runs):
    a, b, report = runs["a"], runs["b"], runs["report"]
    main = row(table(report, "mcga_main"), "run", "A")
    assert float(main["asr_cer"]) == a["mcga_asr"]["cer_official,none"] == pytest.approx(OFFICIAL["asr_cer_total"], abs=1e-9)
    assert float(main["su_acc"]) == a["mcga_su"]["acc_official,none"] and float(main["su_acc_strict"]) == a["mcga_su"]["acc_strict,none"]
    assert float(main["sqa_f1"]) == pytest.approx(OFFICIAL["sqa_f1"], abs=1e-9)
    assert main["s2tt_llm_b"] == "n/c" and "N" in main["s2tt_llm_b_marks"].split()  # no judge configured: not computed, never 0
    # CMC: the text twins got gold answers (QA = LU = LR = 100), so CMC = mean of the audio scores.
    assert float(main["cmc"]) == pytest.approx((OFFICIAL["sqa_f1"] + OFFICIAL["su_acc"] + OFFICIAL["sr_acc"]) / 3)
    genre = row(table(report, "mcga_asr_by_genre"), "run", "A")
    by_genre = a["mcga_asr"]["cer_official_by_genre,none"]
    by_genre = {g: (v["cer"] if isinstance(v, dict) else v) for g, v in by_genre.items()}
    assert float(genre["genre_shi"]) == pytest.approx(by_genre["诗"]) and float(genre["genre_fu"]) == pytest.approx(by_genre["赋"])
    assert float(genre["total"]) == a["mcga_asr"]["cer_official,none"] and genre["total_n"] == str(len(mcga_data.load_task_rows("asr", data_dir=mcga_data.SAMPLE_DATA_DIR)))  # 14 clips
    parsa = row(table(report, "parsa_main"), "run", "A")
    # vazn: vazn_02 answered option 99 -> excluded; the other 5 gold -> accuracy 1 over n = 5 scored.
    assert float(parsa["vazn"]) == a["parsa_vazn"]["accuracy,none"] == 1.0 and parsa["vazn_n"] == "5"
    assert (float(parsa["vazn_ci_low"]), float(parsa["vazn_ci_high"])) == tuple(a["parsa_vazn"]["accuracy_ci95,none"])
    assert float(parsa["intent"]) == a["parsa_intent"]["macro_f1,none"] and parsa["intent_n"] == "4"
    assert "X" in parsa["intent_marks"].split()  # 1 of 5 excluded = 20% > 5%
    # issue 17: 5 scored items behind the Wilson interval: flagged (C); the out-of-set answers show in the health table
    assert "C" in parsa["vazn_marks"].split() and a["parsa_vazn"]["ci_flags,none"] == {"accuracy_ci95": "5 scored items, fewer than 30: a rough guide, not a 95% interval"}
    health = {r["detail"]: r for r in table(report, "health") if r["label"] == "A"}
    assert (health["parsa_intent"]["reading"], health["parsa_vazn"]["reading"], health["parsa_gender"]["reading"]) == ("out-of-set 1", "out-of-set 1", "–")
    assert parsa["register"] == "–"  # not run: a dash, never a number
    [detail] = [r for r in table(report, "parsa_detail") if r["label"] == "A" and "Metre" in r["detail"]]
    b_vazn = a["parsa_vazn"]["majority_baseline,none"]
    assert float(detail["normalised"]) == pytest.approx((1.0 - b_vazn) / (1 - b_vazn)) and detail["excluded"] == "1.0"
    [settings] = [r for r in table(report, "parsa_settings") if r["label"] == "A"]
    assert float(settings["text"]) == a["parsa_vazn_text"]["accuracy,none"] == pytest.approx(5 / 6) and settings["text_n"] == "6"
    assert float(settings["gap"]) == pytest.approx(1.0 - 5 / 6) and settings["fewshot"] == "–"
    assert settings["gap_n"] == "6"  # both settings ran the same 6 documents (matched by id from the samples files)
    [paper] = [r for r in table(report, "parsa_settings") if r["kind"] == "paper" and r["detail"].startswith("Metre")]
    assert (float(paper["audio"]), float(paper["text"])) == (0.196, 0.102) and paper["detail"].endswith("PARSA-Bench, arXiv 2603.14456, Table 4")
    b_row = row(table(report, "parsa_main"), "run", "B")
    assert float(b_row["vazn"]) == b["parsa_vazn"]["accuracy,none"]
    mmac = json.loads(MMAC_RESULTS.read_text(encoding="utf-8"))["results"]
    m = row(table(report, "mmac_main"), "run", "M")
    assert float(m["accuracy"]) == mmac["mmac"]["accuracy,none"] == pytest.approx(350 / 6)
    assert float(m["coverage"]) == pytest.approx(440 / 6)
    [persona] = [r for r in table(report, "mmac_categories") if r["label"] == "M" and r["detail"] == "persona"]  # one row per run and category
    assert float(persona["accuracy"]) == mmac["mmac_persona"]["accuracy,none"] == 62.5 and persona["accuracy_n"] == "3"
    assert "J" in persona["accuracy_marks"].split()  # one judge failure in persona
    dims = row(table(report, "mmac_dimensions"), "run", "M")
    assert float(dims["accent"]) == 25.0 and dims["accent_n"] == "2" and dims["timbre"] == "–"  # timbre: every judgment failed


def test_a_limit_run_is_marked_everywhere(runs):
    report = runs["report"]
    b = row(table(report, "mcga_main"), "run", "B")
    assert "L" in b["asr_cer_marks"].split() and "L" in b["su_acc_marks"].split()
    assert b["asr_cer_n"] == "2"
    assert all("L" in row(table(report, "parsa_main"), "run", "B")[f"{t}_marks"].split() for t in ("vazn", "intent"))
    health = [r for r in table(report, "health") if r["label"] == "B"]
    assert {r["detail"]: (r["docs"], r["marks"]) for r in health}["mcga_asr"] == ("2", "L S")
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "B: run with --limit 2.0: partial results" in text
    a = row(table(report, "mcga_main"), "run", "A")
    assert "L" not in a["su_acc_marks"].split()  # a full run is not marked L
    assert "S" in a["asr_cer_marks"].split()  # ...but the sample has 10 of MCGA's 1,000 ASR clips


def test_published_rows_carry_their_sources_and_values(runs):
    report = runs["report"]
    qwen = row(table(report, "mcga_asr_by_genre"), "paper", "Qwen2.5-Omni-7B (paper)")
    assert qwen["detail"] == "MCGA, arXiv 2601.09270, Table 4" and float(qwen["genre_shi"]) == 11.6 and float(qwen["genre_wen"]) == 8.6
    parsa = row(table(report, "parsa_main"), "paper", "Qwen3-Omni-30B (paper)")
    assert parsa["detail"] == "PARSA-Bench, arXiv 2603.14456, Table 2" and float(parsa["vazn"]) == 0.20 and float(parsa["asr"]) == 0.31
    asr = row(table(report, "parsa_asr"), "paper", "Qwen2.5-Omni-7B (paper)")
    assert asr["detail"] == "PARSA-Bench, arXiv 2603.14456, Table 3" and float(asr["wer_mean"]) == 2.32
    mmac = row(table(report, "mmac_main"), "paper", "Gemini 2.5 Pro (paper)")
    assert mmac["detail"] == "MMAC, arXiv 2607.27109, Table 2" and float(mmac["coverage"]) == 75.31
    for package in ("mcga", "parsa", "mmac"):  # every shipped row names its table
        published = load_published(package)
        assert published["arxiv"] and all(r["table"] and r["values"] for r in published["rows"])
    md = (report / "tables" / "mcga_asr_by_genre.md").read_text(encoding="utf-8")
    assert "| *Qwen3-Omni-30B-A3B-Instruct (paper)* | MCGA, arXiv 2601.09270, Table 4 | 3.8 | 2.9 | 3.8 | 6.4 | 4.6 | – |" in md


def test_comparison_rows_give_the_difference_and_the_ci_test(runs):
    report, a = runs["report"], runs["a"]
    delta = row(table(report, "mcga_asr_by_genre"), "Δ", "Δ A − Qwen2.5-Omni-7B (paper)")
    by_genre = {g: (v["cer"] if isinstance(v, dict) else v) for g, v in a["mcga_asr"]["cer_official_by_genre,none"].items()}
    assert float(delta["genre_shi"]) == pytest.approx(by_genre["诗"] - 11.6)
    parsa = row(table(report, "parsa_main"), "Δ", "Δ A − Qwen2.5-Omni-7B (paper)")
    assert float(parsa["vazn"]) == pytest.approx(1.0 - 0.13)
    assert "*" in parsa["vazn_marks"].split()  # the paper's 0.13 lies outside A's CI [1, 1]
    m = row(table(report, "mmac_main"), "Δ", "Δ M − Qwen2.5-Omni-7B (paper)")
    assert float(m["accuracy"]) == pytest.approx(350 / 6 - 33.60)


def test_report_with_two_runs_has_the_paired_comparison_section(runs):
    # A against B (B: --limit 2 on mcga_asr, mcga_su, parsa_vazn, parsa_intent): the two documents both hold
    rows = {r["label"]: r for r in table(runs["report"], "paired_comparison")}
    asr = rows["mcga_asr cer_official"]
    assert float(asr["n"]) == 2 and "12 in A only, 0 in B only" in asr["detail"]
    assert float(asr["difference"]) == pytest.approx(float(asr["b"]) - float(asr["a"]))
    assert "n<30" in asr["detail"] and "exact McNemar" in rows["mcga_su acc_official"]["detail"]
    md = (runs["report"] / "report.md").read_text(encoding="utf-8")
    assert "A vs M: not compared: no task both runs hold has a paired comparison" in md  # MCGA/PARSA against MMAC only


def _png_size(path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", header[16:24])


def test_every_figure_is_written_as_png_and_svg_without_missing_glyphs(runs):
    figures = runs["report"] / "figures"
    for name in FIGURES:
        width, height = _png_size(figures / f"{name}.png")
        assert 400 <= width <= 4000 and 250 <= height <= 4000, (name, width, height)
        assert (figures / f"{name}.png").stat().st_size > 10_000
        svg = (figures / f"{name}.svg").read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert not [w for w in runs["warnings"] if "missing from" in w or "Glyph" in w]  # no tofu: every drawn glyph exists
    # Labels the font cannot draw (CJK) or shape (Persian) are never drawn raw.
    assert safe_label("Shi") == "Shi" and safe_label("诗") == "U+8BD7" and safe_label("وزن") == "U+0648 U+0632 U+0646"
    assert safe_label("Shi\nn=3") == "Shi\nn=3" and safe_label("Fu 赋") == "Fu U+8D4B"  # layout characters are not glyphs


def test_html_page_is_self_contained_and_md_links_the_figures(runs):
    report = runs["report"]
    page = (report / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == len(FIGURES)
    assert "src=\"http" not in page and "<link" not in page
    for key in ("mcga_main", "mcga_asr_by_genre", "mcga_cmc", "parsa_main", "parsa_detail", "parsa_asr", "mmac_main", "mmac_categories", "health"):
        assert f'id="{key}"' in page
        assert (report / "tables" / f"{key}.md").exists() and (report / "tables" / f"{key}.csv").exists()
    assert (report / "tables" / "mcga_main.tex").read_text(encoding="utf-8").startswith("\\begin{table}")
    md = (report / "report.md").read_text(encoding="utf-8")
    assert all(f"figures/{name}.png" in md for name in FIGURES)


def _table_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("|")]


def test_printed_lmms_eval_table_shows_headlines_strict_n_and_counts_that_are_not_0(runs):
    log, a = runs["log_a"], runs["a"]
    signature = a["mcga_asr"]["signature,none"]
    assert signature.startswith("mcga-scoring:") and signature not in log  # in the results JSON, not in the printed table
    assert "cer_official_by_genre" not in log and "n_by_dynasty" not in log  # breakdowns: the JSON and audio-bench-report
    asr = a["mcga_asr"]
    [row] = [line for line in _table_lines(log) if line.startswith("|mcga_asr ")]
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[:5] == ["mcga_asr", "14", "cer_official ↓ (%)", f"{asr['cer_official,none']:.4f}", f"{asr['cer_strict,none']:.4f}"]
    shown = {f"{m.split(',')[0]} {v}" for m, v in asr.items() if isinstance(v, int) and not isinstance(v, bool) and v}
    assert shown and all(text in row for text in shown)  # the official runner rows hold an empty answer and echoes: counted
    assert "failed_generations" not in row and asr["failed_generations,none"] == 0  # counts at 0 are left out
    assert "|mcga_s2tt " in log and "not computed (1)" in log and "(1) not computed: " in log  # no judge: reason once, below
    vazn = a["parsa_vazn"]
    [row] = [line for line in _table_lines(log) if "parsa_vazn " in line and "parsa_vazn_text" not in line]
    assert f"|{vazn['scored,none']} " in row and f"{vazn['accuracy,none']:.4f}" in row and f"{vazn['accuracy_strict,none']:.4f}" in row
    assert f"[{vazn['accuracy_ci95,none'][0]:.4f}, {vazn['accuracy_ci95,none'][1]:.4f}]" in row
    assert all(len(line) <= MAX_WIDTH for line in log.splitlines() if line.startswith("|") or line.startswith("(")), max(map(len, _table_lines(log)))
    assert len(_table_lines(log)) <= 2 + sum(1 for _ in a) * 3  # a few rows per task, not one per metric


def test_printed_table_shows_any_new_counter_and_hands_other_benchmarks_to_lmms_eval():
    results = {"results": {"mcga_asr": {"alias": "mcga_asr", "cer_official,none": 4.4, "cer_strict,none": 5.0, "signature,none": "x|y",
                                        "cer_official_by_genre,none": {"诗": 1.0}, "unfinished_reasoning,none": 2, "ambiguous_answers,none": 0,
                                        "scoring_errors,none": 1, "repetition_rate,none": 0.25},
                           "parsa": {"alias": "parsa", " ": " "},
                           "parsa_age": {"alias": " - parsa_age", "macro_f1,none": "not computed: no scored items", "scored,none": 0, "excluded,none": 12},
                           "other_task": {"alias": "other_task", "acc,none": 0.5, "signature,none": "kept"}},
               "groups": {"parsa": {"alias": "parsa", " ": " "}, "other_group": {"alias": "other_group", "acc,none": 0.5}},
               "n-samples": {"mcga_asr": {"original": 10, "effective": 8}}, "higher_is_better": {"mcga_asr": {"cer_official": False}}}  # fmt: skip
    table = plugin_table(results)
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in _table_lines(table)]
    assert rows[0] == ["Tasks", "n", "Metric", "Official", "Strict", "95% CI", "Also counted (not 0)"]
    # any int metric is a count, named by no list (other helpers add counters), shown when not 0
    assert rows[2] == ["mcga_asr", "8", "cer_official ↓ (%)", "4.4000", "5.0000", "", "repetition_rate 0.2500, scoring_errors 1, unfinished_reasoning 2"]
    assert rows[3][0] == "parsa" and rows[4] == ["- parsa_age", "0", "macro_f1 (0-1)", "not computed (1)", "", "", "excluded 12"]
    assert "(1) not computed: no scored items [parsa_age macro_f1]" in table and "other_task" not in table and "signature" not in table
    seen = []
    wrapped = readable_make_table(lambda result_dict, column="results", sort_results=False: seen.append((column, result_dict[column])) or "LMMS-EVAL TABLE")
    assert wrapped(results).endswith("LMMS-EVAL TABLE") and seen[-1] == ("results", {"other_task": results["results"]["other_task"]})
    assert wrapped(results, "groups") == "LMMS-EVAL TABLE" and seen[-1] == ("groups", {"other_group": results["groups"]["other_group"]})
    assert results["results"]["mcga_asr"]["signature,none"] == "x|y"  # the input (what the JSON holds) is unchanged


def test_newest_results_file_per_task_wins_and_the_other_is_named(runs, tmp_path):
    [newest] = sorted((runs["root"] / "out_b").rglob("*_results.json"))
    data = json.loads(newest.read_text(encoding="utf-8"))
    data["date"] = "20000101_000000"
    data["results"]["mcga_asr"]["cer_official,none"] = 99.0
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(newest, folder / newest.name)
    (folder / "20000101_000000_results.json").write_text(json.dumps(data), encoding="utf-8")
    [run] = read_runs(folder)
    assert run.tasks["mcga_asr"].number("cer_official") == runs["b"]["mcga_asr"]["cer_official,none"]
    assert any("20000101_000000_results.json passed over" in note for note in run.notes)
    warnings = write_report([folder], tmp_path / "rep")["warnings"]
    assert any("the newest was used for each" in w for w in warnings)


def test_breakdowns_with_group_sizes_are_read_in_either_shape(runs, tmp_path):
    [file] = sorted((runs["root"] / "out_a").rglob("*_results.json"))
    data = json.loads(file.read_text(encoding="utf-8"))
    by_genre = data["results"]["mcga_asr"]["cer_official_by_genre,none"]
    data["results"]["mcga_asr"]["cer_official_by_genre,none"] = {g: {"cer": v if not isinstance(v, dict) else v["cer"], "n": 2} for g, v in by_genre.items()}
    folder = tmp_path / "sized"
    folder.mkdir()
    (folder / file.name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "rep"
    write_report([folder], out)
    [genre] = [r for r in table(out, "mcga_asr_by_genre") if r["kind"] == "run"]
    assert genre["genre_shi_n"] == "2" and float(genre["genre_shi"]) == pytest.approx(by_genre["诗"] if not isinstance(by_genre["诗"], dict) else by_genre["诗"]["cer"])


def test_command_line_writes_the_report_and_rejects_a_folder_without_results(runs, tmp_path, capsys):
    assert report_main([str(runs["root"] / "out_b"), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "report.html").exists() and "1 run(s)" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert report_main([str(tmp_path / "empty"), "--out", str(tmp_path / "r2")]) == 2
    assert "no lmms-eval *_results.json below this folder" in capsys.readouterr().err
    assert report_main([str(runs["root"] / "out_b"), "--out", str(tmp_path / "r3"), "--name", "B", "--same-model", "B=Qwen-7B"]) == 2
    assert "not a model of these benchmarks' papers" in capsys.readouterr().err
    code = subprocess.run([sys.executable, "-m", "audio_bench_report", "--help"], capture_output=True, text=True, check=False).returncode
    assert code == 0


def test_docs_example_table_is_the_one_these_runs_give(runs):
    """docs/report.md shows tables/mcga_asr_by_genre.md of these two runs: its numbers and marks must be today's."""
    from tests.conftest import ROOT

    def rows(markdown: str) -> list[list[str]]:  # cells without the "arguments / source" column (it holds temporary paths)
        cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in markdown.splitlines() if line.startswith("| ")]
        return [[row[0], *row[2:]] for row in cells]

    doc = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    example = doc.split("## Example", 1)[1].split("\n\n", 2)[1]
    generated = (runs["report"] / "tables" / "mcga_asr_by_genre.md").read_text(encoding="utf-8")
    expected = [row for row in rows(generated) if row[0] in ("**A**", "**B**", "*Qwen2.5-Omni-7B (paper)*") or row[0].startswith("Δ A")]
    assert rows(example)[1:] == expected, generated


def assert_printed_table_is_short(log: str, results: dict, max_rows: int) -> None:
    """The table lmms-eval printed for a run of one of our groups (``log``: the run's output) has at most
    ``max_rows`` rows, every line under 160 characters, and a row for every headline metric of every task.
    Called by the group runs of test_parsa_cli, test_mmac_cli and test_newcomer_walk (the three of ``make demo``:
    together under 120 rows)."""
    from lmms_eval_tasks.printed_table import headline_metrics

    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in _table_lines(log)]
    rows = [row for row in rows if len(row) == 7 and row[0] != "Tasks" and not (row[1] and set(row[1]) <= {"-"})]  # header, rule
    assert 0 < len(rows) <= max_rows, len(rows)
    assert max(len(line) for line in log.splitlines() if line.startswith(("|", "("))) < 160
    shown, task = set(), None
    for row in rows:
        task = row[0].removeprefix("- ").strip() or task
        if row[2]:
            shown.add((task, row[2].split(" ")[0]))
    expected = {(t, m) for t, values in results["results"].items() for m in headline_metrics(t) if f"{m},none" in values}
    assert expected and expected <= shown, expected - shown
