"""How lmms-eval finds this project's tasks and models after ``pip install``, with no extra flag.

lmms-eval 0.7 loads the entry-point group ``lmms_eval.models`` when ``lmms_eval.models`` is imported,
which its CLI does (through ``lmms_eval.evaluator``) before it builds the task index. It has no task
entry point, and ``LMMS_EVAL_PLUGINS`` is read after the index is built. So :func:`register`, our entry
point, does three things:

1. wraps ``TaskManager.initialize_tasks`` so that every task index also covers
   :data:`lmms_eval_tasks.TASKS_DIR` (added once; a user's ``--include_path`` pointing there too is fine);
2. returns the manifests of our models ``faster_whisper`` and ``replay``, and of our ``qwen2_5_omni`` /
   ``qwen3_omni`` classes, which replace lmms-eval's under those names (lmms-eval's stay reachable as
   ``qwen2_5_omni_upstream`` / ``qwen3_omni_upstream``; see :mod:`lmms_eval_tasks.models.qwen_omni`), and lists
   them where ``lmms-eval models`` looks (the ``AVAILABLE_SIMPLE_MODELS`` table, as lmms-eval does for its own
   ``LMMS_EVAL_PLUGINS`` models);
3. when the ``lmms-eval`` CLI is running, wraps ``lmms_eval.__main__.cli_evaluate_single`` (one run) so that,
   in runs naming our tasks or models (:func:`run_uses_plugin`), a failed run exits with status 1 and its cause
   as the last line (see :func:`exit_nonzero_on_failed_run`), and ``--tasks NAME`` means the task or group
   ``NAME`` when a folder ``NAME`` without task YAML happens to be in the working directory (the repository root
   holds the packages ``mcga/`` and ``parsa/``); other runs keep lmms-eval's behaviour;
4. makes results record the installed lmms-eval (:func:`record_installed_lmms_eval_version`) and our models'
   failed generations on other benchmarks' tasks (:func:`record_failures_on_other_tasks`), and on lmms-eval
   0.7.2 reads our YAML's ``data_files`` against the YAML's folder (:func:`anchor_our_data_files_on_older_lmms_eval`).

If lmms-eval changes underneath (no ``initialize_tasks(include_path=...)``), an error saying so is logged
and the models are still registered; ``--include_path <TASKS_DIR>`` then remains the way in.
This is the only module that touches lmms-eval internals for discovery.
"""

from __future__ import annotations

import functools
import glob
import inspect
import math
import os
import re
import sys
import traceback
import types

from lmms_eval_tasks import TASKS_DIR

MODEL_CLASSES = {
    "faster_whisper": "lmms_eval_tasks.models.faster_whisper.FasterWhisper",
    "replay": "lmms_eval_tasks.models.replay.Replay",
}
#: Built-in names whose lmms-eval classes answer "" with our pinned transformers: ours take them over
#: (entry points load after the built-ins, with overwrite) and lmms-eval's stay reachable as "<name>_upstream".
#: name: (chat class, simple class); see lmms_eval_tasks/models/qwen_omni.py.
REPLACED_MODELS = {
    "qwen2_5_omni": ("lmms_eval_tasks.models.qwen_omni.Qwen2_5OmniThinkerChat", "lmms_eval_tasks.models.qwen_omni.Qwen2_5OmniThinkerSimple"),
    "qwen3_omni": ("lmms_eval_tasks.models.qwen_omni.Qwen3OmniThinkerChat", "lmms_eval_tasks.models.qwen_omni.Qwen3OmniThinkerSimple"),
}
UPSTREAM_MODELS = {
    "qwen2_5_omni_upstream": ("lmms_eval.models.chat.qwen2_5_omni.Qwen2_5_Omni", "lmms_eval.models.simple.qwen2_5_omni.Qwen2_5_Omni"),
    "qwen3_omni_upstream": ("lmms_eval.models.chat.qwen3_omni.Qwen3_Omni", "lmms_eval.models.simple.qwen3_omni.Qwen3_Omni"),
}


class PluginCompatibilityError(RuntimeError):
    """The installed lmms-eval no longer has the hook this plugin uses to add its task folder."""


def _with_tasks_dir(include_path):
    paths = [] if include_path is None else [include_path] if isinstance(include_path, (str, os.PathLike)) else list(include_path)
    if not any(os.path.realpath(p) == str(TASKS_DIR) for p in paths):
        paths.append(str(TASKS_DIR))
    return paths


def add_tasks_dir_to_task_index() -> None:
    """Make every ``lmms_eval.tasks.TaskManager`` index our task folder too. Idempotent.

    Raises:
        PluginCompatibilityError: lmms-eval has no ``TaskManager.initialize_tasks`` taking ``include_path``.
    """
    from lmms_eval.tasks import TaskManager

    original = getattr(TaskManager, "initialize_tasks", None)
    if getattr(original, "_lmms_eval_audio_plugin", False):
        return
    signature = inspect.signature(original) if callable(original) else None
    if signature is None or "include_path" not in signature.parameters:
        raise PluginCompatibilityError(
            "lmms-eval-audio-plugin cannot add its task folder: lmms_eval.tasks.TaskManager.initialize_tasks(include_path=...) "
            f"was not found in this lmms-eval. Pass --include_path {TASKS_DIR} instead, or install the tested lmms-eval 0.7.x."
        )

    @functools.wraps(original)
    def initialize_tasks(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        bound.arguments["include_path"] = _with_tasks_dir(bound.arguments["include_path"])
        return original(*bound.args, **bound.kwargs)

    initialize_tasks._lmms_eval_audio_plugin = True
    TaskManager.initialize_tasks = initialize_tasks


# --- CLI runs: exit status and last line of a failed run; task names before same-named folders ------------
# lmms-eval 0.7.3's cli_evaluate catches every exception of a run (cli_evaluate_single), prints it and exits
# 0 unless --verbosity DEBUG; a tenacity RetryError hides the real error ~40 lines up. SystemExit is not an
# Exception, so raising it from inside cli_evaluate_single ends the process past that handler.


def root_cause(error: BaseException) -> BaseException:
    """The error behind tenacity's ``RetryError`` wrappers (lmms-eval retries ``download``/``process_results``)."""
    seen = set()
    while id(error) not in seen:
        seen.add(id(error))
        last_attempt = getattr(error, "last_attempt", None)  # tenacity.RetryError
        inner = last_attempt.exception() if last_attempt is not None and hasattr(last_attempt, "exception") else None
        if inner is None:
            break
        error = inner
    return error


def close_names(name: str, known, n: int = 3, cutoff: float = 0.75) -> list[str]:
    """Known names close to ``name`` (``difflib``), compared without case and with ``-``/``.``/spaces read as ``_``;
    a name that differs only so (``MCGA_ASR`` -> ``mcga_asr``, ``faster-whisper`` -> ``faster_whisper``) is the answer alone."""
    import difflib

    def folded(text: str) -> str:
        return re.sub(r"[-.\s]+", "_", text.strip().lower())

    by_form: dict[str, list[str]] = {}
    for known_name in known:
        by_form.setdefault(folded(known_name), []).append(known_name)
    wanted = folded(name)
    if wanted in by_form:  # only case or separators differ: that is the name
        return sorted(by_form[wanted])
    return [k for form in difflib.get_close_matches(wanted, list(by_form), n=n, cutoff=cutoff) for k in sorted(by_form[form])][:n]


def _unknown_task_hint(message: str) -> str | None:
    """For lmms-eval's ``Tasks not found: a, b. Try ...``: the names, close names of ours, and where to list them."""
    if not message.startswith("Tasks not found: "):
        return None
    from lmms_eval_tasks.listing import benchmarks

    missing = message[len("Tasks not found: ") :].split(". Try ")[0]
    ours = [entry.name for entries in benchmarks().values() for entry in entries]
    close = sorted({m for name in missing.split(", ") for m in close_names(name, ours, cutoff=0.8)})
    did_you_mean = f"; did you mean {', '.join(close)}?" if close else ""
    return f"Tasks not found: {missing}{did_you_mean} (ours: lmms-eval-audio-tasks; all: lmms-eval --tasks list)"


def known_model_names() -> list[str]:
    """Every name ``--model`` accepts (lmms-eval's registry, aliases included; ours are registered by then)."""
    from lmms_eval.models import list_available_models

    return list(list_available_models(include_aliases=True))


_UNKNOWN_MODEL = re.compile(r"^Model '(?P<name>[^']*)' not found in available models: ")


def _unknown_model_hint(message: str) -> str | None:
    """For lmms-eval's ``Model 'x' not found in available models: <every model>``: the close names instead of the list."""
    found = _UNKNOWN_MODEL.match(message)
    if not found:
        return None
    known = message[found.end() :].split(", ")
    return unknown_model_line(found["name"], known)


def unknown_model_line(name: str, known) -> str:
    """``unknown --model 'x'; did you mean a, b? (all: lmms-eval models)``."""
    close = close_names(name, known, cutoff=0.6)
    did_you_mean = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown --model {name!r}{did_you_mean} (all models: lmms-eval models)"


class CommandError(ValueError):
    """The command line cannot run (unknown model, weights neither local nor reachable); the message is the whole story."""


def check_command_before_run(args) -> None:
    """Checks that take a second, made before lmms-eval spends minutes loading tasks and weights.

    Raises:
        CommandError: ``--model`` names no registered model (close names suggested), or ``--model_args``
            names hub weights that are neither in the local cache nor reachable
            (:func:`lmms_eval_tasks.hub_access.weights_problem`).
    """
    model = getattr(args, "model", None)
    if isinstance(model, str) and model:
        try:
            known = known_model_names()
        except Exception:  # noqa: BLE001 - lmms-eval changed: let it report the model itself
            known = None
        if known is not None and model not in known:
            raise CommandError(unknown_model_line(model, known))
    from lmms_eval_tasks.hub_access import weights_problem

    problem = weights_problem(getattr(args, "model_args", None))
    if problem:
        raise CommandError(problem)


def _hub_hint(error: BaseException) -> str | None:
    from lmms_eval_tasks.hub_access import hub_failure_line

    return hub_failure_line(error)


def failure_line(error: BaseException) -> str:
    """One line naming the cause of a failed run: ``lmms-eval run failed: <Type>: <message>``, or, where the
    cause is known, what to do (unknown task or model: close names; hub unreachable: where the files must be)."""
    cause = root_cause(error)
    if isinstance(cause, CommandError):
        return f"lmms-eval run failed: {cause}"
    message = " ".join(line.strip() for line in str(cause).splitlines() if line.strip())
    for hint in (_hub_hint,):
        try:
            line = hint(error)
        except Exception:  # noqa: BLE001 - the hint is a nicety; the plain message is still right
            line = None
        if line:
            return f"lmms-eval run failed: {line}"
    for hint in (_unknown_task_hint, _unknown_model_hint):
        try:
            message = hint(message) or message
        except Exception:  # noqa: BLE001
            pass
    return f"lmms-eval run failed: {type(cause).__name__}: {message}" if message else f"lmms-eval run failed: {type(cause).__name__}"


def interrupted_line(args, error: BaseException | None = None) -> str:
    """One line for Ctrl-C: what was interrupted, what is kept on disk, what is not, and what running again does.

    The phase is read from the traceback (judge, model answers, model loading, data); what can be kept: the
    judge's reply cache (when its file exists), the ``faster_whisper`` transcript cache (``transcript_cache=``) and
    lmms-eval's ``--use_cache`` answers. Nothing else survives (lmms-eval writes results and samples at the end),
    so "resume" is said only for what is kept; with nothing kept the line says a new run starts from the beginning.
    """
    files = []
    traceback_ = error.__traceback__ if error is not None else None
    while traceback_ is not None:
        files.append((traceback_.tb_frame.f_code.co_filename, traceback_.tb_frame.f_code.co_name))
        traceback_ = traceback_.tb_next
    names = " ".join(f"{path}:{name}" for path, name in files)
    phase = ("judging" if "judge" in names else "generating answers" if "generate_until" in names
             else "loading the model" if "__init__" in names and "/models/" in names else "loading tasks and data" if "datasets" in names or "task" in names
             else "the run")  # fmt: skip
    kept, not_kept = [], []
    try:
        from audio_bench_core.judge import JudgeConfig

        cache = JudgeConfig.from_env().cache_path
        if cache.is_file():
            kept.append(f"judge replies so far ({cache})")
    except Exception:  # noqa: BLE001 - naming the caches is a nicety
        pass
    from lmms_eval_tasks.hub_access import model_arguments

    arguments = model_arguments(getattr(args, "model_args", None))
    if getattr(args, "model", None) == "faster_whisper":
        value = arguments.get("transcript_cache", "")
        if value.lower() not in ("", "none", "false", "0", "off"):
            kept.append("transcripts (transcript_cache)")
        else:
            not_kept.append("transcripts (add transcript_cache=default to --model_args to keep them)")
    if getattr(args, "use_cache", None):
        kept.append(f"model answers (--use_cache {args.use_cache})")
    else:
        not_kept.append("model answers (only with --use_cache DIR are they kept)")
    start = f"lmms-eval run interrupted (Ctrl-C) while {phase}."
    lost = f" Not kept: {'; '.join(not_kept)}." if not_kept else ""
    if not kept:
        return f"{start} Nothing was kept (lmms-eval writes results only at the end).{lost} Running the same command again starts from the beginning."
    return f"{start} Kept: {'; '.join(kept)}.{lost} Running the same command again reuses what is kept and redoes the rest."


def existing_results_line(output_path) -> str | None:
    """One line when ``--output_path`` already holds lmms-eval results (``*_results.json`` anywhere below it), else ``None``.

    lmms-eval writes ``<output_path>/<model>/<YYYYMMDD_HHMMSS>_results.json`` and never removes older files, so a
    second run into the same folder adds a second run beside the first; ``audio-bench-report`` then takes, per
    task, the newest file (runs.py). Said once before the run, so the user can pick another folder.
    """
    if not output_path:
        return None
    folder = os.path.abspath(os.path.expanduser(str(output_path)))
    if not os.path.isdir(folder):
        return None
    found = sorted(glob.glob(os.path.join(glob.escape(folder), "**", "*_results.json"), recursive=True), key=os.path.getmtime)
    if not found:
        return None
    newest = os.path.relpath(found[-1], folder)
    return f"--output_path {output_path} already holds {len(found)} results file(s) (newest {newest}): this run is added beside them, none replaced"


def _prefer_task_name_over_empty_folder(args) -> None:
    """``--tasks mcga`` in a folder holding a folder ``mcga`` with no ``*.yaml``: lmms-eval 0.7.3 would read
    the folder as task YAML (``os.path.isdir`` first) and find nothing. Such a folder cannot be a task
    folder, so it is read as the name: ``NAME,NAME`` is no folder and matches the one task or group NAME."""
    tasks = getattr(args, "tasks", None)
    if isinstance(tasks, str) and tasks and "," not in tasks and os.path.isdir(tasks) and not glob.glob(os.path.join(glob.escape(tasks), "*.yaml")):
        from loguru import logger

        logger.info(f"--tasks {tasks}: read as a task or group name (./{tasks} holds no task YAML)")
        args.tasks = f"{tasks},{tasks}"


def run_uses_plugin(args) -> bool:
    """True when a CLI run names one of our tasks or groups (``--tasks``, comma-separated) or one of our models
    (``--model``: :data:`MODEL_CLASSES`, :data:`REPLACED_MODELS`, :data:`UPSTREAM_MODELS`), also in another case or
    with ``-`` for ``_`` (so a misspelt name of ours gets the plugin's hint), or names no task (the plugin's error
    then says how to name one). Only such runs get the plugin's exit status and CLI behaviour."""
    from lmms_eval_tasks.printed_table import is_plugin_task

    if args is None:  # lmms-eval then parses sys.argv itself; nothing to tell ours from others by: as before
        return True
    model = str(getattr(args, "model", "") or "").strip().lower().replace("-", "_")  # "faster-whisper": ours, misspelt
    if model in MODEL_CLASSES or model in REPLACED_MODELS or model in UPSTREAM_MODELS:
        return True
    tasks = getattr(args, "tasks", None)
    if not tasks:
        return True
    names = tasks.split(",") if isinstance(tasks, str) else [str(t) for t in tasks]
    return any(is_plugin_task(name.strip().lower()) for name in names)  # "MCGA_ASR": ours, in the wrong case


def _exit_nonzero_on_failure(cli_evaluate_single):
    @functools.wraps(cli_evaluate_single)
    def run_one(args=None, *rest, **kwargs):
        from loguru import logger

        if not run_uses_plugin(args):  # lmms-eval's own runs keep lmms-eval's behaviour, exit status included
            return cli_evaluate_single(args, *rest, **kwargs)
        logger.info("lmms-eval-audio-plugin: a failed run exits 1, its cause last (plugin.py)")  # log lines under 160 characters
        from audio_bench_core import judge_budget, judged_documents, run_status
        from lmms_eval_tasks.judge_estimate import print_judge_estimates_before_inference

        run_status.clear()
        judged_documents.clear()
        judge_budget.reset_process_budget()  # AUDIO_JUDGE_MAX_CALLS counts from the start of each run
        print_judge_estimates_before_inference()  # one line per judged task, before the model generates
        _prefer_task_name_over_empty_folder(args)
        try:
            if args is not None and not getattr(args, "tasks", None):  # lmms-eval: "Need to specify task", exit 0
                raise ValueError("no --tasks given: name tasks or groups, e.g. --tasks mcga_asr (ours: lmms-eval-audio-tasks; all: lmms-eval --tasks list)")
            if args is not None:
                check_command_before_run(args)
                line = existing_results_line(getattr(args, "output_path", None))
                if line:
                    logger.warning(line)
            return cli_evaluate_single(args, *rest, **kwargs)
        except KeyboardInterrupt as error:
            sys.stdout.flush()
            print(f"\n{interrupted_line(args, error)}", file=sys.stderr, flush=True)
            raise SystemExit(130) from None
        except Exception as error:
            sys.stdout.flush()
            if not isinstance(error, CommandError):  # our own checks: the line says it all
                traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
            print(failure_line(error), file=sys.stderr, flush=True)
            raise SystemExit(1) from error

    run_one._lmms_eval_audio_plugin = True
    return run_one


def failed_tasks_lines() -> list[str]:
    """One line per task marked failed or incomplete (:mod:`audio_bench_core.run_status`): ``lmms-eval run failed:
    <reason>`` / ``lmms-eval run incomplete: <task>: <reason>``; the failed ones last."""
    from audio_bench_core import run_status

    found = run_status.statuses()
    order = sorted(found, key=lambda task: found[task]["status"] == run_status.FAILED)
    lines = []
    for task in order:
        for reason in found[task]["reasons"]:
            named = reason if f"{task}:" in reason else f"{task}: {reason}"
            lines.append(f"lmms-eval run {found[task]['status']}: {named}")
    return lines


#: Exit status of a run whose tasks finished but some incompletely (``AUDIO_JUDGE_MAX_CALLS`` reached), none failed.
EXIT_INCOMPLETE = 3


def _exit_nonzero_after_tables(cli_evaluate):
    """``cli_evaluate`` (all runs of one command, then their printed tables) followed by a non-zero exit when a task
    was marked (its results and samples are on disk by then): 1 when a task failed (its figures read "not computed"),
    :data:`EXIT_INCOMPLETE` when tasks are only incomplete (a judge budget reached: figures over the judged items)."""

    @functools.wraps(cli_evaluate)
    def evaluate_then_exit(*args, **kwargs):
        outcome = cli_evaluate(*args, **kwargs)
        lines = failed_tasks_lines()
        if lines:
            sys.stdout.flush()
            from audio_bench_core import run_status

            tasks = run_status.statuses()
            failed = [task for task, record in tasks.items() if record["status"] == run_status.FAILED]
            what = "their figures read 'not computed'" if failed else f"the run is incomplete (exit {EXIT_INCOMPLETE}): their judged figures cover the judged items only"
            print(
                f"lmms-eval-audio-plugin: {len(tasks)} task(s) did not finish as meant ({', '.join(tasks)}): {what}; "
                "every other task's results and every task's samples were written (results: lmms_eval_audio_plugin.task_status)",
                file=sys.stderr,
            )
            for line in lines:
                print(line, file=sys.stderr)
            sys.stderr.flush()
            raise SystemExit(1 if failed else EXIT_INCOMPLETE)
        return outcome

    evaluate_then_exit._lmms_eval_audio_plugin = True
    return evaluate_then_exit


def _wrap_cli_evaluate_single(module) -> None:
    original = module.__dict__.get("cli_evaluate_single")
    if callable(original) and not getattr(original, "_lmms_eval_audio_plugin", False):
        module.cli_evaluate_single = _exit_nonzero_on_failure(original)
    evaluate = module.__dict__.get("cli_evaluate")
    if callable(evaluate) and not getattr(evaluate, "_lmms_eval_audio_plugin", False):
        module.cli_evaluate = _exit_nonzero_after_tables(evaluate)


class _WrapOnceLoaded(types.ModuleType):
    """Class of ``lmms_eval.__main__`` while it is still importing (it imports the models, so this entry point,
    before defining its functions). The CLI then fetches ``cli_evaluate`` from it (``lmms_eval.cli.dispatch``);
    that first fetch wraps ``cli_evaluate_single`` and restores the plain module class."""

    @property
    def cli_evaluate(self):
        namespace = self.__dict__
        if "cli_evaluate" not in namespace:
            raise AttributeError("cli_evaluate")
        self.__class__ = types.ModuleType
        _wrap_cli_evaluate_single(self)
        return namespace["cli_evaluate"]


def exit_nonzero_on_failed_run() -> None:
    """When the ``lmms-eval`` CLI is running, make a failed run exit 1 with its cause as the last line.

    Wraps ``lmms_eval.__main__.cli_evaluate_single`` (at once, or on the CLI's first fetch of ``cli_evaluate``
    if that module is still importing): an exception of a run prints its traceback, then
    :func:`failure_line` (the error behind tenacity's ``RetryError``), then raises ``SystemExit(1)``, with or
    without ``--verbosity DEBUG``. Nothing is patched for the Python API (``lmms_eval.__main__`` not loaded).
    """
    module = sys.modules.get("lmms_eval.__main__")
    if module is None:
        return
    if "cli_evaluate" in module.__dict__:
        _wrap_cli_evaluate_single(module)
    elif type(module) is types.ModuleType:
        module.__class__ = _WrapOnceLoaded


def list_models_for_lmms_eval_models_command(manifests) -> None:
    """Put our models in the table ``lmms-eval models`` prints (it lists that table, not the entry points).

    Built-in names keep their table entries (the command prints names and kinds only); the registry, which
    decides what runs, has ours for ``qwen2_5_omni`` and ``qwen3_omni``.
    """
    import lmms_eval.models as models

    for manifest in manifests:
        if manifest.simple_class_path:
            models.AVAILABLE_SIMPLE_MODELS.setdefault(manifest.model_id, manifest.simple_class_path)
        if manifest.chat_class_path:
            models.AVAILABLE_CHAT_TEMPLATE_MODELS.setdefault(manifest.model_id, manifest.chat_class_path)


# --- results: the lmms-eval version actually used; failed generations on other benchmarks' tasks ----------------


def _is_lmms_eval_checkout() -> bool:
    """True when the folder above the ``lmms_eval`` package is the top of a git work tree: an lmms-eval clone
    installed in place. An installed package lives in ``site-packages``, which is no work tree of its own (a venv
    inside another clone, e.g. ``make setup`` in this repository, sits in that clone's tree)."""
    import lmms_eval

    return os.path.exists(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(lmms_eval.__file__))), ".git"))


def _environment_value(*names: str) -> str | None:
    values = [os.environ.get(name, "").strip() for name in names]
    return next((value for value in values if value), None)


def record_installed_lmms_eval_version() -> None:
    """Make results record the lmms-eval that ran, not the git commit of some other clone.

    lmms-eval writes ``git_hash``, ``git_branch`` and ``lmms_eval_version`` (``branch@sha``) from git: 0.7.3 asks
    git about the folder above its package (for a package in a venv inside a clone, ``make setup`` here, that is
    the clone's commit), 0.7.2 about the working directory (whatever repository the user runs from). Unless
    lmms-eval is an in-place clone (:func:`_is_lmms_eval_checkout`), which keeps lmms-eval's behaviour, git is not
    asked: ``git_hash`` is ``LMMS_EVAL_GIT_COMMIT``/``GIT_COMMIT``/``GITHUB_SHA`` and ``git_branch``
    ``LMMS_EVAL_GIT_BRANCH``/``GIT_BRANCH``/``BRANCH_NAME``/``GITHUB_REF_NAME`` (lmms-eval 0.7.3's own fallbacks),
    else ``None``; ``lmms_eval_version`` is the installed package's version (``importlib.metadata``, e.g.
    ``0.7.3``). Replaces the three functions in ``lmms_eval.utils`` (and where ``lmms_eval.evaluator`` already
    bound them); 0.7.3's cache version then falls back to the package version, as lmms-eval intends for pip installs.
    """
    import importlib.metadata

    import lmms_eval.utils as utils

    if getattr(getattr(utils, "get_lmms_eval_version_string", None), "_lmms_eval_audio_plugin", False) or _is_lmms_eval_checkout():
        return

    def get_git_commit_hash():
        return _environment_value("LMMS_EVAL_GIT_COMMIT", "GIT_COMMIT", "GITHUB_SHA")

    def get_git_branch_name():
        return _environment_value("LMMS_EVAL_GIT_BRANCH", "GIT_BRANCH", "BRANCH_NAME", "GITHUB_REF_NAME")

    def get_lmms_eval_version_string():
        return importlib.metadata.version("lmms-eval")

    replacements = {f.__name__: f for f in (get_git_commit_hash, get_git_branch_name, get_lmms_eval_version_string)}
    for function in replacements.values():
        function._lmms_eval_audio_plugin = True
    for module in (utils, sys.modules.get("lmms_eval.evaluator")):
        for name, function in replacements.items():
            if module is not None and hasattr(module, name):
                setattr(module, name, function)


def _anchored(value, folder: str):
    if isinstance(value, str):
        return value if os.path.isabs(value) or "://" in value else os.path.normpath(os.path.join(folder, value))
    if isinstance(value, dict):
        return {key: _anchored(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [_anchored(item, folder) for item in value]
    return value


def anchor_our_data_files_on_older_lmms_eval() -> None:
    """Read our task YAML's relative ``dataset_kwargs.data_files`` against the YAML's folder on lmms-eval 0.7.2 too.

    lmms-eval 0.7.3 does that for every task (``lmms_eval.utils._maybe_resolve_yaml_local_data_files``); 0.7.2
    hands the relative path to ``datasets``, which reads it against the working directory, so none of our tasks
    found its shipped sample. Where that function is missing, ``lmms_eval.utils.load_yaml_config`` is wrapped to
    make the paths absolute for YAML files of :data:`lmms_eval_tasks.TASKS_DIR` only; other tasks are untouched.
    """
    import lmms_eval.utils as utils

    original = utils.load_yaml_config
    if hasattr(utils, "_maybe_resolve_yaml_local_data_files") or getattr(original, "_lmms_eval_audio_plugin", False):
        return

    @functools.wraps(original)
    def load_yaml_config(yaml_path=None, yaml_config=None, yaml_dir=None, mode="full"):
        config = original(yaml_path=yaml_path, yaml_config=yaml_config, yaml_dir=yaml_dir, mode=mode)
        folder = yaml_dir or (os.path.dirname(os.path.abspath(yaml_path)) if yaml_path else None)
        kwargs = config.get("dataset_kwargs") if isinstance(config, dict) else None
        if folder and os.path.realpath(folder).startswith(str(TASKS_DIR)) and isinstance(kwargs, dict) and "data_files" in kwargs:
            kwargs["data_files"] = _anchored(kwargs["data_files"], folder)
        return config

    load_yaml_config._lmms_eval_audio_plugin = True
    utils.load_yaml_config = load_yaml_config


def guard_aggregations() -> None:
    """Make one task's failure cost only that task: lmms-eval's aggregation step never raises for our tasks.

    Wraps ``lmms_eval.evaluator_utils.TaskOutput.calculate_aggregate_metric`` (the one place every task's
    aggregations are called, one task at a time). For our tasks (:func:`lmms_eval_tasks.printed_table.is_plugin_task`):

    - a :class:`audio_bench_core.responses.FailedRunError` (a failed run) marks the task ``failed``
      (:mod:`audio_bench_core.run_status`) and withholds every figure of it: each reads ``"not computed: <the
      error's message>"``; the aggregations after it are not called (no judge runs on a failed run);
    - any other exception of an aggregation withholds that metric only (``"not computed: <metric> aggregation raised
      <Type>: <message>"``) and marks the task ``failed``; the task's other figures are kept;
    - a figure that is not a finite number (NaN: undefined) reads ``"not computed: <metric> is undefined here ..."``,
      and non-finite numbers inside a breakdown are written ``null`` with a ``<key>_reason``
      (:func:`audio_bench_core.json_text.finite_or_null`): the results file stays valid JSON.

    Any task (ours or lmms-eval's) already marked ``failed`` before its aggregation (our models' failed generations
    on another benchmark's task, :class:`lmms_eval_tasks.models.FailureAccounting`) has its figures withheld with
    that reason. Every task is then written to the results and samples files as usual; the CLI exits 1 afterwards
    (:func:`exit_nonzero_on_failed_run`). Idempotent.
    """
    from lmms_eval.evaluator_utils import TaskOutput

    original = TaskOutput.calculate_aggregate_metric
    if getattr(original, "_lmms_eval_audio_plugin", False):
        return

    @functools.wraps(original)
    def calculate_aggregate_metric(self, *args, **kwargs):
        from audio_bench_core import run_status
        from lmms_eval_tasks.printed_table import is_plugin_task

        name = str(getattr(self, "task_name", "") or "")
        before = run_status.status_of(name)
        if before and before["status"] == run_status.FAILED:
            return _withhold_all(self, run_status.withheld(before["reasons"][0]))
        if not is_plugin_task(name):
            return original(self, *args, **kwargs)
        aggregation = self.task.aggregation()
        functions = dict(aggregation)
        failed_run = []
        aggregation.update({metric: _guarded_aggregation(name, metric, function, failed_run) for metric, function in functions.items()})
        try:
            original(self, *args, **kwargs)
        finally:
            aggregation.update(functions)
        if failed_run:
            _withhold_all(self, run_status.withheld(failed_run[0]))

    calculate_aggregate_metric._lmms_eval_audio_plugin = True
    TaskOutput.calculate_aggregate_metric = calculate_aggregate_metric


def _guarded_aggregation(task: str, metric: str, function, failed_run: list):
    """``function`` (an aggregation of ``task``'s ``metric``) returning a "not computed" note instead of raising;
    a failed run is appended to ``failed_run`` and ends the task's aggregations (see :func:`guard_aggregations`)."""
    from audio_bench_core import run_status
    from audio_bench_core.json_text import finite_or_null
    from audio_bench_core.responses import FailedRunError

    @functools.wraps(function)  # keeps the signature lmms-eval inspects for an ``args`` parameter
    def guarded(items, *args, **kwargs):
        from loguru import logger

        if failed_run:
            return run_status.withheld(failed_run[0])
        try:
            value = function(items, *args, **kwargs)
            if isinstance(value, float) and not math.isfinite(value):  # JSON has no NaN: the figure says why it has no value
                return run_status.withheld(f"{metric} is undefined here (the aggregation gave {value})")
            return finite_or_null(value) if isinstance(value, (dict, list)) else value
        except Exception as error:  # noqa: BLE001 - one task's failure must cost only that task; recorded and exits 1
            cause = root_cause(error)
            message = " ".join(str(cause).split())
            if isinstance(cause, FailedRunError):
                failed_run.append(f"{type(cause).__name__}: {message}")
                run_status.mark(task, run_status.FAILED, failed_run[0])
                logger.error(f"{task}: {failed_run[0]} (the other tasks are scored; every results and samples file is written; the run exits 1)")
                return run_status.withheld(failed_run[0])
            reason = f"{metric} aggregation raised {type(cause).__name__}: {message}"
            run_status.mark(task, run_status.FAILED, reason)
            logger.opt(exception=error).error(f"{task}: {reason}; this figure is not computed, the others are kept; the run exits 1")
            return run_status.withheld(reason)

    return guarded


def _withhold_all(task_output, note: str) -> None:
    """Every figure of ``task_output`` reads ``note`` (its stderr ``"N/A"``); the document count is kept."""
    for (metric, filter_key), items in task_output.sample_metrics.items():
        task_output.agg_metrics[f"{metric},{filter_key}"] = note
        task_output.agg_metrics[f"{metric}_stderr,{filter_key}"] = "N/A"
        task_output.sample_len = len(items)




def record_failures_on_other_tasks() -> None:
    """Write the failed generations of our models on other benchmarks' tasks into the results file.

    Such a task gets ``""`` for a failed document (it does not know our failure placeholder), so its own metrics
    cannot show the failures; the counts (:data:`lmms_eval_tasks.models.FAILED_ON_OTHER_TASKS`, summed over ranks)
    go under ``results["lmms_eval_audio_plugin"]["failed_generations"][<task>]`` = ``{"failed", "requests",
    "first_error"}``, only when there are some. Also writes every task's status (failed or incomplete, with the
    reasons: :func:`audio_bench_core.run_status.statuses`) under ``results["lmms_eval_audio_plugin"]["task_status"]``,
    only when some task has one, and the judged tasks' per-document judge scores
    (:mod:`audio_bench_core.judged_documents`) under ``results["lmms_eval_audio_plugin"]["judged_documents"]``.
    Wraps ``EvaluationTracker.save_results_aggregated``.
    """
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    original = EvaluationTracker.save_results_aggregated
    if getattr(original, "_lmms_eval_audio_plugin_failures", False):
        return

    @functools.wraps(original)
    def save_results_aggregated(self, results, *args, **kwargs):
        from audio_bench_core import run_status
        from lmms_eval_tasks.models import FAILED_ON_OTHER_TASKS

        if FAILED_ON_OTHER_TASKS and isinstance(results, dict):
            results.setdefault("lmms_eval_audio_plugin", {})["failed_generations"] = dict(FAILED_ON_OTHER_TASKS)
        if run_status.statuses() and isinstance(results, dict):
            results.setdefault("lmms_eval_audio_plugin", {})["task_status"] = run_status.statuses()
        from audio_bench_core import judged_documents

        if judged_documents.recorded() and isinstance(results, dict):  # per-document judge scores, for audio-bench-compare
            results.setdefault("lmms_eval_audio_plugin", {})["judged_documents"] = judged_documents.recorded()
        return original(self, results, *args, **kwargs)

    save_results_aggregated._lmms_eval_audio_plugin_failures = True
    EvaluationTracker.save_results_aggregated = save_results_aggregated


def progress_bars_as_lines_in_logs() -> None:
    """When the CLI's stderr is a file or a pipe (a log), make tqdm's progress bars end each update with a line
    break, at most one update every 30 s (``TQDM_MININTERVAL`` wins when set).

    tqdm redraws a bar with carriage returns; in a file they pile up into one line thousands of characters long
    (and the next log line is glued to it). On a terminal nothing changes. Patches ``tqdm.std.tqdm.status_printer``
    (the one function that writes a bar) for files that are not terminals; idempotent.
    """
    if "lmms_eval.__main__" not in sys.modules or getattr(sys.stderr, "isatty", lambda: True)():
        return
    import tqdm.std

    original = tqdm.std.tqdm.status_printer
    if getattr(original, "_lmms_eval_audio_plugin", False):
        return
    os.environ.setdefault("TQDM_MININTERVAL", "30")

    def status_printer(file):
        if getattr(file, "isatty", lambda: False)():
            return original(file)

        def print_status(text):
            if text.strip():  # tqdm clears a bar by printing "": nothing to keep in a log
                file.write(f"{text.rstrip()}\n")
                getattr(file, "flush", lambda: None)()

        return print_status

    status_printer._lmms_eval_audio_plugin = True
    status_printer.__wrapped__ = original  # tqdm's own, as functools.wraps would keep it
    tqdm.std.tqdm.status_printer = staticmethod(status_printer)


# --- the entry point ------------------------------------------------------------------------------------------


def register_judge_provider() -> None:
    """Our judge client as ``llm_judge`` provider ``audio_judge`` (:mod:`lmms_eval_tasks.judge_provider`), imported here
    so that an lmms-eval without ``llm_judge`` costs only this extra.

    When this entry point runs because ``lmms_eval.llm_judge`` itself is being imported (its OpenAI provider imports
    ``lmms_eval.models``, which loads the entry points), ``llm_judge`` cannot be read yet: the provider is then registered
    when :mod:`lmms_eval_tasks.judge_provider` is imported (the lmms-eval CLI loads the models, hence this, first)."""
    import sys

    factory = sys.modules.get("lmms_eval.llm_judge.factory")
    if factory is not None and not hasattr(factory, "ProviderFactory"):
        from loguru import logger

        logger.debug("lmms-eval-audio-plugin: lmms_eval.llm_judge is still being imported; import lmms_eval_tasks.judge_provider to register 'audio_judge'")
        return
    from lmms_eval_tasks.judge_provider import register_judge_provider as register_provider

    register_provider()


def register():
    """Entry point of group ``lmms_eval.models``: add our task folder, return our model manifests."""
    from lmms_eval.models.registry_v2 import ModelManifest

    try:
        add_tasks_dir_to_task_index()
    except Exception as error:  # lmms-eval would swallow it into a vague warning and drop our models too
        from loguru import logger

        logger.error(f"{error}" if isinstance(error, PluginCompatibilityError) else f"lmms-eval-audio-plugin could not add its task folder ({error!r}); pass --include_path {TASKS_DIR}")
    from lmms_eval_tasks.printed_table import install_printed_table_filter
    from lmms_eval_tasks.results_writer import write_results_as_valid_utf8

    both = {**REPLACED_MODELS, **UPSTREAM_MODELS}
    manifests = [ModelManifest(model_id=name, simple_class_path=path) for name, path in MODEL_CLASSES.items()] + [
        ModelManifest(model_id=name, chat_class_path=chat, simple_class_path=simple) for name, (chat, simple) in both.items()
    ]
    extras = (
        exit_nonzero_on_failed_run,
        functools.partial(list_models_for_lmms_eval_models_command, manifests),
        write_results_as_valid_utf8,  # samples holding lone surrogates are written, not lost
        install_printed_table_filter,  # printed table: headlines and non-zero counts for our tasks; the JSON keeps everything
        progress_bars_as_lines_in_logs,  # progress bars in a log file: short lines, not one line of redraws
        record_installed_lmms_eval_version,  # results name the lmms-eval that ran, not the enclosing clone's commit
        record_failures_on_other_tasks,  # our models' failed generations on other benchmarks' tasks, in the results file
        guard_aggregations,  # one task's failed run or raising aggregation costs only that task (recorded; exit 1 after writing)
        anchor_our_data_files_on_older_lmms_eval,  # lmms-eval 0.7.2: our YAML's data_files against the YAML's folder
        register_judge_provider,  # our judge client as llm_judge provider "audio_judge" (a new name: other providers unchanged)
    )
    for extra in extras:
        try:
            extra()
        except Exception as error:  # an lmms-eval change here must not cost the models and tasks
            from loguru import logger

            logger.error(f"lmms-eval-audio-plugin: {getattr(extra, '__name__', 'listing our models')} failed ({error!r}); runs still work")
    return manifests
