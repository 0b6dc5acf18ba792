"""The user's own command, failing: each ends, through the real lmms-eval CLI, on one line that says what to do.

- hub weights neither cached nor reachable (``pretrained=Qwen/Qwen2.5-Omni-7B``, an empty ``HF_HOME``, the hub
  pointed at a closed local port so no test touches the network): said before lmms-eval loads anything;
- a built-in task whose dataset is not cached, with no token and no hub: the hub, not "Token is required";
- a misspelt ``--model`` (``faster-whisper``): the close name, not the 1,700-character list of every model;
  a task name in the wrong case (``MCGA_ASR``): the right name;
- Ctrl-C while the judge works: one line (what was interrupted, what is kept and what not, what a rerun does), exit 130;
- a built-in dataset neither cached nor reachable: the local folder ``datasets`` reads offline is named.

Five short CLI runs (each stops early); about 1.5 minutes on 2 quiet cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.chat_server import ChatServer, scripted_replies
from tests.conftest import FIXTURES
from tests.test_judge_cli import judge_env
from tests.test_newcomer_walk import run

pytestmark = pytest.mark.cli
ROWS = FIXTURES / "official_runner_rows"
CLOSED_PORT = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused at once


@pytest.fixture
def no_hub_env(offline_env, tmp_path):
    """No token, an empty Hugging Face home, and a hub that refuses connections (not offline mode)."""
    env = {k: v for k, v in offline_env.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")}
    (tmp_path / "hf_home").mkdir()
    env.update(HF_HOME=str(tmp_path / "hf_home"), HF_ENDPOINT=CLOSED_PORT)
    return env


def test_hub_weights_neither_cached_nor_reachable_are_named_in_one_line_before_loading(lmms_eval_cli, no_hub_env, tmp_path):
    started = time.monotonic()
    code, log, last = run([lmms_eval_cli, "--tasks", "mcga_asr,parsa_vazn", "--model", "qwen2_5_omni", "--model_args", "pretrained=Qwen/Qwen2.5-Omni-7B"], no_hub_env, tmp_path)
    assert code == 1, log[-3000:]
    cache = tmp_path / "hf_home" / "hub"
    assert last == (f"lmms-eval run failed: model weights Qwen/Qwen2.5-Omni-7B is not in the local Hugging Face cache ({cache}) and the hub cannot be "
                    "reached (ConnectError: [Errno 111] Connection refused): point pretrained= at a local copy (a folder holding its files) "
                    "or set HF_HOME to the folder whose hub/ cache holds it")  # fmt: skip
    assert "Traceback" not in log and "Building contexts" not in log and "image processor" not in log  # said before any loading
    assert time.monotonic() - started < 120


def test_a_built_in_task_offline_says_the_hub_cannot_be_reached_not_token_required(lmms_eval_cli, no_hub_env, tmp_path):
    predictions = tmp_path / "one.jsonl"
    predictions.write_text(json.dumps({"task": "librispeech_test_clean", "id": "0", "response": "x"}) + "\n", encoding="utf-8")
    code, log, last = run([lmms_eval_cli, "--tasks", "librispeech_test_clean", "--model", "replay", "--model_args", f"predictions={predictions}", "--limit", "1"],
                          no_hub_env, tmp_path)  # fmt: skip
    assert code == 1, log[-3000:]
    assert "Token is required (`token=True`)" in log  # what datasets raised, further up
    assert last.startswith("lmms-eval run failed: dataset lmms-lab-audio/librispeech is not in the local Hugging Face cache"), last
    assert "the hub cannot be reached (ConnectError: [Errno 111] Connection refused)" in last
    assert last.endswith(f"or put a copy in the hub's layout (its README.md and parquet files, e.g. a git clone) in {tmp_path}/lmms-lab-audio/librispeech "
                         "(README: Mixing with lmms-eval's own audio benchmarks)")  # the folder datasets reads offline (cwd: tmp_path)


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--tasks", "mcga_asr", "--model", "faster-whisper"], "lmms-eval run failed: unknown --model 'faster-whisper'; did you mean faster_whisper? (all models: lmms-eval models)"),
        (["--tasks", "MCGA_ASR", "--model", "replay", "--model_args", f"predictions={ROWS}"],
         "lmms-eval run failed: ValueError: Tasks not found: MCGA_ASR; did you mean mcga_asr? (ours: lmms-eval-audio-tasks; all: lmms-eval --tasks list)"),
    ],
    ids=["model-typo", "task-case"],
)
def test_misspelt_model_or_task_case_suggests_the_right_name(lmms_eval_cli, offline_env, tmp_path, arguments, expected):
    code, log, last = run([lmms_eval_cli, *arguments], offline_env, tmp_path)
    assert code == 1 and last == expected, log[-3000:]
    assert max(len(line) for line in log.splitlines()) < 400  # no list of every model


def test_ctrl_c_while_judging_prints_one_line_with_what_is_kept(lmms_eval_cli, offline_env, tmp_path):
    cache = tmp_path / "judge.sqlite3"
    with ChatServer(scripted_replies(ROWS / "judge_replies.json"), delay_s=30) as server:  # every reply takes 30 s
        env = judge_env(offline_env, server, cache)
        command = [lmms_eval_cli, "--tasks", "mcga_s2tt", "--model", "replay", "--model_args", f"predictions={ROWS}", "--output_path", str(tmp_path / "out")]
        # SIGINT not ignored in the child even when the suite runs in the background (which ignores it for its children)
        process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
        deadline = time.monotonic() + 300
        while not server.requests and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert server.requests, "the judge never called the server"
        process.send_signal(signal.SIGINT)
        log, _ = process.communicate(timeout=120)
    lines = [line for line in log.splitlines() if line.strip()]
    assert process.returncode == 130, log[-3000:]
    assert lines[-1] == (f"lmms-eval run interrupted (Ctrl-C) while judging. Kept: judge replies so far ({cache}). Not kept: model answers "
                         "(only with --use_cache DIR are they kept). Running the same command again reuses what is kept and redoes the rest.")  # fmt: skip
    assert "Traceback" not in log and "KeyboardInterrupt" not in log
    assert cache.is_file() and not os.path.exists(tmp_path / "out")  # nothing else was written
