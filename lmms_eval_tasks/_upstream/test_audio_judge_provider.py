"""Unit tests of the ``audio_judge`` llm_judge provider (lmms_eval/llm_judge/providers/audio_judge.py) against a local
OpenAI-compatible chat-completions server run in a thread, whose replies and status codes are scripted per request:
lookup by name, the persistent reply cache, typed retries, the per-call deadline, the circuit breaker and the request
fields per judge family. No network, no API key, about 2 s."""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lmms_eval.llm_judge import ProviderFactory, Request, ServerConfig, get_server
from lmms_eval.llm_judge.providers import audio_judge

KEY = "sk-test-0123456789"
REPORTED_MODEL = "judge-test-20260101"


def reply(content="Score: 4", finish_reason="stop", headers=None, drip_s=0.0):
    """A scripted HTTP 200 chat-completions reply: ``(status, body, headers, seconds between body bytes)``."""
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": REPORTED_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }
    return 200, body, headers or {}, drip_s


def error(status, message, headers=None):
    """A scripted HTTP error with an OpenAI-style error body."""
    return status, {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error"}}, headers or {}, 0.0


class ChatServer:
    """``POST /v1/chat/completions`` on 127.0.0.1: each request gets the next answer of :attr:`script` (a normal reply once
    it is spent); every request body and Authorization header is recorded."""

    def __init__(self):
        self.script, self.requests, self.authorizations = [], [], []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("Authorization"))
                    status, answer, headers, drip_s = server.script.pop(0) if server.script else reply()
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    for chunk in [data[i : i + 1] for i in range(len(data))] if drip_s else [data]:
                        time.sleep(drip_s)
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_port}/v1"

    def __enter__(self):
        threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A running :class:`ChatServer` that the ``AUDIO_JUDGE_*`` settings point at: key read from the variable
    ``AUDIO_JUDGE_API_KEY_VAR`` names, cache in ``tmp_path``, short waits; every other ``AUDIO_JUDGE_*`` unset."""
    for name in [name for name in os.environ if name.startswith("AUDIO_JUDGE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("JUDGE_TEST_API_KEY", KEY)
    with ChatServer() as chat:
        settings = {"BASE_URL": chat.url, "API_KEY_VAR": "JUDGE_TEST_API_KEY", "CACHE": str(tmp_path / "replies.sqlite3"), "MAX_ATTEMPTS": "3", "RETRY_WAIT": "0.01", "TIMEOUT": "5"}
        for name, value in settings.items():
            monkeypatch.setenv(f"AUDIO_JUDGE_{name}", value)
        yield chat


def ask(prompt, model="deepseek-chat", max_tokens=16, provider=None):
    """One judge call through ``llm_judge``: ``(provider, response)``; a new provider (a new judge pass) unless given."""
    provider = provider or get_server("audio_judge", ServerConfig(model_name=model, max_tokens=max_tokens))
    return provider, provider.evaluate(Request(messages=[{"role": "user", "content": prompt}]))


def test_the_provider_is_reached_by_name_and_answers_with_an_llm_judge_response(server, monkeypatch):
    assert ProviderFactory._provider_classes["audio_judge"] is audio_judge.AudioJudgeProvider
    provider, response = ask("Rate the caption: a dog barks.")
    assert isinstance(provider, audio_judge.AudioJudgeProvider) and provider.is_available()
    assert (response.success, response.content, response.model_used, response.error_message) == (True, "Score: 4", REPORTED_MODEL, None)
    assert response.usage == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert server.authorizations == [f"Bearer {KEY}"]  # the key of the variable AUDIO_JUDGE_API_KEY_VAR names
    monkeypatch.delenv("JUDGE_TEST_API_KEY")
    unconfigured = get_server("audio_judge", ServerConfig(model_name="deepseek-chat"))
    assert not unconfigured.is_available()
    with pytest.raises(RuntimeError, match="JUDGE_TEST_API_KEY"):
        unconfigured.evaluate(Request(messages=[{"role": "user", "content": "x"}]))
    assert len(server.requests) == 1


def test_a_reply_is_cached_on_disk_and_a_failed_one_is_not(server, tmp_path):
    _, first = ask("Rate the caption: a dog barks.")
    provider, again = ask("Rate the caption: a dog barks.")  # another provider instance: only the cache file is shared
    assert (tmp_path / "replies.sqlite3").is_file() and len(server.requests) == 1
    assert again.success and again.raw_response.cached and (again.content, again.model_used) == (first.content, REPORTED_MODEL)
    assert (provider.provenance()["cache_hits"], provider.provenance()["api_calls"]) == (1, 0)

    server.script = [reply("Score: 2 because", finish_reason="length")]
    _, truncated = ask("Rate the caption: a cat sleeps.")
    assert (truncated.success, truncated.content) == (False, "") and truncated.error_message.startswith("truncated: ")
    assert len(server.requests) == 2  # a reply without a verdict is not asked again
    _, retried = ask("Rate the caption: a cat sleeps.")  # not cached: asked again
    assert len(server.requests) == 3 and retried.success and not retried.raw_response.cached and retried.content == "Score: 4"
    assert server.requests[1] == server.requests[2]


def test_a_429_is_retried_after_the_wait_its_retry_after_asks_for(server, monkeypatch):
    monkeypatch.setenv("AUDIO_JUDGE_RETRY_WAIT", "10")  # the backoff would wait 10-20 s: Retry-After replaces it
    server.script = [error(429, "Rate limit reached, slow down", headers={"Retry-After": "0.2"})]
    start = time.monotonic()
    provider, response = ask("Rate the caption: rain on a roof.")
    elapsed = time.monotonic() - start
    assert response.success and response.content == "Score: 4" and response.raw_response.attempts == 2
    assert len(server.requests) == 2 and server.requests[0] == server.requests[1]
    assert 0.2 <= elapsed < 5
    assert (provider.provenance()["retry_after_waits"], provider.provenance()["api_calls"]) == (1, 2)


def test_a_400_is_not_retried_and_its_kind_is_named(server):
    server.script = [error(400, "This prompt is invalid")]
    provider, response = ask("Rate the caption: a bell rings.")
    assert len(server.requests) == 1
    assert (response.success, response.content) == (False, "")
    assert response.error_message.startswith("HTTP 400: ") and "This prompt is invalid" in response.error_message
    assert provider.provenance()["errors"] == {"HTTP 400": 1}


def test_the_deadline_bounds_a_whole_call_even_when_the_body_trickles_in(server, monkeypatch):
    monkeypatch.setenv("AUDIO_JUDGE_TIMEOUT", "0.5")
    monkeypatch.setenv("AUDIO_JUDGE_MAX_ATTEMPTS", "1")
    server.script = [reply(drip_s=0.05)]  # each read finishes within 0.5 s; the whole ~300-byte body would take ~15 s
    start = time.monotonic()
    _, response = ask("Rate the caption: wind in the trees.")
    elapsed = time.monotonic() - start
    assert not response.success and response.error_message.startswith("APITimeoutError: ")
    assert "gave up after 1 attempts" in response.error_message
    assert 0.5 <= elapsed < 3


def test_the_circuit_breaker_stops_a_pass_after_consecutive_failures(server, monkeypatch):
    monkeypatch.setenv("AUDIO_JUDGE_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES", "2")
    server.script = [error(500, "upstream failure"), error(500, "upstream failure")]
    provider, first = ask("Rate the caption: one.")
    _, second = ask("Rate the caption: two.", provider=provider)
    assert first.error_message.startswith("InternalServerError: ") and not second.success
    start = time.monotonic()
    _, third = ask("Rate the caption: three.", provider=provider)  # the breaker is open: no request is sent
    assert time.monotonic() - start < 1 and len(server.requests) == 2
    assert not third.success and third.error_message.startswith("circuit breaker: 2 judge API calls failed in a row (last: InternalServerError")
    assert provider.provenance()["circuit_breaker"]["tripped"] == third.error_message
    _, fresh = ask("Rate the caption: three.")  # a new provider is a new pass with its own breaker
    assert fresh.success and len(server.requests) == 3


@pytest.mark.parametrize(
    "model, fields",
    [
        ("gpt-5-mini", {"max_completion_tokens": 32}),
        ("o3-mini", {"max_completion_tokens": 32}),
        ("openai/o4-mini", {"max_completion_tokens": 32}),
        ("gpt-4o-mini", {"temperature": 0.0, "max_tokens": 32}),
        ("deepseek-chat", {"temperature": 0.0, "max_tokens": 32}),
    ],
)
def test_the_request_fields_follow_the_judge_family(server, model, fields):
    _, response = ask("Rate the caption: a door creaks.", model=model, max_tokens=32)
    assert response.success
    assert server.requests == [{"model": model, "messages": [{"role": "user", "content": "Rate the caption: a door creaks."}], **fields}]
