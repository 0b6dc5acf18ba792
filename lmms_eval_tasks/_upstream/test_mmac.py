"""Unit tests of the MMAC tasks (lmms_eval/tasks/mmac): hooks on a two-clip folder in the documented schema, the
judge answered by a local chat-completions server in this file. No model, no download."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import soundfile

from lmms_eval.tasks import TaskManager
from lmms_eval.tasks.mmac import utils as mmac_utils

TRANSCRIPT = "The library opens at nine every morning."
ROWS = [
    {"id": "content_01", "audio": "audio/content_01.wav", "category": "content", "targets": [{"dimension": "content", "label": TRANSCRIPT}]},
    {"id": "content_02", "audio": "audio/content_02.wav", "category": "content", "targets": [{"dimension": "content", "label": "Turn left at the bank."}]},
]
RIGHT, SILENT_ON_IT = "A man says that the library opens at nine every morning.", "A man speaks calmly in a quiet room."


@pytest.fixture
def release_folder(tmp_path, monkeypatch):
    """``mmac.jsonl`` and its clips (one second of a 440 Hz tone each), named by MMAC_DATA_DIR."""
    (tmp_path / "audio").mkdir()
    for row in ROWS:
        soundfile.write(tmp_path / row["audio"], 0.1 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000), 16000)
    (tmp_path / "mmac.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    monkeypatch.setenv("MMAC_DATA_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def judge(monkeypatch, tmp_path):
    """A chat-completions server: the right caption is mentioned with the top score (2 of 2), the other not mentioned."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["messages"][-1]["content"]
            verdict = {"mentioned": True, "score": 2, "reason": "matches"} if RIGHT in prompt else {"mentioned": False, "score": None, "reason": "not said"}
            reply = {"id": "1", "object": "chat.completion", "created": 0, "model": "judge-test", "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(verdict)}, "finish_reason": "stop"}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("AUDIO_JUDGE_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
    monkeypatch.setenv("AUDIO_JUDGE_API_KEY_VAR", "MMAC_TEST_JUDGE_KEY")
    monkeypatch.setenv("MMAC_TEST_JUDGE_KEY", "test-key")
    monkeypatch.setenv("AUDIO_JUDGE_CACHE", str(tmp_path / "judge.sqlite3"))
    yield server
    server.shutdown()


def _items(answers, metric):
    docs = list(mmac_utils.mmac_content_docs(None))
    return [mmac_utils.mmac_process_results(doc, [answer])[metric] for doc, answer in zip(docs, answers)]


def test_mmac_tasks_are_registered():
    expected = {"mmac", "mmac_content", "mmac_background", "mmac_persona", "mmac_paralinguistic", "mmac_dynamic", "mmac_implication"}
    assert not expected.difference(TaskManager("ERROR").all_tasks)


def test_every_clip_gets_the_one_caption_prompt(release_folder):
    doc = list(mmac_utils.mmac_content_docs(None))[0]
    assert mmac_utils.mmac_doc_to_text(doc) == "Describe this audio in detail."
    assert mmac_utils.mmac_doc_to_target(doc) == f"content: {TRANSCRIPT}"


def test_coverage_precision_accuracy_from_the_judge(release_folder, judge):
    # content_01 mentioned with score 2 of 2 (1.0), content_02 not mentioned: coverage 1/2, precision 1.0/1, accuracy 1.0/2.
    items = _items([RIGHT, SILENT_ON_IT], "coverage")
    assert mmac_utils.mmac_agg_coverage(items) == pytest.approx(50.0)
    assert mmac_utils.mmac_agg_precision(items) == pytest.approx(100.0)
    assert mmac_utils.mmac_agg_accuracy(items) == pytest.approx(50.0)
    assert mmac_utils.mmac_agg_judge_failed(items) == 0


def test_without_a_judge_the_judged_metrics_are_null(release_folder, monkeypatch):
    monkeypatch.setenv("AUDIO_JUDGE_API_KEY_VAR", "MMAC_TEST_NO_SUCH_KEY")
    monkeypatch.delenv("MMAC_TEST_NO_SUCH_KEY", raising=False)
    items = _items([RIGHT, SILENT_ON_IT], "accuracy")
    assert mmac_utils.mmac_agg_accuracy(items) is None  # the log's warning says "not computed: no judge configured ..."


def test_an_empty_caption_is_counted(release_folder):
    records = _items(["", RIGHT], "flagged_responses")
    assert mmac_utils.agg_flagged_responses(records) == 1 and [record["empty"] for record in records] == [True, False]


def test_the_data_folder_must_be_named_until_mmac_is_released(monkeypatch):
    monkeypatch.delenv("MMAC_DATA_DIR", raising=False)
    with pytest.raises(ValueError, match="MMAC_DATA_DIR is not set"):
        list(mmac_utils.mmac_content_docs(None))
