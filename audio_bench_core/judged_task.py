"""One judged task, all items: the judge pass of a task (:func:`judge_task`) and its scores per dimension
(:class:`JudgedTask`). Part of :mod:`audio_bench_core.judge`."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from loguru import logger

from audio_bench_core import judge_budget, run_status
from audio_bench_core.judge_client import Judge
from audio_bench_core.judge_config import JudgeConfig, _mask, scrub
from audio_bench_core.judge_identity import AuditSettings, audit, judge_models, refresh
from audio_bench_core.judge_reply import JudgeRequest, Validator, _snippet

#: What a task's score function returns for one reply: the score (a finite number) when the reply yields a
#: valid one; otherwise a one-line reason (str), or None for "no score in the reply". A task that judges more
#: than a number returns its own object for a valid reply (MMAC's ``Judgment``); it is kept as it is, and
#: :attr:`JudgedDimension.mean` then does not apply (the task aggregates its values itself).
ScoreResult = float | int | str | object | None
ScoreFunction = Callable[[str], ScoreResult]


def read_score(result: ScoreResult, reply: str | None) -> tuple[float | object | None, str | None]:
    """``(score, None)`` for a valid score (or a task's judgment object), ``(None, reason)`` otherwise, from a
    score function's ``result``.

    Raises:
        TypeError: ``result`` is none of the :data:`ScoreResult` forms.
    """
    if isinstance(result, str):
        return None, result
    if result is None:
        return None, f"no score in the judge reply {_snippet(reply)}"
    if isinstance(result, bool):
        raise TypeError(f"a score function returned {result!r}; expected a number, a reason (str), a task's judgment object or None")
    if not isinstance(result, (int, float)):
        return result, None  # a task-defined judgment (e.g. MMAC's), valid by construction
    if not math.isfinite(result):
        return None, f"the score read from the judge reply {_snippet(reply)} is {result}"
    return float(result), None



def validator(score_function: ScoreFunction) -> Validator:
    """The :data:`Validator` of a score function: None when it yields a valid score, else its reason."""
    return lambda content: read_score(score_function(content), content)[1]


# ------------------------------------------------------------------------------ one judged task, all items
@dataclass(frozen=True)
class JudgedDimension:
    """The judge scores of one dimension (one judge prompt) over a task's items.

    ``values``: the scores of the items that were judged; ``failed``: ``(item label, reason)`` of the
    judge_failed items (call failed after retries, no valid score in the reply, reasoning that never closed, or
    not made because the pass stopped), which are not in ``values``. ``strict``: the same replies read by the
    task's stricter rule, when it gave one (``strict_score`` of :func:`judge_task`), with its own ``values`` and
    ``failed``; ``strict_differs``: how many replies the main rule scored that the strict rule refused or read as
    another number. ``keys``: the document key of each value (``values[i]`` is the score of the item whose ``key``,
    else ``id``, is ``keys[i]``), for per-document use (:meth:`by_key`).
    """

    values: tuple[float, ...]
    failed: tuple[tuple[str, str], ...]
    strict: "JudgedDimension | None" = None
    strict_differs: int = 0
    keys: tuple[str, ...] = ()

    def by_key(self) -> dict[str, float | object]:
        """``{document key: score}`` of the judged items (judge_failed items are absent).

        Raises:
            ValueError: the pass recorded no keys for its values (``keys`` and ``values`` differ in length).
        """
        if len(self.keys) != len(self.values):
            raise ValueError(f"{len(self.values)} judge scores but {len(self.keys)} document keys")
        return dict(zip(self.keys, self.values))

    @property
    def mean(self) -> float | None:
        """Mean of ``values``; None when no item was judged."""
        return sum(self.values) / len(self.values) if self.values else None


@dataclass(frozen=True)
class JudgedTask:
    """All judge scores of one task (``dimensions``) and the provenance of the pass that made them."""

    dimensions: dict[str, JudgedDimension]
    provenance: dict

    def count(self, name: str) -> int:
        """A count of the pass from its provenance: ``reasoning_read_past`` (replies whose verdict was read after the
        judge's reasoning), ``unfinished_reasoning`` (replies whose reasoning never closed: judge_failed),
        ``uncached_replies`` (usable replies not stored: no cache, or a write failed)."""
        return int(self.provenance[name])

    def partial_reason(self, names=None) -> str | None:
        """When the judge budget (``AUDIO_JUDGE_MAX_CALLS``) left calls of the dimensions ``names`` (default: all) unmade,
        the value their figures read instead of a number: ``"not computed: partial: n of N judge calls made ..."`` (the
        means over the judged items stay in the ``judge`` provenance, ``per_metric`` -> ``partial_mean``); None when every
        call of them was made."""
        per_metric = self.provenance.get("per_metric", {})
        chosen = [per_metric[name] for name in (names if names is not None else per_metric) if name in per_metric]
        skipped = sum(entry.get("skipped_budget", 0) for entry in chosen)
        if not skipped:
            return None
        total = sum(entry["judged"] + entry["failed"] for entry in chosen)  # the skipped calls are among the failed
        return (
            f"not computed: partial: {total - skipped} of {total} judge calls made, {skipped} not made: judge budget reached "
            f"({judge_budget.MAX_CALLS_VAR}; counted in judge_skipped_budget; the partial means are in 'judge')"
        )


_PASSES: dict[str, JudgedTask | str] = {}
_SHOWN_FAILURES = 20
_LOGGED: set[tuple[str, str]] = set()


def item_label(item: dict) -> str:
    """How failures name an item: its ``key`` (unique per document), with its ``id`` when the two differ."""
    key, ident = item.get("key", item["id"]), item["id"]
    return str(key) if str(key) == str(ident) else f"{key} (id {ident})"


def judge_task(
    task: str,
    items: list[dict],
    requests_for_item: Callable[[dict], dict[str, JudgeRequest]],
    score_from_reply: ScoreFunction | Mapping[str, ScoreFunction],
    prompt_hashes: dict[str, str],
    config: JudgeConfig | None = None,
    *,
    strict_score: ScoreFunction | Mapping[str, ScoreFunction] | None = None,
    client: Callable[[JudgeConfig], Judge] | None = None,
) -> JudgedTask | str:
    """Judge every item of a task on every dimension, once per process for the same items and settings.

    Every reply is read past the judge's reasoning (:attr:`JudgeReply.final`): score functions see only the final
    text, and a reply whose reasoning never closed is judge_failed (no verdict) whatever they would say.

    Args:
        task: task name, for the progress bar, the log and the provenance.
        items: per-document records; each has an ``"id"``, and a ``"key"`` where the id is not unique per
            document (failures then name ``"<key> (id <id>)"``).
        requests_for_item: item -> ``{dimension: JudgeRequest}`` (items may have different dimensions, or none).
        score_from_reply: the judge's final text -> :data:`ScoreResult`: the score when the reply yields a valid
            one, else the reason (str) or None. One function, or ``{dimension: function}``. A function that takes
            a keyword argument ``item`` is also given the item (a reading that depends on it: MCGA SEC-S appends
            the item's CER text, MMAC sets aside verdicts quoted from the caption). Only replies that yield a
            valid score are cached; the others are asked again within the attempt budget, then the item is
            judge_failed with the reason.
        prompt_hashes: ``{template name: hash}`` of the judge prompts, copied into the provenance.
        config: judge settings (default :meth:`JudgeConfig.from_env`).
        strict_score: optional, keyword-only: a second, stricter reading of the same replies (same forms as
            ``score_from_reply``); it decides nothing about caching or asking again. Its values and failures are
            :attr:`JudgedDimension.strict`.
        client: optional, keyword-only: ``config -> judge client`` making the calls of the pass (default
            :class:`Judge` itself); anything with :class:`Judge`'s ``complete_many``, ``request_params`` and
            ``provenance``. Our tasks pass :class:`lmms_eval_tasks.judge_provider.LlmJudgeClient`, which reaches the same
            client through lmms-eval's ``llm_judge`` provider and its ``Request``/``Response`` types.

    Returns:
        The :class:`JudgedTask`, or a one-line "not computed: ..." reason: no judge configured, a bad
        ``AUDIO_JUDGE_*`` value, or any error inside the pass (logged with its traceback; other tasks'
        results are not affected). The several aggregations of one task call this with the same items; the
        first call judges, the others get the same object (or reason) back: no second pass.
    Raises:
        KeyboardInterrupt: Ctrl-C while judging (replies finished before it are cached).
    """
    try:
        config = config or JudgeConfig.from_env()
        audit_settings = AuditSettings.from_env()
    except ValueError as error:
        return _log_once(f"not computed: {error}", task)
    if not config.configured:
        return _log_once(config.not_configured_reason(), task)
    memo_key = hashlib.sha256(
        json.dumps([task, items, dataclasses.astuple(config), dataclasses.astuple(audit_settings)], ensure_ascii=False, sort_keys=True, default=str)
        .encode("utf-8", "surrogatepass")
    ).hexdigest()
    if memo_key in _PASSES:
        return _PASSES[memo_key]
    try:
        result: JudgedTask | str = _judge_pass(task, items, requests_for_item, score_from_reply, prompt_hashes, config, strict_score, client or Judge, audit_settings)
    except Exception as error:  # noqa: BLE001 - any judge error costs only the judged metrics, never the run
        result = f"not computed: the judge failed ({type(error).__name__}: {scrub(error, config, limit=1000)})"
        # The traceback as masked text: a logger's own traceback rendering may print local variables (the key among them).
        trace = _mask("".join(traceback.format_exception(error)), config.secrets())
        logger.error(f"judge {task}: {result}; the task's other metrics and other tasks are not affected\n{trace}")
    _PASSES[memo_key] = result
    return result


def _bound(function: ScoreFunction, item: dict) -> ScoreFunction:
    """``function`` with ``item`` given when it takes a keyword argument ``item`` (see :func:`judge_task`)."""
    try:
        takes_item = "item" in inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature (e.g. float)
        takes_item = False
    return partial(function, item=item) if takes_item else function


def _judge_pass(task, items, requests_for_item, score_from_reply, prompt_hashes, config, strict_score, client, audit_settings=AuditSettings()) -> JudgedTask:
    def per_dimension(function, dimension):
        return function[dimension] if isinstance(function, Mapping) else function

    judge = client(config)
    if audit_settings.refresh:
        refresh(judge)
    planned = [(item, dimension, request) for item in items for dimension, request in requests_for_item(item).items()]
    readers = [_bound(per_dimension(score_from_reply, dimension), item) for item, dimension, _ in planned]
    replies = judge.complete_many([request for _, _, request in planned], description=f"judge {task}", validate=[validator(read) for read in readers])
    identity = _identity(task, judge, planned, readers, replies, audit_settings)
    values: dict[str, list] = {}
    failed: dict[str, list[tuple[str, str]]] = {}
    strict_values: dict[str, list] = {}
    strict_failed: dict[str, list[tuple[str, str]]] = {}
    differs: Counter = Counter()

    keys: dict[tuple[str, bool], list[str]] = {}  # (dimension, strict) -> document key of each value

    def record(read, reply, label, scored: list, unscored: list, key: str, scored_keys: list):
        """Read one reply (a failed call has no score), file it under ``scored`` (its key under ``scored_keys``) or
        ``unscored``; return the score."""
        score, reason = read_score(read(reply.final), reply.final) if reply.ok else (None, reply.error)
        if score is not None:
            scored.append(score)
            scored_keys.append(key)
        else:
            unscored.append((label, reason))
        return score

    for (item, dimension, _), read, reply in zip(planned, readers, replies):
        label, key = item_label(item), str(item.get("key", item["id"]))
        for table in (values, failed, strict_values, strict_failed):
            table.setdefault(dimension, [])
        score = record(read, reply, label, values[dimension], failed[dimension], key, keys.setdefault((dimension, False), []))
        if strict_score is not None:
            strict = record(_bound(per_dimension(strict_score, dimension), item), reply, label, strict_values[dimension], strict_failed[dimension], key,
                            keys.setdefault((dimension, True), []))  # fmt: skip
            differs[dimension] += score is not None and strict != score
    dimensions = {
        name: JudgedDimension(
            tuple(values[name]),
            tuple(failed[name]),
            JudgedDimension(tuple(strict_values[name]), tuple(strict_failed[name]), keys=tuple(keys.get((name, True), ()))) if strict_score is not None else None,
            differs[name],
            keys=tuple(keys.get((name, False), ())),
        )
        for name in values
    }
    def limit(params: dict):
        """The token limit sent, under whichever name the judge family takes it."""
        return params.get("max_tokens", params.get("max_completion_tokens", "server default"))

    max_tokens = {dimension: limit(judge.request_params(request)) for _, dimension, request in planned}

    def listed(failures):
        return [f"{label}: {reason}" for label, reason in failures[:_SHOWN_FAILURES]]

    over_budget = Counter(dimension for (_, dimension, _), reply in zip(planned, replies) if reply.kind == judge_budget.BUDGET)
    provenance = {
        **judge.provenance(),
        **identity,
        "prompt_sha256_16": prompt_hashes,
        "strict_differs": sum(differs.values()) if strict_score is not None else "not applicable",
        "per_metric": {
            name: {
                "max_tokens": max_tokens[name],
                "judged": len(dimension.values),
                "failed": len(dimension.failed),
                "failed_items": listed(dimension.failed),
                **(
                    {"strict": {"judged": len(dimension.strict.values), "failed": len(dimension.strict.failed), "differs": dimension.strict_differs,
                                "failed_items": listed(dimension.strict.failed)}}
                    if dimension.strict is not None else {}
                ),  # fmt: skip
                **(
                    {"skipped_budget": over_budget[name], "partial_mean": dimension.mean if all(isinstance(v, float) for v in dimension.values) else "computed by the task"}
                    if over_budget[name] else {}
                ),  # fmt: skip
            }
            for name, dimension in dimensions.items()
        },
    }
    estimate = judge_budget.estimate_of(task)
    if estimate is not None:
        provenance["estimate"] = estimate.as_dict()  # beside usage_reported: what the replies said they used
    skipped = provenance["judge_skipped_budget"]
    if skipped:
        run_status.mark(
            task, run_status.INCOMPLETE,
            f"{skipped} of {len(planned)} judge requests not made: {judge_budget.MAX_CALLS_VAR}={config.max_calls} was reached; "
            "its judged figures read 'not computed: partial' (judge_skipped_budget; the partial means in 'judge')",
        )  # fmt: skip
    _log_summary(task, dimensions, provenance)
    return JudgedTask(dimensions, provenance)


def _identity(task, judge, planned, readers, replies, audit_settings: AuditSettings) -> dict:
    """Which judge made the pass's verdicts (:mod:`audio_bench_core.judge_identity`): the reported models behind the
    figures, and the audit of the cached verdicts (``AUDIO_JUDGE_AUDIT``); ``refresh`` as set (``AUDIO_JUDGE_REFRESH``)."""
    labels = [f"{dimension} {item_label(item)}" for item, dimension, _ in planned]
    checked = audit(task, judge, [request for _, _, request in planned], replies, readers, labels, audit_settings)
    return {**judge_models(task, replies, judge.config), **checked, "refresh": audit_settings.refresh}


def _log_summary(task: str, dimensions: dict[str, JudgedDimension], provenance: dict) -> None:
    """One line per judged task: a warning with the judge_failed share and the first reason, else an info line;
    and a line when verdicts were read past the judge's reasoning."""
    total = sum(len(d.values) + len(d.failed) for d in dimensions.values())
    failures = [(name, label, reason) for name, d in dimensions.items() for label, reason in d.failed]
    calls = f"cache hits {provenance['cache_hits']}, API calls {provenance['api_calls']}" + (f", audit calls {provenance['audit_calls']}" if provenance.get("audit_calls") else "")
    if provenance["reasoning_read_past"] or provenance["unfinished_reasoning"]:
        logger.info(
            f"judge {task}: {provenance['reasoning_read_past']} verdicts read after the judge's reasoning; "
            f"{provenance['unfinished_reasoning']} replies whose reasoning never closed (no verdict: judge_failed)"
        )
    if not failures:
        logger.info(f"judge {task}: {total} judge scores, none judge_failed ({calls})")
        return
    name, label, reason = failures[0]
    logger.warning(
        f"judge {task}: {len(failures)} of {total} judge scores ({100 * len(failures) / total:.1f}%) are judge_failed "
        f"and left out of the means ({calls}); first: {name} {label}: {reason}; all listed in the 'judge' metric"
    )


def _log_once(message: str, task: str) -> str:
    """Warn ``message`` once per task and process (the task's aggregations each ask), and return it."""
    if (task, message) not in _LOGGED:
        _LOGGED.add((task, message))
        logger.warning(f"judge {task}: {message}")
    return message

