"""MMAC hooks in process (no CLI): request shape, per-document items, failed generations, no-judge runs, and the
group's category-macro aggregation. The judge, where used, is the local chat-completions server."""

import json

import pytest

from lmms_eval_tasks.mmac import hooks
from audio_bench_core.responses import GENERATION_FAILED_PREFIX
from mmac import data
from tests.chat_server import ChatServer

KEY = "fake-judge-key-for-hooks-4321"


@pytest.fixture
def docs():
    return {s["id"]: s for s in data.load_samples(data.SAMPLE_DATA_DIR)}


@pytest.fixture
def no_judge(monkeypatch):
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    for name in ("AUDIO_JUDGE_API_KEY_VAR", "AUDIO_JUDGE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_every_task_sends_the_one_prompt_with_the_whole_clip(docs):
    doc = docs["emotion_change_01"]
    [message] = hooks.mmac_doc_to_messages(doc, {"chat_audio": "path", "max_audio_seconds": None})
    assert message["role"] == "user"
    assert message["content"] == [{"type": "audio", "url": doc["audio_path"]}, {"type": "text", "text": "Describe this audio in detail."}]
    [audio] = hooks.mmac_doc_to_audio(doc, {"simple_audio": "array", "max_audio_seconds": None})
    assert audio["sampling_rate"] == 16000 and len(audio["array"]) == pytest.approx(8.25 * 16000, abs=160)  # not cut
    assert hooks.mmac_doc_to_text(doc) == "Describe this audio in detail."
    assert hooks.mmac_doc_to_target(docs["persona_male_adult_01"]) == "gender: male; age: adult"


def test_process_results_keeps_the_raw_response_and_the_targets(docs):
    result = hooks.mmac_process_results(docs["persona_male_adult_01"], ["  A man speaks.  "])
    item = result["accuracy"]
    assert all(result[m] is item for m in hooks.JUDGED_METRICS)
    assert item["response"] == "  A man speaks.  " and item["caption"] == "A man speaks." and item["generation_failure"] is None
    assert item["targets"] == [{"dimension": "gender", "label": "male"}, {"dimension": "age", "label": "adult"}]
    assert item["length"]["words"] == 3 and item["bucket"] == "0-49 words" and result["empty_responses"]["empty"] is False
    requests = hooks._requests(item)
    assert sorted(requests) == ["age|0-49 words", "gender|0-49 words"]
    assert hooks._requests(hooks.mmac_process_results(docs["pitch_low_01"], [""])["accuracy"]) == {}
    failed = hooks.mmac_process_results(docs["pitch_low_01"], [f"{GENERATION_FAILED_PREFIX} CUDA OOM"])
    assert hooks._requests(failed["accuracy"]) == {} and failed["failed_generations"]["failure"] == "generation raised: CUDA OOM"
    echoed = hooks.mmac_process_results(docs["pitch_low_01"], ["Describe this audio in detail."])
    assert echoed["echoed_prompts"]["echo"] is True  # the prompt echoed back: counted, still judged as a caption


def test_without_a_judge_the_judged_metrics_say_why_and_lengths_are_still_reported(docs, no_judge):
    items = [hooks.mmac_process_results(docs[i], [c])["accuracy"] for i, c in (("pitch_low_01", "A deep voice."), ("pitch_high_01", "A squeaky voice, very high."))]
    reason = "not computed: no judge configured (set DEEPSEEK_API_KEY; see docs/judge.md)"
    assert hooks.mmac_agg_accuracy(items) == reason and hooks.mmac_agg_dimensions(items) == reason and hooks.mmac_agg_judge(items) == reason
    lengths = hooks.mmac_agg_caption_length(items)
    assert lengths["mean_words"] == 4.0 and lengths["buckets"] == {"0-49 words": {"captions": 2}}
    assert lengths["buckets_note"] == f"coverage/precision per bucket {reason}"
    assert hooks.mmac_agg_category_macro([reason] * 6, [1] * 6) == f"not computed: 6 of 6 categories have no value ({reason})"


def test_group_aggregate_is_the_equal_weight_mean_of_the_categories():
    assert hooks.mmac_agg_category_macro([100.0, 50.0, 75.0, 90.0, 75.0, 50.0], [2, 2, 3, 9, 4, 2], False) == pytest.approx(440 / 6)


def test_failed_generations_are_left_out_and_counted_not_judged(docs, tmp_path, monkeypatch):
    monkeypatch.setenv("MMAC_TEST_KEY", KEY)
    monkeypatch.setenv("AUDIO_JUDGE_API_KEY_VAR", "MMAC_TEST_KEY")
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / "cache.sqlite3"))
    with ChatServer(lambda messages: json.dumps({"mentioned": True, "score": 1, "reason": "one level off"})) as server:
        monkeypatch.setenv("AUDIO_JUDGE_BASE_URL", server.url)
        items = [
            hooks.mmac_process_results(docs["pitch_low_01"], [f"{GENERATION_FAILED_PREFIX} CUDA out of memory"])["accuracy"],
            hooks.mmac_process_results(docs["pitch_high_01"], ["A fairly high voice."])["accuracy"],
        ]
        dimensions = hooks.mmac_agg_dimensions(items)
        assert len(server.requests) == 1
    assert dimensions["pitch"]["generation_failed"] == 1 and dimensions["pitch"]["valid"] == 1
    assert (dimensions["pitch"]["coverage"], dimensions["pitch"]["precision"], dimensions["pitch"]["accuracy"]) == (100.0, 50.0, 50.0)
    assert hooks.mmac_agg_accuracy(items) == 50.0
    assert hooks.mmac_agg_caption_length(items)["captions"] == 1
