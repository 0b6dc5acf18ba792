"""Our judge client as lmms-eval ``llm_judge`` provider ``audio_judge`` (lmms_eval_tasks/judge_provider.py, issue 25
item 5): registered by the plugin's entry point, reached by name through ``llm_judge``'s own ``get_server``,
``Request`` and ``Response``, with our cache, reply reading and accounting behind it."""

from __future__ import annotations

import json

import pytest

from tests.chat_server import REPORTED_MODEL, ChatServer
from tests.test_judge import KEY, digit_reply


@pytest.fixture
def judge_env(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)
    monkeypatch.setenv("AUDIO_JUDGE_API_KEY_VAR", "TEST_JUDGE_KEY")
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / "cache.sqlite3"))
    monkeypatch.setenv("AUDIO_JUDGE_RETRY_WAIT", "0.01")

    def point_at(server: ChatServer) -> None:
        monkeypatch.setenv("AUDIO_JUDGE_BASE_URL", server.url)

    return point_at


def test_an_lmms_eval_caller_reaches_our_judge_by_naming_the_provider(judge_env):
    from lmms_eval.llm_judge import ProviderFactory, Request, ServerConfig, get_server

    from lmms_eval_tasks import plugin
    from lmms_eval_tasks.judge_provider import AudioJudgeProvider

    plugin.register_judge_provider()  # what the entry point runs
    assert ProviderFactory._provider_classes["audio_judge"] is AudioJudgeProvider and "openai" in ProviderFactory._provider_classes
    with ChatServer(digit_reply) as server:
        judge_env(server)
        server.add_fault("refuse me", "refusal", times=5)
        provider = get_server("audio_judge", ServerConfig(model_name="o3-mini", max_tokens=64))
        assert provider.is_available()
        ok = provider.evaluate(Request(messages=[{"role": "user", "content": "three words here"}]))
        refused = provider.evaluate(Request(messages=[{"role": "user", "content": "refuse me"}]))
        again = get_server("audio_judge", ServerConfig(model_name="o3-mini", max_tokens=64)).evaluate(Request(messages=[{"role": "user", "content": "three words here"}]))
        with pytest.raises(ValueError, match="image"):
            provider.evaluate(Request(messages=[{"role": "user", "content": "x"}], images=["a.png"]))
    assert (ok.success, ok.content, ok.model_used, ok.usage) == (True, "Score: 4", REPORTED_MODEL, {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
    assert (refused.success, refused.content) == (False, "") and refused.error_message.startswith("refusal: the judge refused")
    assert again.success and again.raw_response.cached and again.content == "Score: 4"  # the persistent cache, across providers
    assert len(server.requests) == 2  # the refusal was not asked again, the second provider's call was a cache hit
    assert server.requests[0] == {"model": "o3-mini", "messages": [{"role": "user", "content": "three words here"}], "max_completion_tokens": 64}
    provenance = provider.provenance()
    assert provenance["errors"] == {"refusal": 1} and provenance["judge_model_requested"] == "o3-mini" and provenance["api_calls"] == 2


def test_without_a_config_the_audio_judge_settings_stand_and_a_missing_key_is_said(judge_env, monkeypatch):
    from lmms_eval.llm_judge import Request

    from lmms_eval_tasks.judge_provider import AudioJudgeProvider

    with ChatServer(digit_reply) as server:
        judge_env(server)
        provider = AudioJudgeProvider()
        assert provider.judge_config.model == "deepseek-chat" and provider.config.model_name == "deepseek-chat"
        reply = provider.evaluate(Request(messages=[{"role": "user", "content": "one two"}]))
        with pytest.raises(ValueError, match="judge model 'gpt-4'"):
            provider.evaluate(Request(messages=[{"role": "user", "content": "x"}], config=__import__("lmms_eval.llm_judge", fromlist=["ServerConfig"]).ServerConfig(model_name="gpt-4")))
    assert reply.success and reply.content == "Score: 3"
    assert server.requests[0] == {"model": "deepseek-chat", "messages": [{"role": "user", "content": "one two"}], "temperature": 0.0}  # server-default limit
    monkeypatch.delenv("TEST_JUDGE_KEY")
    unconfigured = AudioJudgeProvider()
    assert not unconfigured.is_available()
    with pytest.raises(RuntimeError, match="no judge configured"):
        unconfigured.evaluate(Request(messages=[{"role": "user", "content": "x"}]))


@pytest.mark.parametrize("model", ["deepseek-chat", "gpt-5-mini"])
def test_our_judge_pass_goes_through_llm_judge_and_sends_the_bodies_the_core_sends(judge_env, monkeypatch, tmp_path, model):
    """Issue 25 item 5: our judged tasks call the judge as an lmms-eval task would (``get_server`` of the provider,
    ``Request`` in, ``Response`` out); the HTTP bodies are the ones the core :class:`Judge` sends for the same requests,
    with and without a per-request token limit, for a plain and a reasoning-family judge."""
    from lmms_eval.llm_judge import ProviderFactory

    from audio_bench_core import judge
    from lmms_eval_tasks.judge_provider import LlmJudgeClient

    monkeypatch.setenv("AUDIO_JUDGE_MODEL", model)
    created = []
    original = ProviderFactory.create_provider.__func__
    monkeypatch.setattr(ProviderFactory, "create_provider", classmethod(lambda cls, *a, **k: created.append(k.get("api_type")) or original(cls, *a, **k)))
    items = [{"id": "d1", "text": "one two"}, {"id": "d2", "text": "one two three"}]

    def requests(item):
        return {"limited": judge.JudgeRequest.of([{"role": "user", "content": f"score {item['text']}"}], 64),
                "default": judge.JudgeRequest.of([{"role": "system", "content": "be terse"}, {"role": "user", "content": item["text"]}])}

    bodies, scores = {}, {}
    for name, client in (("core", None), ("llm_judge", LlmJudgeClient)):
        monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / f"{model}-{name}.sqlite3"))  # no cache hit across the two passes
        with ChatServer(digit_reply) as server:
            judge_env(server)
            result = judge.judge_task(f"t-{model}-{name}", items, requests, lambda reply: float(reply.split()[-1]), {}, client=client)
        bodies[name] = sorted(json.dumps(body, sort_keys=True) for body in server.requests)
        scores[name] = {dimension: d.values for dimension, d in result.dimensions.items()}
    assert created == ["audio_judge"]  # the llm_judge pass made its provider through the factory, once
    assert len(bodies["core"]) == 4 and bodies["llm_judge"] == bodies["core"]
    assert scores["llm_judge"] == scores["core"] == {"limited": (4.0, 5.0), "default": (3.0, 4.0)}  # digit_reply: words of the last message + 1


def test_a_pass_uses_its_own_copy_of_the_provider_when_another_copy_registered_the_name_last(judge_env, monkeypatch):
    """The upstream export holds a copy of the provider module in each judged benchmark folder; the last one imported
    owns the ``audio_judge`` name. A judge pass of the other folder must still get a provider of its own copy (whose
    settings compare equal to the pass's, and whose replies, cache and budget are the classes it reads): on upstream
    main a second copy's provider failed every MCGA S2TT judgment ("settings differ ... in request_fields")."""
    import importlib.util
    import sys

    from lmms_eval.llm_judge import ProviderFactory

    from audio_bench_core.judge import JudgeConfig, JudgeRequest
    from lmms_eval_tasks import judge_provider

    spec = importlib.util.spec_from_file_location("judge_provider_copy", judge_provider.__file__)
    copy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "judge_provider_copy", copy)
    try:
        spec.loader.exec_module(copy)  # importing the copy registers its class under the same name
        assert ProviderFactory._provider_classes["audio_judge"] is copy.AudioJudgeProvider is not judge_provider.AudioJudgeProvider
        with ChatServer(digit_reply) as server:
            judge_env(server)
            client = judge_provider.LlmJudgeClient(JudgeConfig.from_env())
            [reply] = client.complete_many([JudgeRequest.of([{"role": "user", "content": "one two"}], 16)])
        assert type(client.server) is judge_provider.AudioJudgeProvider and reply.ok and reply.final == "Score: 3"
    finally:
        judge_provider.register_judge_provider()
    assert ProviderFactory._provider_classes["audio_judge"] is judge_provider.AudioJudgeProvider
