"""What judging a run will cost, said before inference: one line per judged task (judge calls, approximate prompt
tokens, the completion-token bound, a cost where prices are set), and the same without running a model::

    audio-bench-judge-estimate --tasks mcga_s2tt,mcga_sec,mmac [--limit N]
    python -m lmms_eval_tasks.judge_estimate --tasks mcga,mmac

The requests are the ones the judge pass will build, from the task's own prompt templates and the run's documents,
with the answer assumed (MCGA: as the reference; MMAC: a caption of ``ESTIMATE_CAPTION_WORDS`` words); the counting
rules are :mod:`audio_bench_core.judge_budget`'s. Each estimate is kept for the task's judge provenance (``estimate``,
beside ``usage_reported``). lmms-eval glue: the plugin wraps ``lmms_eval.evaluator.evaluate`` to print the lines
(:func:`print_judge_estimates_before_inference`).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import math
import sys

from loguru import logger

from audio_bench_core import judge_budget
from audio_bench_core.judge_config import JudgeConfig

_MARKER = "_lmms_eval_audio_plugin_estimate"


def _requests_for_estimate(benchmark: str):
    """``doc -> [JudgeRequest]`` of a judged benchmark's hooks, None for a benchmark that judges nothing."""
    if benchmark == "mcga":
        from lmms_eval_tasks.mcga.hooks import mcga_judge_requests_for_estimate

        return mcga_judge_requests_for_estimate
    if benchmark == "mmac":
        from lmms_eval_tasks.mmac.hooks import mmac_judge_requests_for_estimate

        return mmac_judge_requests_for_estimate
    return None


def _limited(docs: list, limit: int | float | None) -> list:
    """The documents lmms-eval evaluates under ``--limit`` (a count, or a fraction below 1)."""
    if limit is None:
        return docs
    return docs[: math.ceil(len(docs) * limit)] if limit < 1.0 else docs[: int(limit)]


def task_estimate(task_name: str, docs: list, limit: int | float | None = None, config: JudgeConfig | None = None) -> judge_budget.JudgeEstimate | None:
    """The :class:`audio_bench_core.judge_budget.JudgeEstimate` of one task over ``docs`` (after ``limit``); None when the
    task judges nothing. The token limit is ``AUDIO_JUDGE_MAX_TOKENS`` where set, else each prompt's own.

    Raises:
        ValueError: an ``AUDIO_JUDGE_*`` value or a price is malformed (named).
    """
    build = _requests_for_estimate(task_name.split("_")[0])
    if build is None:
        return None
    config = config or JudgeConfig.from_env()
    requests = [request for doc in _limited(list(docs), limit) for request in build(doc)]
    if not requests:
        return None
    return judge_budget.estimate_requests(((r.messages, config.max_tokens or r.max_tokens) for r in requests), judge_budget.prices_from_env())


def _leaf_tasks(task_dict: dict):
    """``(name, task object)`` of every task in lmms-eval's (nested) task dict, groups walked."""
    for key, value in task_dict.items():
        if isinstance(value, dict):
            yield from _leaf_tasks(value)
        elif value is not None and not isinstance(value, tuple):
            yield getattr(key, "group_name", key) if not isinstance(key, str) else key, value


def judge_estimate_lines(task_dict: dict, limit: int | float | None = None, record: bool = True) -> list[str]:
    """One line per judged task of ``task_dict`` (lmms-eval's), and the calls of all of them, with the budget where
    ``AUDIO_JUDGE_MAX_CALLS`` is set; ``record``: keep each estimate for the task's judge provenance."""
    config = JudgeConfig.from_env()
    lines, total = [], 0
    for name, task in _leaf_tasks(task_dict):
        estimate = task_estimate(name, task.eval_docs, limit, config)
        if estimate is None:
            continue
        if record:
            judge_budget.record_estimate(name, estimate)
        total += estimate.calls
        lines.append(estimate.line(name))
    if lines:
        budget = f"; {judge_budget.MAX_CALLS_VAR}={config.max_calls} allows {min(total, config.max_calls):,} of them" if config.max_calls is not None else ""
        lines.append(f"judge estimate: {total:,} judge calls in all before retries and cache hits{budget} (docs/judge.md, 'Cost and budget')")
    return lines


def print_judge_estimates_before_inference() -> None:
    """Wrap ``lmms_eval.evaluator.evaluate`` (it gets the built tasks, then runs inference) so that it first logs
    :func:`judge_estimate_lines` when the run has a judged task and a judge is configured (idempotent). An estimate
    that cannot be made is one warning, never a failed run."""
    import lmms_eval.evaluator as evaluator

    original = evaluator.evaluate
    if getattr(original, _MARKER, False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def evaluate(*args, **kwargs):
        try:
            bound = signature.bind_partial(*args, **kwargs).arguments
            if JudgeConfig.from_env().configured:
                for line in judge_estimate_lines(bound.get("task_dict") or {}, bound.get("limit")):
                    logger.info(line)
        except Exception as error:  # noqa: BLE001 - the estimate informs; it never stops a run
            logger.warning(f"judge estimate not made ({type(error).__name__}: {error})")
        return original(*args, **kwargs)

    setattr(evaluate, _MARKER, True)
    evaluator.evaluate = evaluate


def main(argv: list[str] | None = None) -> int:
    """``audio-bench-judge-estimate --tasks T1,T2 [--limit N]``: the estimate lines without running a model (exit 0;
    2 for a bad setting or an unknown task, named)."""
    parser = argparse.ArgumentParser(prog="audio-bench-judge-estimate", description="What judging these tasks will cost, before any run.")
    parser.add_argument("--tasks", required=True, help="comma-separated tasks or groups, as for lmms-eval --tasks")
    parser.add_argument("--limit", type=float, default=None, help="as lmms-eval's --limit: a count, or a fraction below 1")
    args = parser.parse_args(argv)
    from lmms_eval.tasks import TaskManager, get_task_dict

    from lmms_eval_tasks import plugin

    plugin.add_tasks_dir_to_task_index()
    try:
        task_dict = get_task_dict(args.tasks.split(","), TaskManager("ERROR"))
        lines = judge_estimate_lines(task_dict, args.limit, record=False)
    except (ValueError, KeyError) as error:
        print(f"audio-bench-judge-estimate: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines) if lines else f"no judged task among {args.tasks}: nothing to estimate")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
