"""Which judge made the verdicts: the audit of cached verdicts, re-judging, and verdicts of several judges in one figure.
Part of :mod:`audio_bench_core.judge`.

The identity of a judge is the model the server reports in each reply (:attr:`JudgeReply.reported_model`, stored with
every cached reply), not only the configured name (``AUDIO_JUDGE_MODEL``): an endpoint can put another model behind the
same name and URL, and a cache keyed by the request would then keep serving the first judge's verdicts. So:

- **Audit** (``AUDIO_JUDGE_AUDIT``, default :data:`AUDIT_DEFAULT`; 0 turns it off): when a pass served verdicts from
  the cache, a small deterministic sample of them (the distinct cached requests with the smallest cache keys, i.e.
  sha256 of the request: the same sample every run, spread over items and dimensions) is asked again, bypassing the
  cache, by a second :class:`~audio_bench_core.judge_client.Judge` of the same settings whose replies are never stored.
  The fresh verdicts (read by the task's own score function) are compared with the cached ones; when the reported model
  or a verdict differs, a warning says so, and the provenance records both models, the sample size, the agreement and
  that the judge changed (:func:`audit`). The figures keep the cached verdicts.
- **Re-judging** (``AUDIO_JUDGE_REFRESH=1``): every item is asked again and its cached row replaced (:func:`refresh`).
- **Mixed judges**: when the verdicts behind a pass's figures come from more than one reported model (cached rows of
  two models, or cached and fresh of two), the provenance says so with counts per model and a warning is logged
  (:func:`judge_models`).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loguru import logger

from audio_bench_core.judge_cache import _NoCache
from audio_bench_core.judge_config import ENV_PREFIX, JudgeConfig
from audio_bench_core.judge_reply import JudgeReply, JudgeRequest

#: Cached verdicts asked again per pass when ``AUDIO_JUDGE_AUDIT`` is unset.
AUDIT_DEFAULT = 5
#: What the provenance names a reply without a ``model`` field as.
NOT_REPORTED = "(not reported)"
_SHOWN_DIFFERENCES = 20
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class AuditSettings:
    """``size``: cached verdicts re-asked per pass (``AUDIO_JUDGE_AUDIT``, >= 0, 0 = no audit); ``refresh``: re-ask every
    item and replace its cached row (``AUDIO_JUDGE_REFRESH``: 1/true/yes/on or 0/false/no/off)."""

    size: int = AUDIT_DEFAULT
    refresh: bool = False

    @classmethod
    def from_env(cls) -> "AuditSettings":
        """The settings from the environment.

        Raises:
            ValueError: ``AUDIO_JUDGE_AUDIT`` is not an integer >= 0, or ``AUDIO_JUDGE_REFRESH`` not a yes/no word.
        """
        raw = os.environ.get(f"{ENV_PREFIX}AUDIT", "").strip()
        try:
            size = int(raw) if raw else AUDIT_DEFAULT
        except ValueError:
            raise ValueError(f"{ENV_PREFIX}AUDIT={raw!r} is not a valid int") from None
        if size < 0:
            raise ValueError(f"{ENV_PREFIX}AUDIT={raw!r} must be >= 0")
        flag = os.environ.get(f"{ENV_PREFIX}REFRESH", "").strip().lower()
        if flag not in _TRUE + _FALSE:
            raise ValueError(f"{ENV_PREFIX}REFRESH={flag!r} must be 1 or 0 (true/false, yes/no, on/off)")
        return cls(size=size, refresh=flag in _TRUE)


class _Refreshing:
    """A cache that reads nothing and replaces on write: every request of the pass is asked again and its row replaced."""

    def __init__(self, cache) -> None:
        self._cache, self.path = cache, cache.path

    @property
    def recovered(self) -> list[dict]:
        return self._cache.recovered

    def get(self, key: str) -> None:
        return None

    def get_many(self, keys: Sequence[str], usage: bool = False) -> dict:
        return {}

    def put_many(self, rows: Sequence[tuple]) -> list[tuple[int, str]]:
        return self._cache.put_many([(*row[:4], True, *row[5:]) for row in rows])


class _Unstored(_Refreshing):
    """The audit's cache: reads nothing, stores nothing (the cached rows stay as they are)."""

    def put_many(self, rows: Sequence[tuple]) -> list[tuple[int, str]]:
        return []


def core_judge(client):
    """The :class:`~audio_bench_core.judge_client.Judge` of a pass's client: the client itself, or the one a wrapping
    client names as ``core_judge`` (lmms_eval_tasks.judge_provider.LlmJudgeClient, the pass through ``llm_judge``)."""
    return getattr(client, "core_judge", client)


def refresh(client) -> None:
    """Make the pass's client (a :class:`~audio_bench_core.judge_client.Judge`, or a client naming one: :func:`core_judge`)
    ask every request again and replace the cached rows (``AUDIO_JUDGE_REFRESH=1``). A pass without a cache (it could
    not be opened) is left as it is."""
    judge = core_judge(client)
    if not isinstance(judge.cache, _NoCache):
        judge.cache = _Refreshing(judge.cache)


def model_name(reply: JudgeReply) -> str:
    """The reported model of ``reply``, or :data:`NOT_REPORTED`."""
    return reply.reported_model or NOT_REPORTED


def verdict(score: object) -> object:
    """What two readings of a reply are compared by: a number as it is; a task's judgment object (a dataclass, e.g.
    MMAC's ``Judgment``) as the tuple of its fields other than ``reason`` (the judge's words may differ, the verdict not)."""
    if dataclasses.is_dataclass(score) and not isinstance(score, type):
        return tuple(getattr(score, f.name) for f in dataclasses.fields(score) if f.name != "reason")
    return score


def judge_models(task: str, replies: Sequence[JudgeReply | None], config: JudgeConfig) -> dict:
    """The reported models behind the figures of a pass: ``judge_models`` ``{model: verdicts}`` over the replies that
    gave one (``ok``), ``judge_models_by_source`` (``cached`` / ``fresh``, each ``{model: n}``) and ``judge_models_mixed``
    (None, or a sentence when more than one model made them, also logged as a warning)."""
    by_source: dict[str, Counter] = {"cached": Counter(), "fresh": Counter()}
    for reply in replies:
        if reply is not None and reply.ok:
            by_source["cached" if reply.cached else "fresh"][model_name(reply)] += 1
    models = by_source["cached"] + by_source["fresh"]
    mixed = None
    if len(models) > 1:
        counts = ", ".join(f"{model} {n}" for model, n in models.most_common())
        sources = "; ".join(f"{source}: " + ", ".join(f"{m} {n}" for m, n in c.most_common()) for source, c in by_source.items() if c)
        mixed = (f"the verdicts behind these figures come from {len(models)} reported judge models ({counts}; {sources}), "
                 f"configured {config.model!r}; set {ENV_PREFIX}REFRESH=1 to re-judge every item with one judge")  # fmt: skip
        logger.warning(f"judge {task}: {mixed}")
    return {"judge_models": dict(models), "judge_models_by_source": {k: dict(v) for k, v in by_source.items()}, "judge_models_mixed": mixed}


def audit_sample(keys: Sequence[str], replies: Sequence[JudgeReply | None], size: int) -> list[int]:
    """Indices of the requests to audit: among the cached verdicts (``ok`` and ``cached``), one index per distinct cache
    key, the ``size`` smallest keys (a key is the sha256 of the request: deterministic, independent of item order)."""
    first: dict[str, int] = {}
    for index, (key, reply) in enumerate(zip(keys, replies)):
        if reply is not None and reply.ok and reply.cached and key not in first:
            first[key] = index
    return [first[key] for key in sorted(first)[:size]]


def audit(
    task: str,
    judge,
    requests: Sequence[JudgeRequest],
    replies: Sequence[JudgeReply | None],
    readers: Sequence[Callable[[str | None], object]],
    labels: Sequence[str],
    settings: AuditSettings,
) -> dict:
    """Re-ask a sample of the cached verdicts of a pass, fresh, and compare (see the module docstring).

    Args:
        task: for the log.
        judge: the pass's :class:`~audio_bench_core.judge_client.Judge` (its settings and cache keys are used; its counts
            are not touched: the audit's calls are made by a second client and counted apart).
        requests, replies, readers, labels: per request of the pass: the request, its reply, the reading that gives its
            verdict (reply text -> score, the task's score function: :func:`audio_bench_core.judged_task.read_score`
            form) and how failures name it (``"<dimension> <item>"``).
        settings: :class:`AuditSettings`.
    Returns:
        ``{"audit_calls": n, "audit": {...}}``. ``audit`` holds ``size`` (as set), ``audited`` (requests re-asked),
        ``eligible`` (distinct cached verdicts), ``compared`` (re-asked requests that gave a verdict), ``agreed``,
        ``agreement`` (agreed / compared, a fraction; None when nothing was compared), ``failed`` (re-asks without a
        verdict, with ``failed_items``), ``cached_models`` / ``fresh_models`` (``{model: n}`` of the audited requests),
        ``model_changed``, ``changed`` (True when a model or a verdict differs; None when nothing was compared and the
        models agree), ``differences`` (first 20: ``"<label>: cached <v> (<model>), fresh <v> (<model>)"``) and
        ``skipped`` (why no audit ran, else None).
    """
    from audio_bench_core.judge_client import Judge
    from audio_bench_core.judged_task import read_score, validator

    judge = core_judge(judge)
    record = {"size": settings.size, "audited": 0, "eligible": 0, "compared": 0, "agreed": 0, "agreement": None, "failed": 0, "failed_items": [],
              "cached_models": {}, "fresh_models": {}, "model_changed": False, "changed": False, "differences": [], "skipped": None}  # fmt: skip
    keys = [judge.cache_key(judge.request_params(request)) for request in requests]
    eligible = audit_sample(keys, replies, len(keys))
    record["eligible"] = len(eligible)
    why = None
    if settings.refresh:
        why = f"{ENV_PREFIX}REFRESH=1: every item was asked again"
    elif settings.size == 0:
        why = f"{ENV_PREFIX}AUDIT=0"
    elif not eligible:
        why = "no verdict was served from the cache"
    elif judge.stop_reason is not None:
        why = f"the pass stopped ({judge.stop_reason})"
    budget = getattr(judge, "budget", None)  # the process's judge-call budget (AUDIO_JUDGE_MAX_CALLS): audit calls count in it
    left = None if budget is None or budget.max_calls is None else max(budget.max_calls - budget.used, 0)
    if why is None and left == 0:
        why = f"the judge-call budget {ENV_PREFIX}MAX_CALLS={budget.max_calls} is spent"
    if why is not None:
        return {"audit_calls": 0, "audit": {**record, "skipped": why}}
    chosen = eligible[: settings.size if left is None else min(settings.size, left)]
    fresh_judge = Judge(judge.config)
    fresh_judge.cache = _Unstored(judge.cache)
    fresh = fresh_judge.complete_many([requests[i] for i in chosen], description=f"judge {task} audit",
                                      validate=[validator(readers[i]) for i in chosen])
    cached_models, fresh_models = Counter(), Counter()
    for index, new in zip(chosen, fresh):
        old = replies[index]
        cached_models[model_name(old)] += 1
        old_score = read_score(readers[index](old.final), old.final)[0]
        new_score, reason = read_score(readers[index](new.final), new.final) if new.ok else (None, new.error)
        if new.reported_model is not None or new.ok:
            fresh_models[model_name(new)] += 1
        if model_name(new) != model_name(old) and (new.ok or new.reported_model is not None):
            record["model_changed"] = True
        if new_score is None:
            record["failed"] += 1
            record["failed_items"].append(f"{labels[index]}: {reason}")
            continue
        record["compared"] += 1
        if verdict(new_score) == verdict(old_score):
            record["agreed"] += 1
        elif len(record["differences"]) < _SHOWN_DIFFERENCES:
            record["differences"].append(f"{labels[index]}: cached {_shown(old_score)} ({model_name(old)}), fresh {_shown(new_score)} ({model_name(new)})")
    record.update(audited=len(chosen), cached_models=dict(cached_models), fresh_models=dict(fresh_models))
    if record["compared"]:
        record["agreement"] = record["agreed"] / record["compared"]
    disagree = record["compared"] > record["agreed"]
    record["changed"] = True if record["model_changed"] or disagree else (False if record["compared"] else None)
    calls = fresh_judge.stats["api_calls"]
    _log_audit(task, record, judge.config)
    return {"audit_calls": calls, "audit": record}


def _shown(score: object) -> str:
    value = verdict(score)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _models(counts: dict) -> str:
    return ", ".join(f"{model} ({n})" for model, n in counts.items()) or "none"


def _log_audit(task: str, record: dict, config: JudgeConfig) -> None:
    """A warning when the judge changed (or the audit could not tell), an info line when it did not."""
    agreement = f"{record['agreed']} of {record['compared']} verdicts agree" + (f" ({record['agreement']:.0%})" if record["agreement"] is not None else "")
    what = (f"audit of {record['audited']} cached verdicts asked again: cached by {_models(record['cached_models'])}, "
            f"now answered by {_models(record['fresh_models'])}; {agreement}")  # fmt: skip
    if record["changed"] is False:
        logger.info(f"judge {task}: {what}; the judge is unchanged")
        return
    if record["changed"] is None:
        logger.warning(f"judge {task}: {what}; {record['failed']} re-asks gave no verdict, so the audit could not tell whether the judge changed")
        return
    logger.warning(
        f"judge {task}: the judge changed behind the same settings (model {config.model!r}, endpoint {config.endpoint}): {what}. "
        f"The figures use the cached verdicts; set {ENV_PREFIX}REFRESH=1 to re-judge every item (replaces the cached rows), "
        f"or point {ENV_PREFIX}CACHE at a new file"
    )


def describe(provenance: dict) -> str:
    """One line naming the judge of a pass from its provenance (the ``judge`` metric): the reported model(s) with their
    verdict counts, the configured name where it differs, a mixed pass and a changed judge, e.g.
    ``"deepseek-chat-v2 (9; configured deepseek-chat); audit: judge changed, 2 of 5 agree (40%)"``; ``""`` when the
    provenance names no judge."""
    if not isinstance(provenance, dict):
        return ""
    models = provenance.get("judge_models") or provenance.get("judge_models_reported") or {}
    requested = provenance.get("judge_model_requested")
    if not models and not requested:
        return ""
    names = ", ".join(f"{model} ({n})" for model, n in models.items()) or "no verdict"
    if requested and set(models) != {requested}:
        names += f" [configured {requested}]"
    parts = [names]
    if provenance.get("judge_models_mixed"):
        parts.append(f"MIXED: {len(models)} judges in these figures")
    record = provenance.get("audit")
    if isinstance(record, dict) and record.get("audited"):
        agreement = f"{record.get('agreed')} of {record.get('compared')} agree"
        state = {True: "JUDGE CHANGED", False: "unchanged", None: "undecided"}.get(record.get("changed"), "?")
        fresh = ", ".join(record.get("fresh_models") or {})
        parts.append(f"audit: {state}, {agreement}" + (f", now {fresh}" if record.get("model_changed") else ""))
    return "; ".join(parts)
