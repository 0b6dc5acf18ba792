"""Start-up: what a one-document run of our task costs against lmms-eval running a tiny text task, whole CLI runs
(issue 13's first figure), and what our task folder adds to lmms-eval's task index.

1. Whole ``lmms-eval`` CLI runs, one subprocess each, CPU = user + system time of the child
   (``resource.getrusage(RUSAGE_CHILDREN)`` before and after), cases alternating (order reversed every other round),
   one untimed warm-up of each first (the ``datasets`` cache and the OS file cache are then warm for every case):

   - ``ours``: ``lmms-eval --tasks mcga_asr --limit 1 --model replay --model_args predictions=<the official-runner
     rows of the shipped sample>`` (our plugin as installed: entry point, task folder, data checks of the sample);
   - ``tiny text``: ``lmms-eval --include_path <tmp> --tasks startup_tiny_text --limit 1 --model dummy``, the floor.
     Why this task: lmms-eval 0.7.3's built-in tasks all load their data from the Hugging Face hub, which cannot be
     reached here (offline), so the floor is a minimal task YAML written to a temporary folder: a 3-line local
     jsonl through the ``json`` builder, ``generate_until``, lmms-eval's own built-in ``exact_match`` metric with
     ``mean`` aggregation, and lmms-eval's own ``dummy`` model (no inference: returns ``"A"``). Nothing of ours runs
     in it except what every run pays once our package is installed (the entry point registers our models and adds
     our task folder to the index);
   - ``tiny text, our plugin hidden``: the same run with our entry point filtered out of
     ``importlib.metadata.entry_points`` (a ``python -c`` launcher of ``lmms_eval.cli.dispatch.main``): lmms-eval
     as if our package were not installed, so ``tiny text`` / this = what installing the plugin adds to ANY run.

   Figures: ``ours`` / ``tiny text`` (the issue measured 1.04x; it sets no goal) and ``tiny text`` / ``plugin
   hidden``, ratios of medians, with the ratio of the minima beside (on a shared machine the least-disturbed run). All runs pass ``--output_path`` to a temporary folder and exit 0 (checked: a failed run stops the bench).

2. The task index alone, in this process (``TaskManager`` with and without our folder, alternating), with the count
   of YAML parses (``lmms_eval.utils.load_yaml_config``: once per file and once more per ``include``), and the same
   index over a flattened copy of our folder (the PARSA metric-family files with the template's text inlined, so a
   PARSA task file costs 2 parses instead of 3): what flattening would save. The parsing is lmms-eval's code; the
   include levels are ours.

Usage: ``python -m bench.startup [--repeats N] [--index-repeats N]`` (defaults 5 and 5: 18 CLI runs of about 12 s
of CPU each, then 15 indexes of about 4 s; about 6 minutes here).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._timing import figure, header

ROOT = Path(__file__).resolve().parents[1]
OFFICIAL_ROWS = ROOT / "tests" / "fixtures" / "official_runner_rows"
ISSUE_RATIO = 1.04
TINY_TASK = "startup_tiny_text"
TINY_YAML = """# A minimal local text task for bench.startup: lmms-eval's json builder, built-in exact_match, no media.
task: {task}
dataset_path: json
dataset_kwargs:
  data_files: {{test: {data}}}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  max_new_tokens: 8
  until: []
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""
TINY_ROWS = '{"question": "Answer with the letter A.", "answer": "A"}\n{"question": "Which letter comes first?", "answer": "A"}\n{"question": "Say B.", "answer": "B"}\n'
#: Runs lmms-eval's CLI with our entry point hidden from importlib.metadata (before lmms-eval reads the group).
HIDDEN_PLUGIN_LAUNCHER = """
import importlib.metadata as metadata, sys
real = metadata.entry_points
def hide(eps):
    return metadata.EntryPoints(ep for ep in eps if not ep.value.startswith("lmms_eval_tasks."))
def entry_points(**kwargs):
    found = real(**kwargs)
    if isinstance(found, metadata.EntryPoints):
        return hide(found)
    if isinstance(found, dict):  # Python 3.11 without arguments: SelectableGroups {group: EntryPoints}
        return type(found)({group: hide(eps) for group, eps in found.items()})
    return found
metadata.entry_points = entry_points
from lmms_eval.cli.dispatch import main
sys.argv = ["lmms-eval", *sys.argv[1:]]
sys.exit(main())
"""


def _cli() -> str:
    path = shutil.which("lmms-eval") or str(Path(sys.executable).with_name("lmms-eval"))
    if not Path(path).exists():
        raise SystemExit("bench.startup: the lmms-eval console script is not installed in this environment")
    return path


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """``(CPU s, wall s)`` of one CLI run; raises SystemExit with the log tail when it fails."""
    cpu, wall = _child_cpu(), time.perf_counter()
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    cpu, wall = _child_cpu() - cpu, time.perf_counter() - wall
    if result.returncode != 0:
        print((result.stdout + result.stderr)[-4000:])
        raise SystemExit(f"bench.startup: {' '.join(command[:4])} ... exited {result.returncode}")
    return cpu, wall


def cli_runs(repeats: int) -> None:
    """Part 1 of the module docstring."""
    work = Path(tempfile.mkdtemp(prefix="startup_"))
    try:
        (work / "tiny.jsonl").write_text(TINY_ROWS, encoding="utf-8")
        tasks = work / "tasks"
        tasks.mkdir()
        (tasks / f"{TINY_TASK}.yaml").write_text(TINY_YAML.format(task=TINY_TASK, data=work / "tiny.jsonl"), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MCGA_", "PARSA_", "MMAC_", "AUDIO_JUDGE_"))}
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(work / "hf_datasets"),
                   LMMS_EVAL_AUDIO_PLUGIN_CACHE=str(work / "plugin_cache"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))  # fmt: skip
        cli = _cli()
        tiny_args = ["--include_path", str(tasks), "--tasks", TINY_TASK, "--limit", "1", "--model", "dummy"]
        cases = {
            "ours: mcga_asr, 1 doc, replay": [cli, "--tasks", "mcga_asr", "--limit", "1", "--model", "replay", "--model_args", f"predictions={OFFICIAL_ROWS}"],
            "tiny text, 1 doc, dummy": [cli, *tiny_args],
            "tiny text, our plugin hidden": [sys.executable, "-c", HIDDEN_PLUGIN_LAUNCHER, *tiny_args],
        }  # fmt: skip
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        wall: dict[str, list[float]] = {name: [] for name in cases}
        for number, (name, command) in enumerate(cases.items()):  # untimed warm-up of each
            _run([*command, "--output_path", str(work / f"warm{number}")], env, work)
        for repeat in range(repeats):
            names = list(cases) if repeat % 2 == 0 else list(reversed(cases))
            for name in names:
                c, w = _run([*cases[name], "--output_path", str(work / f"out{repeat}_{list(cases).index(name)}")], env, work)
                cpu[name].append(c)
                wall[name].append(w)
        for name in cases:
            print(f"  {name:<32} cpu {statistics.median(cpu[name]):6.2f} s (min {min(cpu[name]):.2f})  wall {statistics.median(wall[name]):6.2f} s  "
                  f"(cpu runs: {', '.join(f'{c:.2f}' for c in cpu[name])})")  # fmt: skip
        names = list(cases)
        ours, tiny, hidden = (statistics.median(cpu[name]) for name in names)
        figure("startup_cli_cpu (mcga_asr 1-doc replay run / tiny text task run)", ours / tiny, f"none in the issue (it measured {ISSUE_RATIO}x)", None,
               f"{ours:.2f} s vs {tiny:.2f} s CPU, medians of {repeats}; ratio of the minima {min(cpu[names[0]]) / min(cpu[names[1]]):.3g}")  # fmt: skip
        figure("startup_plugin_cpu (tiny text task run with our plugin installed / hidden)", tiny / hidden, "none in the issue", None,
               f"{tiny:.2f} s vs {hidden:.2f} s CPU: our entry point and task folder add {tiny - hidden:+.2f} s to every lmms-eval run; "
               f"ratio of the minima {min(cpu[names[1]]) / min(cpu[names[2]]):.3g}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


def flattened_copy(source: Path, target: Path) -> Path:
    """A copy of our task folder's YAML where each PARSA metric-family file holds the template's text instead of
    ``include: _default_template_yaml`` (the two files' top-level keys are disjoint), so a PARSA task file is parsed
    twice (itself, its family file) instead of three times. For measuring only; other files are copied unchanged."""
    for path in source.rglob("*"):
        if path.is_dir() or path.suffix == ".py" or "__pycache__" in path.parts:
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        if path.parent.name == "parsa" and path.name.endswith("_metrics_yaml"):
            template = (path.parent / "_default_template_yaml").read_text(encoding="utf-8")
            text = template + "\n" + "".join(line for line in text.splitlines(keepends=True) if line.strip() != "include: _default_template_yaml")
        destination.write_text(text, encoding="utf-8")
    return target


def index_runs(repeats: int) -> None:
    """Part 2 of the module docstring."""
    import lmms_eval.tasks as lmms_tasks
    from lmms_eval.tasks import TaskManager

    from lmms_eval_tasks import TASKS_DIR

    calls = {"n": 0}
    real = lmms_tasks.utils.load_yaml_config

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    work = Path(tempfile.mkdtemp(prefix="startup_index_"))
    flat = flattened_copy(TASKS_DIR, work / "lmms_eval_tasks")
    lmms_tasks.utils.load_yaml_config = counting
    includes = {"built-in": None, "built-in + ours": str(TASKS_DIR), "built-in + ours flattened": str(flat)}
    cpu: dict[str, list[float]] = {name: [] for name in includes}
    parses, tasks = {}, {}
    try:
        for repeat in range(repeats):
            for name in list(includes) if repeat % 2 == 0 else list(reversed(includes)):
                calls["n"] = 0
                start = time.process_time()
                manager = TaskManager(include_path=includes[name]) if includes[name] else TaskManager()
                cpu[name].append(time.process_time() - start)
                parses[name], tasks[name] = calls["n"], len(manager.all_tasks)
    finally:
        lmms_tasks.utils.load_yaml_config = real
        shutil.rmtree(work, ignore_errors=True)
    base, ours, flattened = (statistics.median(cpu[name]) for name in includes)
    for name in includes:
        print(f"  {name:<26} cpu {statistics.median(cpu[name]):.2f} s, {parses[name]} YAML parses, {tasks[name]} tasks and groups")
    figure("task_index_cpu (with our tasks / built-in alone)", ours / base, f"none in the issue (its whole start-up: {ISSUE_RATIO}x)", None,
           f"our {tasks['built-in + ours'] - tasks['built-in']} tasks and groups add {parses['built-in + ours'] - parses['built-in']} YAML parses, {ours - base:.2f} s CPU")  # fmt: skip
    figure("task_index_cpu_flattened (flattened copy of ours / ours)", flattened / ours, "none (decides whether to flatten)", None,
           f"{parses['built-in + ours'] - parses['built-in + ours flattened']} fewer parses; CPU per index {flattened:.2f} s vs {ours:.2f} s")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds of the three whole CLI runs")
    parser.add_argument("--index-repeats", type=int, default=5, help="rounds of the in-process task index")
    args = parser.parse_args(argv)
    header("start-up: whole lmms-eval CLI runs, mcga_asr (1 doc, replay) vs a tiny text task (1 doc, dummy)")
    cli_runs(args.repeats)
    header("start-up: lmms-eval task index with and without our tasks")
    index_runs(args.index_repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
