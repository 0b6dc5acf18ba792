"""Say at once, in one line, when a run needs the Hugging Face hub and cannot reach it.

Without network and with nothing cached, ``transformers`` and ``datasets`` retry the hub for minutes and then end
on an error that names a symptom ("Can't load image processor for 'Qwen/Qwen2.5-Omni-7B'", "Token is required
(`token=True`), but no token found"). Two checks, used by the CLI wrapper (:mod:`lmms_eval_tasks.plugin`):

- before a run, :func:`weights_problem` looks at ``--model_args pretrained=``: a local folder is fine; a hub id
  (``org/name``) is fine when the local Hugging Face cache has it or the hub answers within
  :data:`PROBE_TIMEOUT_S`; otherwise one line says so and how to point ``pretrained=`` at a local copy or
  ``HF_HOME`` at the cache that holds it;
- after a failed run, :func:`hub_failure_line` turns an error whose cause is an unreachable hub (offline mode,
  connection errors, a missing cache entry, or a token demanded while offline) into the same kind of line,
  naming the repository found in the error or its traceback.

Needs only ``huggingface_hub`` (a dependency of lmms-eval); imports no lmms-eval.
"""

from __future__ import annotations

import functools
import os
import re

#: Seconds the reachability probe waits for the hub's answer.
PROBE_TIMEOUT_S = 3.0
#: ``org/name`` as the hub spells repository ids.
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: Model arguments that name weights by path or hub id, in lmms-eval's models and ours.
WEIGHT_ARGUMENTS = ("pretrained", "model_name_or_path", "model_path")
_QUOTED_ID = re.compile(r"""['"`]([A-Za-z0-9][\w.-]*/[\w.-]+)['"`]""")
#: Error types whose presence in an error chain means the hub could not be used (matched by name, so no import).
HUB_ERROR_NAMES = ("OfflineModeIsEnabled", "LocalEntryNotFoundError", "ConnectError", "ConnectTimeout", "ConnectionError",
                   "NameResolutionError", "MaxRetryError", "LocalTokenNotFoundError")  # fmt: skip


def _offline_setting() -> str | None:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{name}=1"
    return None


@functools.lru_cache(maxsize=1)
def hub_unreachable_reason() -> str | None:
    """Why the hub cannot be reached (``"HF_HUB_OFFLINE=1"``, ``"ConnectError: ..."``), or ``None`` if it answers.

    One HEAD request to the hub endpoint through huggingface_hub's own HTTP session (so proxies and
    ``HF_ENDPOINT`` apply), at most :data:`PROBE_TIMEOUT_S` seconds; the answer is kept for the process.
    """
    setting = _offline_setting()
    if setting:
        return setting
    try:
        from huggingface_hub import constants
        from huggingface_hub.utils import get_session

        get_session().head(constants.ENDPOINT, timeout=PROBE_TIMEOUT_S)
    except Exception as error:  # noqa: BLE001 - any failure to get an answer is "unreachable"
        return f"{type(error).__name__}: {' '.join(str(error).split())[:120]}"
    return None


def cache_location() -> str:
    """The Hugging Face cache folder in use (``HF_HUB_CACHE``, from ``HF_HOME``)."""
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except Exception:  # noqa: BLE001
        return os.environ.get("HF_HOME", "~/.cache/huggingface") + "/hub"


def is_cached(repo_id: str, repo_type: str = "model") -> bool:
    """True when the local cache holds a snapshot of ``repo_id`` (its ``config.json``, or any file for datasets)."""
    try:
        from huggingface_hub import scan_cache_dir, try_to_load_from_cache

        if repo_type == "model":
            found = try_to_load_from_cache(repo_id, "config.json")
            if isinstance(found, str):
                return True
        return any(repo.repo_id == repo_id and repo.repo_type == repo_type and repo.nb_files for repo in scan_cache_dir().repos)
    except Exception:  # noqa: BLE001 - no cache folder yet, unreadable cache: not cached
        return False


def model_arguments(model_args) -> dict[str, str]:
    """``--model_args`` (``"k=v,k2=v2"`` or a dict) as a dict of strings."""
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items()}
    pairs = {}
    for part in str(model_args or "").split(","):
        key, sep, value = part.partition("=")
        if sep:
            pairs[key.strip()] = value.strip()
    return pairs


def unreachable_line(what: str, repo_id: str, reason: str, argument: str | None = "pretrained") -> str:
    """The one line for weights or data that are neither local nor reachable."""
    fix = f"point {argument}= at a local copy (a folder holding its files) or " if argument else "download it where the hub is reachable and "
    return (f"{what} {repo_id} is not in the local Hugging Face cache ({cache_location()}) and the hub cannot be reached ({reason}): "
            f"{fix}set HF_HOME to the folder whose hub/ cache holds it")  # fmt: skip


def local_dataset_copy_hint(repo_id: str, folder: str | None = None) -> str:
    """The offline way to a hub dataset, added to its unreachable line: ``datasets`` (3.x, offline) reads a folder
    named like the repository in the working directory ``folder`` (default: the current one) in the hub's own
    layout, README "Mixing with lmms-eval's own audio benchmarks"."""
    where = os.path.join(folder or os.getcwd(), repo_id)
    return f", or put a copy in the hub's layout (its README.md and parquet files, e.g. a git clone) in {where} (README: Mixing with lmms-eval's own audio benchmarks)"


#: How a value that can only be a file-system path starts (a hub id never does).
_PATH_START = ("/", "./", "../", "~")


def missing_path_line(argument: str, value: str) -> str:
    """The one line for ``argument=value`` naming a path that does not exist (with its deepest existing folder)."""
    path = os.path.abspath(os.path.expanduser(value))
    existing = os.path.dirname(path)
    while existing and not os.path.isdir(existing) and existing != os.path.dirname(existing):
        existing = os.path.dirname(existing)
    return (f"{argument}={value}: no such file or folder ({path}; the deepest folder of it that exists: {existing}); "
            f"point {argument}= at the folder holding the weights, or give a hub id (org/name)")  # fmt: skip


def weights_problem(model_args) -> str | None:
    """One line when ``--model_args`` names weights that cannot be loaded, else ``None``: a path (starting with
    ``/``, ``./``, ``../`` or ``~``) that does not exist (:func:`missing_path_line`; transformers and faster-whisper
    would take it for a malformed hub id), or hub weights that are neither cached nor reachable.

    Of the other values, only those shaped like a hub id (``org/name``) that are not an existing path are checked;
    the probe runs only when such a value is missing from the cache.
    """
    for argument in WEIGHT_ARGUMENTS:
        value = model_arguments(model_args).get(argument, "")
        if value.startswith(_PATH_START) and not os.path.exists(os.path.expanduser(value)):
            return missing_path_line(argument, value)
        if not value or os.path.exists(os.path.expanduser(value)) or not HUB_ID.match(value) or is_cached(value):
            continue
        reason = hub_unreachable_reason()
        if reason:
            return unreachable_line("model weights", value, reason, argument)
    return None


def _chain(error: BaseException):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def repo_in_error(error: BaseException) -> tuple[str | None, str]:
    """``(repo id, "model" | "dataset")`` named by an error chain's messages or its traceback's ``repo_id``/``path``."""
    for item in _chain(error):
        traceback = item.__traceback__
        while traceback is not None:
            names = traceback.tb_frame.f_locals
            for key in ("repo_id", "path", "dataset_path", "pretrained_model_name_or_path"):
                value = names.get(key)
                if isinstance(value, str) and HUB_ID.match(value) and not os.path.exists(value):
                    kind = names.get("repo_type")
                    return value, "dataset" if kind == "dataset" or "datasets" in traceback.tb_frame.f_code.co_filename else "model"
            traceback = traceback.tb_next
    for item in _chain(error):
        found = _QUOTED_ID.search(str(item))
        if found and not os.path.exists(found.group(1)):
            return found.group(1), "model"
    return None, "model"


def _raised_in_hub_client(error: BaseException) -> bool:
    """True when a traceback of the error chain passes through huggingface_hub (a hub call failed)."""
    for item in _chain(error):
        traceback = item.__traceback__
        while traceback is not None:
            if f"{os.sep}huggingface_hub{os.sep}" in traceback.tb_frame.f_code.co_filename:
                return True
            traceback = traceback.tb_next
    return False


def hub_failure_line(error: BaseException) -> str | None:
    """One line for a run that failed because the hub could not be reached; ``None`` for other failures.

    An error counts when its chain holds one of :data:`HUB_ERROR_NAMES`, or a "Can't load ..." / "Token is
    required" message, names a hub repository or was raised inside huggingface_hub (so a local model server that
    is down is not blamed on the hub), and the hub is unreachable now (:func:`hub_unreachable_reason`).
    """
    names = {type(item).__name__ for item in _chain(error)}
    text = " ".join(str(item) for item in _chain(error))
    if not (names & set(HUB_ERROR_NAMES) or "Can't load" in text or "Token is required" in text or "offline mode" in text.lower()):
        return None
    repo_id, kind = repo_in_error(error)
    if repo_id is None and not _raised_in_hub_client(error):  # e.g. a local model server that is down: not the hub
        return None
    reason = hub_unreachable_reason()
    if reason is None:
        return None
    if repo_id is None:
        return (f"the Hugging Face hub cannot be reached ({reason}) and what this run needs from it is not in the local cache "
                f"({cache_location()}): run once where the hub is reachable, or set HF_HOME to the folder whose hub/ cache holds it")  # fmt: skip
    if kind == "dataset":
        return unreachable_line("dataset", repo_id, reason, argument=None) + local_dataset_copy_hint(repo_id)
    return unreachable_line("model files", repo_id, reason)
