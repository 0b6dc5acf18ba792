"""The LLM judge shared by every judged task (MCGA S2TT and SEC now, MMAC later).

One OpenAI-compatible chat-completions client, configured in one place (:class:`JudgeConfig`, read from
the ``AUDIO_JUDGE_*`` environment variables listed there), with

- judge reasoning read past: every reply is split by :func:`audio_bench_core.reasoning.split_reasoning` (a
  reasoning judge served without a reasoning parser writes its draft inside ``<think>...</think>`` and the
  like); the task's score function sees only the final text, and a reply whose reasoning never closed has
  no verdict (counted, never mined for one);
- a persistent cache of replies (:class:`JudgeCache`, SQLite) keyed by everything that determines a
  reply: endpoint (credentials in it left out), judge model, the full messages and the sampling parameters.
  Re-scoring the same outputs makes no API call. Only replies that yield a valid score (checked by the
  task's score function) are cached; failures never are. A damaged cache file is moved aside and replaced;
  a cache that cannot be opened (full disk, no permission) is done without, and the uncached replies counted;
- bounded concurrency (``concurrency`` daemon worker threads) and a progress bar; Ctrl-C stops the pass
  at once (workers blocked in HTTP calls are abandoned; finished replies are already cached);
- a time bound on the whole of each call (connect, send, wait, read: a reply that trickles in byte by
  byte is cut at ``timeout_s`` like one that never starts);
- retries with exponential backoff on timeouts, connection errors, HTTP 429 and HTTP 5xx (tenacity), and
  of replies without a valid score, within the same attempt budget; a ``Retry-After`` header (seconds or an
  HTTP date) sets the wait before the next attempt;
- a circuit breaker: after ``max_consecutive_failures`` failed API calls in a row the pass stops calling
  and the remaining items are judge_failed with the reason;
- failure accounting: a call that still fails comes back as a :class:`JudgeReply` with ``error`` set,
  never as a score. The benchmark code turns that into ``judge_failed``;
- provenance (:meth:`Judge.provenance`): judge model ids as the server reported them, sampling
  parameters, cache hits and misses, retries, failures. The API key is read from the environment
  variable named by ``AUDIO_JUDGE_API_KEY_VAR`` when the client is made and is stored nowhere else;
  credentials written into the base URL (``user:password@``, query values) are masked in everything
  written or logged (:func:`redact_url`).

Why the ``openai`` client and not lmms-eval's ``llm_judge``: ``llm_judge`` has no cache, retries every
error the same way with a fixed sleep and then raises, shares its environment variables with legacy
tasks that read ``OPENAI_API_URL`` differently, and does not return the model id the server reports.
The ``openai`` client gives typed errors (timeout, 429, 5xx) and ``response.model``; tenacity does the
backoff. Importing this module does not import lmms-eval.
"""

from __future__ import annotations

import dataclasses
import email.utils
import hashlib
import inspect
import json
import math
import os
import queue
import sqlite3
import threading
import time
import traceback
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from loguru import logger

from audio_bench_core import cache_dir
from audio_bench_core.reasoning import ReasoningSplit, split_reasoning

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
        base_url: OpenAI-compatible base URL (the client appends ``/chat/completions``). Query parameters in
            it are sent with every call; credentials in it (``user:password@``, every query value) are masked
            (:func:`redact_url`) wherever the URL is written or logged, and are not part of the cache key.
        model: judge model id sent with every request.
        api_key_var: NAME of the environment variable that holds the API key (the key itself is never
            stored in this object, in logs or in results). The judge counts as configured when that
            variable is set and non-empty; a keyless local server needs any placeholder value.
        temperature: sampling temperature of every judge call.
        max_tokens: if set, replaces the per-prompt ``max_tokens`` of every call (the official values are
            10 for the S2TT prompts and the server default for SEC); reported in the provenance.
        concurrency: judge calls in flight at once (thread pool size), >= 1.
        timeout_s: time bound of one HTTP attempt, in seconds: connect, send, the wait for the reply and
            reading it, all together (a reply trickling in byte by byte is cut at this bound).
        max_attempts: attempts per call (first try + retries), >= 1.
        retry_wait_s: first backoff wait in seconds; it doubles per retry (with jitter), capped at 60 s. A
            ``Retry-After`` header on a retryable reply (429, 5xx) replaces the backoff; one asking for more than
            60 s ends the item's retries at once (named in the reason).
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

    def __repr__(self) -> str:
        """The settings with :attr:`base_url` masked (:attr:`endpoint`): a repr may reach a log."""
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__dataclass_fields__ if name != "base_url")
        return f"JudgeConfig(base_url={self.endpoint!r}, {shown})"

    @property
    def endpoint(self) -> str:
        """:attr:`base_url` as written wherever it is recorded or logged: :func:`redact_url`."""
        return redact_url(self.base_url)

    def secrets(self) -> list[str]:
        """Texts never to be written or logged: the API key and the credentials in :attr:`base_url`."""
        key = os.environ.get(self.api_key_var, "").strip()
        return sorted({text for text in [key, *_url_secrets(self.base_url)] if len(text) >= 3}, key=len, reverse=True)


_MASK = "***"


def redact_url(url: str) -> str:
    """``url`` with every place a credential can sit in it masked: the user-info part (``user:password@``), the
    value of every query parameter (a query item without ``=`` as a whole) and the fragment.

    ``https://u:k@host:8000/v1?api_key=K&api-version=2`` -> ``https://***@host:8000/v1?api_key=***&api-version=***``.
    A path segment is kept as it is (a credential there cannot be told from a route). Text that does not parse as
    a URL is masked whole.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return _MASK
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{_MASK}@{host}" if "@" in parts.netloc else host
    query = "&".join(f"{item.split('=', 1)[0]}={_MASK}" if "=" in item else _MASK for item in parts.query.split("&") if item)
    return urlunsplit((parts.scheme, netloc, parts.path, query, _MASK if parts.fragment else ""))


def _url_secrets(url: str) -> list[str]:
    """The credential texts of ``url`` that :func:`redact_url` masks (raw and percent-decoded)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    texts = [userinfo, *userinfo.split(":", 1), parts.fragment]
    for item in parts.query.split("&"):
        texts.append(item.split("=", 1)[1] if "=" in item else item)
    texts += [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    return [text for text in texts if text]


def _client_url(url: str) -> tuple[str, dict[str, str]]:
    """``(base URL without its query, the query as a dict)``: the openai client appends ``/chat/completions`` to the
    path, so query parameters of the base URL are sent as its ``default_query`` (a query left in the base URL
    would end up in the middle of the request path)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), dict(parse_qsl(parts.query, keep_blank_values=True))


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

    @cached_property
    def reasoning(self) -> ReasoningSplit:
        """:func:`audio_bench_core.reasoning.split_reasoning` of ``content``: the judge's final text and its reasoning."""
        return split_reasoning(self.content)

    @property
    def final(self) -> str | None:
        """The judge's final text: ``content`` with its reasoning removed (``""`` when the reasoning never closed:
        no verdict); None when there is no content. Everything a verdict is read from."""
        return None if self.content is None else self.reasoning.answer


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

    def put_many(self, rows: Sequence[tuple[str, dict, str, str | None, bool]]) -> list[tuple[int, str]]:
        """Store ``(key, request, content, model, replace)`` rows (see :meth:`put`) in one transaction, in order:
        one commit for a whole batch instead of one per reply.

        When the batch fails, each row is stored alone, so one bad row costs only itself: a row whose text SQLite
        cannot hold (a lone UTF-16 surrogate from a ``\\ud800`` escape in the reply's JSON) is stored with those
        code points replaced by U+FFFD (the reply's score is checked again when it is read back), and a row that
        still cannot be stored is skipped.

        Returns:
            ``[(row index, reason), ...]`` of the rows not stored (empty when all were).
        Raises:
            sqlite3.Error: the first row stored alone fails with the same error as the batch (the file cannot be
                written at all: locked for over 60 s, disk full, no permission); nothing was stored.
        """
        if not rows:
            return []

        def write(batch):
            with closing(self._connect()) as db, db:
                for key, request, content, model, replace in batch:
                    db.execute(
                        f"{'INSERT OR REPLACE' if replace else 'INSERT OR IGNORE'} INTO replies VALUES (?, ?, ?, ?, ?)",
                        (key, json.dumps(request, ensure_ascii=False, sort_keys=True), content, model, time.time()),
                    )

        try:
            self._guarded(lambda: write(rows))
            return []
        except (sqlite3.Error, UnicodeError, ValueError) as error:
            if len(rows) == 1 and not isinstance(error, (UnicodeError, ValueError)):
                raise
            batch_error = error
        skipped: list[tuple[int, str]] = []
        for index, row in enumerate(rows):
            try:
                self._guarded(lambda: write([row]))
                continue
            except (UnicodeError, ValueError):
                pass
            except sqlite3.Error as error:
                if index == 0 and type(error) is type(batch_error) and str(error) == str(batch_error):
                    raise  # the file itself cannot be written: not a bad row
                skipped.append((index, f"{type(error).__name__}: {error}"))
                continue
            key, request, content, model, replace = row
            try:
                self._guarded(lambda: write([(key, _valid_text(request), _valid_text(content), _valid_text(model), replace)]))
            except (sqlite3.Error, UnicodeError, ValueError) as error:
                skipped.append((index, f"{type(error).__name__}: {error}"))
        return skipped


def _valid_text(value):
    """``value`` (a str, None, or a JSON-like structure of them) with every code point UTF-8 cannot encode (a lone
    surrogate) replaced by U+FFFD, and surrogate pairs joined into the character they stand for."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_valid_text(k): _valid_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid_text(v) for v in value]
    return value


class _NoCache:
    """Stands in for :class:`JudgeCache` when the cache cannot be opened: nothing is read, nothing is stored."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        self.recovered: list[dict] = []

    def get(self, key: str) -> None:
        return None

    def get_many(self, keys: Sequence[str]) -> dict:
        return {}

    def put(self, key: str, request: dict, content: str, model: str | None, replace: bool = False) -> None:
        self.put_many([(key, request, content, model, replace)])

    def put_many(self, rows: Sequence) -> list[tuple[int, str]]:
        return [(index, f"no cache ({self.reason})") for index in range(len(rows))]


# ------------------------------------------------------------------------ the time bound of a whole call
_CALL = threading.local()  # .deadline: time.monotonic() by which the HTTP attempt of this thread must end


def _remaining(timeout: float | None, error: type[Exception]) -> float | None:
    """The socket timeout for the next network operation of this thread's call: the smaller of the per-operation
    ``timeout`` and the time left before the call's deadline; ``error`` (an httpcore timeout) once none is left."""
    deadline = getattr(_CALL, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error(f"the whole call took longer than its time bound ({_CALL.bound:g} s)")
    return left if timeout is None else min(timeout, left)


def _deadline_transport(limits):
    """An httpx2 transport (the HTTP library of the openai client, ``openai.DefaultHttpx2Client``) whose every
    network operation (connect, TLS, each send and each read) is bounded by the time left to the calling thread's
    deadline (:data:`_CALL`), so that ``timeout_s`` bounds a whole call.

    httpx2's own timeouts apply per operation: a server sending one byte per second never trips a 5 s read
    timeout, and one call took 4.5 minutes. It has no whole-request bound in its synchronous client, so the
    transport's network backend (httpcore2's documented ``NetworkBackend`` interface) is wrapped.

    Raises:
        RuntimeError: the installed httpx2 no longer keeps its connection pool where this expects it (named).
    """
    import httpcore2 as httpcore
    import httpx2 as httpx

    class Stream(httpcore.NetworkStream):
        def __init__(self, inner) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, _remaining(timeout, httpcore.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _remaining(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Stream(self._inner.start_tls(ssl_context, server_hostname, _remaining(timeout, httpcore.ConnectTimeout)))

        def get_extra_info(self, info: str):
            return self._inner.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def __init__(self, inner) -> None:
            self._inner = inner

        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return Stream(self._inner.connect_tcp(host, port, _remaining(timeout, httpcore.ConnectTimeout), local_address, socket_options))

        def connect_unix_socket(self, path, timeout=None, socket_options=None):
            return Stream(self._inner.connect_unix_socket(path, _remaining(timeout, httpcore.ConnectTimeout), socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    transport = httpx.HTTPTransport(limits=limits)
    pool = getattr(transport, "_pool", None)
    if not isinstance(getattr(pool, "_network_backend", None), httpcore.NetworkBackend):
        raise RuntimeError(f"httpx2 {httpx.__version__}: its transport no longer keeps an httpcore2 pool with a network backend; the judge's whole-call time bound cannot be set")
    pool._network_backend = Backend(pool._network_backend)
    return transport


def _retry_after(response) -> float | None:
    """Seconds to wait that a reply's ``Retry-After`` header asks for (RFC 9110: delay-seconds or an HTTP date;
    also ``retry-after-ms``, as OpenAI-style servers send it); None when absent or unreadable."""
    headers = getattr(response, "headers", None) or {}
    milliseconds = headers.get("retry-after-ms")
    try:
        if milliseconds is not None:
            return max(float(milliseconds) / 1000.0, 0.0)
    except ValueError:
        pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - time.time(), 0.0) if when is not None else None


#: The longest wait between two attempts (s): the backoff's cap, and the most a ``Retry-After`` may ask for.
MAX_WAIT_S = 60.0


class _Failed(Exception):
    """A failed attempt: ``kind`` (counted in the provenance) and a one-line ``detail``."""

    def __init__(self, kind: str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.retry_after = kind, detail, retry_after


class _Retryable(_Failed):
    """A failed attempt worth retrying: timeout, connection error, HTTP 429 or 5xx."""


class _Unusable(_Retryable):
    """A reply came back but yields no valid score (``kind``: :data:`NO_VALID_SCORE` or :data:`UNFINISHED_REASONING`;
    ``detail``: the reason); asked again."""

    def __init__(self, kind: str, detail: str, content: str, model: str | None) -> None:
        super().__init__(kind, detail)
        self.content, self.model = content, model


class _Stopped(_Failed):
    """The pass was stopped (circuit breaker or Ctrl-C) before this call could finish."""


#: Error kind of a reply without a valid score (provenance ``errors``).
NO_VALID_SCORE = "no valid score"
#: Error kind of a reply whose reasoning never closed: the judge gave no verdict (its draft is never read).
UNFINISHED_REASONING = "unfinished reasoning"
#: Error kind of calls not made or not finished because the pass stopped.
NOT_JUDGED = "not judged"

#: Seconds between two cache writes of a pass (:meth:`Judge.complete_many`): at most this much of the replies
#: received is lost if the process is killed outright (not Ctrl-C, which stores them first).
_STORE_EVERY_S = 0.5

#: What a validator returns for the judge's final text (the reply with its reasoning removed: :attr:`JudgeReply.final`):
#: None when the reply is usable, else the reason it is not.
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
        # Every network operation of a call is bounded by the time left to the call's deadline (_deadline_transport).
        limits = openai.DEFAULT_CONNECTION_LIMITS
        limits = type(limits)(
            max_connections=max(limits.max_connections or 0, self.config.concurrency),
            max_keepalive_connections=max(limits.max_keepalive_connections or 0, self.config.concurrency),
        )
        http_client = openai.DefaultHttpx2Client(limits=limits, transport=_deadline_transport(limits))
        weakref.finalize(self, http_client.close)
        # max_retries=0: retries are ours (below), so that they are counted and their waits configured.
        base_url, query = _client_url(self.config.base_url)
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=os.environ[self.config.api_key_var].strip(),
            timeout=self.config.timeout_s,
            max_retries=0,
            http_client=http_client,
            default_query=query or None,
        )
        self._openai = openai
        self._secrets = self.config.secrets()
        self._endpoint = self.config.endpoint  # masked once: request_params runs per request
        try:
            self.cache: JudgeCache | _NoCache = JudgeCache(self.config.cache_path)
        except JudgeCacheError as error:  # e.g. a full disk: judging goes on without the cache, and says so
            self.cache = _NoCache(self.config.cache_path, self._scrub(error, limit=500))
            logger.warning(f"{self.cache.reason}: judging without a cache; no reply of this pass is stored (counted as uncached_replies), the next run asks again")
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
            logger.warning(f"judge: {self.breaker_tripped} (AUDIO_JUDGE_MAX_CONSECUTIVE_FAILURES={limit}; endpoint {self.config.endpoint})")
            self.stop(self.breaker_tripped)

    def request_params(self, request: JudgeRequest) -> dict:
        """Everything that determines a reply, as sent (also the cache key's content), the endpoint with its
        credentials masked (:func:`redact_url`): they never reach the cache and do not change its key."""
        max_tokens = self.config.max_tokens if self.config.max_tokens is not None else request.max_tokens
        params = {
            "base_url": self._endpoint,
            "model": self.config.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            "temperature": self.config.temperature,
        }
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        return params

    @staticmethod
    def cache_key(params: dict) -> str:
        """sha256 of the canonical JSON of :meth:`request_params` (a lone surrogate in a prompt is hashed as it is)."""
        return hashlib.sha256(json.dumps(params, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()

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
        _CALL.deadline, _CALL.bound = time.monotonic() + self.config.timeout_s, self.config.timeout_s
        try:
            text = self._client.post("/chat/completions", body=body, cast_to=str)
        except (openai.APITimeoutError, openai.APIConnectionError) as error:
            raise _Retryable(type(error).__name__, self._scrub(error)) from None
        except (openai.RateLimitError, openai.InternalServerError) as error:
            wait = _retry_after(error.response)
            if wait is not None and wait > MAX_WAIT_S:
                detail = f"{self._scrub(error)}; the server asked to wait {wait:.0f} s (Retry-After), more than the {MAX_WAIT_S:g} s the judge waits between attempts: not retried"
                raise _Failed(type(error).__name__, detail) from None
            raise _Retryable(type(error).__name__, self._scrub(error), retry_after=wait) from None
        except openai.APIStatusError as error:
            raise _Failed(f"HTTP {error.status_code}", self._scrub(error)) from None
        finally:
            _CALL.deadline = None
        try:
            reply = json.loads(text)
        except ValueError as error:  # the body was not valid JSON
            raise _Failed("malformed reply", self._scrub(error)) from None
        reply = reply if isinstance(reply, dict) else {}
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):  # a blank string is a reply: the task's score function reads it
            raise _Failed("empty reply", "the reply has no message content")
        model = reply.get("model")
        return content, model if isinstance(model, str) else None

    def _scrub(self, error: Exception, limit: int = 200) -> str:
        """The error text on one line, at most ``limit`` characters, with the API key and URL credentials masked."""
        return _scrub(error, self.config, limit, getattr(self, "_secrets", None))

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
        self._store([row] if row is not None else [])
        self._tally([reply])
        return reply

    def _cached_reply(self, hit: tuple[str, str | None] | None, validate: Validator | None) -> JudgeReply | None:
        """The reply for a cache ``hit`` that is still usable (counted as a cache hit), else None."""
        if hit is None or _unusable(validate, hit[0]) is not None:
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
        backoff = wait_exponential_jitter(multiplier=self.config.retry_wait_s, max=MAX_WAIT_S, jitter=self.config.retry_wait_s)

        def wait(state) -> float:
            """The server's ``Retry-After`` when the failed attempt carried one (at most MAX_WAIT_S: see
            :meth:`_attempt_once`), else the exponential backoff."""
            after = getattr(state.outcome.exception(), "retry_after", None) if state.outcome else None
            if after is None:
                return backoff(state)
            self._count(retry_after_waits=1)
            return after

        try:
            for attempt in Retrying(
                retry=retry_if_exception_type(_Retryable),
                stop=stop_after_attempt(self.config.max_attempts),
                wait=wait,
                sleep=self._sleep,
                reraise=False,
            ):
                with attempt:
                    if self._stop.is_set():
                        raise _Stopped(NOT_JUDGED, self.stop_reason or "stopped")
                    attempts += 1
                    self._count(api_calls=1)
                    content, model = self._attempt(params)
                    unusable = _unusable(validate, content)
                    if unusable is not None:
                        raise _Unusable(*unusable, content, model)
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
        """Write replies to the cache in one transaction (row by row when that fails: :meth:`JudgeCache.put_many`).
        Replies that cannot be stored (not a damaged file: those are replaced) are counted: ``uncached_replies``
        (all of them, including a pass without a cache), ``cache_write_failed`` (those a write failed for), and
        logged; the replies themselves stay valid."""
        if not rows:
            return
        try:
            skipped = self.cache.put_many(rows)
        except Exception as error:  # noqa: BLE001 - a cache that cannot be written costs the cache, not the scores
            skipped = [(index, f"{type(error).__name__}: {self._scrub(error)}") for index in range(len(rows))]
        if not skipped:
            return
        self._count(uncached_replies=len(skipped))
        if isinstance(self.cache, _NoCache):
            return  # said once when the pass began
        self._count(cache_write_failed=len(skipped))
        reasons = "; ".join(dict.fromkeys(self._scrub(reason) for _, reason in skipped))
        logger.warning(f"judge cache {self.cache.path}: {len(skipped)} of {len(rows)} replies could not be stored ({reasons}); they will be asked again next run")

    def _tally(self, replies: Sequence[JudgeReply | None]) -> None:
        """Count the replies whose verdict was read past the judge's reasoning, and those whose reasoning never closed."""
        past = unfinished = 0
        for reply in replies:
            if reply is not None and reply.content is not None and reply.reasoning.has_reasoning:
                unfinished += reply.reasoning.unfinished
                past += reply.ok and not reply.reasoning.unfinished
        self._count(reasoning_read_past=past, unfinished_reasoning=unfinished)

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
        self._tally(replies)
        return replies  # type: ignore[return-value]

    def provenance(self) -> dict:
        """What this pass used and did: config (no key), models reported, cache hits/misses, calls, failures."""
        config = self.config
        return {
            "judge_model_requested": config.model,
            "judge_models_reported": dict(self.models_reported),
            "base_url": config.endpoint,
            "api_key_var": config.api_key_var,
            "temperature": config.temperature,
            "max_tokens_override": config.max_tokens,
            "max_attempts": config.max_attempts,
            "timeout_s": config.timeout_s,
            "cache_path": str(config.cache_path),
            "cache_unavailable": self.cache.reason if isinstance(self.cache, _NoCache) else None,
            "cache_hits": self.stats["cache_hits"],
            "cache_misses": self.stats["cache_misses"],
            "api_calls": self.stats["api_calls"],
            "failed_calls": self.stats["failed"],
            "errors": dict(self.errors),
            "cache_rejected": self.stats["cache_rejected"],
            "cache_write_failed": self.stats["cache_write_failed"],
            "uncached_replies": self.stats["uncached_replies"],
            "cache_recovered": list(self.cache.recovered),
            "retry_after_waits": self.stats["retry_after_waits"],
            "reasoning_read_past": self.stats["reasoning_read_past"],
            "unfinished_reasoning": self.stats["unfinished_reasoning"],
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


def _scrub(error: object, config: JudgeConfig, limit: int = 200, secrets: list[str] | None = None) -> str:
    """``str(error)`` on one line, at most ``limit`` characters, with the API key and the base URL's credentials
    (:meth:`JudgeConfig.secrets`) masked wherever they appear."""
    text = _mask(" ".join(str(error).split()), config.secrets() if secrets is None else secrets)
    return text if len(text) <= limit else text[:limit] + "..."


def _mask(text: str, secrets: list[str]) -> str:
    """``text`` with every occurrence of each of ``secrets`` replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, _MASK)
    return text


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


def _unusable(validate: Validator | None, content: str) -> tuple[str, str] | None:
    """None when ``validate`` accepts the judge's final text in ``content``, else ``(error kind, reason)``. A reply whose
    reasoning never closed is unusable whatever ``validate`` says: it holds no verdict, only a draft."""
    if validate is None:
        return None
    split = split_reasoning(content)
    if split.unfinished:
        return UNFINISHED_REASONING, f"the judge's reasoning never closed ({split.trace_chars} characters, no verdict after it) in {_snippet(content)}"
    try:
        reason = validate(split.answer)
    except Exception as error:  # noqa: BLE001 - a score function that raises makes this reply unusable, loudly
        reason = f"the score function raised {type(error).__name__}: {error}"
    return None if reason is None else (NO_VALID_SCORE, reason)


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
    another number.
    """

    values: tuple[float, ...]
    failed: tuple[tuple[str, str], ...]
    strict: "JudgedDimension | None" = None
    strict_differs: int = 0

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
    memo_key = hashlib.sha256(
        json.dumps([task, items, dataclasses.astuple(config)], ensure_ascii=False, sort_keys=True, default=str).encode("utf-8", "surrogatepass")
    ).hexdigest()
    if memo_key in _PASSES:
        return _PASSES[memo_key]
    try:
        result: JudgedTask | str = _judge_pass(task, items, requests_for_item, score_from_reply, prompt_hashes, config, strict_score)
    except Exception as error:  # noqa: BLE001 - any judge error costs only the judged metrics, never the run
        result = f"not computed: the judge failed ({type(error).__name__}: {_scrub(error, config, limit=1000)})"
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


def _judge_pass(task, items, requests_for_item, score_from_reply, prompt_hashes, config, strict_score) -> JudgedTask:
    def per_dimension(function, dimension):
        return function[dimension] if isinstance(function, Mapping) else function

    judge = Judge(config)
    planned = [(item, dimension, request) for item in items for dimension, request in requests_for_item(item).items()]
    readers = [_bound(per_dimension(score_from_reply, dimension), item) for item, dimension, _ in planned]
    replies = judge.complete_many([request for _, _, request in planned], description=f"judge {task}", validate=[validator(read) for read in readers])
    values: dict[str, list] = {}
    failed: dict[str, list[tuple[str, str]]] = {}
    strict_values: dict[str, list] = {}
    strict_failed: dict[str, list[tuple[str, str]]] = {}
    differs: Counter = Counter()

    def record(read, reply, label, scored: list, unscored: list):
        """Read one reply (a failed call has no score), file it under ``scored`` or ``unscored``; return the score."""
        score, reason = read_score(read(reply.final), reply.final) if reply.ok else (None, reply.error)
        scored.append(score) if score is not None else unscored.append((label, reason))
        return score

    for (item, dimension, _), read, reply in zip(planned, readers, replies):
        label = item_label(item)
        for table in (values, failed, strict_values, strict_failed):
            table.setdefault(dimension, [])
        score = record(read, reply, label, values[dimension], failed[dimension])
        if strict_score is not None:
            strict = record(_bound(per_dimension(strict_score, dimension), item), reply, label, strict_values[dimension], strict_failed[dimension])
            differs[dimension] += score is not None and strict != score
    dimensions = {
        name: JudgedDimension(
            tuple(values[name]),
            tuple(failed[name]),
            JudgedDimension(tuple(strict_values[name]), tuple(strict_failed[name])) if strict_score is not None else None,
            differs[name],
        )
        for name in values
    }
    max_tokens = {dimension: judge.request_params(request).get("max_tokens", "server default") for _, dimension, request in planned}

    def listed(failures):
        return [f"{label}: {reason}" for label, reason in failures[:_SHOWN_FAILURES]]

    provenance = {
        **judge.provenance(),
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
            }
            for name, dimension in dimensions.items()
        },
    }
    _log_summary(task, dimensions, provenance)
    return JudgedTask(dimensions, provenance)


def _log_summary(task: str, dimensions: dict[str, JudgedDimension], provenance: dict) -> None:
    """One line per judged task: a warning with the judge_failed share and the first reason, else an info line;
    and a line when verdicts were read past the judge's reasoning."""
    total = sum(len(d.values) + len(d.failed) for d in dimensions.values())
    failures = [(name, label, reason) for name, d in dimensions.items() for label, reason in d.failed]
    calls = f"cache hits {provenance['cache_hits']}, API calls {provenance['api_calls']}"
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


def _snippet(text: str | None, limit: int = 60) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
