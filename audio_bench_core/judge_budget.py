"""The judge-call budget of a process (``AUDIO_JUDGE_MAX_CALLS``) and the cost estimate of a judge pass before it runs.
Part of :mod:`audio_bench_core.judge`.

Budget: every HTTP attempt to the judge (first tries, retries and the resend of a request whose field the endpoint
refused) takes one call from one count shared by every judge pass of the process (all tasks of a run); replies served
from the cache take none. When none is left, the pass makes no further call: the items not judged fail with kind
:data:`BUDGET` (never cached), the pass counts them (``judge_skipped_budget``) and the task is marked incomplete
(:mod:`audio_bench_core.run_status`): its judged figures cover only the judged items, and the exit status says so.

Estimate: :func:`estimate_requests` sums, over the requests a pass would send, the number of calls, the prompt tokens
(:func:`approx_tokens` of every message) and the completion tokens (each request's token limit, or a stated
assumption where it has none), and a cost
when the user set prices (``AUDIO_JUDGE_PRICE_IN`` / ``AUDIO_JUDGE_PRICE_OUT``, currency per million tokens).
"""

from __future__ import annotations

import math
import os
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Failure kind of an item the budget left unjudged.
BUDGET = "budget"
MAX_CALLS_VAR = "AUDIO_JUDGE_MAX_CALLS"
PRICE_VARS = ("AUDIO_JUDGE_PRICE_IN", "AUDIO_JUDGE_PRICE_OUT")
#: Tokens added per message for the chat format's role and separators (OpenAI's cookbook counts 3-4).
MESSAGE_OVERHEAD_TOKENS = 4


class CallBudget:
    """At most ``max_calls`` judge calls (None: no limit), taken one at a time from any thread."""

    def __init__(self, max_calls: int | None) -> None:
        self.max_calls, self.used, self.refused = max_calls, 0, 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Take one call; False (and counted in :attr:`refused`) when none is left."""
        with self._lock:
            if self.max_calls is not None and self.used >= self.max_calls:
                self.refused += 1
                return False
            self.used += 1
            return True

    def reason(self) -> str:
        """Why a call was not made, one line."""
        return f"not judged: the judge-call budget {MAX_CALLS_VAR}={self.max_calls} was reached"


_PROCESS: dict[str, CallBudget] = {}
_PROCESS_LOCK = threading.Lock()


def process_budget(max_calls: int | None) -> CallBudget:
    """The process's :class:`CallBudget` for ``max_calls`` (one per process; a new one when the limit changes)."""
    with _PROCESS_LOCK:
        budget = _PROCESS.get("budget")
        if budget is None or budget.max_calls != max_calls:
            budget = _PROCESS["budget"] = CallBudget(max_calls)
        return budget


def reset_process_budget() -> None:
    """Forget the process's budget and estimates (the next pass starts a fresh count): for tests and for a new run in
    one process."""
    with _PROCESS_LOCK:
        _PROCESS.clear()
        _ESTIMATES.clear()


def approx_tokens(text: str) -> int:
    """Approximate token count of ``text`` (int >= 0), stated, not a tokenizer: one token per CJK, kana or hangul
    character (what BPE vocabularies of the common judges give for classical Chinese, within about a third), one per
    four other non-space characters, rounded up. Persian and other scripts are counted as "other"."""
    wide = sum(1 for char in text if unicodedata.east_asian_width(char) in ("W", "F"))
    other = sum(1 for char in text if not char.isspace()) - wide
    return wide + math.ceil(other / 4)


#: Completion tokens assumed for a request that leaves its limit to the server (a verdict with a short reason).
ASSUMED_COMPLETION_TOKENS = 256


@dataclass(frozen=True)
class JudgeEstimate:
    """What a judge pass is expected to send: ``calls`` (requests, one call each without retries), ``prompt_tokens``
    (approximate), ``completion_tokens`` (each request's token limit, or :data:`ASSUMED_COMPLETION_TOKENS` for the
    ``unbounded`` requests that leave it to the server), ``cost`` (at the user's prices per million tokens; None
    without prices)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    unbounded: int
    cost: float | None

    def as_dict(self) -> dict:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "requests_without_token_limit": self.unbounded, "cost": self.cost}  # fmt: skip

    def line(self, task: str) -> str:
        """One line for the log: ``judge estimate <task>: N calls, ~P prompt tokens, C completion tokens[, cost]``."""
        if self.unbounded:
            completion = f"~{self.completion_tokens:,} completion tokens ({self.unbounded:,} requests without a token limit assumed {ASSUMED_COMPLETION_TOKENS} each)"
        else:
            completion = f"<= {self.completion_tokens:,} completion tokens"
        if self.cost is not None:
            cost = f", cost ~{self.cost:.4f} at {PRICE_VARS[0]}/{PRICE_VARS[1]} per million tokens"
        else:
            cost = f" (set {PRICE_VARS[0]} and {PRICE_VARS[1]}, per million tokens, for a cost)"
        return f"judge estimate {task}: {self.calls:,} calls, ~{self.prompt_tokens:,} prompt tokens, {completion}{cost}"


def prices_from_env() -> tuple[float, float] | None:
    """``(price in, price out)`` per million tokens from :data:`PRICE_VARS`, None when either is unset.

    Raises:
        ValueError: a price is not a number >= 0 (the variable named).
    """
    raw = [os.environ.get(name, "").strip() for name in PRICE_VARS]
    if not all(raw):
        return None
    prices = []
    for name, value in zip(PRICE_VARS, raw):
        try:
            price = float(value)
        except ValueError:
            raise ValueError(f"{name}={value!r} is not a number") from None
        if not math.isfinite(price) or price < 0:
            raise ValueError(f"{name}={value!r} must be a number >= 0")
        prices.append(price)
    return prices[0], prices[1]


def estimate_requests(requests: Iterable[tuple[Sequence[tuple[str, str]], int | None]], prices: tuple[float, float] | None = None) -> JudgeEstimate:
    """The :class:`JudgeEstimate` of ``requests``: ``(messages as (role, content) pairs, token limit or None)`` each.

    Prompt tokens: :func:`approx_tokens` of every message's content plus :data:`MESSAGE_OVERHEAD_TOKENS` per message.
    Completion tokens: each request's limit (what a judge may write; short verdicts write fewer), or
    :data:`ASSUMED_COMPLETION_TOKENS` where there is none.
    """
    calls = prompt = completion = unbounded = 0
    for messages, limit in requests:
        calls += 1
        prompt += sum(approx_tokens(content) + MESSAGE_OVERHEAD_TOKENS for _, content in messages)
        completion += ASSUMED_COMPLETION_TOKENS if limit is None else limit
        unbounded += limit is None
    cost = (prompt * prices[0] + completion * prices[1]) / 1e6 if prices is not None else None
    return JudgeEstimate(calls, prompt, completion, unbounded, cost)

_ESTIMATES: dict[str, JudgeEstimate] = {}


def record_estimate(task: str, estimate: JudgeEstimate) -> None:
    """Keep ``task``'s estimate for its judge pass, which puts it in its provenance (``estimate``) beside the usage the
    replies reported."""
    _ESTIMATES[task] = estimate


def estimate_of(task: str) -> JudgeEstimate | None:
    """The estimate recorded for ``task`` in this process, or None."""
    return _ESTIMATES.get(task)
