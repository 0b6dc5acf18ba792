#!/usr/bin/env python3
"""Run the official MCGA scorer, unmodified, on official-runner rows and print its exact numbers as JSON.

The official scorer (``eval/eval_model.py`` of github.com/yxduir/MCGA) prints its scores rounded to one
decimal. This harness imports that file as it is (it is not part of this repository: fetch it yourself),
runs its own ``ModelEvaluator.run_asr_eval`` / ``run_sqa_eval`` / ``run_acc_eval`` on a folder laid out as the
official runner writes it (``ROWS/{asr,sqa,su,sr}/MODEL.jsonl``), and records, without changing any
computation, the unrounded values the official code computes:

- totals and per-split values: the arguments the official code passes to its ``_print_results``;
- per-genre CER: each ``jiwer.cer`` result inside the official ``_analyze_and_print_dimension`` (grouped by
  split and genre, as the official code does), with the group's row count;
- per-dynasty CER: the official script itself prints only a dynasty x genre table; the per-dynasty figure
  is the official ``_analyze_and_print_dimension`` called with ``['dynasty']`` and the official
  ``process_text`` (captured from its genre call), i.e. the official formula over each dynasty's rows.

Usage (``whisper`` = openai-whisper, installed ``--no-deps`` into a separate folder)::

    PYTHONPATH=SITE python scripts/official_mcga_scores.py OFFICIAL_DIR ROWS MODEL > expected.json
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys


def main(official_dir: str, rows: str, model: str) -> dict:
    sys.path.insert(0, os.path.abspath(official_dir))
    import eval_model  # the unmodified official file
    import jiwer

    recorded_cer: list[float] = []
    real_cer = jiwer.cer

    def recording_cer(*args, **kwargs):
        value = real_cer(*args, **kwargs)
        recorded_cer.append(value)
        return value

    jiwer.cer = recording_cer
    printed: list[tuple[str, str, dict, float]] = []
    groups: dict[str, list] = {}
    captured = {}
    evaluator_class = eval_model.ModelEvaluator
    real_print, real_analyze = evaluator_class._print_results, evaluator_class._analyze_and_print_dimension

    def print_results(self, folder, metric_name, per_split, total):
        printed.append((folder, metric_name, dict(per_split), float(total)))
        return real_print(self, folder, metric_name, per_split, total)

    def analyze(self, df, folder, group_cols, label, custom_order, proc_fn, ref_key, hyp_key):
        captured["process_text"] = proc_fn
        keys = [(k, len(g)) for k, g in df.groupby(group_cols)]
        start = len(recorded_cer)
        result = real_analyze(self, df, folder, group_cols, label, custom_order, proc_fn, ref_key, hyp_key)
        groups[label] = [(k, n, v * 100) for (k, n), v in zip(keys, recorded_cer[start:])]
        return result

    evaluator_class._print_results, evaluator_class._analyze_and_print_dimension = print_results, analyze
    evaluator = evaluator_class(model)
    stdout = io.StringIO()
    old_cwd = os.getcwd()
    os.chdir(rows)
    try:
        with contextlib.redirect_stdout(stdout):
            evaluator.run_asr_eval("asr", "asr", "asr_r", ["test"], do_genre_analysis=True, do_dynasty_analysis=True)
            import pandas as pd

            df = pd.DataFrame(evaluator.load_jsonl("asr"))
            df = df[df["split"].isin(["test"])]
            evaluator._analyze_and_print_dimension(df, "asr", ["dynasty"], "Dynasty", ["先秦", "汉", "魏晋", "南北朝", "隋", "唐", "五代", "宋", "元", "明", "清"],
                                                   captured["process_text"], "asr", "asr_r")  # fmt: skip
            evaluator.run_sqa_eval("sqa", "sqa_a", "sqa_a_r", ["test"])
            evaluator.run_acc_eval("su", "su_a", "su_r", ["test"])
            evaluator.run_acc_eval("sr", "sr_a", "sr_r", ["test"])
    finally:
        os.chdir(old_cwd)
        jiwer.cer = real_cer
    totals = {(folder, metric): (per_split, total) for folder, metric, per_split, total in printed}

    def one_key(key):
        return key[-1] if isinstance(key, tuple) else key

    return {
        "asr_cer_total": totals[("asr", "CER")][1],
        "asr_cer_by_split": totals[("asr", "CER")][0],
        "asr_cer_by_genre": {one_key(k): {"cer": v, "n": n} for k, n, v in groups["Genre"]},
        "asr_cer_by_dynasty": {one_key(k): {"cer": v, "n": n} for k, n, v in groups["Dynasty"]},
        "sqa_f1": totals[("sqa", "F1")][1],
        "su_acc": totals[("su", "ACC")][1],
        "sr_acc": totals[("sr", "ACC")][1],
        "official_printed": stdout.getvalue(),
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4]), ensure_ascii=False, indent=1, allow_nan=False))  # standalone: a NaN fails loudly, never written
