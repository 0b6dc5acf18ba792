"""A changed judge is noticed (issue 25 item 3): the audit of cached verdicts, re-judging, two judges in one figure, the
judge named in the printed table and the report, and figures off their documented scale flagged.

The judge is a real HTTP server on 127.0.0.1 (tests/chat_server.py) whose reported model (``server.model``) and
scores are switched between passes, as an endpoint that puts another model behind the same name and URL does.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from audio_bench_core import judge
from audio_bench_core.judge_identity import AuditSettings, audit_sample, describe, verdict
from tests.chat_server import REPORTED_MODEL, ChatServer, scripted_replies
from tests.conftest import FIXTURES
from tests.test_judge import first_digit

KEY = "fake-judge-key-for-audit-tests-9012"  # not a real key
OTHER_MODEL = "deepseek-chat-test-20270101"
ROWS = FIXTURES / "official_runner_rows"
#: Judge A's score per item (item-0 ... item-7), read as the reply's first digit.
SCORES_A = [1, 2, 3, 4, 5, 1, 2, 3]
#: Judge B gives other scores for item-1, item-4 and item-6 (3 of 8 differ): agreement 5/8 = 0.625.
SCORES_B = [1, 5, 3, 4, 2, 1, 4, 3]
ITEMS = [{"id": f"doc{i}", "text": f"item-{i}"} for i in range(8)]


class TwoJudges:
    """Reply function of a server that answers as judge A, or as judge B once ``server.model`` is :data:`OTHER_MODEL`."""

    def __init__(self) -> None:
        self.server: ChatServer | None = None

    def __call__(self, messages: list[dict]) -> str:
        index = int(messages[-1]["content"].split("-")[1])
        scores = SCORES_B if self.server is not None and self.server.model == OTHER_MODEL else SCORES_A
        return f"Score: {scores[index]}"


@pytest.fixture
def served(monkeypatch):
    """A started server answering as judge A, and ``server.model`` to switch it to judge B."""
    monkeypatch.delenv("AUDIO_JUDGE_AUDIT", raising=False)
    monkeypatch.delenv("AUDIO_JUDGE_REFRESH", raising=False)
    reply = TwoJudges()
    with ChatServer(reply) as server:
        reply.server = server
        yield server


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_AUDIT_KEY", KEY)

    def run_pass(server: ChatServer, items=ITEMS) -> judge.JudgedTask:
        judge._PASSES.clear()
        config = judge.JudgeConfig(base_url=server.url, api_key_var="TEST_AUDIT_KEY", timeout_s=2, max_attempts=2, retry_wait_s=0.01,
                                   concurrency=4, cache_path=tmp_path / "cache.sqlite3")  # fmt: skip
        result = judge.judge_task("t", items, lambda item: {"d": judge.JudgeRequest.of([{"role": "user", "content": item["text"]}], 10)}, first_digit, {}, config)
        assert isinstance(result, judge.JudgedTask), result
        return result

    return run_pass


def cached_models(path) -> dict:
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT model, count(*) FROM replies GROUP BY model").fetchall())


def test_a_changed_judge_behind_the_same_name_is_audited_warned_and_recorded(served, run, monkeypatch, tmp_path, log_lines):
    first = run(served)
    assert len(served.requests) == 8 and first.provenance["audit"]["skipped"] == "no verdict was served from the cache"
    assert first.provenance["judge_models"] == {REPORTED_MODEL: 8} and first.provenance["audit_calls"] == 0
    served.model = OTHER_MODEL
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "8")  # every cached verdict, so the agreement is the hand-counted 5 of 8
    second = run(served)
    record = second.provenance["audit"]
    assert len(served.requests) == 16 and second.provenance["audit_calls"] == 8 and second.provenance["api_calls"] == 0
    assert (record["audited"], record["compared"], record["agreed"], record["agreement"]) == (8, 8, 5, 0.625)
    assert record["cached_models"] == {REPORTED_MODEL: 8} and record["fresh_models"] == {OTHER_MODEL: 8}
    assert record["model_changed"] is True and record["changed"] is True and record["failed"] == 0
    assert sorted(record["differences"]) == [
        f"d doc1: cached 2 ({REPORTED_MODEL}), fresh 5 ({OTHER_MODEL})",
        f"d doc4: cached 5 ({REPORTED_MODEL}), fresh 2 ({OTHER_MODEL})",
        f"d doc6: cached 2 ({REPORTED_MODEL}), fresh 4 ({OTHER_MODEL})",
    ]
    # The figures keep the cached verdicts (judge A: mean 21/8), and the cached rows are not replaced.
    assert second.dimensions["d"].values == tuple(map(float, SCORES_A)) and second.dimensions["d"].mean == pytest.approx(21 / 8)
    assert cached_models(tmp_path / "cache.sqlite3") == {REPORTED_MODEL: 8}
    assert second.provenance["judge_models"] == {REPORTED_MODEL: 8} and second.provenance["judge_models_mixed"] is None
    [warning] = [line for line in log_lines if "the judge changed" in line]
    assert f"cached by {REPORTED_MODEL} (8), now answered by {OTHER_MODEL} (8); 5 of 8 verdicts agree (62%)" in warning
    assert "set AUDIO_JUDGE_REFRESH=1 to re-judge every item" in warning
    assert describe(second.provenance) == f"{REPORTED_MODEL} (8) [configured deepseek-chat]; audit: JUDGE CHANGED, 5 of 8 agree, now {OTHER_MODEL}"


def test_an_unchanged_judge_passes_the_default_audit_of_5(served, run, log_lines):
    run(served)
    again = run(served)
    record = again.provenance["audit"]
    assert (record["size"], record["audited"], record["eligible"], record["agreed"], record["agreement"]) == (5, 5, 8, 5, 1.0)
    assert record["changed"] is False and record["model_changed"] is False and record["differences"] == []
    assert len(served.requests) == 8 + 5 and again.provenance["audit_calls"] == 5
    assert not [line for line in log_lines if "judge changed" in line or "judge models" in line]


def test_the_audit_sample_is_deterministic_and_independent_of_item_order(served, run, monkeypatch, tmp_path):
    run(served)
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "3")
    run(served)
    asked = sorted(body["messages"][-1]["content"] for body in served.requests[8:])
    run(served, items=ITEMS[::-1])
    assert sorted(body["messages"][-1]["content"] for body in served.requests[11:]) == asked and len(asked) == 3
    # the three are those with the smallest cache keys (sha256 of the request)
    client = judge.Judge(judge.JudgeConfig(base_url=served.url, api_key_var="TEST_AUDIT_KEY", cache_path=tmp_path / "keys.sqlite3"))
    keys = {client.cache_key(client.request_params(judge.JudgeRequest.of([{"role": "user", "content": i["text"]}], 10))): i["text"] for i in ITEMS}
    assert asked == sorted(keys[key] for key in sorted(keys)[:3])


def test_audit_sample_picks_one_request_per_cached_key():
    cached = judge.JudgeReply(content="1", cached=True)
    fresh = judge.JudgeReply(content="1")
    failed = judge.JudgeReply(content=None, error="x", cached=False)
    assert audit_sample(["c", "a", "a", "b", "d"], [cached, cached, cached, fresh, failed], 5) == [1, 0]
    assert audit_sample(["c", "a", "b"], [cached, cached, cached], 2) == [1, 2]


def test_audit_0_makes_no_audit_call(served, run, monkeypatch):
    run(served)
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "0")
    served.model = OTHER_MODEL
    again = run(served)
    assert len(served.requests) == 8 and again.provenance["audit_calls"] == 0
    assert again.provenance["audit"]["skipped"] == "AUDIO_JUDGE_AUDIT=0" and again.provenance["audit"]["audited"] == 0


def test_refresh_asks_every_item_again_and_replaces_the_cached_rows(served, run, monkeypatch, tmp_path):
    run(served)
    served.model = OTHER_MODEL
    monkeypatch.setenv("AUDIO_JUDGE_REFRESH", "1")
    refreshed = run(served)
    assert len(served.requests) == 16 and refreshed.provenance["api_calls"] == 8 and refreshed.provenance["cache_hits"] == 0
    assert refreshed.provenance["refresh"] is True and refreshed.provenance["audit"]["skipped"] == "AUDIO_JUDGE_REFRESH=1: every item was asked again"
    assert refreshed.dimensions["d"].values == tuple(map(float, SCORES_B)) and refreshed.provenance["judge_models"] == {OTHER_MODEL: 8}
    assert cached_models(tmp_path / "cache.sqlite3") == {OTHER_MODEL: 8}
    monkeypatch.setenv("AUDIO_JUDGE_REFRESH", "0")
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "0")
    after = run(served)  # the replaced rows are served
    assert len(served.requests) == 16 and after.dimensions["d"].values == tuple(map(float, SCORES_B)) and after.provenance["cache_hits"] == 8


def test_verdicts_of_two_judges_in_one_figure_are_counted_per_model_and_warned(served, run, monkeypatch, log_lines):
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "0")
    run(served, items=ITEMS[:3])  # judge A judges 3 items
    served.model = OTHER_MODEL
    mixed = run(served)  # 3 from the cache (A), 5 fresh (B)
    provenance = mixed.provenance
    assert provenance["judge_models"] == {REPORTED_MODEL: 3, OTHER_MODEL: 5}
    assert provenance["judge_models_by_source"] == {"cached": {REPORTED_MODEL: 3}, "fresh": {OTHER_MODEL: 5}}
    assert provenance["judge_models_mixed"].startswith(f"the verdicts behind these figures come from 2 reported judge models ({OTHER_MODEL} 5, {REPORTED_MODEL} 3;")
    assert mixed.dimensions["d"].values == (1.0, 2.0, 3.0, 4.0, 2.0, 1.0, 4.0, 3.0)  # A's for items 0-2, B's for the rest
    assert any("2 reported judge models" in line for line in log_lines)
    assert "MIXED: 2 judges in these figures" in describe(provenance)


def test_a_failed_audit_call_is_counted_apart_not_as_a_disagreement(served, run, monkeypatch):
    run(served)
    monkeypatch.setenv("AUDIO_JUDGE_AUDIT", "8")
    served.add_fault("item-2", "503", times=10)
    again = run(served)
    record = again.provenance["audit"]
    assert (record["audited"], record["compared"], record["agreed"], record["failed"], record["agreement"]) == (8, 7, 7, 1, 1.0)
    assert record["failed_items"][0].startswith("d doc2: InternalServerError") and record["changed"] is False
    assert again.provenance["audit_calls"] == 7 + 2  # item-2 tried twice (AUDIO_JUDGE_MAX_ATTEMPTS 2)


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [("AUDIT", "-1", "AUDIO_JUDGE_AUDIT='-1' must be >= 0"), ("AUDIT", "five", "AUDIO_JUDGE_AUDIT='five' is not a valid int"),
     ("REFRESH", "maybe", "AUDIO_JUDGE_REFRESH='maybe' must be 1 or 0")],
)  # fmt: skip
def test_bad_audit_settings_are_not_computed_with_the_reason(monkeypatch, name, value, reason):
    monkeypatch.setenv(f"AUDIO_JUDGE_{name}", value)
    with pytest.raises(ValueError, match=reason.replace("(", r"\(")):
        AuditSettings.from_env()
    monkeypatch.setenv("TEST_AUDIT_KEY", KEY)
    judge._PASSES.clear()
    result = judge.judge_task("t", [{"id": 1}], lambda item: {"d": judge.JudgeRequest.of([{"role": "user", "content": "x"}])}, float, {},
                              judge.JudgeConfig(api_key_var="TEST_AUDIT_KEY"))  # fmt: skip
    assert isinstance(result, str) and result.startswith(f"not computed: {reason}")


def test_verdicts_are_compared_without_the_judges_words():
    from mmac.judging import Judgment

    assert verdict(Judgment(True, 2, "matches")) == verdict(Judgment(True, 2, "the same, said otherwise"))
    assert verdict(Judgment(True, 2, "x")) != verdict(Judgment(True, 1, "x")) and verdict(Judgment(False, None)) != verdict(Judgment(True, 0))
    assert verdict(3.0) == 3.0


# ------------------------------------------------------------------------- off-scale figures (hand-checked ranges)
@pytest.mark.parametrize(
    ("task", "metric", "value", "flagged"),
    [
        ("mcga_sec", "llm_c", 100.0, False), ("mcga_sec", "llm_c", 100.5, True), ("mcga_sec", "llm_c", -0.1, True), ("mcga_sec", "llm_c", 0.0, False),
        ("mcga_sec", "sec_p", 2.0, False), ("mcga_sec", "sec_p", 2.01, True),  # SEC-P 0-2
        ("mcga_sec", "sec_g", 3.0, False), ("mcga_sec", "sec_g", 3.5, True),  # SEC-G 0-3
        ("mcga_sec", "sec_s", 5.0, False), ("mcga_sec", "sec_s", 7.0, True), ("mcga_sec", "sec_s_strict", 5.5, True),  # SEC-S 0-5
        ("mcga_s2tt", "llm_b", 20.0, False), ("mcga_s2tt", "llm_b", 19.0, True), ("mcga_s2tt", "llm_bf", 140.0, True),  # 1-5 ×20
        ("mcga_asr", "cer_official", 143.1, False),  # CER has no upper bound (insertions)
        ("mcga_sqa", "f1_official", 100.0, False), ("mmac_content", "accuracy", 100.0, False), ("mmac_content", "coverage", 101.0, True),
        ("mmac", "precision", -1.0, True), ("parsa_vazn", "accuracy", 1.5, False),  # PARSA declares no range
    ],
)  # fmt: skip
def test_a_figure_outside_its_documented_range_is_flagged(task, metric, value, flagged):
    from audio_bench_report.tables import off_range

    assert (off_range(task, metric, value) is not None) is flagged


def test_the_printed_table_flags_an_off_scale_figure_and_names_the_judge():
    from lmms_eval_tasks.printed_table import plugin_table

    provenance = {"judge_model_requested": "deepseek-chat", "judge_models": {OTHER_MODEL: 9}, "audit": {"audited": 0, "skipped": "AUDIO_JUDGE_AUDIT=0"}}
    table = plugin_table({"results": {"mcga_sec": {"llm_c,none": 120.0, "llm_c_strict,none": 55.0, "cer_sentences,none": 52.4, "judge,none": provenance}}})
    row = next(line for line in table.splitlines() if "llm_c" in line)
    assert "|120.0000 !|55.0000|" in row  # the official value as computed, flagged; the strict one in range
    assert "! off scale: mcga_sec llm_c 120 is outside its documented range 0-100" in table
    assert f"Judge [mcga_sec]: {OTHER_MODEL} (9) [configured deepseek-chat]" in table


def test_the_report_marks_an_off_scale_figure_r_and_keeps_its_value(tmp_path):
    from audio_bench_report.runs import TaskResult, Run
    from audio_bench_report.tables import Context, metric_cell

    result = TaskResult("mcga_sec", {"llm_c": 270.0, "sec_s": 5.0}, 3, 3, tmp_path / "r.json")
    run = Run("r", "replay", "", tmp_path, None, {"mcga_sec": result})
    cell = metric_cell(run, "mcga_sec", "llm_c", {}, Context(), judged=True)
    assert cell.value == 270.0 and "R" in cell.marks
    assert any(note.startswith("mcga_sec llm_c 270 is outside its documented range 0-100") for note in cell.notes)
    assert "R" not in metric_cell(run, "mcga_sec", "sec_s", {}, Context(), judged=True).marks


# ------------------------------------------------------------------------- through the real CLI
@pytest.mark.cli
def test_a_changed_judge_behind_the_same_name_and_cache_through_the_cli(lmms_eval_cli, offline_env, tmp_path):
    # Judge A (the scripted official replies) fills the cache; then the server reports another model and scores every SEC
    # call [9/5] (judge B). The cached verdicts (P 2,0,1; G 3,2,0; S 4,2,0: tests/fixtures/official_runner_rows) hold no 9,
    # so the audit's agreement is 0 of 5. Re-judging puts B's 9s into the figures: LLM-C (9+9+9)x10 = 270, flagged.
    from audio_bench_report.health import build as health
    from audio_bench_report.runs import read_runs
    from audio_bench_report.tables import Context
    from mcga.report_layout import judged_table
    from tests.test_cli_end_to_end import lmms_eval
    from tests.test_judge_cli import EXPECTED, KEY as CLI_KEY, judge_env

    scripted = scripted_replies(ROWS / "judge_replies.json")
    state = {}

    def reply(messages):
        return "最终得分：[9/5]" if state["server"].model == OTHER_MODEL else scripted(messages)

    cache = tmp_path / "judge.sqlite3"
    with ChatServer(reply) as server:
        state["server"] = server
        env = judge_env(offline_env, server, cache)

        def scored(name, **extra):
            return lmms_eval(lmms_eval_cli, {**env, **extra}, tmp_path / name, "mcga_sec", "replay", f"predictions={ROWS}")

        first, log1 = scored("first")
        assert len(server.requests) == 9 and first["results"]["mcga_sec"]["llm_c,none"] == pytest.approx(EXPECTED["sec_llm_c"], abs=1e-9)
        assert f"Judge [mcga_sec]: {REPORTED_MODEL} (9) [configured deepseek-chat]" in log1

        server.model = OTHER_MODEL
        second, log2 = scored("second")
        sec = second["results"]["mcga_sec"]
        provenance = sec["judge,none"]
        assert len(server.requests) == 9 + 5 and provenance["audit_calls"] == 5 and provenance["api_calls"] == 0
        record = provenance["audit"]
        assert (record["audited"], record["agreed"], record["agreement"], record["changed"]) == (5, 0, 0.0, True)
        assert record["cached_models"] == {REPORTED_MODEL: 5} and record["fresh_models"] == {OTHER_MODEL: 5}
        assert sec["llm_c,none"] == pytest.approx(EXPECTED["sec_llm_c"], abs=1e-9)  # the cached verdicts, as before
        assert "judge mcga_sec: the judge changed behind the same settings (model 'deepseek-chat'" in log2
        assert f"now answered by {OTHER_MODEL} (5); 0 of 5 verdicts agree (0%)" in log2
        assert f"audit: JUDGE CHANGED, 0 of 5 agree, now {OTHER_MODEL}" in log2  # the printed table's judge line
        with sqlite3.connect(cache) as db:  # the audit replaced no cached row
            assert dict(db.execute("SELECT model, count(*) FROM replies GROUP BY model").fetchall()) == {REPORTED_MODEL: 9}
        [run] = read_runs(tmp_path / "second")
        [row] = [row for row in health([run], Context()).tables[0].rows if row.detail == "mcga_sec"]
        assert row.cells["judge_model"].text == describe(provenance) and "JUDGE CHANGED" in row.cells["judge_model"].text

        off, _ = scored("off", AUDIO_JUDGE_AUDIT="0")
        assert len(server.requests) == 14 and off["results"]["mcga_sec"]["judge,none"]["audit_calls"] == 0
        assert off["results"]["mcga_sec"]["judge,none"]["audit"]["skipped"] == "AUDIO_JUDGE_AUDIT=0"

        again, log4 = scored("refreshed", AUDIO_JUDGE_REFRESH="1")
        assert len(server.requests) == 14 + 9
    r = again["results"]["mcga_sec"]
    assert (r["sec_p,none"], r["sec_g,none"], r["sec_s,none"]) == (9.0, 9.0, 9.0) and r["llm_c,none"] == pytest.approx(270.0)  # unchanged
    assert r["llm_c_strict,none"].startswith("not computed")  # the strict reading refuses every [9/5]
    assert r["judge,none"]["judge_models"] == {OTHER_MODEL: 9} and r["judge,none"]["refresh"] is True
    assert "|270.0000 !|" in log4 and "! off scale: mcga_sec llm_c 270 is outside its documented range 0-100" in log4
    assert f"Judge [mcga_sec]: {OTHER_MODEL} (9) [configured deepseek-chat]" in log4
    with sqlite3.connect(cache) as db:
        assert dict(db.execute("SELECT model, count(*) FROM replies GROUP BY model").fetchall()) == {OTHER_MODEL: 9}
    [run] = read_runs(tmp_path / "refreshed")
    cells = judged_table([run], {"rows": []}, Context()).rows[0].cells
    assert cells["llm_c"].value == pytest.approx(270.0) and "R" in cells["llm_c"].marks
    assert "R" in cells["sec_s"].marks and "R" in cells["sec_p"].marks and "R" not in cells["cer_sentences"].marks
    for text in (log1, log2, log4):
        assert CLI_KEY not in text
