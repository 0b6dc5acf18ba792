"""Helper models registered through the ``lmms_eval.models`` entry point (see :mod:`lmms_eval_tasks.plugin`)."""

from __future__ import annotations

import torch


class CPUOrAcceleratorDevice:
    """Mixin: ``device`` is the accelerator's when lmms-eval attached one (multi-process runs), else CPU.

    lmms-eval's evaluator needs ``lm.device`` for its cross-rank gathers.
    """

    @property
    def device(self):
        accelerator = getattr(self, "accelerator", None)
        return accelerator.device if accelerator is not None else torch.device("cpu")


def language_mismatch_line(model: str, task: str, forced: str | None, task_language: str | None) -> str | None:
    """One warning line when a model's forced language (its ``language=`` model argument) is not the language the
    task declares for its audio, else ``None``.

    ``task_language`` is what the task YAML gives the model in ``model_specific_generation_kwargs`` (our
    benchmarks: MCGA ``zh``, PARSA ``fa``, PARSA ``s2tt_en_fa`` ``en``: its source speech is English); a task that
    declares none (MMAC, lmms-eval's own tasks) gets no warning. Codes are compared without case or a region
    (``zh-CN`` = ``zh``).
    """

    def code(value) -> str:
        return str(value or "").strip().lower().replace("_", "-").split("-")[0]

    if not code(forced) or not code(task_language) or code(forced) == code(task_language):
        return None
    return (f"{model}: {task}: language={forced} (model argument) but the task's audio is {task_language}: transcripts will be in the wrong "
            f"language; drop language= to use the task's")  # fmt: skip


# --- failed generations on tasks that do not know our placeholder -------------------------------------------
#: ``{task: {"failed": n, "requests": m, "first_error": text}}`` of this run, all ranks summed: tasks of other
#: benchmarks (lmms-eval's built-in ones) on which one of our models failed. The plugin writes it into the results
#: file (``lmms_eval_audio_plugin.failed_generations``, :func:`lmms_eval_tasks.plugin.record_failures_on_other_tasks`).
FAILED_ON_OTHER_TASKS: dict[str, dict] = {}


class FailureAccounting:
    """What our models hand a task for a document whose generation failed, and the count per task.

    Our tasks know the failure placeholder (:data:`audio_bench_core.responses.GENERATION_FAILED_PREFIX` ``+ error``)
    and count it as a failed generation, never as an answer. Other tasks (lmms-eval's built-in ones) would score it
    as text (librispeech: a transcript, WER > 100). So for them the answer is ``""`` and the failure is counted here:
    :meth:`close` logs the count per task, adds it to :data:`FAILED_ON_OTHER_TASKS` (written into the results file)
    and marks the task failed (:mod:`audio_bench_core.run_status`, a :class:`audio_bench_core.responses.FailedRunError`
    message: its figures are withheld, the run exits 1 after writing) when more than
    :data:`audio_bench_core.responses.FAILED_RUN_SHARE` of a task's requests failed: the threshold our tasks use.
    """

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.requests: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.first_error: dict[str, str] = {}

    def answer(self, task: str, answer: str) -> str:
        """``answer`` as handed to ``task``: a failure placeholder becomes ``""`` (and is counted) unless the task is ours."""
        from lmms_eval_tasks.printed_table import is_plugin_task
        from audio_bench_core.responses import generation_failure

        self.requests[task] = self.requests.get(task, 0) + 1
        failure = generation_failure(answer or "")
        if failure is None or is_plugin_task(task):
            return answer
        self.failed[task] = self.failed.get(task, 0) + 1
        self.first_error.setdefault(task, failure)
        return ""

    def close(self, model) -> None:
        """Sum the counts over ranks, log and record them; past the threshold, mark the task failed
        (:func:`audio_bench_core.run_status.mark`, the message naming the task, the counts and the first error).
        Never raises for a failed task: the other tasks of the run are still scored and written."""
        from loguru import logger

        from audio_bench_core import run_status
        from audio_bench_core.responses import FAILED_RUN_SHARE, FailedRunError

        mine = {task: {"failed": self.failed.get(task, 0), "requests": n, "first_error": self.first_error.get(task)} for task, n in self.requests.items()}
        totals = {}
        for part in _gather_over_ranks(model, mine):
            for task, counts in part.items():
                total = totals.setdefault(task, {"failed": 0, "requests": 0, "first_error": None})
                total["failed"] += counts["failed"]
                total["requests"] += counts["requests"]
                total["first_error"] = total["first_error"] or counts["first_error"]
        failing = {task: counts for task, counts in totals.items() if counts["failed"]}
        for task, counts in failing.items():
            FAILED_ON_OTHER_TASKS[task] = counts
            logger.warning(
                f"{self.model_name}: generation failed for {counts['failed']} of {counts['requests']} documents of {task}; "
                f"they were handed to {task} as empty answers (it does not know the failure placeholder). First error: {counts['first_error']}"
            )
        for task, counts in failing.items():
            if counts["failed"] > FAILED_RUN_SHARE * counts["requests"]:
                error = FailedRunError(
                    f"{task}: failed run: generation failed for {counts['failed']} of {counts['requests']} documents with --model {self.model_name} "
                    f"(more than {FAILED_RUN_SHARE:.0%}), so no score of this task means anything; fix the model and run again. "
                    f"First error: {counts['first_error']}"
                )
                logger.error(f"{error} (the task's figures are withheld; the other tasks are scored; the run exits 1 after writing)")
                run_status.mark(task, run_status.FAILED, f"{type(error).__name__}: {error}")
        self.requests.clear(), self.failed.clear(), self.first_error.clear()


def _gather_over_ranks(model, value) -> list:
    """``value`` of every rank (a list with one entry per process; just ``[value]`` in a one-process run)."""
    if getattr(model, "world_size", 1) <= 1:
        return [value]
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return [value]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, value)
    return gathered
