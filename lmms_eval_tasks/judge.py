"""The LLM judge shared by every judged task (MCGA S2TT and SEC now, MMAC later).

One OpenAI-compatible chat-completions client, configured in one place (:class:`JudgeConfig`, read from
the ``AUDIO_JUDGE_*`` environment variables listed there), with

- a persistent cache of replies (:class:`JudgeCache`, SQLite) keyed by everything that determines a
  reply: endpoint, judge model, the full messages and the sampling parameters. Re-scoring the same
  outputs makes no API call. Only replies that yield a valid score (checked by the task's score
  function) are cached; failures never are. A damaged cache file is moved aside and replaced;
- bounded concurrency (``concurrency`` daemon worker threads) and a progress bar; Ctrl-C stops the pass
  at once (workers blocked in HTTP calls are abandoned; finished replies are already cached);
- retries with exponential backoff on timeouts, connection errors, HTTP 429 and HTTP 5xx (tenacity), and
  of replies without a valid score, within the same attempt budget;
- a circuit breaker: after ``max_consecutive_failures`` failed API calls in a row the pass stops calling
  and the remaining items are judge_failed with the reason;
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
import math
import os
import queue
import sqlite3
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from loguru import logger

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
        max_consecutive_failures: circuit breaker: after this many failed API calls in a row (any error,
            counted per HTTP attempt, reset by any reply) a pass stops calling; 0 turns the breaker off.
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
    max_consecutive_failures: int = 10
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
            max_consecutive_failures=number("MAX_CONSECUTIVE_FAILURES", int, defaults.max_consecutive_failures, 0),
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
    ``attempts`` counts HTTP attempts made in this run (0 for a cache hit). A reply that came back but had
    no valid score keeps its text in ``content`` beside the ``error``.
    """

    content: str | None
    error: str | None = None
    model: str | None = None
    cached: bool = False
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


class JudgeCacheError(RuntimeError):
    """The judge cache file cannot be created or opened (not a damaged file: those are replaced)."""


def _is_damaged(error: sqlite3.DatabaseError) -> bool:
    """True when SQLite says the file is not a database or is corrupt (not for locks or missing permissions)."""
    name = getattr(error, "sqlite_errorname", "")
    return name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or any(
        text in str(error) for text in ("file is not a database", "database disk image is malformed")
    )


class JudgeCache:
    """Replies on disk in one SQLite table ``replies(key PRIMARY KEY, request, content, model, created)``.

    Safe with several processes and threads writing at once: every operation opens its own connection,
    the database runs in WAL mode, writers wait up to 60 s for the lock, and a second write of the same
    key is ignored (the first reply wins) unless it replaces a reply that no longer yields a valid score.
    Only replies that yield a valid score are stored (the caller checks).

    A damaged file (SQLite: "file is not a database", "database disk image is malformed"), found when it
    is opened or at any later read or write, is moved aside to ``<name>.damaged-<UTC time>`` (with its
    ``-wal``/``-shm`` files), logged with both paths, listed in :attr:`recovered`, and replaced by a fresh
    empty cache; the operation is then repeated once. Other SQLite errors (locked for over 60 s, no
    permission) are raised.
    """

    def __init__(self, path: Path) -> None:
        """Open (or create) the cache at ``path``.

        Raises:
            JudgeCacheError: the file or its folder cannot be created or opened (message names the path).
        """
        self.path = Path(path)
        self.recovered: list[dict] = []  # {"path", "moved_to", "error"} per damaged file moved aside
        self._recover_lock = threading.Lock()
        self._anchor: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._guarded(self._create)
        except (OSError, sqlite3.Error) as error:
            raise JudgeCacheError(f"judge cache {self.path} cannot be used: {error}") from error

    def _open_anchor(self) -> None:
        """Hold one idle connection while the cache is in use: when the last connection to a WAL database closes,
        SQLite checkpoints and deletes the WAL, which made every get/put (each on its own connection) cost about
        1.3 ms instead of about 0.1 ms (bench/judge_throughput.py)."""
        self._close_anchor()
        self._anchor = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._anchor.execute("SELECT count(*) FROM replies WHERE 0").fetchall()  # opens the WAL index, and keeps it open

    def _close_anchor(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
            self._anchor = None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def _create(self) -> None:
        with closing(self._connect()) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, request TEXT, content TEXT, model TEXT, created REAL)")
        self._open_anchor()

    def _guarded(self, operation: Callable[[], object]) -> object:
        try:
            return operation()
        except sqlite3.DatabaseError as error:
            if not _is_damaged(error):
                raise
            self._move_aside(error)
            return operation()

    def _still_damaged(self) -> bool:
        try:
            with closing(self._connect()) as db:
                return db.execute("PRAGMA quick_check").fetchone()[0] != "ok"
        except sqlite3.DatabaseError as error:
            return _is_damaged(error)

    def _move_aside(self, error: sqlite3.DatabaseError) -> None:
        with self._recover_lock:
            if self.path.exists() and not self._still_damaged():  # another thread or process replaced it already
                return
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            moved = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
            number = 1
            while moved.exists():  # a second damaged file within the same second
                moved, number = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{number}"), number + 1
            self._close_anchor()
            for suffix in ("", "-wal", "-shm"):
                source = Path(f"{self.path}{suffix}")
                if source.exists():
                    source.replace(Path(f"{moved}{suffix}"))
            self.recovered.append({"path": str(self.path), "moved_to": str(moved), "error": str(error)})
            logger.warning(f"judge cache {self.path} is damaged ({error}); moved aside to {moved}; a fresh cache is used there (earlier replies will be asked again)")
            self._create()

    def get(self, key: str) -> tuple[str, str | None] | None:
        """``(content, model)`` cached under ``key``, or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """``{key: (content, model)}`` for the ``keys`` that are cached (one connection, one query per 500 keys)."""
        distinct = list(dict.fromkeys(keys))

        def read():
            found = {}
            with closing(self._connect()) as db:
                for start in range(0, len(distinct), 500):
                    chunk = distinct[start : start + 500]
                    rows = db.execute(f"SELECT key, content, model FROM replies WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
                    found.update((key, (content, model)) for key, content, model in rows)
            return found

        return self._guarded(read)

    def put(self, key: str, request: dict, content: str, model: str | None, replace: bool = False) -> None:
        """Store a reply that yields a valid score. A second write of ``key`` is ignored unless ``replace``
        (used when the stored reply no longer yields a valid score)."""
        self.put_many([(key, request, content, model, replace)])

    def put_many(self, rows: Sequence[tuple[str, dict, str, str | None, bool]]) -> None:
        """Store ``(key, request, content, model, replace)`` rows (see :meth:`put`) in one transaction, in order:
        one commit for a whole batch instead of one per reply."""
        if not rows:
            return

        def write():
            with closing(self._connect()) as db, db:
                for key, request, content, model, replace in rows:
                    db.execute(
                        f"{'INSERT OR REPLACE' if replace else 'INSERT OR IGNORE'} INTO replies VALUES (?, ?, ?, ?, ?)",
                        (key, json.dumps(request, ensure_ascii=False, sort_keys=True), content, model, time.time()),
                    )

        self._guarded(write)


class _Failed(Exception):
    """A failed attempt: ``kind`` (counted in the provenance) and a one-line ``detail``."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


class _Retryable(_Failed):
    """A failed attempt worth retrying: timeout, connection error, HTTP 429 or 5xx."""


class _Unusable(_Retryable):
    """A reply came back but yields no valid score (``detail`` is the score function's reason); asked again."""

    def __init__(self, detail: str, content: str, model: str | None) -> None:
        super().__init__(NO_VALID_SCORE, detail)
        self.content, self.model = content, model


class _Stopped(_Failed):
    """The pass was stopped (circuit breaker or Ctrl-C) before this call could finish."""


#: Error kind of a reply without a valid score (provenance ``errors``).
NO_VALID_SCORE = "no valid score"
#: Error kind of calls not made or not finished because the pass stopped.
NOT_JUDGED = "not judged"

#: Seconds between two cache writes of a pass (:meth:`Judge.complete_many`): at most this much of the replies
#: received is lost if the process is killed outright (not Ctrl-C, which stores them first).
_STORE_EVERY_S = 0.5

#: What a validator returns: None when the reply is usable, else the reason it is not.
Validator = Callable[[str], str | None]


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
        # One client (one connection pool) per pass, shared by its worker threads, keeping a connection per worker
        # alive between calls (openai's default pool keeps 100, fewer than a concurrency above 100); the pool is
        # closed when this Judge is collected.
        limits = openai.DEFAULT_CONNECTION_LIMITS
        http_client = openai.DefaultHttpx2Client(
            limits=type(limits)(
                max_connections=max(limits.max_connections or 0, self.config.concurrency),
                max_keepalive_connections=max(limits.max_keepalive_connections or 0, self.config.concurrency),
            )
        )
        weakref.finalize(self, http_client.close)
        # max_retries=0: retries are ours (below), so that they are counted and their waits configured.
        self._client = openai.OpenAI(
            base_url=self.config.base_url,
            api_key=os.environ[self.config.api_key_var].strip(),
            timeout=self.config.timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self._openai = openai
        self.cache = JudgeCache(self.config.cache_path)
        self._lock = threading.Lock()
        self.stats: Counter = Counter()
        self.models_reported: Counter = Counter()
        self.errors: Counter = Counter()
        self._stop = threading.Event()
        self.stop_reason: str | None = None
        self.breaker_tripped: str | None = None
        self._consecutive_failures = 0

    def stop(self, reason: str) -> None:
        """Stop this pass: no new call or retry starts; calls not finished become judge_failed with ``reason``."""
        with self._lock:
            if self.stop_reason is None:
                self.stop_reason = reason
        self._stop.set()

    def _sleep(self, seconds: float) -> None:
        """Backoff wait between attempts that ends early (raising :class:`_Stopped`) when the pass stops."""
        if self._stop.wait(seconds):
            raise _Stopped(NOT_JUDGED, self.stop_reason or "stopped")

    def _record_attempt(self, failure: _Failed | None) -> None:
        """Circuit breaker bookkeeping: a reply resets the run of failures, a failed API call extends it."""
        limit = self.config.max_consecutive_failures
        with self._lock:
            if failure is None:
                self._consecutive_failures = 0
                return
            self._consecutive_failures += 1
            trip = bool(limit) and self._consecutive_failures >= limit and self.breaker_tripped is None
            if trip:
                self.breaker_tripped = (
                    f"circuit breaker: {limit} judge API calls failed in a row (last: {failure.kind}: {failure.detail}); "
                    f"the remaining calls of this pass were not made"
                )
        if trip:
            logger.warning(f"judge: {self.breaker_tripped} (AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES={limit}; endpoint {self.config.base_url})")
            self.stop(self.breaker_tripped)

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
        """One HTTP attempt; its outcome feeds the circuit breaker."""
        try:
            content, model = self._attempt_once(params)
        except _Failed as failure:
            self._record_attempt(failure)
            raise
        self._record_attempt(None)
        return content, model

    def _attempt_once(self, params: dict) -> tuple[str, str | None]:
        """One chat-completions POST through the openai client, read as JSON text.

        The client's documented generic ``post`` (its "undocumented endpoints" API) sends the body as built by
        :meth:`request_params` and returns the body text: base URL, API key, timeout, connection pool and the
        typed errors (timeout, connection, 429, 5xx, other statuses) are the client's, as with
        ``chat.completions.create``; what is skipped is ``create``'s walk of the parameters through its
        TypedDict annotations (a no-op for our plain string messages) and the pydantic ``ChatCompletion`` built
        from the reply, of which only two fields are read: together a third of the client's CPU per call
        (1.5-1.6 ms -> 1.1-1.3 ms), which matters at short latencies and high concurrency, where the replies of
        a wave queue for the interpreter lock (bench/README.md, section Judge).
        """
        openai = self._openai
        body = {k: v for k, v in params.items() if k != "base_url"}
        try:
            text = self._client.post("/chat/completions", body=body, cast_to=str)
        except (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as error:
            raise _Retryable(type(error).__name__, self._scrub(error)) from None
        except openai.APIStatusError as error:
            raise _Failed(f"HTTP {error.status_code}", self._scrub(error)) from None
        try:
            reply = json.loads(text)
        except ValueError as error:  # the body was not valid JSON
            raise _Failed("malformed reply", self._scrub(error)) from None
        reply = reply if isinstance(reply, dict) else {}
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise _Failed("empty reply", "the reply has no message content")
        model = reply.get("model")
        return content, model if isinstance(model, str) else None

    def _scrub(self, error: Exception, limit: int = 200) -> str:
        """The error text on one line, at most ``limit`` characters, with the API key masked if it appears."""
        return _scrub(error, self.config, limit)

    def complete(self, request: JudgeRequest, validate: Validator | None = None) -> JudgeReply:
        """One call: from the cache if present, else over HTTP with retries. Never raises for API errors.

        Args:
            request: the call.
            validate: reply text -> None when the reply is usable (yields a valid score), else the reason it
                is not. Only usable replies are cached; a cached reply that is not usable is asked again (and
                replaced); an unusable fresh reply is asked again within ``max_attempts``, then returned
                with ``error`` set to the reason and ``content`` to the last reply.
        """
        params = self.request_params(request)
        key = self.cache_key(params)
        hit = self.cache.get(key)
        reply = self._cached_reply(hit, validate)
        if reply is not None:
            return reply
        reply, row = self._ask(params, key, hit, validate)
        if row is not None:
            self.cache.put(*row)
        return reply

    def _cached_reply(self, hit: tuple[str, str | None] | None, validate: Validator | None) -> JudgeReply | None:
        """The reply for a cache ``hit`` that is still usable (counted as a cache hit), else None."""
        if hit is None or not _usable(validate, hit[0]):
            return None
        self._count(cache_hits=1)
        self._count_model(hit[1])
        return JudgeReply(content=hit[0], model=hit[1], cached=True)

    def _ask(
        self, params: dict, key: str, hit: tuple[str, str | None] | None, validate: Validator | None
    ) -> tuple[JudgeReply, tuple[str, dict, str, str | None, bool] | None]:
        """The HTTP part of :meth:`complete` (``hit``: the cached reply found unusable, or None): the reply, and the
        cache row to store (:meth:`JudgeCache.put_many`) when it is usable, else None. Stores nothing itself."""
        from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

        self._count(cache_misses=1, cache_rejected=int(hit is not None))
        attempts = 0
        try:
            for attempt in Retrying(
                retry=retry_if_exception_type(_Retryable),
                stop=stop_after_attempt(self.config.max_attempts),
                wait=wait_exponential_jitter(multiplier=self.config.retry_wait_s, max=60, jitter=self.config.retry_wait_s),
                sleep=self._sleep,
                reraise=False,
            ):
                with attempt:
                    if self._stop.is_set():
                        raise _Stopped(NOT_JUDGED, self.stop_reason or "stopped")
                    attempts += 1
                    self._count(api_calls=1)
                    content, model = self._attempt(params)
                    reason = _reason_unusable(validate, content)
                    if reason is not None:
                        raise _Unusable(reason, content, model)
        except RetryError as error:
            last = error.last_attempt.exception()
            if isinstance(last, _Unusable):
                self._count_model(last.model)
                asked = f" (asked {attempts} times)" if attempts > 1 else ""
                return self._failed(last.kind, f"{last.detail}{asked}", attempts, content=last.content, model=last.model, prefix=False), None
            return self._failed(last.kind, f"{last.detail} (gave up after {attempts} attempts)", attempts), None
        except _Stopped as error:
            return self._failed(error.kind, error.detail, attempts, prefix=False), None
        except _Failed as error:
            return self._failed(error.kind, error.detail, attempts), None
        self._count_model(model)
        return JudgeReply(content=content, model=model, attempts=attempts), (key, params, content, model, hit is not None)

    def _store(self, rows: list[tuple[str, dict, str, str | None, bool]]) -> None:
        """Write replies to the cache in one transaction. A write that fails (not a damaged file: those are
        replaced) is logged and counted (``cache_write_failed``); the replies themselves stay valid."""
        if not rows:
            return
        try:
            self.cache.put_many(rows)
        except Exception as error:  # noqa: BLE001 - a cache that cannot be written costs the cache, not the scores
            self._count(cache_write_failed=len(rows))
            logger.warning(f"judge cache {self.cache.path}: {len(rows)} replies could not be stored ({type(error).__name__}: {self._scrub(error)}); they will be asked again next run")

    def complete_many(
        self, requests: list[JudgeRequest], description: str = "judge", *, validate: Validator | Sequence[Validator | None] | None = None
    ) -> list[JudgeReply]:
        """All ``requests`` with at most ``concurrency`` in flight, in input order, with a progress bar.

        The cache is read once for all requests (one query per 500) before any call; worker threads make only the
        HTTP calls, and this thread writes their replies to the cache in one transaction every
        ``_STORE_EVERY_S`` (0.5 s), at the end of the pass, and at once when the pass is interrupted; a call still
        in flight when the pass returns (breaker, Ctrl-C) stores its own reply if it ends. So the workers' path
        from one reply to the next call holds no SQLite work, and the 32 replies of a wave cost one commit, not 32
        (at concurrency 32 the SQLite work per call had cost about 0.07 of the ideal throughput:
        bench/judge_throughput.py).

        Args:
            requests: the calls.
            description: progress-bar label.
            validate: one validator for all requests, or one per request (see :meth:`complete`).
        Returns:
            One reply per request. When the pass stops (circuit breaker), the calls not finished are replies
            with ``error`` = the stop reason and are not waited for.
        Raises:
            KeyboardInterrupt: Ctrl-C. The pass stops at once: no new call or retry starts, worker threads
                still blocked in an HTTP call are abandoned (they are daemon threads); every reply finished
                before is in the cache.
        """
        from tqdm import tqdm

        validators = list(validate) if isinstance(validate, Sequence) else [validate] * len(requests)
        if len(validators) != len(requests):
            raise ValueError(f"{len(validators)} validators for {len(requests)} requests")
        if not requests:
            return []
        params = [self.request_params(request) for request in requests]
        keys = [self.cache_key(one) for one in params]
        hits = self.cache.get_many(keys)
        replies: list[JudgeReply | None] = [self._cached_reply(hits.get(key), check) for key, check in zip(keys, validators)]
        pending: queue.SimpleQueue = queue.SimpleQueue()
        finished: queue.SimpleQueue = queue.SimpleQueue()  # (index, reply, cache row or None)
        to_ask = [index for index, reply in enumerate(replies) if reply is None]
        for index in to_ask:
            pending.put(index)
        handoff = threading.Lock()
        returned = False  # set (under handoff) once this pass stops reading `finished`

        def work() -> None:
            while not self._stop.is_set():
                try:
                    index = pending.get_nowait()
                except queue.Empty:
                    return
                row = None
                try:
                    reply, row = self._ask(params[index], keys[index], hits.get(keys[index]), validators[index])
                except Exception as error:  # noqa: BLE001 - a score-function error fails this call, not the pass
                    reply = self._failed("internal error", f"{type(error).__name__}: {self._scrub(error)}", 0)
                with handoff:
                    if not returned:
                        finished.put((index, reply, row))
                        continue
                self._store([row] if row is not None else [])  # the pass has returned: nobody else will store it

        unstored: list = []  # cache rows of replies received and not yet written

        def take(batch: list) -> None:
            for index, reply, row in batch:
                replies[index] = reply
                if row is not None:
                    unstored.append(row)

        def store() -> None:
            rows = unstored[:]
            self._store(rows)
            del unstored[: len(rows)]

        def drain() -> list:
            batch = []
            while True:
                try:
                    batch.append(finished.get_nowait())
                except queue.Empty:
                    return batch

        for number in range(min(self.config.concurrency, len(to_ask))):
            threading.Thread(target=work, name=f"judge-worker-{number}", daemon=True).start()
        received = len(requests) - len(to_ask)
        stored_at = time.monotonic()
        with tqdm(total=len(requests), desc=description, unit="call") as bar:
            bar.update(received)
            try:
                while received < len(requests) and not self._stop.is_set():
                    try:
                        batch = [finished.get(timeout=_STORE_EVERY_S / 2)]
                    except queue.Empty:
                        batch = []
                    batch += drain()
                    take(batch)
                    received += len(batch)
                    bar.update(len(batch))
                    if unstored and time.monotonic() - stored_at >= _STORE_EVERY_S:
                        store()
                        stored_at = time.monotonic()
            except BaseException:
                self.stop("interrupted")
                with handoff:
                    returned = True
                take(drain())  # replies that finished meanwhile
                store()
                logger.warning(f"{description}: interrupted; {received} of {len(requests)} calls finished (their replies are cached), the rest stopped")
                raise
        with handoff:
            returned = True
        take(drain())  # replies that finished while the pass was stopping
        store()
        left = [index for index, reply in enumerate(replies) if reply is None]
        for index in left:
            replies[index] = self._failed(NOT_JUDGED, self.stop_reason or "stopped", 0, prefix=False)
        return replies  # type: ignore[return-value]

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
            "cache_rejected": self.stats["cache_rejected"],
            "cache_write_failed": self.stats["cache_write_failed"],
            "cache_recovered": list(self.cache.recovered),
            "circuit_breaker": {"max_consecutive_failures": config.max_consecutive_failures, "tripped": self.breaker_tripped},
        }

    def _count(self, **amounts: int) -> None:
        with self._lock:
            self.stats.update(amounts)

    def _count_model(self, model: str | None) -> None:
        with self._lock:
            self.models_reported[model or "(not reported)"] += 1

    def _failed(
        self, kind: str, detail: str, attempts: int, content: str | None = None, model: str | None = None, prefix: bool = True
    ) -> JudgeReply:
        """A failed call, counted by ``kind``; ``error`` is ``"kind: detail"`` (or ``detail`` alone if not ``prefix``)."""
        with self._lock:
            self.stats["failed"] += 1
            self.errors[kind] += 1
        return JudgeReply(content=content, error=f"{kind}: {detail}" if prefix else detail, model=model, attempts=attempts)


def _scrub(error: object, config: JudgeConfig, limit: int = 200) -> str:
    """``str(error)`` on one line, at most ``limit`` characters, with the API key masked if it appears."""
    text = " ".join(str(error).split()).replace(os.environ.get(config.api_key_var, "").strip() or "\0", "***")
    return text if len(text) <= limit else text[:limit] + "..."


# ------------------------------------------------------------------------------------ score functions
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


def _reason_unusable(validate: Validator | None, content: str) -> str | None:
    if validate is None:
        return None
    try:
        return validate(content)
    except Exception as error:  # noqa: BLE001 - a score function that raises makes this reply unusable, loudly
        return f"the score function raised {type(error).__name__}: {error}"


def _usable(validate: Validator | None, content: str) -> bool:
    return _reason_unusable(validate, content) is None


def validator(score_function: ScoreFunction) -> Validator:
    """The :data:`Validator` of a score function: None when it yields a valid score, else its reason."""
    return lambda content: read_score(score_function(content), content)[1]


# ------------------------------------------------------------------------------ one judged task, all items
@dataclass(frozen=True)
class JudgedDimension:
    """The judge scores of one dimension (one judge prompt) over a task's items.

    ``values``: the scores of the items that were judged; ``failed``: ``(item label, reason)`` of the
    judge_failed items (call failed after retries, no valid score in the reply, or not made because the
    pass stopped), which are not in ``values``; ``official_rule_differs``: how many of the failed items had
    a reply from which the benchmark's official rule would have read a score and counted it.
    """

    values: tuple[float, ...]
    failed: tuple[tuple[str, str], ...]
    official_rule_differs: int = 0

    @property
    def mean(self) -> float | None:
        """Mean of ``values``; None when no item was judged."""
        return sum(self.values) / len(self.values) if self.values else None


@dataclass(frozen=True)
class JudgedTask:
    """All judge scores of one task (``dimensions``) and the provenance of the pass that made them."""

    dimensions: dict[str, JudgedDimension]
    provenance: dict


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
    official_score: Callable[[str], float | None] | Mapping[str, Callable[[str], float | None]] | None = None,
) -> JudgedTask | str:
    """Judge every item of a task on every dimension, once per process for the same items and settings.

    Args:
        task: task name, for the progress bar, the log and the provenance.
        items: per-document records; each has an ``"id"``, and a ``"key"`` where the id is not unique per
            document (failures then name ``"<key> (id <id>)"``).
        requests_for_item: item -> ``{dimension: JudgeRequest}`` (items may have different dimensions, or none).
        score_from_reply: reply text -> :data:`ScoreResult`: the score when the reply yields a valid one,
            else the reason (str) or None. One function, or ``{dimension: function}``. Only replies that
            yield a valid score are cached; the others are asked again within the attempt budget, then the
            item is judge_failed with the reason.
        prompt_hashes: ``{template name: hash}`` of the judge prompts, copied into the provenance.
        config: judge settings (default :meth:`JudgeConfig.from_env`).
        official_score: optional, keyword-only: reply text -> the score the benchmark's official rule would
            count (None: it would count none); one function or ``{dimension: function}``. Counts, per
            dimension, the judge_failed replies that the official rule would have scored
            (``official_rule_differs``).

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
    except ValueError as error:
        return _log_once(f"not computed: {error}", task)
    if not config.configured:
        return _log_once(config.not_configured_reason(), task)
    memo_key = hashlib.sha256(json.dumps([task, items, repr(config)], ensure_ascii=False, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    if memo_key in _PASSES:
        return _PASSES[memo_key]
    try:
        result: JudgedTask | str = _judge_pass(task, items, requests_for_item, score_from_reply, prompt_hashes, config, official_score)
    except Exception as error:  # noqa: BLE001 - any judge error costs only the judged metrics, never the run
        result = f"not computed: the judge failed ({type(error).__name__}: {_scrub(error, config, limit=1000)})"
        logger.opt(exception=error).error(f"judge {task}: {result}; the task's other metrics and other tasks are not affected")
    _PASSES[memo_key] = result
    return result


def _judge_pass(task, items, requests_for_item, score_from_reply, prompt_hashes, config, official_score) -> JudgedTask:
    def per_dimension(function, dimension):
        return function[dimension] if isinstance(function, Mapping) else function

    judge = Judge(config)
    planned = [(item_label(item), dimension, request) for item in items for dimension, request in requests_for_item(item).items()]
    validators = {dimension: validator(per_dimension(score_from_reply, dimension)) for _, dimension, _ in planned}
    replies = judge.complete_many(
        [request for _, _, request in planned], description=f"judge {task}", validate=[validators[dimension] for _, dimension, _ in planned]
    )
    values: dict[str, list[float]] = {}
    failed: dict[str, list[tuple[str, str]]] = {}
    differs: Counter = Counter()
    for (label, dimension, _), reply in zip(planned, replies):
        values.setdefault(dimension, [])
        failed.setdefault(dimension, [])
        if reply.ok:
            score, reason = read_score(per_dimension(score_from_reply, dimension)(reply.content), reply.content)
        else:
            score, reason = None, reply.error
        if score is not None:
            values[dimension].append(score)
            continue
        failed[dimension].append((label, reason))
        if official_score is not None and reply.content is not None and per_dimension(official_score, dimension)(reply.content) is not None:
            differs[dimension] += 1
    dimensions = {name: JudgedDimension(tuple(values[name]), tuple(failed[name]), differs[name]) for name in values}
    max_tokens = {dimension: judge.request_params(request).get("max_tokens", "server default") for _, dimension, request in planned}
    provenance = {
        **judge.provenance(),
        "prompt_sha256_16": prompt_hashes,
        "official_rule_differs": sum(differs.values()) if official_score is not None else "not applicable",
        "per_metric": {
            name: {
                "max_tokens": max_tokens[name],
                "judged": len(dimension.values),
                "failed": len(dimension.failed),
                "failed_items": [f"{label}: {reason}" for label, reason in dimension.failed[:_SHOWN_FAILURES]],
                **({"official_rule_differs": dimension.official_rule_differs} if official_score is not None else {}),
            }
            for name, dimension in dimensions.items()
        },
    }
    _log_summary(task, dimensions, provenance)
    return JudgedTask(dimensions, provenance)


def _log_summary(task: str, dimensions: dict[str, JudgedDimension], provenance: dict) -> None:
    """One line per judged task: a warning with the judge_failed share and the first reason, else an info line."""
    total = sum(len(d.values) + len(d.failed) for d in dimensions.values())
    failures = [(name, label, reason) for name, d in dimensions.items() for label, reason in d.failed]
    calls = f"cache hits {provenance['cache_hits']}, API calls {provenance['api_calls']}"
    if not failures:
        logger.info(f"judge {task}: {total} judge scores, none judge_failed ({calls})")
        return
    name, label, reason = failures[0]
    differs = provenance["official_rule_differs"]
    official = f"; the official rule would have scored {differs} of them" if isinstance(differs, int) and differs else ""
    logger.warning(
        f"judge {task}: {len(failures)} of {total} judge scores ({100 * len(failures) / total:.1f}%) are judge_failed "
        f"and left out of the means{official} ({calls}); first: {name} {label}: {reason}; all listed in the 'judge' metric"
    )


def _log_once(message: str, task: str) -> str:
    """Warn ``message`` once per task and process (the task's aggregations each ask), and return it."""
    if (task, message) not in _LOGGED:
        _LOGGED.add((task, message))
        logger.warning(f"judge {task}: {message}")
    return message


def _snippet(text: str | None, limit: int = 60) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
