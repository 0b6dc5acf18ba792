# ruff: noqa: F811 - the fixtures of tests/test_judge.py are imported by name and used as arguments
"""Judges as they are served (issue 25 items 1 and 2): the request follows the judge model's family and the user's
overrides, an endpoint that refuses a field gets it renamed or dropped, and a reply is read by its whole shape
(finish reason, content parts, reasoning fields, refusal, tool calls, error objects). Bodies below are written as the
named endpoints send them (OpenAI o-series/gpt-5, DeepSeek-R1 / vLLM / SGLang with a reasoning parser, Mistral
Magistral, OpenRouter, Anthropic-compatible gateways)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from audio_bench_core import judge
from audio_bench_core.judge_reply import read_reply
from audio_bench_core.judge_request import RequestFields, adaptation_for, sampling_fields
from tests.chat_server import REPORTED_MODEL, ChatServer
from tests.test_judge import KEY, cached_keys, config, digit_reply, first_digit, request  # noqa: F401 - fixtures

USAGE = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}


def body(message: dict, finish: str | None = "stop", **extra) -> dict:
    return {"id": "c", "model": "m-2026", "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": USAGE, **extra}


# ------------------------------------------------------------------------------------------- request families
@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("deepseek-chat", {"temperature": 0.0, "max_tokens": 10}),
        ("deepseek-reasoner", {"temperature": 0.0, "max_tokens": 10}),
        ("gpt-4o-mini", {"temperature": 0.0, "max_tokens": 10}),
        ("o3-mini", {"max_completion_tokens": 10}),
        ("gpt-5-nano", {"max_completion_tokens": 10}),
        ("O4-mini", {"max_completion_tokens": 10}),
        ("openai/o1", {"max_completion_tokens": 10}),  # behind a router prefix
        ("omni-judge", {"temperature": 0.0, "max_tokens": 10}),  # starts with "o", not a reasoning family
    ],
)
def test_token_limit_and_temperature_follow_the_model_family(model, expected):
    assert sampling_fields(model, 0.0, 10) == expected
    assert list(sampling_fields(model, 0.0, None)) == [k for k in expected if k == "temperature"]  # no limit: none sent


def test_the_default_configuration_sends_the_official_body_in_its_order(config):
    with ChatServer(digit_reply) as server:
        client = judge.Judge(config(server))
        params = client.request_params(request("x", max_tokens=10))
        assert list(params) == ["base_url", "model", "messages", "temperature", "max_tokens"]
        assert list(client.request_params(request("x", max_tokens=None))) == ["base_url", "model", "messages", "temperature"]
        client.complete(request("x", max_tokens=10))
    assert server.requests == [{"model": "deepseek-chat", "messages": [{"role": "user", "content": "x"}], "temperature": 0.0, "max_tokens": 10}]


def test_request_field_overrides_rename_drop_and_set_and_change_the_cache_key(config, monkeypatch):
    monkeypatch.setenv("AUDIO_JUDGE_REQUEST_FIELDS", json.dumps(
        {"rename": {"max_tokens": "max_completion_tokens"}, "drop": ["temperature"], "set": {"reasoning_effort": "low", "extra": {"a": [1]}}}
    ))  # fmt: skip
    fields = judge.JudgeConfig.from_env().request_fields
    assert fields.as_dict() == {"rename": {"max_tokens": "max_completion_tokens"}, "drop": ["temperature"], "set": {"reasoning_effort": "low", "extra": {"a": [1]}}}
    with ChatServer(digit_reply) as server:
        plain = judge.Judge(config(server))
        custom = judge.Judge(config(server, request_fields=fields))
        assert custom.request_params(request("x"))["max_completion_tokens"] == 10
        assert plain.cache_key(plain.request_params(request("x"))) != custom.cache_key(custom.request_params(request("x")))
        assert custom.complete(request("x")).ok
        assert custom.provenance()["request_fields"] == fields.as_dict() and plain.provenance()["request_fields"] is None
    assert server.requests == [{"model": "deepseek-chat", "messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 10,
                                "reasoning_effort": "low", "extra": {"a": [1]}}]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "must be a JSON object"),
        ("{not json", "is not valid JSON"),
        ('{"add": {"x": 1}}', "unknown key(s) ['add']"),
        ('{"drop": "temperature"}', "drop must be a list"),
        ('{"set": {"messages": []}}', "['messages'] cannot be overridden"),
        ('{"rename": {"max_tokens": 3}}', "rename must map field names"),
    ],
)
def test_a_bad_override_is_refused_naming_the_variable(text, message):
    with pytest.raises(ValueError, match="AUDIO_JUDGE_REQUEST_FIELDS") as error:
        RequestFields.parse(text, "AUDIO_JUDGE_REQUEST_FIELDS")
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", ("max_tokens", "max_completion_tokens")),
        ("Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported.", ("temperature", None)),
        ("Error code: 400 - {'error': {'message': \"Unsupported parameter: 'top_p' is not supported\"}}", ("top_p", None)),
        ("'presence_penalty' is not supported by this model", ("presence_penalty", None)),
        ("Unsupported parameter: 'logprobs'", None),  # a field we did not send: nothing to change
        ("Unsupported parameter: 'messages'", None),  # the prompt is never changed
        ("Invalid API key", None),
    ],
)
def test_an_unsupported_parameter_error_names_what_to_rename_or_drop(message, expected):
    sent = {"model": "m", "messages": [], "max_tokens": 10, "temperature": 0.0, "top_p": 1, "presence_penalty": 0}
    assert adaptation_for(message, sent) == expected


def test_an_endpoint_refusing_max_tokens_and_temperature_gets_them_renamed_and_dropped_once_per_pass(config, log_lines):
    with ChatServer(digit_reply, refuse=("max_tokens", "temperature")) as server:
        client = judge.Judge(config(server, model="my-reasoner", concurrency=1))  # not a family the rule knows
        replies = client.complete_many([request(f"item {i}") for i in range(3)])
    assert [reply.ok for reply in replies] == [True] * 3 and [reply.content for reply in replies] == ["Score: 3", "Score: 3", "Score: 3"]
    # item 0: HTTP 400 for max_tokens (renamed), HTTP 400 for temperature (dropped), then a reply; items 1 and 2 at once
    sent = [sorted(k for k in body if k not in ("model", "messages")) for body in server.requests]
    assert sent == [["max_tokens", "temperature"], ["max_completion_tokens", "temperature"], ["max_completion_tokens"],
                    ["max_completion_tokens"], ["max_completion_tokens"]]  # fmt: skip
    provenance = client.provenance()
    assert {name: change["sent_as"] for name, change in provenance["request_adapted"].items()} == {"max_tokens": "max_completion_tokens", "temperature": None}
    assert provenance["adapted_retries"] == 2 and provenance["failed_calls"] == 0
    assert sum("the endpoint refused the request field" in line for line in log_lines) == 2
    with sqlite3.connect(client.config.cache_path) as db:  # the row records the body as it was sent
        stored = [json.loads(text) for (text,) in db.execute("SELECT request FROM replies")]
    assert all("max_completion_tokens" in row and "temperature" not in row and "max_tokens" not in row for row in stored) and len(stored) == 3


# ------------------------------------------------------------------------------------------- reply shapes
@pytest.mark.parametrize(
    ("reply", "content", "kind"),
    [
        (body({"role": "assistant", "content": "Score: 4"}), "Score: 4", None),
        (body({"role": "assistant", "content": ""}), "", None),  # a blank reply is a reply (the score function reads it)
        # DeepSeek-R1 / vLLM --reasoning-parser: the draft apart, the verdict in content
        (body({"role": "assistant", "content": "Score: 4", "reasoning_content": "Score: 1? no."}), "Score: 4", None),
        # ... out of tokens: content "" and finish_reason length: a draft, never a verdict
        (body({"role": "assistant", "content": "", "reasoning_content": "Score: 1 first"}, "length"), "", "truncated"),
        (body({"role": "assistant", "content": "Score: 3 becau"}, "length"), "Score: 3 becau", "truncated"),
        (body({"role": "assistant", "content": None, "reasoning": "thinking..."}, "length"), None, "truncated"),  # OpenRouter field
        (body({"role": "assistant", "content": "Score: 3"}, "max_tokens"), "Score: 3", "truncated"),  # Anthropic-compatible
        # Mistral Magistral: a thinking part (holding a decoy score), then a text part
        (body({"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "[1/5]"}]}, {"type": "text", "text": "[4/5]"}]}), "[4/5]", None),
        (body({"role": "assistant", "content": [{"type": "text", "text": "Score"}, {"type": "text", "text": ": 2"}]}), "Score: 2", None),
        (body({"role": "assistant", "content": [{"type": "thinking", "thinking": "only thoughts"}]}), None, "no_content"),
        (body({"role": "assistant", "content": [{"type": "image_url", "image_url": {}}]}), None, "no_content"),
        (body({"role": "assistant", "content": None, "refusal": "I can't assist with that."}), None, "refusal"),
        (body({"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}), None, "refusal"),
        (body({"role": "assistant", "content": None}, "content_filter"), None, "refusal"),
        (body({"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "grade", "arguments": "{}"}}]}, "tool_calls"), None, "tool_call"),
        (body({"role": "assistant", "content": "Score: 2", "function_call": {"name": "grade", "arguments": "{}"}}), "Score: 2", "tool_call"),
        (body({"role": "assistant", "content": None}), None, "no_content"),
        ({"id": "c", "choices": []}, None, "no_content"),
        ({"error": {"code": 429, "message": "Rate limit exceeded"}}, None, "provider_error"),
        ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, None, "provider_error"),
        ({"choices": [{"index": 0, "error": {"code": 502, "message": "upstream"}, "finish_reason": "error"}]}, None, "provider_error"),
        ({"error": {"code": 400, "message": "context length exceeded"}}, None, "provider_error"),
        ("not an object", None, "no_content"),
    ],
)
def test_a_reply_is_read_by_its_whole_shape(reply, content, kind):
    shape = read_reply(reply)
    assert shape.content == content
    assert (shape.failure[0] if shape.failure else None) == kind


def test_reasoning_is_kept_apart_and_transient_errors_are_told_apart():
    shape = read_reply(body({"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "draft 1"}]}, {"type": "text", "text": "5"}],
                             "reasoning_content": "more "}))  # fmt: skip
    assert (shape.content, shape.reasoning, shape.model, shape.usage, shape.finish_reason) == ("5", "more draft 1", "m-2026", USAGE, "stop")
    transient = {text: read_reply(json.loads(text)).failure[2] for text in (
        '{"error": {"code": 429, "message": "x"}}', '{"error": {"code": "503"}}', '{"error": {"type": "overloaded_error"}}',
        '{"error": {"status": "UNAVAILABLE", "message": "try again later"}}', '{"error": {"code": 400, "message": "bad request"}}',
        '{"error": {"code": 401, "message": "invalid key"}}')}  # fmt: skip
    assert list(transient.values()) == [True, True, True, True, False, False]
    refused = read_reply(body({"role": "assistant", "content": None, "refusal": "I can't assist with that."})).failure
    assert refused == ("refusal", "the judge refused \"I can't assist with that.\"", False)


def test_replies_without_a_verdict_are_judge_failed_named_and_never_cached(config):
    with ChatServer(digit_reply) as server:
        for marker, kind in (("item-t", "truncated"), ("item-r", "refusal"), ("item-c", "tool_call")):
            server.add_fault(marker, kind, times=5)
        server.add_fault("item-e", "error_in_200", times=1)  # transient, inside a 200: asked again
        server.add_fault("item-p", "parts", times=5)
        server.add_fault("item-f", "reasoning_field", times=5)
        client = judge.Judge(config(server))
        names = ["item-t", "item-r", "item-c", "item-e", "item-p", "item-f"]
        replies = client.complete_many([request(name) for name in names], validate=lambda text: None if first_digit(text) else "no digit")
        calls = len(server.requests)
    by_name = dict(zip(names, replies))
    assert by_name["item-t"].error.startswith("truncated: the reply was cut at the token limit (finish_reason 'length'; 0 characters of content")
    assert by_name["item-t"].content is None and by_name["item-t"].kind == "truncated" and "Score: 2" in by_name["item-t"].reasoning_field
    assert by_name["item-r"].error == "refusal: the judge refused \"I'm sorry, I cannot help with that request.\""
    assert by_name["item-c"].error == "tool_call: the judge called tool(s) ['submit_score'] instead of replying"
    assert by_name["item-e"].ok and by_name["item-e"].attempts == 2
    assert by_name["item-p"].content == "Score: 2" and by_name["item-p"].ok  # the text part, not the thinking part's decoy 1
    assert by_name["item-f"].content == "Score: 2" and by_name["item-f"].reasoning_field.startswith("Let me think")
    assert calls == 7  # no reply without a verdict is asked again; the error inside a 200 once
    provenance = client.provenance()
    assert provenance["errors"] == {"truncated": 1, "refusal": 1, "tool_call": 1} and provenance["failed_calls"] == 3
    assert provenance["usage_reported"] == {"prompt_tokens": 6, "completion_tokens": 15, "total_tokens": 21, "completion_tokens_details.reasoning_tokens": 10}
    assert cached_keys(client.config.cache_path) == 3  # item-e, item-p, item-f
    with sqlite3.connect(client.config.cache_path) as db:
        assert {model for (model,) in db.execute("SELECT model FROM replies")} == {REPORTED_MODEL}
        assert [json.loads(usage) for (usage,) in db.execute("SELECT usage FROM replies")] == [{"completion_tokens": 1, "prompt_tokens": 1, "total_tokens": 2}] * 3
    again = judge.Judge(client.config).complete(request("item-p"))
    assert again.cached and again.reported_model == REPORTED_MODEL and again.usage == {"completion_tokens": 1, "prompt_tokens": 1, "total_tokens": 2}


def test_a_cache_made_before_the_usage_column_gains_it_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, request TEXT, content TEXT, model TEXT, created REAL)")
        db.execute("INSERT INTO replies VALUES ('k', '{}', 'Score: 3', 'm', 0)")
    cache = judge.JudgeCache(path)
    assert cache.get_many(["k"], usage=True) == {"k": ("Score: 3", "m", None)}
    cache.put_many([("k2", {}, "Score: 4", "m", False, {"total_tokens": 5})])
    assert cache.get_many(["k", "k2"]) == {"k": ("Score: 3", "m"), "k2": ("Score: 4", "m")}
    assert cache.get_many(["k2"], usage=True) == {"k2": ("Score: 4", "m", {"total_tokens": 5})}


def test_a_transient_error_is_retried_whatever_the_status_that_carried_it(config):
    with ChatServer(digit_reply) as server:
        server.add_fault("item-400", "error_in_400", times=1)  # "overloaded" inside an HTTP 400: asked again
        server.add_fault("item-200", "error_in_200", times=5)  # transient inside a 200 every time: gives up, named
        server.add_fault("item-401", "401", times=1)  # a real client error: not asked again
        client = judge.Judge(config(server))
        ok, gave_up, refused = client.complete_many([request("item-400"), request("item-200"), request("item-401")])
    assert ok.ok and ok.attempts == 2 and ok.content == "Score: 2"
    assert gave_up.error.startswith("provider_error: the reply carries an error object at its top level (code 429, ")
    assert gave_up.error.endswith("(gave up after 3 attempts)") and gave_up.attempts == 3
    assert refused.error.startswith("HTTP 401:") and refused.attempts == 1
    assert len(server.requests) == 6 and client.provenance()["errors"] == {"provider_error": 1, "HTTP 401": 1}
