#!/usr/bin/env python3
"""Run the official MCGA judged scorers, unmodified, on synthetic S2TT/SEC runner rows and print their exact numbers.

The official scorer (``eval/eval_model.py`` of github.com/yxduir/MCGA) is imported as it is (it is not part of this
repository: fetch it yourself). Its ``openai.OpenAI`` is replaced by a scripted client that answers each judge
prompt with the *final* text of the reply :func:`tests.judged_mcga.judge_reply` picks for that prompt (the text a
reasoning judge writes after its reasoning; a reply whose reasoning never closed makes the call raise, which the
official S2TT code turns into a missing score). Then the official ``run_s2tt_beauty_eval`` and ``run_sec_eval`` run
on ``RUNNER/{s2tt,sec}/synthetic_audio.jsonl`` (written by ``python -m tests.judged_mcga RUNNER_PARENT``), and the
exact means are read from the per-item files they write, with the formula their printing uses (pandas column means
of the per-item scores; S2TT items without a score are left out by ``mean``), before the one-decimal rounding of
their printed lines, which are kept beside them.

Usage (``SITE``: openai-whisper installed ``--no-deps``, for the official file's ``whisper.normalizers`` import)::

    python -m tests.judged_mcga /tmp/judged                      # writes /tmp/judged/runner/...
    PYTHONPATH=SITE:. python scripts/official_mcga_judged.py OFFICIAL_DIR /tmp/judged/runner > expected.json
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
from types import SimpleNamespace

MODEL = "synthetic_audio"


class ScriptedClient:
    """Stands in for ``openai.OpenAI``: ``chat.completions.create`` answers from :func:`tests.judged_mcga.judge_reply`."""

    def __init__(self, *args, **kwargs) -> None:
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    @staticmethod
    def _create(model, messages, **kwargs):
        from tests.judged_mcga import judge_reply

        _, final = judge_reply(messages[-1]["content"])
        if final is None:
            raise RuntimeError("the judge's reasoning never closed")
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=final))])


def main(official_dir: str, runner: str) -> dict:
    sys.path.insert(0, os.path.abspath(official_dir))
    import eval_model  # the unmodified official file
    import pandas as pd

    eval_model.openai.OpenAI = ScriptedClient  # before the SEC pool forks: its workers inherit it
    evaluator = eval_model.ModelEvaluator(MODEL, api_key="scripted")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        evaluator.run_s2tt_beauty_eval(os.path.join(runner, "s2tt"), "asr", "s2tt_r", num_workers=4, force_run=True)
        evaluator.run_sec_eval(os.path.join(runner, "sec"), num_processes=2, force_run=True)

    def rows(task: str, suffix: str) -> list[dict]:
        with open(os.path.join(runner, task, f"{MODEL}_{suffix}.jsonl"), encoding="utf-8") as file:
            return [json.loads(line) for line in file]

    beauty = pd.DataFrame([r["beauty_scores"] for r in rows("s2tt", "beauty") if r.get("beauty_scores")])
    names = {"beauty_of_form": "llm_bf", "beauty_of_meaning": "llm_bm", "beauty_of_sound": "llm_bs"}
    means = {name: float(beauty[column].mean()) for column, name in names.items()}
    s2tt = {name: 20 * value for name, value in means.items()}
    s2tt["llm_b"] = 20 * sum(means.values()) / 3
    s2tt["scored"] = {name: int(beauty[column].notna().sum()) for column, name in names.items()}
    sec_scores = pd.DataFrame([r["sec_score"] for r in rows("sec", "sec") if "sec_score" in r]).astype(float).mean()
    sec = {"sec_p": float(sec_scores["sec_1"]), "sec_g": float(sec_scores["sec_2"]), "sec_s": float(sec_scores["sec_3"]), "cer_sentences": float(sec_scores["cer"])}
    sec["llm_c"] = 10 * (sec["sec_p"] + sec["sec_g"] + sec["sec_s"])

    def digest(task: str) -> str:
        with open(os.path.join(runner, task, f"{MODEL}.jsonl"), "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()

    return {
        "source": "official eval/eval_model.py of github.com/yxduir/MCGA, run unmodified with a scripted judge client (scripts/official_mcga_judged.py)",
        "runner_rows_sha256": {task: digest(task) for task in ("s2tt", "sec")},
        "s2tt": s2tt,
        "sec": sec,
        "printed_by_official": [line for line in printed.getvalue().splitlines() if "&" in line],
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(json.dumps(main(*sys.argv[1:]), ensure_ascii=False, indent=1, allow_nan=False))  # standalone: a NaN fails loudly, never written
