"""The LLM judge shared by every judged task (MCGA S2TT and SEC now, MMAC later).

One OpenAI-compatible chat-completions client, configured in one place (:class:`JudgeConfig`, read from
the ``AUDIO_JUDGE_*`` environment variables listed there), with

- a persistent cache of replies (:class:`JudgeCache`, SQLite) keyed by everything that determines a
  reply: endpoint, judge model, the full messages and the sampling parameters. Re-scoring the same
  outputs makes no API call. Failures are never cached;
- bounded concurrency (a thread pool of ``concurrency`` workers) and a progress bar;
- retries with exponential backoff on timeouts, connection errors, HTTP 429 and HTTP 5xx (tenacity);
- failure accounting: a call that still fails comes back as a :class:`JudgeReply` with ``error`` set,
  never as a score. The benchmark code turns that into ``judge_failed``;
- provenance (:meth:`Judge.provenance`): judge model ids as the server reported them, sampling
  parameters, cache hits and misses, retries, failures. The API key is read from the environment
  variable named by ``AUDIO_JUDGE_API_KEY_VAR`` when the client is made and is stored nowhere else.

Why the ``openai`` client and not lmms-eval's ``llm_judge``: ``llm_judge`` has no cache, retries every
error the same way with a fixed sleep and then raises, shares its environment variables with legacy
tasks that read ``OPENAI_API_URL`` differently, and does not return the model id the server reports.
The ``openai`` client gives typed errors (timeout, 429, 5xx) and ``response.model``; tenacity does the
backoff. Importing this module does not import lmms-eval.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from lmms_eval_tasks import cache_dir

ENV_PREFIX = "AUDIO_JUDGE_"


def _env(name: str, default: str) -> str:
    value = os.environ.get(ENV_PREFIX + name, "").strip()
    return value if value else default


@dataclass(frozen=True)
class JudgeConfig:
    """Judge settings. :meth:`from_env` reads each field from ``AUDIO_JUDGE_<FIELD>`` (upper case).

    Defaults follow the MCGA paper and official script: ``deepseek-chat`` at ``https://api.deepseek.com``,
    temperature 0, up to 3 attempts, 60 s timeout, key in ``DEEPSEEK_API_KEY``.

    Attributes:
        base_url: OpenAI-compatible base URL (the client appends ``/chat/completions``).
        model: judge model id sent with every request.
        api_key_var: NAME of the environment variable that holds the API key (the key itself is never
            stored in this object, in logs or in results). The judge counts as configured when that
            variable is set and non-empty; a keyless local server needs any placeholder value.
        temperature: sampling temperature of every judge call.
        max_tokens: if set, replaces the per-prompt ``max_tokens`` of every call (the official values are
            10 for the S2TT prompts and the server default for SEC); reported in the provenance.
        concurrency: judge calls in flight at once (thread pool size), >= 1.
        timeout_s: per-attempt timeout in seconds.
        max_attempts: attempts per call (first try + retries), >= 1.
        retry_wait_s: first backoff wait in seconds; it doubles per retry (with jitter), capped at 60 s.
        cache_path: SQLite file of cached replies (default ``$LMMS_EVAL_AUDIO_PLUGIN_CACHE/judge/replies.sqlite3``).
    """

    base_url: str = "https://api.deepseek.com"
    model: str = "deepseek-chat"
    api_key_var: str = "DEEPSEEK_API_KEY"
    temperature: float = 0.0
    max_tokens: int | None = None
    concurrency: int = 8
    timeout_s: float = 60.0
    max_attempts: int = 3
    retry_wait_s: float = 1.0
    cache_path: Path = field(default_factory=lambda: cache_dir("judge") / "replies.sqlite3")

    @classmethod
    def from_env(cls) -> "JudgeConfig":
        """The configuration from ``AUDIO_JUDGE_*`` variables, defaults for the unset ones.

        Raises:
            ValueError: a variable holds a value of the wrong type or out of range (the message names it).
        """
        defaults = cls()

        def number(name: str, cast, default, minimum):
            raw = _env(name, "")
            if not raw:
                return default
            try:
                value = cast(raw)
            except ValueError:
                raise ValueError(f"{ENV_PREFIX}{name}={raw!r} is not a valid {cast.__name__}") from None
            if value < minimum:
                raise ValueError(f"{ENV_PREFIX}{name}={raw!r} must be >= {minimum}")
            return value

        return cls(
            base_url=_env("BASE_URL", defaults.base_url),
            model=_env("MODEL", defaults.model),
            api_key_var=_env("API_KEY_VAR", defaults.api_key_var),
            temperature=number("TEMPERATURE", float, defaults.temperature, 0.0),
            max_tokens=number("MAX_TOKENS", int, None, 1),
            concurrency=number("CONCURRENCY", int, defaults.concurrency, 1),
            timeout_s=number("TIMEOUT", float, defaults.timeout_s, 0.001),
            max_attempts=number("MAX_ATTEMPTS", int, defaults.max_attempts, 1),
            retry_wait_s=number("RETRY_WAIT", float, defaults.retry_wait_s, 0.0),
            cache_path=Path(_env("CACHE", str(defaults.cache_path))).expanduser(),
        )

    @property
    def configured(self) -> bool:
        """True when the API-key variable is set (judged metrics are then computed)."""
        return bool(os.environ.get(self.api_key_var, "").strip())

    def not_configured_reason(self) -> str:
        """One line saying why judged metrics were not computed and how to turn the judge on."""
        return f"not computed: no judge configured (set {self.api_key_var}; see docs/judge.md)"


@dataclass(frozen=True)
class JudgeRequest:
    """One chat-completions call: ``messages`` as sent, and the prompt's own ``max_tokens`` (None: server default)."""

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    max_tokens: int | None = None

    @classmethod
    def of(cls, messages: list[dict], max_tokens: int | None = None) -> "JudgeRequest":
        """From OpenAI-style ``[{"role": ..., "content": str}, ...]``."""
        return cls(tuple((m["role"], m["content"]) for m in messages), max_tokens)


@dataclass(frozen=True)
class JudgeReply:
    """The outcome of one call: ``content`` (the reply text) or ``error`` (why there is none).

    ``model`` is the model id the server reported; ``cached`` says whether the reply came from the cache;
    ``attempts`` counts HTTP attempts made in this run (0 for a cache hit).
    """

    content: str | None
    error: str | None = None
    model: str | None = None
    cached: bool = False
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


class JudgeCache:
    """Replies on disk in one SQLite table ``replies(key PRIMARY KEY, request, content, model, created)``.

    Safe with several processes and threads writing at once: every operation opens its own connection,
    the database runs in WAL mode, writers wait up to 60 s for the lock, and a second write of the same
    key is ignored (the first reply wins). Only successful replies are ever stored.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, request TEXT, content TEXT, model TEXT, created REAL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def get(self, key: str) -> tuple[str, str | None] | None:
        """``(content, model)`` cached under ``key``, or None."""
        with self._connect() as db:
            row = db.execute("SELECT content, model FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else (row[0], row[1])

    def put(self, key: str, request: dict, content: str, model: str | None) -> None:
        """Store a successful reply (a second write of ``key`` is ignored)."""
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?, ?)",
                (key, json.dumps(request, ensure_ascii=False, sort_keys=True), content, model, time.time()),
            )


class _Failed(Exception):
    """A failed attempt: ``kind`` (counted in the provenance) and a one-line ``detail``."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


class _Retryable(_Failed):
    """A failed attempt worth retrying: timeout, connection error, HTTP 429 or 5xx."""


class Judge:
    """Makes judge calls with cache, bounded concurrency, retries and accounting.

    One instance per scoring pass; :meth:`provenance` then describes exactly that pass.

    Args:
        config: the settings (:meth:`JudgeConfig.from_env` when None).
    Raises:
        RuntimeError: the judge is not configured (see :attr:`JudgeConfig.configured`).
    """

    def __init__(self, config: JudgeConfig | None = None) -> None:
        import openai

        self.config = config or JudgeConfig.from_env()
        if not self.config.configured:
            raise RuntimeError(self.config.not_configured_reason())
        # max_retries=0: retries are ours (below), so that they are counted and their waits configured.
        self._client = openai.OpenAI(
            base_url=self.config.base_url,
            api_key=os.environ[self.config.api_key_var].strip(),
            timeout=self.config.timeout_s,
            max_retries=0,
        )
        self._openai = openai
        self.cache = JudgeCache(self.config.cache_path)
        self._lock = threading.Lock()
        self.stats: Counter = Counter()
        self.models_reported: Counter = Counter()
        self.errors: Counter = Counter()

    def request_params(self, request: JudgeRequest) -> dict:
        """Everything that determines a reply, as sent (also the cache key's content)."""
        max_tokens = self.config.max_tokens if self.config.max_tokens is not None else request.max_tokens
        params = {
            "base_url": self.config.base_url,
            "model": self.config.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            "temperature": self.config.temperature,
        }
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        return params

    @staticmethod
    def cache_key(params: dict) -> str:
        """sha256 of the canonical JSON of :meth:`request_params`."""
        return hashlib.sha256(json.dumps(params, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()

    def _attempt(self, params: dict) -> tuple[str, str | None]:
        openai = self._openai
        kwargs = {k: v for k, v in params.items() if k != "base_url"}
        try:
            response = self._client.chat.completions.create(**kwargs)
        except (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as error:
            raise _Retryable(type(error).__name__, self._scrub(error)) from None
        except openai.APIStatusError as error:
            raise _Failed(f"HTTP {error.status_code}", self._scrub(error)) from None
        except ValueError as error:  # the body was not valid JSON
            raise _Failed("malformed reply", self._scrub(error)) from None
        choices = getattr(response, "choices", None)
        content = choices[0].message.content if choices else None
        if not isinstance(content, str) or not content.strip():
            raise _Failed("empty reply", "the reply has no message content")
        return content, getattr(response, "model", None)

    def _scrub(self, error: Exception, limit: int = 200) -> str:
        """The error text on one line, at most ``limit`` characters, with the API key masked if it appears."""
        text = " ".join(str(error).split()).replace(os.environ.get(self.config.api_key_var, "").strip() or "\0", "***")
        return text if len(text) <= limit else text[:limit] + "..."

    def complete(self, request: JudgeRequest) -> JudgeReply:
        """One call: from the cache if present, else over HTTP with retries. Never raises for API errors."""
        from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

        params = self.request_params(request)
        key = self.cache_key(params)
        hit = self.cache.get(key)
        if hit is not None:
            self._count(cache_hits=1)
            self._count_model(hit[1])
            return JudgeReply(content=hit[0], model=hit[1], cached=True)
        self._count(cache_misses=1)
        attempts = 0
        try:
            for attempt in Retrying(
                retry=retry_if_exception_type(_Retryable),
                stop=stop_after_attempt(self.config.max_attempts),
                wait=wait_exponential_jitter(multiplier=self.config.retry_wait_s, max=60, jitter=self.config.retry_wait_s),
                reraise=False,
            ):
                with attempt:
                    attempts += 1
                    self._count(api_calls=1)
                    content, model = self._attempt(params)
        except RetryError as error:
            last = error.last_attempt.exception()
            return self._failed(last.kind, f"{last.detail} (gave up after {attempts} attempts)", attempts)
        except _Failed as error:
            return self._failed(error.kind, error.detail, attempts)
        self.cache.put(key, params, content, model)
        self._count_model(model)
        return JudgeReply(content=content, model=model, attempts=attempts)

    def complete_many(self, requests: list[JudgeRequest], description: str = "judge") -> list[JudgeReply]:
        """All ``requests`` with at most ``concurrency`` in flight, in input order, with a progress bar."""
        from tqdm import tqdm

        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(tqdm(pool.map(self.complete, requests), total=len(requests), desc=description, unit="call"))

    def provenance(self) -> dict:
        """What this pass used and did: config (no key), models reported, cache hits/misses, calls, failures."""
        config = self.config
        return {
            "judge_model_requested": config.model,
            "judge_models_reported": dict(self.models_reported),
            "base_url": config.base_url,
            "api_key_var": config.api_key_var,
            "temperature": config.temperature,
            "max_tokens_override": config.max_tokens,
            "max_attempts": config.max_attempts,
            "timeout_s": config.timeout_s,
            "cache_path": str(config.cache_path),
            "cache_hits": self.stats["cache_hits"],
            "cache_misses": self.stats["cache_misses"],
            "api_calls": self.stats["api_calls"],
            "failed_calls": self.stats["failed"],
            "errors": dict(self.errors),
        }

    def _count(self, **amounts: int) -> None:
        with self._lock:
            self.stats.update(amounts)

    def _count_model(self, model: str | None) -> None:
        with self._lock:
            self.models_reported[model or "(not reported)"] += 1

    def _failed(self, kind: str, detail: str, attempts: int) -> JudgeReply:
        with self._lock:
            self.stats["failed"] += 1
            self.errors[kind] += 1
        return JudgeReply(content=None, error=f"{kind}: {detail}", attempts=attempts)


# ------------------------------------------------------------------------------ one judged task, all items
@dataclass(frozen=True)
class JudgedDimension:
    """The judge scores of one dimension (one judge prompt) over a task's items.

    ``values``: the scores of the items that were judged; ``failed``: ``(item id, reason)`` of the
    judge_failed items (call failed after retries, or no score in the reply), which are not in ``values``.
    """

    values: tuple[float, ...]
    failed: tuple[tuple[str, str], ...]

    @property
    def mean(self) -> float | None:
        """Mean of ``values``; None when no item was judged."""
        return sum(self.values) / len(self.values) if self.values else None


@dataclass(frozen=True)
class JudgedTask:
    """All judge scores of one task (``dimensions``) and the provenance of the pass that made them."""

    dimensions: dict[str, JudgedDimension]
    provenance: dict


_PASSES: dict[str, JudgedTask] = {}
_SHOWN_FAILURES = 20


def judge_task(
    task: str,
    items: list[dict],
    requests_for_item: Callable[[dict], dict[str, JudgeRequest]],
    score_from_reply: Callable[[str], float | None],
    prompt_hashes: dict[str, str],
    config: JudgeConfig | None = None,
) -> JudgedTask | str:
    """Judge every item of a task on every dimension, once per process for the same items and settings.

    Args:
        task: task name, for the progress bar and the provenance.
        items: per-document records; each has an ``"id"``.
        requests_for_item: item -> ``{dimension: JudgeRequest}`` (the same dimensions for every item).
        score_from_reply: reply text -> score, or None when the reply holds no score.
        prompt_hashes: ``{template name: hash}`` of the judge prompts, copied into the provenance.
        config: judge settings (default :meth:`JudgeConfig.from_env`).

    Returns:
        The :class:`JudgedTask`, or, when no judge is configured, the one-line "not computed: ..." reason.
        The several aggregations of one task call this with the same items; the first call judges, the
        others get the same object back (no second pass, identical provenance).
    """
    config = config or JudgeConfig.from_env()
    if not config.configured:
        return config.not_configured_reason()
    memo_key = hashlib.sha256(json.dumps([task, items, repr(config)], ensure_ascii=False, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    if memo_key in _PASSES:
        return _PASSES[memo_key]
    judge = Judge(config)
    planned = [(str(item["id"]), dimension, request) for item in items for dimension, request in requests_for_item(item).items()]
    replies = judge.complete_many([request for _, _, request in planned], description=f"judge {task}")
    values: dict[str, list[float]] = {}
    failed: dict[str, list[tuple[str, str]]] = {}
    for (item_id, dimension, _), reply in zip(planned, replies):
        values.setdefault(dimension, [])
        failed.setdefault(dimension, [])
        score = score_from_reply(reply.content) if reply.ok else None
        if score is not None:
            values[dimension].append(score)
        else:
            failed[dimension].append((item_id, reply.error or f"no score in the judge reply {_snippet(reply.content)}"))
    dimensions = {name: JudgedDimension(tuple(values[name]), tuple(failed[name])) for name in values}
    max_tokens = {dimension: judge.request_params(request).get("max_tokens", "server default") for _, dimension, request in planned}
    provenance = {
        **judge.provenance(),
        "prompt_sha256_16": prompt_hashes,
        "per_metric": {
            name: {
                "max_tokens": max_tokens[name],
                "judged": len(dimension.values),
                "failed": len(dimension.failed),
                "failed_items": [f"{item_id}: {reason}" for item_id, reason in dimension.failed[:_SHOWN_FAILURES]],
            }
            for name, dimension in dimensions.items()
        },
    }
    result = JudgedTask(dimensions, provenance)
    _PASSES[memo_key] = result
    return result


def _snippet(text: str | None, limit: int = 60) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
