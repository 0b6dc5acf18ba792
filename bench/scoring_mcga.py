"""MCGA ASR scoring at full-test-set scale: ours against the official scorer, same rows, same process.

Rows: the 1,000 release-shaped ASR rows of ``tests/release_shaped_mcga.py`` (915 distinct ids, noisy outputs:
traditional script, preambles, loops past 100 characters, refusals, empty answers).

Cases (each cold: our normalisation memo is emptied before every repetition):

- ``official``: ``ModelEvaluator.run_asr_eval`` of the unmodified official ``eval/eval_model.py`` of
  github.com/yxduir/MCGA (reads the runner file, corpus CER, per split, per genre, dynasty x genre tables);
  it is NOT part of this repository: pass its folder with ``--official DIR`` (holding ``eval_model.py``, and
  openai-whisper in ``DIR/site`` unless importable); without it the comparison is skipped with a message.
  How to get it: tests/fixtures/README_mcga_release_shaped.md.
- ``ours: aggregations``: the six ASR aggregations lmms-eval calls (official CER, strict CER, CER by genre, by
  dynasty, counts by genre and dynasty) over the per-document items;
- ``ours: process_results + aggregations``: also the per-document hook (response checks included) and the six
  response-diagnostic aggregations (counts of failed, empty, echoed... responses; their log warnings silenced while
  timing), i.e. all our scoring code a replay run executes for the task.

Figure: official time / ours (goal >= 5). Also checks that our official CER equals the official scorer's.

Usage: ``python -m bench.scoring_mcga [--official DIR] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
import tempfile
from pathlib import Path

from bench._timing import alternate, figure, header, report, skip

GOAL = 5.0


def _docs_and_items():
    from lmms_eval_tasks.mcga import hooks
    from mcga import data
    from tests.release_shaped_mcga import release_rows

    rows = release_rows()
    docs = [
        {**row, "audio_path": f"/data/{row['audio']}", data.DOC_KEY_FIELD: row["audio"], hooks.TASK_FIELD: "asr", hooks.MODE_FIELD: "audio"}
        for row in rows["asr"]
    ]
    return rows, docs


def _ours(docs, with_process_results: bool):
    from audio_bench_core import responses
    from lmms_eval_tasks.mcga import hooks

    names = ("cer_official", "cer_strict", "cer_official_by_genre", "cer_official_by_dynasty", "n_by_genre", "n_by_dynasty")
    precomputed = [hooks.mcga_process_results(doc, [doc["asr_r"]]) for doc in docs]

    def run():
        if not with_process_results:
            return {name: getattr(hooks, f"mcga_agg_{name}")([r[name] for r in precomputed]) for name in names}
        results = [hooks.mcga_process_results(doc, [doc["asr_r"]]) for doc in docs]
        scores = {name: getattr(hooks, f"mcga_agg_{name}")([r[name] for r in results]) for name in names}
        scores.update({name: getattr(responses, f"agg_{name}")([r[name] for r in results]) for name in responses.DIAGNOSTIC_METRICS})
        return scores

    return run


def _official(official_dir: Path, runner_dir: Path):
    site = official_dir / "site"
    for path in (site, official_dir):
        if path.is_dir():
            sys.path.insert(0, str(path))
    eval_model = importlib.import_module("eval_model")
    captured = {}

    def run():
        evaluator = eval_model.ModelEvaluator("synthetic_audio")
        old = os.getcwd()
        os.chdir(runner_dir)
        try:
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                evaluator.run_asr_eval("asr", "asr", "asr_r", ["test"], do_genre_analysis=True, do_dynasty_analysis=True)
        finally:
            os.chdir(old)
        captured["printed"] = printed.getvalue()

    return run, captured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", default=os.environ.get("MCGA_OFFICIAL_DIR", "/tmp/mcga_official"), help="folder with the official eval_model.py (and site/ with openai-whisper)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    header("MCGA ASR scoring, 1,000 release-shaped rows")
    from mcga import metrics
    from tests.release_shaped_mcga import write_runner_rows

    rows, docs = _docs_and_items()
    cases = {"ours: aggregations": _ours(docs, False), "ours: process_results + aggregations": _ours(docs, True)}
    official_dir = Path(args.official)
    runner = Path(tempfile.mkdtemp(prefix="bench-mcga-"))
    captured = None
    if (official_dir / "eval_model.py").is_file():
        write_runner_rows(runner, rows)
        try:
            cases["official run_asr_eval"], captured = _official(official_dir, runner)
        except ImportError as error:
            skip(f"the official scorer in {official_dir} cannot be imported ({error}); install openai-whisper --no-deps into {official_dir}/site")
    else:
        skip(f"no official scorer at {official_dir}/eval_model.py (pass --official DIR; see tests/fixtures/README_mcga_release_shaped.md): only our times are shown")

    def cold():
        metrics.clear_scoring_cache()  # the normalisation memo and the per-corpus edits

    from loguru import logger

    logger.disable("lmms_eval_tasks")  # the diagnostics warn (43 empty responses) on every repetition
    try:
        results = alternate(cases, args.repeats, setup=cold)
    finally:
        logger.enable("lmms_eval_tasks")
    report(results)
    if "official run_asr_eval" not in results:
        return 0
    official = results["official run_asr_eval"].wall_median
    ours_total = metrics.official_cer_percent([r["asr"] for r in rows["asr"]], [r["asr_r"] for r in rows["asr"]])
    printed_total = next(line.split(":")[1].strip() for line in captured["printed"].splitlines() if line.startswith("TOTAL:"))
    same = f"{ours_total:.1f}" == printed_total
    figure("mcga_asr_scoring_speedup (official / ours: aggregations)", official / results["ours: aggregations"].wall_median, f">= {GOAL}x", official / results["ours: aggregations"].wall_median >= GOAL,
           f"official CER {printed_total} printed, ours {ours_total:.4f}: {'same' if same else 'DIFFERENT'}")
    full = official / results["ours: process_results + aggregations"].wall_median
    figure("mcga_asr_scoring_speedup_with_process_results (official / ours: all)", full, f">= {GOAL}x", full >= GOAL, "ours also checks every response (echo, placeholder, failure), which the official script does not")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
