"""Start-up: what our task folder adds to lmms-eval's task index (``TaskManager``), alternating with the built-in
index alone in one process.

lmms-eval builds its index by parsing every task YAML (``lmms_eval.utils.load_yaml_config`` in "simple" mode, once
per file and once more per ``include``); the count of those calls is reported beside the CPU time. The parsing is
lmms-eval's own code (no cache of ours can sit in it without patching lmms-eval), so this bench measures it and
does not change it.

Usage: ``python -m bench.startup [--repeats N]`` (default 2; each index costs several seconds of CPU).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench._timing import figure, header


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    header("start-up: lmms-eval task index with and without our tasks")
    import lmms_eval.tasks as lmms_tasks
    from lmms_eval.tasks import TaskManager

    from lmms_eval_tasks import TASKS_DIR

    calls = {"n": 0}
    real = lmms_tasks.utils.load_yaml_config

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    lmms_tasks.utils.load_yaml_config = counting
    cpu: dict[str, list[float]] = {"built-in": [], "built-in + ours": []}
    parses, tasks = {}, {}
    for repeat in range(args.repeats):
        order = [None, str(TASKS_DIR)] if repeat % 2 == 0 else [str(TASKS_DIR), None]
        for include in order:
            name = "built-in + ours" if include else "built-in"
            calls["n"] = 0
            start = time.process_time()
            manager = TaskManager(include_path=include) if include else TaskManager()
            cpu[name].append(time.process_time() - start)
            parses[name], tasks[name] = calls["n"], len(manager.all_tasks)
    lmms_tasks.utils.load_yaml_config = real
    base, ours = statistics.median(cpu["built-in"]), statistics.median(cpu["built-in + ours"])
    for name in cpu:
        print(f"  {name:<16} cpu {statistics.median(cpu[name]):.2f} s, {parses[name]} YAML parses, {tasks[name]} tasks and groups")
    figure("task_index_cpu (with our tasks / built-in alone)", ours / base, "no goal in the issue (its whole start-up: 1.04x)", None,
           f"our {tasks['built-in + ours'] - tasks['built-in']} tasks and groups add {parses['built-in + ours'] - parses['built-in']} YAML parses, {ours - base:.2f} s CPU")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
