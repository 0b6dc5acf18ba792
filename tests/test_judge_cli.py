"""The judged MCGA tasks through the real lmms-eval CLI, with the judge pointed at a local chat-completions
server (tests/chat_server.py) that answers with scripted replies (fixtures/official_runner_rows/judge_replies.json).

The expected numbers are the official scorer's own for the same outputs and replies (expected_official.json).
Flow, as a user runs it: generate once with ``--predict_only``, then score the logged samples with ``replay``
and the judge; score again (zero judge calls); score with injected faults (failures counted, not zeros).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from mcga import data, judging
from tests.chat_server import REPORTED_MODEL, ChatServer, scripted_replies
from tests.conftest import FIXTURES
from tests.judged_mcga import judge_reply, judged_rows, server_reply, write_judged
from tests.test_cli_end_to_end import lmms_eval, run_cli

pytestmark = pytest.mark.cli
ROWS = FIXTURES / "official_runner_rows"
EXPECTED = json.loads((ROWS / "expected_official.json").read_text(encoding="utf-8"))
KEY = "fake-judge-key-for-cli-tests-5678"  # not a real key; tests check it never reaches any output
SIX = ["mcga_asr", "mcga_s2tt", "mcga_sec", "mcga_sqa", "mcga_sr", "mcga_su"]


def judge_env(env: dict, server: ChatServer, cache) -> dict:
    return {
        **env,
        "DEEPSEEK_API_KEY": KEY,
        "AUDIO_JUDGE_BASE_URL": server.url,
        "AUDIO_JUDGE_CACHE": str(cache),
        "AUDIO_JUDGE_TIMEOUT": "1",
        "AUDIO_JUDGE_RETRY_WAIT": "0.05",
        "AUDIO_JUDGE_CONCURRENCY": "4",
    }


def assert_official_judged_numbers(r: dict) -> None:
    for metric in ("llm_bf", "llm_bm", "llm_bs", "llm_b"):
        assert r["mcga_s2tt"][f"{metric},none"] == pytest.approx(EXPECTED[f"s2tt_{metric}"], abs=1e-9)
    for metric in ("sec_p", "sec_g", "sec_s"):
        assert r["mcga_sec"][f"{metric},none"] == pytest.approx(EXPECTED[metric], abs=1e-9)
    assert r["mcga_sec"]["llm_c,none"] == pytest.approx(EXPECTED["sec_llm_c"], abs=1e-9)
    assert r["mcga_sec"]["cer_sentences,none"] == pytest.approx(EXPECTED["sec_cer_sentences"], abs=1e-9)


def assert_key_absent(folder, log: str) -> None:
    assert KEY not in log
    for path in folder.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_predict_then_judge_then_rescore_from_cache(lmms_eval_cli, offline_env, tmp_path):
    # Phase 1: the "model" run, no judge, --predict_only (replay stands in for a real model).
    predicted = tmp_path / "predicted"
    _, log = lmms_eval(lmms_eval_cli, offline_env, predicted, "mcga", "replay", f"predictions={ROWS}", "--predict_only")
    assert sorted(p.name.split("_samples_")[1] for p in predicted.rglob("*_samples_*.jsonl")) == [f"{t}.jsonl" for t in SIX]

    with ChatServer(scripted_replies(ROWS / "judge_replies.json")) as server:
        env = judge_env(offline_env, server, tmp_path / "judge.sqlite3")
        # Phase 2: score the logged samples, judge on.
        scored = tmp_path / "scored"
        results, log2 = lmms_eval(lmms_eval_cli, env, scored, "mcga", "replay", f"predictions={predicted}")
        assert sorted(results["group_subtasks"]["mcga"]) == SIX
        r = results["results"]
        assert_official_judged_numbers(r)
        assert r["mcga_asr"]["cer_official,none"] == pytest.approx(EXPECTED["asr_cer_total"], abs=1e-9)
        assert r["mcga_s2tt"]["judge_failed,none"] == 0 and r["mcga_sec"]["judge_failed,none"] == 0
        provenance = r["mcga_s2tt"]["judge,none"]
        assert provenance["judge_models_reported"] == {REPORTED_MODEL: 9}
        assert (provenance["cache_hits"], provenance["cache_misses"], provenance["api_calls"]) == (0, 9, 9)
        assert provenance["per_metric"]["llm_bf"] == {
            "max_tokens": 10, "judged": 3, "failed": 0, "failed_items": [], "strict": {"judged": 3, "failed": 0, "differs": 0, "failed_items": []}
        }  # fmt: skip
        assert r["mcga_s2tt"]["strict_differs,none"] == 0 and provenance["strict_differs"] == 0
        assert r["mcga_s2tt"]["llm_b_strict,none"] == pytest.approx(EXPECTED["s2tt_llm_b"], abs=1e-9)  # well-formed replies: equal
        assert provenance["circuit_breaker"] == {"max_consecutive_failures": 10, "tripped": None} and provenance["cache_recovered"] == []
        assert "judge mcga_s2tt: 9 judge scores, none judge_failed (cache hits 0, API calls 9)" in log2
        assert r["mcga_sec"]["judge,none"]["per_metric"]["sec_s"]["max_tokens"] == "server default"
        assert set(provenance["prompt_sha256_16"]) == {"beauty_of_form", "beauty_of_meaning", "beauty_of_sound"}
        assert provenance["judge_model_requested"] == "deepseek-chat" and provenance["temperature"] == 0.0
        assert isinstance(r["mcga_s2tt"]["chrf_pp,none"], float) and isinstance(r["mcga_s2tt"]["bleu,none"], float)
        assert len(server.requests) == 18
        assert {request["max_tokens"] for request in server.requests if "beauty" in request["messages"][-1]["content"]} == {10}

        # Phase 3: the same scoring again is served from the cache: no judge call for the figures, same numbers; the
        # audit asks 5 cached verdicts per task again (AUDIO_JUDGE_AUDIT default) and finds the same judge.
        again, log3 = lmms_eval(lmms_eval_cli, env, tmp_path / "again", "mcga_s2tt,mcga_sec", "replay", f"predictions={predicted}")
        assert len(server.requests) == 18 + 2 * 5
        assert_official_judged_numbers(again["results"])
        for task in ("mcga_s2tt", "mcga_sec"):
            provenance = again["results"][task]["judge,none"]
            assert (provenance["cache_hits"], provenance["api_calls"], provenance["audit_calls"]) == (9, 0, 5)
            assert (provenance["audit"]["agreement"], provenance["audit"]["changed"]) == (1.0, False)
        # Phase 4: without the audit, no call at all.
        lmms_eval(lmms_eval_cli, {**env, "AUDIO_JUDGE_AUDIT": "0"}, tmp_path / "quiet", "mcga_s2tt,mcga_sec", "replay", f"predictions={predicted}")
        assert len(server.requests) == 28
    for folder, text in ((scored, log2), (tmp_path / "again", log3)):
        assert_key_absent(folder, text)


def test_fault_injected_run_reports_failed_items_instead_of_zeros(lmms_eval_cli, offline_env, tmp_path):
    with ChatServer(scripted_replies(ROWS / "judge_replies.json"), timeout_s=2.5) as server:
        # Recovered by retries: a 500, a 429 and a timeout on S2TT calls.
        server.add_fault(("structure, including the alignment", "床前明月光"), "500")
        server.add_fault(("beauty of meaning", "关关雎鸠"), "429")
        server.add_fault(("beauty of sound", "枯藤老树"), "timeout")
        # Not recovered: SEC-P of sec_02 fails every attempt, SEC-G of sec_01 is malformed JSON. SEC-S of sec_03 is
        # scored [7/5] (out of range): the official rule counts 7, so it is scored (and cached) in the official-compatible
        # figure; the strict figure leaves it out.
        server.add_fault(("语音画像一致性审核", "女声，老年"), "503", times=10)
        server.add_fault(("整体情感色彩分析", "客居他乡"), "malformed")
        server.add_fault(("逐句情感意境精准比对", "昨夜雨疏风骤"), "reply", times=3, text="最终总分：[7/5]")
        out = tmp_path / "faulty"
        results, log = lmms_eval(
            lmms_eval_cli, judge_env(offline_env, server, tmp_path / "judge.sqlite3"), out, "mcga_s2tt,mcga_sec", "replay", f"predictions={ROWS}"
        )
        calls = len(server.requests)
    r = results["results"]
    # S2TT: every fault was retried away, so the official numbers stand.
    assert r["mcga_s2tt"]["llm_b,none"] == pytest.approx(EXPECTED["s2tt_llm_b"], abs=1e-9)
    assert r["mcga_s2tt"]["judge_failed,none"] == 0
    # SEC: P over sec_01 (2) and sec_03 (1) = 1.5; G over sec_02 (2) and sec_03 (0) = 1.0; S over sec_01 (4), sec_02 (2)
    # and sec_03 (7, as the official code reads it) = 13/3; strict S over sec_01 and sec_02 only = 3.0.
    assert r["mcga_sec"]["sec_p,none"] == pytest.approx(1.5) and r["mcga_sec"]["sec_g,none"] == pytest.approx(1.0)
    assert r["mcga_sec"]["sec_s,none"] == pytest.approx(13 / 3) and r["mcga_sec"]["sec_s_strict,none"] == pytest.approx(3.0)
    assert r["mcga_sec"]["llm_c,none"] == pytest.approx((1.5 + 1.0 + 13 / 3) * 10)
    assert r["mcga_sec"]["llm_c_strict,none"] == pytest.approx((1.5 + 1.0 + 3.0) * 10)
    assert r["mcga_sec"]["judge_failed,none"] == 2 and r["mcga_sec"]["judge_failed_strict,none"] == 3 and r["mcga_sec"]["strict_differs,none"] == 1
    per_metric = r["mcga_sec"]["judge,none"]["per_metric"]
    assert (per_metric["sec_p"]["judged"], per_metric["sec_p"]["failed"]) == (2, 1)
    # failed items are named by document key, with the id where they differ (ids repeat across speakers)
    label = {row["id"]: f"{row[data.DOC_KEY_FIELD]} (id {row['id']})" for row in data.load_task_rows("sec", data_dir=data.SAMPLE_DATA_DIR)}
    assert per_metric["sec_p"]["failed_items"][0].startswith(f"{label['sec_02']}: InternalServerError")
    assert per_metric["sec_g"]["failed_items"][0].startswith(f"{label['sec_01']}: malformed reply")
    assert per_metric["sec_s"]["failed_items"] == [] and per_metric["sec_s"]["strict"]["failed_items"] == [
        f"{label['sec_03']}: score 7 in [7/5] is outside the rubric's 0-5 (the official rule counts it)"
    ]
    assert per_metric["sec_s"]["strict"]["differs"] == 1 and per_metric["sec_p"]["strict"]["differs"] == 0
    assert r["mcga_sec"]["judge,none"]["errors"] == {"InternalServerError": 1, "malformed reply": 1}
    # 18 first tries + 3 recovered retries + 2 more attempts of the SEC-P call that kept failing; [7/5] is asked once.
    assert calls == 23
    # One warning per judged task with the failed share and the first reason (issue 12 item 8).
    assert "judge mcga_sec: 2 of 9 judge scores (22.2%) are judge_failed and left out of the means" in log
    assert f"first: sec_p {label['sec_02']}: InternalServerError" in log
    assert "judge mcga_s2tt: 9 judge scores, none judge_failed" in log
    assert_key_absent(out, log)


def test_judged_tasks_run_without_a_judge_and_say_why(lmms_eval_cli, offline_env, tmp_path):
    env = {k: v for k, v in offline_env.items() if k != "DEEPSEEK_API_KEY"}
    results, log = lmms_eval(lmms_eval_cli, env, tmp_path / "out", "mcga_s2tt,mcga_sec", "replay", f"predictions={ROWS}")
    r = results["results"]
    reason = "not computed: no judge configured (set DEEPSEEK_API_KEY; see docs/judge.md)"
    assert f"judge mcga_s2tt: {reason}" in log and f"judge mcga_sec: {reason}" in log
    assert r["mcga_s2tt"]["llm_b,none"] == reason and r["mcga_sec"]["llm_c,none"] == reason and r["mcga_sec"]["judge,none"] == reason
    assert r["mcga_sec"]["cer_sentences,none"] == pytest.approx(EXPECTED["sec_cer_sentences"], abs=1e-9)
    assert r["mcga_s2tt"]["chrf_pp,none"] > 0


def test_samples_from_other_data_are_refused(lmms_eval_cli, offline_env, tmp_path):
    predicted = tmp_path / "predicted"
    lmms_eval(lmms_eval_cli, offline_env, predicted, "mcga_sqa", "replay", f"predictions={ROWS}", "--predict_only")
    [samples_file] = predicted.rglob("*_samples_mcga_sqa.jsonl")
    rows = [json.loads(line) for line in samples_file.read_text(encoding="utf-8").splitlines()]
    rows[1]["input"] = rows[1]["input"].replace("作者", "朝代")  # as if made from another question
    samples_file.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    from tests.test_cli_end_to_end import run_cli

    shutil.rmtree(tmp_path / "out", ignore_errors=True)
    code, log = run_cli(
        [lmms_eval_cli, "--tasks", "mcga_sqa", "--model", "replay", "--model_args", f"predictions={predicted}", "--output_path", str(tmp_path / "out"), "--verbosity", "DEBUG"],
        offline_env,
        cwd=tmp_path,
    )
    assert code != 0 and "the logged sample for mcga_sqa doc_id 1 was made with another prompt" in log


def test_a_damaged_judge_cache_is_moved_aside_and_the_run_keeps_every_result(lmms_eval_cli, offline_env, tmp_path):
    cache = tmp_path / "judge.sqlite3"
    cache.write_bytes(b"not a database: a half-copied file\n" * 200)
    with ChatServer(scripted_replies(ROWS / "judge_replies.json")) as server:
        results, log = lmms_eval(lmms_eval_cli, judge_env(offline_env, server, cache), tmp_path / "out", "mcga_asr,mcga_s2tt", "replay", f"predictions={ROWS}")
    r = results["results"]
    assert r["mcga_asr"]["cer_official,none"] == pytest.approx(EXPECTED["asr_cer_total"], abs=1e-9)
    assert r["mcga_s2tt"]["llm_b,none"] == pytest.approx(EXPECTED["s2tt_llm_b"], abs=1e-9)
    [moved] = tmp_path.glob("judge.sqlite3.damaged-*")
    assert moved.read_bytes().startswith(b"not a database")
    assert r["mcga_s2tt"]["judge,none"]["cache_recovered"] == [{"path": str(cache), "moved_to": str(moved), "error": "file is not a database"}]
    assert f"judge cache {cache} is damaged (file is not a database); moved aside to {moved}" in log


def _under_a_full_disk(command: list[str], mount: Path) -> tuple[list[str], str]:
    """``command`` run with a real full filesystem at ``mount``: a 64 KiB tmpfs, filled, in a private mount namespace
    (``unshare -rm``: no root needed where user namespaces are allowed, and nothing stays mounted). Where that cannot
    be done, the closest honest stand-in: a file where the cache's folder should be (the cache cannot be opened either)."""
    mount.mkdir()
    script = f'mount -t tmpfs -o size=64k tmpfs "{mount}" && (dd if=/dev/zero of="{mount}/fill" bs=4k 2>/dev/null; true) && exec "$@"'
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", "df", str(mount)], capture_output=True, text=True, check=False) if shutil.which("unshare") else None
    if probe is not None and probe.returncode == 0 and " 100% " in probe.stdout:
        return ["unshare", "-rm", "sh", "-c", script, "sh", *command], "a full tmpfs"
    mount.rmdir()
    mount.write_text("a file where the cache folder should be")  # stand-in: the cache cannot be opened
    return command, "stand-in: a file where the cache folder should be"


def test_a_full_disk_at_cache_open_judges_without_the_cache_and_counts_uncached_replies(lmms_eval_cli, offline_env, tmp_path):
    mount = tmp_path / "full"
    with ChatServer(scripted_replies(ROWS / "judge_replies.json")) as server:
        env = judge_env(offline_env, server, mount / "judge" / "replies.sqlite3")
        out = tmp_path / "out"
        command = [lmms_eval_cli, "--tasks", "mcga_sqa,mcga_s2tt,mcga_sec", "--model", "replay", "--model_args", f"predictions={ROWS}",
                   "--output_path", str(out), "--verbosity", "DEBUG"]  # fmt: skip
        command, how = _under_a_full_disk(command, mount)
        code, log = run_cli(command, env, cwd=tmp_path)
        assert code == 0, log[-4000:]
        assert len(server.requests) == 18  # judged anyway
    r = json.loads(next(out.rglob("*_results.json")).read_text(encoding="utf-8"))["results"]
    assert_official_judged_numbers(r)
    assert r["mcga_sqa"]["f1_official,none"] == pytest.approx(EXPECTED["sqa_f1"], abs=1e-9)
    assert r["mcga_s2tt"]["judge_uncached,none"] == 9 and r["mcga_sec"]["judge_uncached,none"] == 9
    unavailable = r["mcga_sec"]["judge,none"]["cache_unavailable"]
    reason = "database or disk is full" if how == "a full tmpfs" else "File exists"
    assert unavailable.startswith(f"judge cache {mount}/judge/replies.sqlite3 cannot be used: ") and reason in unavailable, (how, unavailable)
    assert "judging without a cache; no reply of this pass is stored (counted as uncached_replies), the next run asks again" in log


# ------------------------------------------------------------- thinking judges, official-compatible figures (issue 17)
JUDGED_SHAPES = json.loads((FIXTURES / "mcga_official_judged_shapes.json").read_text(encoding="utf-8"))


def test_a_thinking_judge_gives_the_official_scorers_figures_and_the_counts(lmms_eval_cli, offline_env, tmp_path):
    # 150 S2TT and 150 SEC outputs; judge replies in 50 shapes, a third wrapped in reasoning as a reasoning judge served
    # without a reasoning parser writes it (closed, pre-filled, <thinking>, holding draft scores and "{"), some S2TT
    # replies never closing it. Expected: the unmodified official scorer given the text after the reasoning
    # (tests/fixtures/README_mcga_official_judged_shapes.md). The base URL carries credentials, which must not be written.
    data_dir, runner, digests = write_judged(tmp_path / "judged")
    assert digests == JUDGED_SHAPES["runner_rows_sha256"]  # the rows the official scorer saw
    with ChatServer(server_reply) as server:
        port = server.url.split(":")[2].split("/")[0]
        url_secret = "url-secret-5e6f7a8b"
        env = {**judge_env(offline_env, server, tmp_path / "judge.sqlite3"), "MCGA_DATA_DIR": str(data_dir),
               "AUDIO_JUDGE_BASE_URL": f"http://judge:{url_secret}@127.0.0.1:{port}/v1?api_key={url_secret}", "AUDIO_JUDGE_CONCURRENCY": "8"}  # fmt: skip
        out = tmp_path / "out"
        results, log = lmms_eval(lmms_eval_cli, env, out, "mcga_s2tt,mcga_sec", "replay", f"predictions={runner}")
        assert all(path.endswith(f"?api_key={url_secret}") for path in server.paths)  # sent, as query parameter
    r = results["results"]
    for metric in ("llm_bf", "llm_bm", "llm_bs", "llm_b"):
        assert r["mcga_s2tt"][f"{metric},none"] == pytest.approx(JUDGED_SHAPES["s2tt"][metric], abs=1e-9), metric
    for metric in ("sec_p", "sec_g", "sec_s", "llm_c", "cer_sentences"):
        assert r["mcga_sec"][f"{metric},none"] == pytest.approx(JUDGED_SHAPES["sec"][metric], abs=1e-9), metric
    rows = judged_rows()
    replies = {  # (sent, final) of every judge request, built as the official script builds them
        "s2tt": [judge_reply(judging.s2tt_judge_messages(name, row["asr"], judging.s2tt_translation(row["s2tt_r"]))[-1]["content"])
                 for row in rows["s2tt"] for name in judging.S2TT_DIMENSIONS],
        "sec": [judge_reply(judging.sec_judge_messages(name, row[field], judging.split_sec_output(row["sec_r"])[index])[-1]["content"])
                for row in rows["sec"] for name, (_, field, index, _) in judging.SEC_DIMENSIONS.items()],
    }  # fmt: skip
    unfinished = sum(final is None for _, final in replies["s2tt"])
    after_reasoning = {task: sum(final is not None and sent != final for sent, final in pairs) for task, pairs in replies.items()}
    assert (unfinished, after_reasoning["s2tt"], after_reasoning["sec"]) == (47, 99, 149)
    assert r["mcga_s2tt"]["judge_unfinished_reasoning,none"] == unfinished and r["mcga_sec"]["judge_unfinished_reasoning,none"] == 0
    for task in ("s2tt", "sec"):
        scored_after_reasoning = sum(sent != final and final is not None and (task == "sec" or any(c.isdigit() for c in final)) for sent, final in replies[task])
        assert r[f"mcga_{task}"]["judge_verdicts_after_reasoning,none"] == scored_after_reasoning, task
    # S2TT: judge_failed = replies without a digit + unfinished ones; SEC: the official reading scores every reply
    assert r["mcga_s2tt"]["judge_failed,none"] == 450 - sum(JUDGED_SHAPES["s2tt"]["scored"].values())
    assert r["mcga_sec"]["judge_failed,none"] == 0
    assert r["mcga_sec"]["judge_failed_strict,none"] > 0 and r["mcga_sec"]["strict_differs,none"] > 0
    assert r["mcga_sec"]["sec_s_strict,none"] != r["mcga_sec"]["sec_s,none"]
    framed = {"s2tt": sum("Evaluation (score only)" in row["s2tt_r"] or "Score: 5" in row["s2tt_r"] for row in rows["s2tt"]),
              "sec": sum(any(mark in row["sec_r"] for mark in ('"', "[5/5]", "## ")) for row in rows["sec"])}  # fmt: skip
    assert r["mcga_s2tt"]["candidate_prompt_framing,none"] == framed["s2tt"] > 0 and r["mcga_sec"]["candidate_prompt_framing,none"] == framed["sec"] > 0
    assert r["mcga_s2tt"]["judge,none"]["base_url"] == f"http://***@127.0.0.1:{port}/v1?api_key=***"
    for text in [log] + [path.read_bytes().decode("utf-8", "replace") for folder in (out, tmp_path) for path in folder.rglob("*") if path.is_file() and "judged" not in path.parts]:
        assert url_secret not in text and KEY not in text
    # the health table of audio-bench-report shows the counts
    from audio_bench_report.health import build
    from audio_bench_report.runs import read_runs
    from audio_bench_report.tables import Context

    [run] = read_runs(out)
    rows_by_task = {row.detail: row for row in build([run], Context()).tables[0].rows}
    counts = rows_by_task["mcga_s2tt"].cells["judge_counts"].text
    assert f"unfinished reasoning {r['mcga_s2tt']['judge_unfinished_reasoning,none']}" in counts and "prompt-like candidates" in counts


def test_a_slow_drip_judge_a_429_burst_and_a_lone_surrogate_through_the_cli(lmms_eval_cli, offline_env, tmp_path):
    # S2TT: every call answered one byte per second (a reply would take minutes): each is cut at the 2 s time bound and
    # the circuit breaker stops the pass. SEC: a 429 with Retry-After: 2 (honoured, then judged) and a reply holding a
    # lone surrogate (stored repaired, alone), so every SEC figure is the official one.
    entries = json.loads((ROWS / "judge_replies.json").read_text(encoding="utf-8"))["replies"]
    tone = next(entry for entry in entries if entry["all"] == ["整体情感色彩分析", "客居他乡"])
    with ChatServer(scripted_replies(ROWS / "judge_replies.json"), drip_s=1.0) as server:
        server.add_fault("Evaluation (score only)", "drip_body", times=100)
        server.add_fault(("语音画像一致性审核", "语气平和"), "429", times=1, headers={"Retry-After": "2"})
        server.add_fault(tuple(tone["all"]), "reply", times=1, text=tone["reply"] + " \ud800")
        env = {**judge_env(offline_env, server, tmp_path / "judge.sqlite3"), "AUDIO_JUDGE_TIMEOUT": "2", "AUDIO_JUDGE_MAX_ATTEMPTS": "2",
               "AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES": "4"}  # fmt: skip
        started = time.monotonic()
        results, log = lmms_eval(lmms_eval_cli, env, tmp_path / "out", "mcga_s2tt,mcga_sec", "replay", f"predictions={ROWS}")
        elapsed = time.monotonic() - started
    r = results["results"]
    assert elapsed < 120, elapsed  # without the bound one dripping reply alone takes about 5 minutes
    s2tt = r["mcga_s2tt"]["judge,none"]
    assert s2tt["circuit_breaker"]["tripped"].startswith("circuit breaker: 4 judge API calls failed in a row (last: APITimeoutError")
    assert r["mcga_s2tt"]["judge_failed,none"] == 9 and r["mcga_s2tt"]["llm_b,none"].startswith("not computed")
    for metric in ("sec_p", "sec_g", "sec_s"):
        assert r["mcga_sec"][f"{metric},none"] == pytest.approx(EXPECTED[metric], abs=1e-9)
    sec = r["mcga_sec"]["judge,none"]
    assert sec["retry_after_waits"] == 1 and sec["uncached_replies"] == 0 and sec["cache_write_failed"] == 0
    with sqlite3.connect(tmp_path / "judge.sqlite3") as db:
        stored = [content for (content,) in db.execute("SELECT content FROM replies")]
    assert len(stored) == 9 and tone["reply"] + " \ufffd" in stored


# ------------------------------------------------------------- judges as they are served (issue 25 items 1 and 2)
def test_a_reasoning_judge_served_in_every_reply_shape_through_the_cli(lmms_eval_cli, offline_env, tmp_path):
    # An OpenAI reasoning judge (gpt-5 family) behind an endpoint that answers HTTP 400 to max_tokens and temperature, as
    # OpenAI's does: the family rule sends max_completion_tokens and no temperature, so every call is accepted. Replies in
    # the shapes endpoints send: S2TT as Mistral parts (thinking part with a decoy score), with reasoning_content apart,
    # and an error object inside an HTTP 200 (transient: asked again); SEC truncated at the token limit (content "", the
    # draft in reasoning_content), refused, and a tool call: each judge_failed, named, and never cached.
    with ChatServer(scripted_replies(ROWS / "judge_replies.json"), refuse=("max_tokens", "temperature")) as server:
        server.add_fault(("structure, including the alignment", "床前明月光"), "parts")
        server.add_fault(("beauty of meaning", "关关雎鸠"), "reasoning_field")
        server.add_fault(("beauty of sound", "枯藤老树"), "error_in_200")
        server.add_fault(("语音画像一致性审核", "女声，老年"), "truncated", times=5)
        server.add_fault(("整体情感色彩分析", "客居他乡"), "refusal", times=5)
        server.add_fault(("逐句情感意境精准比对", "昨夜雨疏风骤"), "tool_call", times=5)
        env = {**judge_env(offline_env, server, tmp_path / "judge.sqlite3"), "AUDIO_JUDGE_MODEL": "gpt-5-mini"}
        results, log = lmms_eval(lmms_eval_cli, env, tmp_path / "out", "mcga_s2tt,mcga_sec", "replay", f"predictions={ROWS}")
        sent = list(server.requests)
    r = results["results"]
    assert len(sent) == 19  # 18 judgments + the one asked again after the error inside a 200
    assert all("temperature" not in body and "max_tokens" not in body and body["model"] == "gpt-5-mini" for body in sent)
    limits = [body.get("max_completion_tokens") for body in sent]
    assert limits.count(10) == 10 and limits.count(None) == 9  # S2TT's 10 tokens (9 + the retry) under the reasoning name; SEC: server default
    # S2TT: every item judged (the parts' text, not the thinking part's decoy), the official figures
    for metric in ("llm_bf", "llm_bm", "llm_bs", "llm_b"):
        assert r["mcga_s2tt"][f"{metric},none"] == pytest.approx(EXPECTED[f"s2tt_{metric}"], abs=1e-9)
    s2tt = r["mcga_s2tt"]["judge,none"]
    assert r["mcga_s2tt"]["judge_failed,none"] == 0 and s2tt["api_calls"] == 10 and s2tt["errors"] == {}
    assert s2tt["per_metric"]["llm_bf"]["max_tokens"] == 10 and s2tt["judge_model_requested"] == "gpt-5-mini"
    assert s2tt["usage_reported"] == {"prompt_tokens": 9, "completion_tokens": 9, "total_tokens": 18}  # the error object has none
    assert r["mcga_s2tt"]["judge_verdicts_after_reasoning,none"] == 2  # parts and reasoning_content, read past
    # SEC: P without sec_02 = (2 + 1) / 2, G without sec_01 = (2 + 0) / 2, S without sec_03 = (4 + 2) / 2 (official per-item
    # scores: tests/fixtures/official_runner_rows); LLM-C = 10 * the sum
    assert r["mcga_sec"]["sec_p,none"] == pytest.approx(1.5) and r["mcga_sec"]["sec_g,none"] == pytest.approx(1.0)
    assert r["mcga_sec"]["sec_s,none"] == pytest.approx(3.0) and r["mcga_sec"]["llm_c,none"] == pytest.approx(55.0)
    assert r["mcga_sec"]["judge_failed,none"] == 3
    sec = r["mcga_sec"]["judge,none"]
    assert sec["errors"] == {"truncated": 1, "refusal": 1, "tool_call": 1} and sec["api_calls"] == 9
    label = {row["id"]: f"{row[data.DOC_KEY_FIELD]} (id {row['id']})" for row in data.load_task_rows("sec", data_dir=data.SAMPLE_DATA_DIR)}
    per_metric = sec["per_metric"]
    [truncated] = per_metric["sec_p"]["failed_items"]
    assert truncated.startswith(f"{label['sec_02']}: truncated: the reply was cut at the token limit (finish_reason 'length'; 0 characters of content, ")
    assert truncated.endswith(" of reasoning): a draft, not a verdict; raise AUDIO_JUDGE_MAX_TOKENS")
    assert per_metric["sec_g"]["failed_items"] == [f"{label['sec_01']}: refusal: the judge refused \"I'm sorry, I cannot help with that request.\""]
    assert per_metric["sec_s"]["failed_items"] == [f"{label['sec_03']}: tool_call: the judge called tool(s) ['submit_score'] instead of replying"]
    assert "judge mcga_sec: 3 of 9 judge scores (33.3%) are judge_failed" in log
    with sqlite3.connect(tmp_path / "judge.sqlite3") as db:  # the three replies without a verdict are not cached
        rows = db.execute("SELECT content, model, usage FROM replies").fetchall()
    assert len(rows) == 15 and all(content != "" for content, _, _ in rows)
    assert {model for _, model, _ in rows} == {REPORTED_MODEL} and all(json.loads(usage)["total_tokens"] == 2 for _, _, usage in rows)
