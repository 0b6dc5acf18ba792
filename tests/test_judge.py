"""The shared LLM-judge layer against a real HTTP server on 127.0.0.1 (tests/chat_server.py):
retries, failure accounting, cache, bounded concurrency, configuration, and that the API key stays secret."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from lmms_eval_tasks import judge
from tests.chat_server import REPORTED_MODEL, ChatServer

KEY = "fake-judge-key-for-tests-1234"  # not a real key; tests check it never reaches any output


def digit_reply(messages: list[dict]) -> str:
    """Score = the number of words of the last message, modulo 5, plus 1 (deterministic per request)."""
    return f"Score: {len(messages[-1]['content'].split()) % 5 + 1}"


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


@pytest.mark.parametrize(("fault", "kind"), [("malformed", "malformed reply"), ("no_choices", "empty reply"), ("401", "HTTP 401")])
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
