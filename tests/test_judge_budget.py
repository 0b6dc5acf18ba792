"""Issue 25 item 4: what judging costs, said before inference, and a judge-call budget that stops judging cleanly
(audio_bench_core/judge_budget.py, lmms_eval_tasks/judge_estimate.py, the budget check in the judge client)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from audio_bench_core import judge, judge_budget, run_status
from tests.chat_server import ChatServer, scripted_replies
from tests.test_judge import KEY, digit_reply
from tests.test_judge_cli import ROWS, judge_env
from tests.conftest import ROOT
from tests.test_cli_end_to_end import run_cli


@pytest.fixture(autouse=True)
def fresh_budget():
    judge_budget.reset_process_budget()
    run_status.clear()
    yield
    judge_budget.reset_process_budget()
    run_status.clear()


def test_approx_tokens_counts_wide_characters_one_each_and_others_by_four():
    assert judge_budget.approx_tokens("天地玄黄") == 4
    assert judge_budget.approx_tokens("hello world") == 3  # 10 non-space characters / 4, rounded up
    assert judge_budget.approx_tokens("天地 abcd，e") == 3 + 2  # 天, 地 and the full-width comma; "abcde": 5 / 4 -> 2
    assert judge_budget.approx_tokens(" \n\t") == 0


def test_an_estimate_sums_calls_prompt_tokens_and_completion_tokens_and_prices_it():
    requests = [((("system", "be terse"), ("user", "天地玄黄")), 10), ((("user", "hello world"),), 20)]
    # prompt: (2 + 4) + (4 + 4) + (3 + 4) = 21 tokens (each message: its tokens + 4 for the chat format)
    estimate = judge_budget.estimate_requests(requests, prices=(2.0, 8.0))
    assert estimate == judge_budget.JudgeEstimate(calls=2, prompt_tokens=21, completion_tokens=30, unbounded=0, cost=(21 * 2.0 + 30 * 8.0) / 1e6)
    assert "2 calls, ~21 prompt tokens, <= 30 completion tokens, cost ~0.0003 at" in estimate.line("t")
    unbounded = judge_budget.estimate_requests([*requests, ((("user", "x"),), None)])
    assert (unbounded.calls, unbounded.prompt_tokens, unbounded.completion_tokens, unbounded.unbounded, unbounded.cost) == (3, 26, 30 + 256, 1, None)
    assert "3 calls, ~26 prompt tokens, ~286 completion tokens (1 requests without a token limit assumed 256 each)" in unbounded.line("t")


def test_prices_are_read_from_both_variables_or_refused_by_name(monkeypatch):
    assert judge_budget.prices_from_env() is None
    monkeypatch.setenv("AUDIO_JUDGE_PRICE_IN", "0.27")
    assert judge_budget.prices_from_env() is None  # one price alone gives no cost
    monkeypatch.setenv("AUDIO_JUDGE_PRICE_OUT", "1.10")
    assert judge_budget.prices_from_env() == (0.27, 1.10)
    monkeypatch.setenv("AUDIO_JUDGE_PRICE_OUT", "cheap")
    with pytest.raises(ValueError, match="AUDIO_JUDGE_PRICE_OUT='cheap' is not a number"):
        judge_budget.prices_from_env()


@pytest.fixture
def judge_config(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)
    monkeypatch.setenv("AUDIO_JUDGE_API_KEY_VAR", "TEST_JUDGE_KEY")
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / "cache.sqlite3"))
    monkeypatch.setenv("AUDIO_JUDGE_RETRY_WAIT", "0.01")
    monkeypatch.setenv("AUDIO_JUDGE_CONCURRENCY", "1")  # one call at a time: which items the budget reaches is the order given

    def point_at(server: ChatServer, max_calls: int | None) -> judge.JudgeConfig:
        monkeypatch.setenv("AUDIO_JUDGE_BASE_URL", server.url)
        if max_calls is not None:
            monkeypatch.setenv("AUDIO_JUDGE_MAX_CALLS", str(max_calls))
        return judge.JudgeConfig.from_env()

    return point_at


def _requests(n: int) -> list[judge.JudgeRequest]:
    return [judge.JudgeRequest.of([{"role": "user", "content": " ".join(["w"] * (i + 1))}], 8) for i in range(n)]


def test_the_budget_stops_calls_exactly_at_the_limit_across_passes_and_cache_hits_take_none(judge_config, tmp_path):
    with ChatServer(digit_reply) as server:
        config = judge_config(server, max_calls=3)
        first = judge.Judge(config)
        replies = first.complete_many(_requests(5))
        assert len(server.requests) == 3
        assert [r.ok for r in replies] == [True, True, True, False, False]
        assert {r.kind for r in replies[3:]} == {judge_budget.BUDGET}
        assert replies[3].error == "not judged: the judge-call budget AUDIO_JUDGE_MAX_CALLS=3 was reached"
        provenance = first.provenance()
        assert (provenance["api_calls"], provenance["judge_skipped_budget"], provenance["max_calls"]) == (3, 2, 3)
        assert provenance["circuit_breaker"]["tripped"] is None  # a spent budget is not an endpoint failure
        # a second pass of the same process: the budget is shared; the three cached replies cost no call
        second = judge.Judge(config)
        again = second.complete_many(_requests(5))
        assert len(server.requests) == 3 and [r.cached for r in again[:3]] == [True, True, True]
        assert second.provenance()["judge_skipped_budget"] == 2
    with sqlite3.connect(tmp_path / "cache.sqlite3") as db:  # the unjudged items were not cached
        assert db.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 3


def test_a_pass_the_budget_cut_marks_its_task_incomplete_and_counts_the_skipped(judge_config):
    items = [{"id": f"d{i}"} for i in range(4)]
    with ChatServer(digit_reply) as server:
        config = judge_config(server, max_calls=2)
        result = judge.judge_task("t_budget", items, lambda item: {"dim": _requests(4)[int(item["id"][1])]}, lambda reply: float(reply.split()[-1]), {}, config)
    assert result.dimensions["dim"].values == (2.0, 3.0) and len(result.dimensions["dim"].failed) == 2
    assert result.count("judge_skipped_budget") == 2
    status = run_status.status_of("t_budget")
    assert status["status"] == run_status.INCOMPLETE
    assert status["reasons"] == ["2 of 4 judge requests not made: AUDIO_JUDGE_MAX_CALLS=2 was reached; the judged figures cover the judged items only (judge_skipped_budget)"]


def test_without_a_limit_nothing_is_skipped(judge_config):
    with ChatServer(digit_reply) as server:
        config = judge_config(server, max_calls=None)
        replies = judge.Judge(config).complete_many(_requests(5))
    assert all(r.ok for r in replies) and len(server.requests) == 5


def test_a_malformed_limit_is_named(monkeypatch):
    monkeypatch.setenv("AUDIO_JUDGE_MAX_CALLS", "-1")
    with pytest.raises(ValueError, match="AUDIO_JUDGE_MAX_CALLS='-1' must be >= 0"):
        judge.JudgeConfig.from_env()


def _task_dict(tasks: str) -> dict:
    from lmms_eval.tasks import TaskManager, get_task_dict

    from lmms_eval_tasks import plugin

    plugin.add_tasks_dir_to_task_index()
    return get_task_dict(tasks.split(","), TaskManager("ERROR"))


@pytest.mark.parametrize("task_name, metric, build", [("mcga_s2tt", "llm_b", "_s2tt_requests"), ("mmac_content", "coverage", "_requests")])
def test_the_estimate_sends_the_prompts_a_run_builds_for_the_assumed_answer(task_name, metric, build, offline_env, monkeypatch):
    """The estimate's requests are the ones the judge pass builds from process_results' item when the answer is the
    assumed one (MCGA S2TT: the reference translation; MMAC: a caption of ESTIMATE_CAPTION_WORDS words)."""
    import importlib

    from lmms_eval_tasks import judge_estimate

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
    [task] = [t for name, t in judge_estimate._leaf_tasks(_task_dict(task_name)) if name == task_name]
    hooks = importlib.import_module(f"lmms_eval_tasks.{task_name.split('_')[0]}.hooks")
    estimate_requests = getattr(hooks, f"{task_name.split('_')[0]}_judge_requests_for_estimate")
    docs = list(task.eval_docs)
    assert docs
    for doc in docs:
        answer = task.doc_to_target(doc) if task_name.startswith("mcga") else " ".join(["word"] * hooks.ESTIMATE_CAPTION_WORDS)
        item = task.process_results(doc, [answer])[metric]
        assert estimate_requests(doc) == list(getattr(hooks, build)(item).values())
    estimate = judge_estimate.task_estimate(task_name, docs, limit=2)
    per_doc = len(estimate_requests(docs[0])) + len(estimate_requests(docs[1]))
    assert estimate.calls == per_doc and estimate.prompt_tokens == sum(
        judge_budget.approx_tokens(c) + judge_budget.MESSAGE_OVERHEAD_TOKENS for doc in docs[:2] for r in estimate_requests(doc) for _, c in r.messages
    )


def test_the_estimate_without_running_a_model(offline_env):
    code, out = run_cli([sys.executable, "-m", "lmms_eval_tasks.judge_estimate", "--tasks", "mcga_s2tt,mcga_asr,parsa_vazn", "--limit", "2"], offline_env, cwd=ROOT)
    assert code == 0, out
    lines = [line for line in out.splitlines() if line.startswith("judge estimate")]
    assert len(lines) == 2 and lines[0].startswith("judge estimate mcga_s2tt: 6 calls, ~")  # 2 docs x 3 dimensions; ASR, PARSA: no judge
    assert "<= 60 completion tokens" in lines[0]  # the official S2TT prompts' 10-token limit
    assert lines[1].startswith("judge estimate: 6 judge calls in all")


@pytest.mark.cli
def test_a_budget_through_the_cli_stops_at_the_limit_writes_everything_and_exits_incomplete(lmms_eval_cli, offline_env, tmp_path):
    with ChatServer(scripted_replies(ROWS / "judge_replies.json")) as server:
        env = {**judge_env(offline_env, server, tmp_path / "judge.sqlite3"), "AUDIO_JUDGE_MAX_CALLS": "3", "AUDIO_JUDGE_CONCURRENCY": "1"}
        out = tmp_path / "out"
        command = [lmms_eval_cli, "--tasks", "mcga_s2tt,mcga_sec", "--model", "replay", "--model_args", f"predictions={ROWS}",
                   "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG"]  # fmt: skip
        code, log = run_cli(command, env, cwd=tmp_path)
        sent = len(server.requests)
    assert code == 3, log[-3000:]
    assert sent == 3  # no call past the budget
    # the estimate, before inference: 3 documents x 3 dimensions per task
    estimate_at = log.index("judge estimate mcga_s2tt: 9 calls")
    assert "judge estimate mcga_sec: 9 calls" in log
    assert "judge estimate: 18 judge calls in all before retries and cache hits; AUDIO_JUDGE_MAX_CALLS=3 allows 3 of them" in log
    assert estimate_at < log.index("generate_until")
    [results_file] = sorted(out.rglob("*_results.json"))
    results = json.loads(results_file.read_text(encoding="utf-8"))
    r = results["results"]
    skipped = r["mcga_s2tt"]["judge_skipped_budget,none"] + r["mcga_sec"]["judge_skipped_budget,none"]
    assert skipped == 15  # 18 planned, 3 made
    statuses = results["lmms_eval_audio_plugin"]["task_status"]
    assert {record["status"] for record in statuses.values()} == {"incomplete"} and set(statuses) <= {"mcga_s2tt", "mcga_sec"}
    for task in statuses:
        provenance = r[task]["judge,none"]
        assert provenance["estimate"]["calls"] == 9 and provenance["max_calls"] == 3
    assert sorted(p.name.split("_samples_")[1] for p in out.rglob("*_samples_*.jsonl")) == ["mcga_s2tt.jsonl", "mcga_sec.jsonl"]
    assert "the run is incomplete (exit 3)" in log and "lmms-eval run incomplete: " in log
