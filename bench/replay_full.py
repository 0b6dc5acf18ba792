"""Scoring at full-test-set scale (issue 13, item 4): every rule-scored MCGA task and a PARSA-sized set, re-scored
with ``--model replay`` in ONE ``lmms-eval`` CLI run, and that run's wall time split into where it goes.

The run (a subprocess of this script; the real console-script entry ``lmms_eval.cli.dispatch.main``):
``lmms-eval --tasks <all tasks below> --model replay --model_args predictions=<folder> --output_path <tmp>
--log_samples``, with ``MCGA_DATA_DIR`` and ``PARSA_DATA_DIR`` pointing at folders written by this script in the
releases' layouts, with a real audio file per clip (the loaders decode every clip before inference):

- MCGA (``$MCGA_DATA_DIR/MCGA_{task}_test.jsonl`` + ``upload/<speaker>/<n>-<stamp>.wav``), the rule-scored tasks:
  ``mcga_asr``, ``mcga_sqa``, ``mcga_su``, ``mcga_sr`` and the text twins ``mcga_sqa_text``, ``mcga_su_text``,
  ``mcga_sr_text`` (the same rows; the transcript replaces the audio), 1,000 rows each at ``--scale 1``. Rows and
  model outputs are the release-shaped synthetic set of ``tests/release_shaped_mcga.py`` (repeated ids, extra
  fields, noisy official-runner outputs; the text twins replay the same outputs from ``*_text.jsonl`` files). The
  judge-scored ``mcga_s2tt``/``mcga_sec`` are left out (their time is the judge's: ``bench.judge_throughput``).
- PARSA-Bench (``$PARSA_DATA_DIR/<Folder>/<Folder>.csv`` + ``<Folder>/Audios/<id>.wav``), the 14 rule-scored tasks
  at the paper's sizes (``parsa.tasks.TASKS[...].eval_items``, Table 1 of arXiv 2603.14456 v2: 6,646 items at
  ``--scale 1``); the translation tasks are left out (their headline, COMET, is model-based). Rows are the shipped
  sample's rows repeated with new ids (``<id>_<n>``) and one clip each; predictions (``{"task", "id",
  "response"}``) are the gold JSON (:func:`parsa.prompts.demo_answer_json`) about two thirds of the time, else a
  wrong answer (another row's gold), a refusal, an empty answer, an invalid JSON value, raw text; ASR adds dropped
  words and repetition loops (deterministic, ``random.Random(SEED)``).

Audio: synthetic sine clips of ``--clip-seconds`` (default 1 s, 16 kHz PCM-16), one file per clip. They are not
speech: replay never listens, but the data checks decode every clip, so their cost grows with the clip length
(real MCGA clips are 3.5-30 s, PARSA's a few seconds); ``--clip-seconds 10`` shows it.

Split of the run's wall time (one run; not a ratio: the issue sets no goal for the split itself), measured inside
the child by timing wrappers installed before lmms-eval starts (``time.perf_counter``, ``time.thread_time``; the
hooks are looked up by lmms-eval on our modules when it reads the task YAML, so wrapping the module attributes
times exactly the calls lmms-eval makes):

- (a) start-up: process start to the entry of ``lmms_eval.evaluator.evaluate`` (interpreter and imports, the task
  index (``TaskManager``), building the datasets (``get_task_dict``: lmms-eval's ``datasets`` load of the
  ``data_files``, then our ``process_docs`` hooks, which read and check every row and decode every clip: shown
  apart as "our load-time checks"), the replay model reading its predictions);
- (b) our scoring: the wall time during which at least one thread is inside one of our ``process_results`` or
  aggregation hooks (``lmms_eval_tasks.{mcga,parsa}.hooks``, ``audio_bench_core.responses``; lmms-eval calls
  ``process_results`` from 4 threads by default, so per-call times would overlap), and the CPU time spent in them;
- (c) writing: ``EvaluationTracker.save_results_aggregated`` and ``save_results_samples``;
- (d) the rest: lmms-eval's own loop (building the requests, with our prompt hooks shown apart; replay answering
  them; its per-document bookkeeping and sample records; the printed tables; exit).

``--profile FILE`` runs the child under ``cProfile`` as well (slower; for finding where the time goes) and prints the
cumulative time of the 25 costliest functions of ours.

Usage: ``python -m bench.replay_full [--scale F] [--clip-seconds S] [--keep DIR] [--profile FILE]``
(default ``--scale 1``, the issue's size: 7,000 MCGA and 6,646 PARSA documents, about 10 s to write the data and
30-60 s for the run here; ``--scale 0.1`` for a quick look).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import wraps
from pathlib import Path

from bench._timing import figure, header

ROOT = Path(__file__).resolve().parents[1]
SEED = 4
MCGA_AUDIO_TASKS = ("asr", "sqa", "su", "sr")
MCGA_TEXT_TASKS = ("sqa", "su", "sr")
#: PARSA tasks scored by rule (the translation tasks' headline COMET needs a model: left out).
PARSA_RULE_TASKS = ("asr", "intent", "ner", "register", "code_switch", "mcqa", "rc_wiki", "rc_tiny", "age", "gender", "emotion", "vazn", "sabk", "music")
RATE = 16000
OUR_HOOK_MODULES = ("lmms_eval_tasks.mcga.hooks", "lmms_eval_tasks.parsa.hooks", "audio_bench_core.responses")


# ------------------------------------------------------------------------------------------- data
def _write_clip(path: Path, seconds: float, number: int) -> None:
    import numpy as np
    import soundfile

    path.parent.mkdir(parents=True, exist_ok=True)
    frames = max(int(seconds * RATE), int(0.2 * RATE))
    samples = (np.sin(np.arange(frames) * (0.03 + 0.0001 * (number % 97))) * 0.1).astype(np.float32)
    soundfile.write(path, samples, RATE, subtype="PCM_16")


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_mcga(folder: Path, predictions: Path, rows_per_task: int, clip_seconds: float) -> dict[str, int]:
    """MCGA data in the release layout under ``folder`` and the official runner's output rows under ``predictions``
    (``<task>/synthetic_audio.jsonl``, and ``<task>/synthetic_text.jsonl`` for the text twins).

    Returns:
        ``{lmms-eval task: documents}``.
    """
    from tests.release_shaped_mcga import OUTPUT_FIELD, release_rows

    tasks = {task: rows[:rows_per_task] for task, rows in release_rows().items()}
    clips = set()
    for task, rows in tasks.items():
        _jsonl(folder / f"MCGA_{task}_test.jsonl", [{k: v for k, v in row.items() if k != OUTPUT_FIELD[task]} for row in rows])
        _jsonl(predictions / task / "synthetic_audio.jsonl", rows)
        if task in MCGA_TEXT_TASKS:
            _jsonl(predictions / task / "synthetic_text.jsonl", rows)
        clips.update(row["audio"] for row in rows)
    for number, clip in enumerate(sorted(clips)):
        _write_clip(folder / clip, clip_seconds, number)
    counts = {f"mcga_{task}": len(tasks[task]) for task in MCGA_AUDIO_TASKS}
    counts.update({f"mcga_{task}_text": len(tasks[task]) for task in MCGA_TEXT_TASKS})
    return counts


def _noisy_parsa_answer(rng: random.Random, task: str, gold: str, others: list[str], kind: str) -> str:
    draw = rng.random()
    if kind == "asr":
        words = json.loads(gold)["transcription"].split()
        if draw < 0.55:
            return gold
        if draw < 0.70:
            del words[rng.randrange(len(words))]
            return json.dumps({"transcription": " ".join(words or ["و"])}, ensure_ascii=False)
        if draw < 0.78:
            return json.dumps({"transcription": " ".join(words + words[-3:] * 15)}, ensure_ascii=False)  # a repetition loop
        if draw < 0.86:
            return " ".join(words)  # no JSON: read as the transcript
        if draw < 0.93:
            return "I'm sorry, but I can't transcribe this audio."
        return ""
    if draw < 0.66:
        return gold
    if draw < 0.86:
        return rng.choice(others)
    if draw < 0.91:
        return "I cannot answer this question."
    if draw < 0.95:
        return ""
    return '{"answer": 99}' if kind == "multiple_choice" else '{"label": "not a label"}'


def write_parsa(folder: Path, predictions: Path, scale: float, clip_seconds: float, seed: int = SEED) -> dict[str, int]:
    """PARSA-Bench data in the CSV + ``Audios/`` layout under ``folder`` (the shipped sample's rows repeated to
    ``round(eval_items * scale)`` rows per task, new ids, one clip each) and replay predictions
    ``predictions/parsa.jsonl``.

    Returns:
        ``{lmms-eval task: documents}``.
    """
    from parsa import data
    from parsa.prompts import demo_answer_json
    from parsa.tasks import TASKS

    rng = random.Random(seed)
    mapping, counts, answers, number = data.column_map(), {}, [], 0
    for task in PARSA_RULE_TASKS:
        spec, block = TASKS[task], mapping[task]
        sample_csv = data.SAMPLE_DATA_DIR / block["folder"] / f"{block['folder']}.csv"
        with sample_csv.open(encoding="utf-8", newline="") as handle:
            sample_rows = list(csv.DictReader(handle))
        golds = {doc["id"]: demo_answer_json(task, doc) for doc in data.load_task_docs(task, data.SAMPLE_DATA_DIR)}
        id_column, audio_column = block["columns"]["id"], block["columns"]["audio"]
        n = max(3, round(spec.eval_items * scale))
        rows = []
        for index in range(n):
            source = sample_rows[index % len(sample_rows)]
            row_id = f"{source[id_column]}_{index:04d}"
            rows.append({**source, id_column: row_id, audio_column: f"{row_id}.wav"})
            _write_clip(folder / block["folder"] / block["audio_dir"] / f"{row_id}.wav", clip_seconds, number)
            number += 1
            others = [g for i, g in golds.items() if i != source[id_column]]
            answers.append({"task": f"parsa_{task}", "id": row_id, "response": _noisy_parsa_answer(rng, task, golds[source[id_column]], others, spec.kind)})
        target = folder / block["folder"] / f"{block['folder']}.csv"
        with target.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(sample_rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        counts[f"parsa_{task}"] = n
    _jsonl(predictions / "parsa.jsonl", answers)
    return counts


# ------------------------------------------------------------------------------ child (inside the run)
class _Clock:
    """Wall time during which at least one thread is inside a wrapped function (union of intervals), the summed
    thread CPU time of the outermost calls, and the call count. Thread-safe."""

    def __init__(self) -> None:
        self.lock, self.active, self.started = threading.Lock(), 0, 0.0
        self.wall = self.cpu = 0.0
        self.calls = 0
        self.depth = threading.local()

    def wrap(self, function):
        @wraps(function)
        def timed(*args, **kwargs):
            depth = getattr(self.depth, "n", 0)
            self.depth.n = depth + 1
            with self.lock:
                if self.active == 0:
                    self.started = time.perf_counter()
                self.active += 1
                self.calls += 1
            cpu = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                if depth == 0:
                    spent = time.thread_time() - cpu
                self.depth.n = depth
                with self.lock:
                    self.active -= 1
                    if self.active == 0:
                        self.wall += time.perf_counter() - self.started
                    if depth == 0:
                        self.cpu += spent

        return timed

    def as_dict(self) -> dict:
        return {"wall": self.wall, "cpu": self.cpu, "calls": self.calls}


def _install_timers(stats: dict) -> dict[str, _Clock]:
    import importlib

    from lmms_eval import evaluator
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker
    from lmms_eval.tasks import TaskManager

    from lmms_eval_tasks import results_writer
    from lmms_eval_tasks.models.replay import Replay

    clocks = {name: _Clock() for name in ("load_checks", "process_results", "aggregations", "task_index", "datasets", "replay_init", "replay_answers", "writing", "lmms_eval_writer", "clip_decodes", "prompts")}
    for module_name in OUR_HOOK_MODULES:
        module = importlib.import_module(module_name)
        for name, value in list(vars(module).items()):
            if not callable(value) or isinstance(value, type) or name.startswith("_"):
                continue
            if name.endswith("_docs") and name.startswith(("mcga_", "parsa_")):
                setattr(module, name, clocks["load_checks"].wrap(value))
            elif name.endswith("_process_results"):
                setattr(module, name, clocks["process_results"].wrap(value))
            elif "agg_" in name:
                setattr(module, name, clocks["aggregations"].wrap(value))
            elif "_doc_to_" in name:
                setattr(module, name, clocks["prompts"].wrap(value))
    from audio_bench_core import audio

    audio.audio_file_check = clocks["clip_decodes"].wrap(audio.audio_file_check)  # the load-time decode of one clip
    TaskManager.__init__ = clocks["task_index"].wrap(TaskManager.__init__)
    evaluator.get_task_dict = clocks["datasets"].wrap(evaluator.get_task_dict)
    Replay.__init__ = clocks["replay_init"].wrap(Replay.__init__)
    Replay.generate_until = clocks["replay_answers"].wrap(Replay.generate_until)
    for name in ("save_results_aggregated", "save_results_samples"):
        writer = getattr(EvaluationTracker, name)
        if getattr(writer, "_valid_utf8", False):  # the plugin's UTF-8 pass (audio_bench_core.responses) around lmms-eval's writer
            writer = results_writer._valid_utf8_writer(clocks["lmms_eval_writer"].wrap(writer.__wrapped__), name, results_writer._NOT_WRITTEN.get(name, ()))
        setattr(EvaluationTracker, name, clocks["writing"].wrap(writer))
    real_evaluate = evaluator.evaluate

    @wraps(real_evaluate)
    def evaluate(*args, **kwargs):
        stats.setdefault("evaluate_entered", time.time())
        try:
            return real_evaluate(*args, **kwargs)
        finally:
            stats["evaluate_left"] = time.time()

    evaluator.evaluate = evaluate
    return clocks


def child(stats_file: str, argv: list[str], profile: str | None) -> int:
    """Run the lmms-eval CLI in this process with the timers installed; write the timings to ``stats_file``."""
    stats: dict = {"child_started": time.time()}
    clocks = _install_timers(stats)
    sys.argv = ["lmms-eval", *argv]
    from lmms_eval.cli.dispatch import main as lmms_eval_main

    code = 1
    try:
        if profile:
            import cProfile

            profiler = cProfile.Profile()
            code = profiler.runcall(lmms_eval_main) or 0
            profiler.dump_stats(profile)
        else:
            code = lmms_eval_main() or 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        stats["child_left"] = time.time()
        stats["clocks"] = {name: clock.as_dict() for name, clock in clocks.items()}
        stats["child_cpu"] = time.process_time()
        Path(stats_file).write_text(json.dumps(stats), encoding="utf-8")
    return code


# ---------------------------------------------------------------------------------------- parent
def _print_profile(path: str) -> None:
    import pstats

    listing = pstats.Stats(path)
    ours = [(key, value) for key, value in listing.stats.items() if any(part in key[0] for part in ("/lmms_eval_tasks/", "/mcga/", "/parsa/"))]
    ours.sort(key=lambda item: -item[1][3])
    print("  cProfile, our functions by cumulative time (s; under the profiler, which slows Python code):")
    for (file, line, name), (_, calls, _, cumulative, _) in ours[:25]:
        print(f"    {cumulative:8.2f}  {calls:8d} calls  {Path(file).parent.name}/{Path(file).name}:{line} {name}")


def _same_as_official(results: dict, counts: dict[str, int]) -> bool:
    """At full size the MCGA rows are exactly the release-shaped set whose totals the unmodified official scorer printed
    (``tests/fixtures/mcga_release_shaped_expected.json``): check the run's MCGA headlines against them (the text twins
    replay the same outputs, so they must equal their audio tasks). Smaller sizes: headlines printed only."""
    expected = json.loads((ROOT / "tests" / "fixtures" / "mcga_release_shaped_expected.json").read_text(encoding="utf-8"))
    headline = {"mcga_asr": ("cer_official", "asr_cer_total"), "mcga_sqa": ("f1_official", "sqa_f1"), "mcga_su": ("acc_official", "su_acc"), "mcga_sr": ("acc_official", "sr_acc")}
    shown = []
    ok = True
    for task, (metric, key) in headline.items():
        for name in (task, f"{task}_text") if task != "mcga_asr" else (task,):
            value = results[name][f"{metric},none"]
            shown.append(f"{name} {metric} {value:.4g}")
            if counts[name] == 1000 and abs(value - expected[key]) > 1e-9:
                print(f"FAILED: {name} {metric} = {value}, the official scorer printed {expected[key]} for the same rows")
                ok = False
    full = all(counts[name] == 1000 for name in counts if name.startswith("mcga_"))
    print(f"  MCGA headlines: {', '.join(shown)}" + ("; equal to the unmodified official scorer's totals on these rows" if full and ok else ""))
    return ok


def run(scale: float, clip_seconds: float, work: Path, profile: str | None) -> int:
    data_mcga, data_parsa, predictions, out = work / "mcga", work / "parsa", work / "predictions", work / "out"
    started = time.perf_counter()
    counts = write_mcga(data_mcga, predictions / "mcga", max(1, round(1000 * scale)), clip_seconds)
    mcga_clips = len({p for p in data_mcga.rglob("*.wav")})
    counts.update(write_parsa(data_parsa, predictions, scale, clip_seconds))
    clips = mcga_clips + len(list(data_parsa.rglob("*.wav")))
    documents = sum(counts.values())
    print(f"  data written in {time.perf_counter() - started:.1f} s under {work}: {len(counts)} tasks, {documents} documents "
          f"(MCGA {sum(v for k, v in counts.items() if k.startswith('mcga'))}, PARSA {sum(v for k, v in counts.items() if k.startswith('parsa'))}), "
          f"clips of {clip_seconds} s (synthetic sine, 16 kHz)")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARSA_", "MCGA_", "AUDIO_JUDGE_"))}
    env.update(MCGA_DATA_DIR=str(data_mcga), PARSA_DATA_DIR=str(data_parsa), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_DATASETS_CACHE=str(work / "hf_datasets"), LMMS_EVAL_AUDIO_PLUGIN_CACHE=str(work / "plugin_cache"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))  # fmt: skip
    stats_file = work / "stats.json"
    arguments = ["--tasks", ",".join(counts), "--model", "replay", "--model_args", f"predictions={predictions}", "--output_path", str(out), "--log_samples"]
    command = [sys.executable, "-m", "bench.replay_full", "--child", str(stats_file), *(["--profile", profile] if profile else []), "--", *arguments]
    print(f"  lmms-eval {' '.join(arguments)}", flush=True)
    spawned, wall = time.time(), time.perf_counter()
    result = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - wall
    log = result.stdout + result.stderr
    results_files = sorted(out.rglob("*_results.json"))
    if result.returncode != 0 or not results_files or not stats_file.is_file():
        print(log[-6000:])
        print(f"FAILED: the lmms-eval run exited {result.returncode} ({len(results_files)} results files)")
        return 1
    results = json.loads(results_files[-1].read_text(encoding="utf-8"))["results"]
    missing = sorted(set(counts) - set(results))
    if missing:
        print(f"FAILED: no results for {missing}")
        return 1
    if not _same_as_official(results, counts):
        return 1
    stats = json.loads(stats_file.read_text(encoding="utf-8"))
    clocks = stats["clocks"]
    start_up = stats["evaluate_entered"] - spawned
    scoring = clocks["process_results"]["wall"] + clocks["aggregations"]["wall"]
    writing = clocks["writing"]["wall"]
    rest = wall - start_up - scoring - writing
    checks = clocks["load_checks"]["wall"]
    interpreter = stats["child_started"] - spawned
    print(f"  one run, {documents} documents, wall {wall:.1f} s (the child's CPU {stats['child_cpu']:.1f} s):")
    print(f"   (a) start-up                {start_up:7.2f} s  {100 * start_up / wall:5.1f} %  = interpreter + first imports {interpreter:.2f} s, "
          f"task index {clocks['task_index']['wall']:.2f} s, building the datasets {clocks['datasets']['wall']:.2f} s "
          f"(of which our load-time checks {checks:.2f} s: {clocks['load_checks']['calls']} process_docs calls, every row checked, "
          f"{clocks['clip_decodes']['calls']} clip decodes for {clips} distinct clips), "
          f"replay reading predictions {clocks['replay_init']['wall']:.2f} s, other imports and set-up {start_up - interpreter - clocks['task_index']['wall'] - clocks['datasets']['wall'] - clocks['replay_init']['wall']:.2f} s")  # fmt: skip
    print(f"   (b) our scoring             {scoring:7.2f} s  {100 * scoring / wall:5.1f} %  = process_results {clocks['process_results']['wall']:.2f} s "
          f"({clocks['process_results']['calls']} calls, CPU {clocks['process_results']['cpu']:.2f} s) + aggregations {clocks['aggregations']['wall']:.2f} s "
          f"({clocks['aggregations']['calls']} calls, CPU {clocks['aggregations']['cpu']:.2f} s)")  # fmt: skip
    own_writer = clocks["lmms_eval_writer"]["wall"]
    print(f"   (c) writing results/samples {writing:7.2f} s  {100 * writing / wall:5.1f} %  = lmms-eval's writers {own_writer:.2f} s "
          f"+ our UTF-8 pass over what they write (audio_bench_core.responses) {writing - own_writer:.2f} s")  # fmt: skip
    print(f"   (d) the rest                {rest:7.2f} s  {100 * rest / wall:5.1f} %  (lmms-eval's loop: requests, replay answering "
          f"{clocks['replay_answers']['wall']:.2f} s, our prompt and target hooks {clocks['prompts']['wall']:.2f} s ({clocks['prompts']['calls']} calls), "
          "per-document bookkeeping, printed tables, exit)")  # fmt: skip
    per_doc = 1000 * scoring / documents
    figure("replay_full_scoring_share (our scoring / whole run wall)", scoring / wall, "no goal for the split in the issue", None,
           f"{scoring:.2f} s of {wall:.1f} s for {documents} documents ({per_doc:.2f} ms per document)")  # fmt: skip
    figure("replay_full_startup_share (start-up / whole run wall)", start_up / wall, "no goal", None,
           f"{start_up:.2f} s, of which our load-time checks {checks:.2f} s ({1000 * checks / documents:.2f} ms per document)")  # fmt: skip
    figure("replay_full_writing_share (writing / whole run wall)", writing / wall, "no goal", None, f"{writing:.2f} s")
    if profile:
        _print_profile(profile)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        stats_file, rest = argv[1], argv[2:]
        profile = None
        if rest[:1] == ["--profile"]:
            profile, rest = rest[1], rest[2:]
        return child(stats_file, rest[1:] if rest[:1] == ["--"] else rest, profile)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full sizes (1 = 1,000 rows per MCGA task and the paper's PARSA sizes)")
    parser.add_argument("--clip-seconds", type=float, default=1.0, help="length of every synthetic clip (s)")
    parser.add_argument("--keep", default=None, help="write data and outputs into this folder (kept) instead of a temporary one")
    parser.add_argument("--profile", default=None, help="also run the child under cProfile, stats written to this file")
    args = parser.parse_args(argv)
    header(f"full-scale replay re-score: rule-scored MCGA and PARSA tasks in one lmms-eval run (scale {args.scale})")
    if args.keep:
        work = Path(args.keep).resolve()
        work.mkdir(parents=True, exist_ok=True)
        return run(args.scale, args.clip_seconds, work, args.profile and str(Path(args.profile).resolve()))
    work = Path(tempfile.mkdtemp(prefix="replay_full_"))
    try:
        return run(args.scale, args.clip_seconds, work, args.profile and str(Path(args.profile).resolve()))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
