"""The shared LLM-judge layer against a real HTTP server on 127.0.0.1 (tests/chat_server.py):
retries, failure accounting, cache, bounded concurrency, configuration, and that the API key stays secret."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from audio_bench_core import judge
from mcga import judging
from tests.chat_server import REPORTED_MODEL, ChatServer
from tests.conftest import ROOT

KEY = "fake-judge-key-for-tests-1234"  # not a real key; tests check it never reaches any output


def digit_reply(messages: list[dict]) -> str:
    """Score = the number of words of the last message, modulo 5, plus 1 (deterministic per request)."""
    return f"Score: {len(messages[-1]['content'].split()) % 5 + 1}"


@pytest.fixture(autouse=True)
def no_audit(monkeypatch):
    """These tests count judge calls exactly: no audit of cached verdicts (AUDIO_JUDGE_AUDIT=0; the audit has its
    own tests, tests/test_judge_audit.py)."""
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "0")


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)

    def make(server: ChatServer, **overrides) -> judge.JudgeConfig:
        settings = dict(base_url=server.url, model="deepseek-chat", api_key_var="TEST_JUDGE_KEY", timeout_s=0.5,
                        max_attempts=3, retry_wait_s=0.01, concurrency=4, cache_path=tmp_path / "cache.sqlite3")
        return judge.JudgeConfig(**{**settings, **overrides})

    return make


def request(text: str, max_tokens: int | None = 10) -> judge.JudgeRequest:
    return judge.JudgeRequest.of([{"role": "user", "content": text}], max_tokens)


def first_digit(text: str) -> float | None:
    return next((float(c) for c in text if c.isdigit()), None)


def cached_keys(path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM replies").fetchone()[0]


def test_timeouts_429_and_5xx_are_retried_until_success(config):
    with ChatServer(digit_reply, timeout_s=1.5) as server:
        server.add_fault("item-a", "500")
        server.add_fault("item-b", "429")
        server.add_fault("item-c", "timeout")
        server.add_fault("item-d", "503", times=2)
        client = judge.Judge(config(server))
        replies = client.complete_many([request(f"item-{x}") for x in "abcd"])
    assert [r.ok for r in replies] == [True] * 4
    assert [r.attempts for r in replies] == [2, 2, 2, 3]
    assert len(server.requests) == 9  # 4 first tries + 1 + 1 + 1 + 2 retries
    provenance = client.provenance()
    assert provenance["api_calls"] == 9 and provenance["failed_calls"] == 0 and provenance["cache_misses"] == 4
    assert provenance["judge_models_reported"] == {REPORTED_MODEL: 4}


def test_a_call_failing_every_attempt_is_failed_and_never_cached(config):
    with ChatServer(digit_reply) as server:
        server.add_fault("item-x", "503", times=10)
        first = judge.Judge(config(server)).complete(request("item-x"))
        assert first.content is None and first.attempts == 3 and len(server.requests) == 3
        assert first.error.startswith("InternalServerError:") and "gave up after 3 attempts" in first.error
        again = judge.Judge(config(server, max_attempts=1)).complete(request("item-x"))
        assert not again.ok and len(server.requests) == 4  # asked again: the failure was not cached


@pytest.mark.parametrize(("fault", "kind"), [("malformed", "malformed reply"), ("no_choices", "no_content"), ("401", "HTTP 401")])
def test_malformed_empty_and_client_errors_fail_without_retry(config, fault, kind):
    with ChatServer(digit_reply) as server:
        server.add_fault("item", fault)
        client = judge.Judge(config(server))
        reply = client.complete(request("item"))
    assert reply.error.startswith(kind + ":") and reply.attempts == 1 and len(server.requests) == 1
    assert client.provenance()["errors"] == {kind: 1}


def test_second_pass_is_served_from_the_cache_with_zero_calls(config):
    requests = [request(f"item {i} " + "word " * i) for i in range(6)]
    with ChatServer(digit_reply) as server:
        first = judge.Judge(config(server)).complete_many(requests)
        assert len(server.requests) == 6
        second_judge = judge.Judge(config(server))
        second = second_judge.complete_many(requests)
        assert len(server.requests) == 6
    assert [r.content for r in second] == [r.content for r in first] == [f"Score: {(2 + i) % 5 + 1}" for i in range(6)]  # 2 + i words
    assert all(r.cached and r.model == REPORTED_MODEL for r in second)
    provenance = second_judge.provenance()
    assert (provenance["cache_hits"], provenance["cache_misses"], provenance["api_calls"]) == (6, 0, 0)


@pytest.mark.parametrize("change", [{"model": "other-judge"}, {"temperature": 0.5}, {"max_tokens": 20}])
def test_cache_key_covers_model_and_sampling_parameters(config, change):
    with ChatServer(digit_reply) as server:
        judge.Judge(config(server)).complete(request("same text"))
        judge.Judge(config(server, **change)).complete(request("same text"))
        assert len(server.requests) == 2
    sent = server.requests[1]
    assert all(sent[name] == value for name, value in change.items())


def test_concurrency_is_bounded(config):
    with ChatServer(digit_reply, delay_s=0.2) as server:
        judge.Judge(config(server, concurrency=2)).complete_many([request(f"item {i}") for i in range(6)])
    assert server.max_in_flight == 2


def test_api_key_is_sent_but_never_stored_or_reported(config, tmp_path):
    with ChatServer(digit_reply) as server:
        server.add_fault("bad", "401")  # the server echoes the key in its error message
        client = judge.Judge(config(server))
        failed = client.complete(request("bad"))
        client.complete(request("good"))
    assert server.authorizations == [f"Bearer {KEY}"] * 2
    assert KEY not in failed.error and "***" in failed.error
    assert KEY not in json.dumps(client.provenance()) and KEY not in repr(client.config)
    assert KEY.encode() not in (tmp_path / "cache.sqlite3").read_bytes()


def test_judge_task_excludes_and_counts_failed_and_scoreless_items(config):
    items = [{"id": f"doc{i}", "text": f"item-{i}"} for i in range(4)]
    replies = {"item-0": "Score: [4/5]", "item-1": "excellent translation", "item-2": "2", "item-3": "5"}
    with ChatServer(lambda messages: replies[messages[-1]["content"]]) as server:
        server.add_fault("item-3", "500", times=5)
        result = judge.judge_task(
            "t", items, lambda item: {"dim": request(item["text"])}, lambda text: next((float(c) for c in text if c.isdigit()), None),
            {"prompt": "abc"}, config(server),
        )
    dimension = result.dimensions["dim"]
    assert dimension.values == (4.0, 2.0) and dimension.mean == 3.0  # doc1 (no score) and doc3 (500s) left out, not 0
    assert [item_id for item_id, _ in dimension.failed] == ["doc1", "doc3"]
    per_metric = result.provenance["per_metric"]["dim"]
    assert (per_metric["judged"], per_metric["failed"]) == (2, 2)
    assert per_metric["failed_items"][0].startswith("doc1: no score in the judge reply 'excellent translation'")
    assert per_metric["failed_items"][1].startswith("doc3: InternalServerError")
    assert result.provenance["prompt_sha256_16"] == {"prompt": "abc"}


def test_judge_task_without_a_key_is_not_computed_with_the_reason(config, monkeypatch):
    with ChatServer(digit_reply) as server:
        cfg = config(server)
        monkeypatch.delenv("TEST_JUDGE_KEY")
        result = judge.judge_task("t", [{"id": 1}], lambda item: {"d": request("x")}, float, {}, cfg)
    assert result == "not computed: no judge configured (set TEST_JUDGE_KEY; see docs/judge.md)"
    assert server.requests == []


def test_config_is_read_from_audio_judge_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("AUDIO_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AUDIO_JUDGE_CONCURRENCY", "3")
    monkeypatch.setenv("AUDIO_JUDGE_MAX_TOKENS", "64")
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / "c.sqlite3"))
    cfg = judge.JudgeConfig.from_env()
    assert (cfg.base_url, cfg.model, cfg.temperature, cfg.concurrency, cfg.max_tokens) == ("http://127.0.0.1:9/v1", "deepseek-chat", 0.0, 3, 64)
    assert cfg.cache_path == tmp_path / "c.sqlite3" and cfg.api_key_var == "DEEPSEEK_API_KEY"
    monkeypatch.setenv("AUDIO_JUDGE_CONCURRENCY", "0")
    with pytest.raises(ValueError, match="AUDIO_JUDGE_CONCURRENCY='0' must be >= 1"):
        judge.JudgeConfig.from_env()
    monkeypatch.setenv("AUDIO_JUDGE_CONCURRENCY", "many")
    with pytest.raises(ValueError, match="AUDIO_JUDGE_CONCURRENCY='many' is not a valid int"):
        judge.JudgeConfig.from_env()


def _write_many(path: str, start: int) -> None:
    cache = judge.JudgeCache(path)
    for i in range(start, start + 40):
        cache.put(f"key{i % 60}", {"i": i}, f"reply {i}", "m")


def test_cache_is_safe_with_concurrent_writer_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite3")
    judge.JudgeCache(path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(path, start)) for start in (0, 20)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    cache = judge.JudgeCache(path)
    # keys 0..59 written (20..39 by both: the first write wins, the second is ignored)
    assert all(cache.get(f"key{i}") is not None for i in range(60))
    assert cache.get("key5") == ("reply 5", "m") and cache.get("key45") == ("reply 45", "m")


# ------------------------------------------------------------------ replies without a valid score (issue 8 item 5)
def test_a_reply_without_a_valid_score_is_asked_again_and_never_cached(config):
    replies = {"item-0": "I'm sorry, I cannot evaluate this translation.", "item-1": "4"}
    with ChatServer(lambda messages: replies[messages[-1]["content"]]) as server:
        items = [{"id": f"doc{i}", "text": f"item-{i}"} for i in range(2)]

        def run():
            return judge.judge_task("t", items, lambda item: {"dim": request(item["text"])}, judging.s2tt_judge_score, {}, config(server))

        first = run()
        # The apology is asked 3 times (the attempt budget), then doc0 is judge_failed with the reason.
        assert [m["messages"][-1]["content"] for m in server.requests].count("item-0") == 3
        assert first.dimensions["dim"].values == (4.0,)
        assert first.dimensions["dim"].failed == (("doc0", "no score in the judge reply \"I'm sorry, I cannot evaluate this translation.\" (asked 3 times)"),)
        assert first.provenance["errors"] == {"no valid score": 1}
        judge._PASSES.clear()
        second = run()  # the next run asks again: the apology was not cached; doc1 comes from the cache
        assert len(server.requests) == 4 + 3 and second.provenance["cache_hits"] == 1
        replies["item-0"] = "Score: 2"  # the judge now answers
        judge._PASSES.clear()
        third = run()
        assert third.dimensions["dim"].values == (2.0, 4.0) and third.dimensions["dim"].failed == ()
        judge._PASSES.clear()
        fourth = run()  # everything cached now
        assert len(server.requests) == 4 + 3 + 1 and (fourth.provenance["cache_hits"], fourth.provenance["api_calls"]) == (2, 0)


def test_a_cached_reply_that_no_longer_yields_a_valid_score_is_asked_again_and_replaced(config):
    with ChatServer(lambda messages: "3") as server:
        cfg = config(server)
        client = judge.Judge(cfg)
        params = client.request_params(request("item"))
        client.cache.put(judge.Judge.cache_key(params), params, "excellent", "old-model")  # e.g. cached by an older version
        reply = client.complete(request("item"), judge.validator(judging.s2tt_judge_score))
        assert (reply.content, reply.cached, len(server.requests)) == ("3", False, 1)
        assert client.provenance()["cache_rejected"] == 1
        again = judge.Judge(cfg).complete(request("item"), judge.validator(judging.s2tt_judge_score))
        assert (again.content, again.cached, len(server.requests)) == ("3", True, 1)


def test_official_reading_decides_the_score_and_the_strict_reading_goes_beside_it(config, log_lines):
    replies = {"a": "4", "b": "0", "c": "10", "d": "评分（1-5分）：4", "e": "excellent", "f": "[3/5]", "g": "4\n\n1. **Structure**: 8 lines, 2 couplets."}
    with ChatServer(lambda messages: replies[messages[-1]["content"]]) as server:
        result = judge.judge_task(
            "mcga_s2tt", [{"id": f"doc-{x}", "text": x} for x in replies], lambda item: {"llm_bf": request(item["text"])},
            judging.official_s2tt_judge_score, {}, config(server, max_attempts=1), strict_score=judging.s2tt_judge_score,
        )
    dimension = result.dimensions["llm_bf"]
    # Official first-digit rule: 4, 0, 1, 1, (none: left out), 3, 4 -> mean over 6 = 13/6.
    assert dimension.values == (4.0, 0.0, 1.0, 1.0, 3.0, 4.0) and dimension.failed[0][0] == "doc-e"
    assert dimension.strict.values == (4.0, 3.0, 4.0)  # a, f, g (a score, then an explanation with numbers)
    assert [label for label, _ in dimension.strict.failed] == ["doc-b", "doc-c", "doc-d", "doc-e"]
    assert dimension.strict_differs == 3  # b, c, d: scored officially, refused strictly
    assert result.provenance["strict_differs"] == 3 and result.provenance["per_metric"]["llm_bf"]["strict"]["differs"] == 3
    assert result.provenance["per_metric"]["llm_bf"]["strict"]["failed_items"][1] == "doc-c: the official first-digit rule reads 1 from the reply '10', but its score is 10"
    assert len(server.requests) == 7  # max_attempts=1: e (no digit) was asked once
    assert log_lines == [
        "judge mcga_s2tt: 1 of 7 judge scores (14.3%) are judge_failed and left out of the means (cache hits 0, API calls 7); "
        "first: llm_bf doc-e: no digit in the judge reply 'excellent' (the official code leaves the item out); all listed in the 'judge' metric"
    ]


def test_a_reply_the_official_rule_scores_is_cached_and_not_asked_again(config):
    reply = "4\n\n1. **Structure**: the translation keeps 4 lines.\n2. **Balance**: 3 of them."
    with ChatServer(lambda messages: reply) as server:
        for _ in range(2):
            result = judge.judge_task(
                "s2tt-cache", [{"id": "a", "text": "x"}], lambda item: {"llm_bf": request(item["text"])}, judging.official_s2tt_judge_score, {},
                config(server), strict_score=judging.s2tt_judge_score,
            )
            judge._PASSES.clear()
    assert len(server.requests) == 1 and result.provenance["cache_hits"] == 1
    assert result.dimensions["llm_bf"].values == result.dimensions["llm_bf"].strict.values == (4.0,)


def test_score_function_per_dimension_and_items_named_by_key_and_id(config):
    items = [{"id": "345-1", "key": "upload/Yvqy/124.wav", "text": "x"}, {"id": "345-1", "key": "upload/ON44/124.wav", "text": "y"}, {"id": "7", "text": "z"}]
    replies = {"x": "[3/2]", "y": "[2/2]", "z": "[1/2]"}
    with ChatServer(lambda messages: replies[messages[-1]["content"]]) as server:
        result = judge.judge_task(
            "mcga_sec", items, lambda item: {"sec_p": request(item["text"])},
            {"sec_p": lambda reply: judging.sec_judge_score("sec_p", reply)}, {}, config(server, max_attempts=1),
        )
    assert result.dimensions["sec_p"].values == (2.0, 1.0)
    assert result.dimensions["sec_p"].failed == (("upload/Yvqy/124.wav (id 345-1)", "score 3 in [3/2] is outside the rubric's 0-2 (the official rule counts it)"),)
    assert result.provenance["strict_differs"] == "not applicable"  # no strict_score given


# ------------------------------------------------------------------ damaged cache, errors inside judging (issue 8 item 7)
def test_a_damaged_cache_file_is_moved_aside_and_judging_goes_on(config, tmp_path, log_lines):
    cache = tmp_path / "cache.sqlite3"
    cache.write_bytes(b"this is not an SQLite database\n" * 100)
    with ChatServer(digit_reply) as server:
        result = judge.judge_task("t", [{"id": "a", "text": "one two"}], lambda item: {"d": request(item["text"])}, first_digit, {}, config(server))
    assert result.dimensions["d"].values == (3.0,)  # 2 words -> 2 % 5 + 1
    [moved] = [path for path in tmp_path.iterdir() if path.name.startswith("cache.sqlite3.damaged-")]
    assert moved.read_bytes().startswith(b"this is not an SQLite database")
    [recovered] = result.provenance["cache_recovered"]
    assert recovered == {"path": str(cache), "moved_to": str(moved), "error": "file is not a database"}
    assert log_lines[0].startswith(f"judge cache {cache} is damaged (file is not a database); moved aside to {moved}")
    assert cached_keys(cache) == 1  # the fresh cache holds the new reply


def test_a_cache_damaged_inside_is_found_at_read_time_and_replaced(tmp_path):
    path = tmp_path / "cache.sqlite3"
    judge.JudgeCache(path)
    with sqlite3.connect(path) as db:  # 300 replies of 500 characters: about 40 pages of 4 KiB
        db.executemany("INSERT INTO replies (key, request, content, model, created) VALUES (?, '{}', ?, 'm', 0)", [(f"key{i}", "x" * 500) for i in range(300)])
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as file:  # overwrite pages 2-3 (the table's b-tree), leaving the header page intact
        file.seek(4096)
        file.write(b"\xff" * 8192)
    reopened = judge.JudgeCache(path)  # opens: the header page is fine
    assert reopened.recovered == []
    assert reopened.get("key100") is None  # "database disk image is malformed" -> moved aside, fresh cache, a miss
    assert [entry["error"] for entry in reopened.recovered] == ["database disk image is malformed"]
    reopened.put("key1", {}, "new", "m")
    assert reopened.get("key1") == ("new", "m")


def test_any_error_inside_judging_is_not_computed_with_the_reason_once(config, log_lines):
    calls = []

    def broken_requests(item):
        calls.append(item)
        raise KeyError("sec_1")

    with ChatServer(digit_reply) as server:
        cfg = config(server)
        first = judge.judge_task("t", [{"id": "a"}], broken_requests, first_digit, {}, cfg)
        second = judge.judge_task("t", [{"id": "a"}], broken_requests, first_digit, {}, cfg)
    assert first == second == "not computed: the judge failed (KeyError: 'sec_1')"
    assert len(calls) == 1 and server.requests == []  # the other aggregations of the task reuse the reason
    [line] = log_lines
    assert line.startswith("judge t: not computed: the judge failed (KeyError: 'sec_1'); the task's other metrics and other tasks are not affected\nTraceback")
    assert "in broken_requests" in line  # the traceback, as masked text

    def leaking_requests(item):
        raise RuntimeError(f"the endpoint rejected key {KEY}")

    with ChatServer(digit_reply) as server:
        leaked = judge.judge_task("t2", [{"id": "a"}], leaking_requests, first_digit, {}, config(server))
    assert leaked == "not computed: the judge failed (RuntimeError: the endpoint rejected key ***)"
    assert KEY not in log_lines[-1] and "the endpoint rejected key ***" in log_lines[-1]


def test_a_bad_setting_is_not_computed_with_the_reason(config, monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)
    monkeypatch.setenv("AUDIO_JUDGE_API_KEY_VAR", "TEST_JUDGE_KEY")
    monkeypatch.setenv("AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES", "-1")
    result = judge.judge_task("t", [{"id": "a"}], lambda item: {"d": request("x")}, first_digit, {})
    assert result == "not computed: AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES='-1' must be >= 0"


# ------------------------------------------------------------------------------------------ circuit breaker
def test_circuit_breaker_stops_calling_a_dead_endpoint_and_fails_the_rest_with_the_reason(config, log_lines):
    items = [{"id": f"doc{i}", "text": f"item {i}"} for i in range(40)]
    with ChatServer(digit_reply, timeout_s=5) as server:
        server.add_fault("item", "timeout", times=1000)  # never answers within the client's 0.3 s
        result = judge.judge_task(
            "t", items, lambda item: {"d": request(item["text"])}, first_digit, {}, config(server, timeout_s=0.3, max_consecutive_failures=5)
        )
        calls = len(server.requests)
    # Without the breaker: 40 items x 3 attempts = 120 calls of 0.3 s each. With it: 5 failures, plus what was in flight.
    assert 5 <= calls <= 5 + 2 * 4
    failed = result.dimensions["d"].failed
    assert len(failed) == 40 and result.dimensions["d"].values == ()
    breaker = "circuit breaker: 5 judge API calls failed in a row (last: APITimeoutError: Request timed out.); the remaining calls of this pass were not made"
    assert result.provenance["circuit_breaker"] == {"max_consecutive_failures": 5, "tripped": breaker}
    assert sum(reason == breaker for _, reason in failed) >= 40 - 4 - 1  # all but those that failed on their own
    assert result.provenance["errors"]["not judged"] >= 40 - 4 - 1
    assert log_lines[0] == f"judge: {breaker} (AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES=5; endpoint {server.url})"
    assert log_lines[-1].startswith("judge t: 40 of 40 judge scores (100.0%) are judge_failed")


def test_circuit_breaker_off_and_reset_by_a_reply(config):
    with ChatServer(digit_reply) as server:
        server.add_fault("bad", "503", times=100)
        # 0 turns it off: 4 calls x 3 attempts all made.
        judge.Judge(config(server, max_consecutive_failures=0, concurrency=1)).complete_many([request(f"bad {i}") for i in range(4)])
        assert len(server.requests) == 12
        # A good reply between failures resets the run: 2 failed attempts, a reply, 2 failed attempts: no trip at 3.
        client = judge.Judge(config(server, max_consecutive_failures=3, max_attempts=2, concurrency=1))
        replies = client.complete_many([request("bad 1"), request("good"), request("bad 2")])
    assert [r.ok for r in replies] == [False, True, False] and client.breaker_tripped is None


# ------------------------------------------------------------------------------------------------- Ctrl-C
_INTERRUPTED_PASS = """
from audio_bench_core import judge
items = [{"id": name} for name in [f"fast-{i}" for i in range(4)] + [f"slow-{i}" for i in range(8)]]
request = lambda item: {"d": judge.JudgeRequest.of([{"role": "user", "content": item["id"]}], 10)}
judge.judge_task("t", items, request, lambda text: float(text), {})
print("finished without interruption")
"""


def test_ctrl_c_stops_judging_within_seconds_and_keeps_finished_replies(tmp_path):
    cache = tmp_path / "cache.sqlite3"
    env = {
        **os.environ, "PYTHONPATH": str(ROOT), "TEST_JUDGE_KEY": KEY, "AUDIO_JUDGE_API_KEY_VAR": "TEST_JUDGE_KEY",
        "AUDIO_JUDGE_CACHE": str(cache), "AUDIO_JUDGE_CONCURRENCY": "4", "AUDIO_JUDGE_TIMEOUT": "60",
    }
    with ChatServer(lambda messages: "4", timeout_s=60) as server:
        server.add_fault("slow", "timeout", times=100)  # the slow items get no answer for 60 s
        env["AUDIO_JUDGE_BASE_URL"] = server.url
        # SIGINT as a terminal delivers it: a suite started in the background (`make test &`) hands its children SIGINT
        # ignored, and Python then installs no KeyboardInterrupt handler
        process = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_PASS], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
        deadline = time.monotonic() + 60
        while not (server.in_flight == 4 and len(server.requests) == 8) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the 4 fast items are answered and 4 slow calls block every worker
        assert (server.in_flight, len(server.requests)) == (4, 8)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        seconds = time.monotonic() - sent
        # Before: the pool waited for the blocked HTTP calls (64 s in the report); now the pass stops at once.
        assert seconds < 5, seconds
        assert process.returncode != 0 and "KeyboardInterrupt" in stderr
        assert "judge t: interrupted; 4 of 12 calls finished (their replies are cached), the rest stopped" in stderr
        assert cached_keys(cache) == 4
        # The next run (same endpoint, now answering at once) asks only for what was not finished.
        server.faults.clear()
        cfg = judge.JudgeConfig(base_url=server.url, api_key_var="TEST_JUDGE_KEY", cache_path=cache, retry_wait_s=0.01)
        os.environ["TEST_JUDGE_KEY"] = KEY
        try:
            items = [{"id": name} for name in [f"fast-{i}" for i in range(4)] + [f"slow-{i}" for i in range(8)]]
            result = judge.judge_task("t", items, lambda item: {"d": request(item["id"])}, float, {}, cfg)
        finally:
            del os.environ["TEST_JUDGE_KEY"]
    assert (result.provenance["cache_hits"], result.provenance["api_calls"]) == (4, 8) and result.dimensions["d"].values == (4.0,) * 12


def test_a_cache_path_that_cannot_be_used_is_an_error_naming_it(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(judge.JudgeCacheError, match=r"judge cache .*/file/c.sqlite3 cannot be used: \[Errno 17\] File exists"):
        judge.JudgeCache(tmp_path / "file" / "c.sqlite3")
    (tmp_path / "folder.sqlite3").mkdir()
    with pytest.raises(judge.JudgeCacheError, match="folder.sqlite3 cannot be used: unable to open database file"):
        judge.JudgeCache(tmp_path / "folder.sqlite3")


# ------------------------------------------------------------ cache read once, written in batches (issue 13 item 5)
def test_a_pass_reads_the_cache_once_and_stores_every_reply_in_batches(config, tmp_path, monkeypatch):
    requests = [request(f"item {i} " + "word " * i) for i in range(12)]
    with ChatServer(digit_reply, delay_s=0.05) as server:
        client = judge.Judge(config(server, concurrency=4))
        client.complete(requests[0])  # cached before the pass: a hit
        reads, writes = [], []
        monkeypatch.setattr(client.cache, "get", lambda key: pytest.fail("a pass reads the cache per call"))
        get_many, put_many = client.cache.get_many, client.cache.put_many
        monkeypatch.setattr(client.cache, "get_many", lambda keys, **kw: reads.append(len(keys)) or get_many(keys, **kw))
        monkeypatch.setattr(client.cache, "put_many", lambda rows: writes.append(len(rows)) or put_many(rows))
        replies = client.complete_many(requests)
    assert [r.content for r in replies] == [f"Score: {(2 + i) % 5 + 1}" for i in range(12)]  # 2 + i words
    assert [r.cached for r in replies] == [True] + [False] * 11 and len(server.requests) == 12
    assert reads == [12]  # one read for the whole pass
    assert sum(writes) == 11 and len(writes) < 11  # every fresh reply stored; replies that finished close together share a write
    assert cached_keys(tmp_path / "cache.sqlite3") == 12
    again = judge.Judge(config(server)).complete_many(requests)
    assert all(r.cached for r in again) and [r.content for r in again] == [r.content for r in replies]


def test_put_many_keeps_the_first_reply_of_a_key_unless_told_to_replace(tmp_path):
    cache = judge.JudgeCache(tmp_path / "c.sqlite3")
    cache.put_many([("a", {}, "1", "m", False), ("a", {}, "2", "m", False), ("b", {}, "3", "m", False), ("b", {}, "4", "n", True)])
    assert cache.get_many(["a", "b", "c", "a"]) == {"a": ("1", "m"), "b": ("4", "n")}
    assert cache.get_many([f"k{i}" for i in range(1200)] + ["b"]) == {"b": ("4", "n")}  # more keys than one query takes (500)


def test_a_reply_that_arrives_after_the_pass_stopped_is_still_cached(config, tmp_path):
    with ChatServer(lambda messages: "4", timeout_s=1.0) as server:
        server.add_fault("slow", "timeout")  # answered after 1 s, within the client's 3 s
        server.add_fault("bad", "503", times=10)
        client = judge.Judge(config(server, timeout_s=3, concurrency=2, max_attempts=1, max_consecutive_failures=2))
        replies = client.complete_many([request("slow"), request("bad 1"), request("bad 2"), request("bad 3")])
        # The breaker trips on the two 503s while "slow" is in flight; the pass returns without waiting for it.
        assert client.breaker_tripped and replies[0].error.startswith("circuit breaker: 2 judge API calls failed in a row")
        deadline = time.monotonic() + 10
        while cached_keys(tmp_path / "cache.sqlite3") < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert cached_keys(tmp_path / "cache.sqlite3") == 1  # the paid reply was stored by its worker
    assert judge.Judge(config(server)).complete(request("slow")).cached


def test_a_cache_that_cannot_be_written_costs_the_cache_not_the_scores(config, monkeypatch, log_lines):
    def locked(rows):
        raise sqlite3.OperationalError("database is locked")

    with ChatServer(digit_reply) as server:
        client = judge.Judge(config(server))
        monkeypatch.setattr(client.cache, "put_many", locked)
        replies = client.complete_many([request(f"item {i}") for i in range(3)])
    assert [r.content for r in replies] == ["Score: 3"] * 3 and all(r.ok for r in replies)
    assert client.provenance()["cache_write_failed"] == 3
    assert any("could not be stored (OperationalError: database is locked); they will be asked again next run" in line for line in log_lines)


# ------------------------------------------------------- thinking judges: the verdict after the reasoning (issue 17 item 6)
def test_the_verdict_is_read_after_the_judges_reasoning_and_an_unclosed_reasoning_has_none(config):
    replies = {
        "closed": "<think>\nA draft: {\"score\": 1}, or 2? Let me count the 5 lines.\n</think>\n\nScore: 4",
        "prefilled": "The source has 4 lines, so 1 or 3.</think>\n3",
        "kimi": "◁think▷maybe 1◁/think▷5",
        "unclosed": "<think>\nThe translation keeps 4 lines; I would give 3 or",
        "plain": "2",
    }
    with ChatServer(lambda messages: replies[messages[-1]["content"]]) as server:
        result = judge.judge_task(
            "thinking", [{"id": name, "text": name} for name in replies], lambda item: {"d": request(item["text"])},
            judging.official_s2tt_judge_score, {}, config(server, max_attempts=2),
        )
        assert len(server.requests) == 6  # the unclosed reply was asked again (attempt budget 2), then failed
    dimension = result.dimensions["d"]
    assert dimension.values == (4.0, 3.0, 5.0, 2.0)  # never the draft's 1
    [(label, reason)] = dimension.failed
    assert label == "unclosed" and reason.startswith("the judge's reasoning never closed (") and "(asked 2 times)" in reason
    assert (result.count("reasoning_read_past"), result.count("unfinished_reasoning")) == (3, 1)
    assert result.provenance["errors"] == {"unfinished reasoning": 1}
    assert cached_keys(config(server).cache_path) == 4  # the unfinished reply is not cached


# ------------------------------------------------------------------------ credentials in the base URL (issue 20 item 4)
def test_credentials_in_the_base_url_are_sent_but_never_written_logged_or_keyed(config, tmp_path, log_lines):
    secret_query, secret_password = "qsecret-9f8e7d6c", "psecret-1a2b3c4d"
    with ChatServer(digit_reply) as server:
        port = server.url.split(":")[2].split("/")[0]
        url = f"http://judge-user:{secret_password}@127.0.0.1:{port}/v1?api_key={secret_query}&api-version=2024-06-01"
        server.add_fault("echo", "401")  # the error text echoes the Authorization header
        client = judge.Judge(config(server, base_url=url, max_consecutive_failures=1))
        replies = client.complete_many([request("one"), request("echo")])
        assert server.paths[0] == f"/v1/chat/completions?api_key={secret_query}&api-version=2024-06-01"  # sent as query parameters
        other = judge.Judge(config(server, base_url=url.replace(secret_query, "another-key-000")))
        assert other.complete(request("one")).cached  # the cache key does not depend on the credentials
    provenance = client.provenance()
    assert provenance["base_url"] == f"http://***@127.0.0.1:{port}/v1?api_key=***&api-version=***"
    written = [json.dumps(provenance), repr(client.config), replies[1].error or "", *log_lines, (tmp_path / "cache.sqlite3").read_text(errors="replace")]
    for wal in tmp_path.glob("cache.sqlite3*"):
        written.append(wal.read_bytes().decode("utf-8", "replace"))
    for secret in (secret_query, secret_password, KEY):
        assert not any(secret in text for text in written), secret
    assert judge.redact_url("https://u@h/v1?sk-bare#frag") == "https://***@h/v1?***#***"


# ---------------------------------------------------------------------- the whole-call time bound (issue 20 item 5)
@pytest.mark.parametrize("drip", ["drip_body", "drip"])
def test_a_slow_drip_reply_is_cut_at_the_time_bound_and_trips_the_breaker(config, drip):
    # A real server sending one byte every 0.25 s (the body alone would take about 80 s): each call is cut at 1 s.
    with ChatServer(digit_reply, drip_s=0.25) as server:
        server.add_fault("slow", drip, times=20)
        client = judge.Judge(config(server, timeout_s=1.0, max_attempts=2, concurrency=2, max_consecutive_failures=3))
        started = time.monotonic()
        replies = client.complete_many([request(f"slow {i}") for i in range(6)])
        elapsed = time.monotonic() - started
    assert elapsed < 4.5, elapsed  # 3 timed-out calls of 1 s, 2 at a time, then the breaker
    assert all(not reply.ok for reply in replies)
    assert client.breaker_tripped.startswith("circuit breaker: 3 judge API calls failed in a row (last: APITimeoutError")
    timed_out = [reply.error for reply in replies if reply.error.startswith("APITimeoutError: Request timed out. (gave up after")]
    assert timed_out and client.provenance()["api_calls"] >= 3


# -------------------------------------------------------------------------------- Retry-After (issue 20 item 6)
@pytest.mark.parametrize("header", ["seconds", "http-date"])
def test_retry_after_sets_the_wait_before_the_next_attempt(config, header):
    import email.utils

    with ChatServer(digit_reply) as server:
        value = "2" if header == "seconds" else email.utils.formatdate(time.time() + 3, usegmt=True)
        server.add_fault("burst", "429", times=1, headers={"Retry-After": value})
        client = judge.Judge(config(server, retry_wait_s=0.01))
        reply = client.complete(request("burst"))
    assert reply.ok and reply.attempts == 2
    (first, _), (second, _) = server.served
    assert second - first >= 1.9, second - first  # the backoff alone would have waited about 0.02 s
    assert client.provenance()["retry_after_waits"] == 1


def test_a_burst_of_429s_within_the_attempt_budget_is_judged_and_a_wait_past_the_cap_is_not_retried(config):
    with ChatServer(digit_reply) as server:
        server.add_fault("burst", "429", times=2, headers={"Retry-After": "1"})
        server.add_fault("closed", "429", times=5, headers={"Retry-After": "3600"})
        client = judge.Judge(config(server, retry_wait_s=0.01))
        burst, closed = client.complete_many([request("burst"), request("closed")])
    assert burst.ok and burst.attempts == 3
    assert not closed.ok and closed.attempts == 1
    assert "the server asked to wait 3600 s (Retry-After), more than the 60 s the judge waits between attempts: not retried" in closed.error


# ------------------------------------------------------------------- one bad reply in a cache batch (issue 20 item 7)
def test_a_reply_holding_a_lone_surrogate_costs_only_itself_in_a_cache_batch(config, tmp_path):
    def reply(messages):  # a server that escapes a lone surrogate in its JSON (\ud800), as seen from real endpoints
        text = messages[-1]["content"]
        return f"Score: 3 \ud800" if text == "item 5" else "Score: 4"

    with ChatServer(reply) as server:
        client = judge.Judge(config(server))
        replies = client.complete_many([request(f"item {i}") for i in range(12)], validate=judge.validator(first_digit))
        assert replies[5].content == "Score: 3 \ud800" and all(r.ok for r in replies)
        assert cached_keys(tmp_path / "cache.sqlite3") == 12 and client.provenance()["uncached_replies"] == 0
        again = judge.Judge(config(server)).complete_many([request(f"item {i}") for i in range(12)], validate=judge.validator(first_digit))
    assert all(r.cached for r in again) and again[5].content == "Score: 3 \ufffd"  # stored repaired, still scores 3
    cache = judge.JudgeCache(tmp_path / "other.sqlite3")
    rows = [(f"k{i}", {"i": i}, f"reply {i}", "m", False) for i in range(5)]
    rows[2] = ("k2", {"prompt": "a \udc80 b"}, "reply \ud800", "m", False)  # lone surrogates in the request and the reply
    assert cache.put_many(rows) == []
    assert cache.get_many([f"k{i}" for i in range(5)]) == {f"k{i}": ("reply \ufffd" if i == 2 else f"reply {i}", "m") for i in range(5)}


# ------------------------------------------------------------------------ no cache at all (issue 20 item 8)
def test_a_cache_that_cannot_be_opened_is_done_without_and_the_uncached_replies_counted(config, tmp_path, log_lines):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with ChatServer(digit_reply) as server:
        result = judge.judge_task(
            "nocache", [{"id": str(i), "text": f"item {i}"} for i in range(3)], lambda item: {"d": request(item["text"])}, first_digit, {},
            config(server, cache_path=blocker / "judge.sqlite3"),
        )
        assert len(server.requests) == 3
    assert result.dimensions["d"].values == (3.0, 3.0, 3.0) and result.count("uncached_replies") == 3
    assert result.provenance["cache_unavailable"].startswith(f"judge cache {blocker}/judge.sqlite3 cannot be used: [Errno 17] File exists")
    assert any(line.endswith("judging without a cache; no reply of this pass is stored (counted as uncached_replies), the next run asks again") for line in log_lines)


