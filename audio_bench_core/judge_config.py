"""Judge settings (:class:`JudgeConfig`, the ``AUDIO_JUDGE_*`` environment variables) and the masking of the
credentials they hold (:func:`redact_url`, :func:`scrub`). Part of :mod:`audio_bench_core.judge`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from audio_bench_core import cache_dir
from audio_bench_core.judge_request import RequestFields

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
        temperature: sampling temperature of every judge call (not sent to OpenAI reasoning models, which refuse it:
            :func:`audio_bench_core.judge_request.sampling_fields`).
        max_tokens: if set, replaces the per-prompt token limit of every call (the official values are 10 for the
            S2TT prompts and the server default for SEC); reported in the provenance. Sent as ``max_tokens``, or as
            ``max_completion_tokens`` to OpenAI reasoning models (whose limit includes their reasoning tokens: 10 is
            far too few for them; a reply cut at the limit is judge_failed, kind ``truncated``).
        request_fields: overrides of the request body (``AUDIO_JUDGE_REQUEST_FIELDS``, a JSON object of ``rename``,
            ``drop``, ``set``: :class:`audio_bench_core.judge_request.RequestFields`), for judges the family rule
            does not foresee (``reasoning_effort``, provider extras).
        concurrency: judge calls in flight at once (thread pool size), >= 1.
        timeout_s: time bound of one HTTP attempt, in seconds: connect, send, the wait for the reply and
            reading it, all together (a reply trickling in byte by byte is cut at this bound).
        max_attempts: attempts per call (first try + retries), >= 1.
        retry_wait_s: first backoff wait in seconds; it doubles per retry (with jitter), capped at 60 s. A
            ``Retry-After`` header on a retryable reply (429, 5xx) replaces the backoff; one asking for more than
            60 s ends the item's retries at once (named in the reason).
        max_consecutive_failures: circuit breaker: after this many failed API calls in a row (any error,
            counted per HTTP attempt, reset by any reply) a pass stops calling; 0 turns the breaker off.
        cache_path: SQLite file of cached replies (default ``judge/replies.sqlite3`` in the cache root,
            :func:`audio_bench_core.cache_dir`).
        max_calls: judge calls (HTTP attempts) the whole process may make, over every pass (None: no limit; 0: only
            the cache). Past it nothing is sent and the items left are judge_failed, kind ``budget``
            (:mod:`audio_bench_core.judge_budget`).
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
    request_fields: RequestFields = RequestFields()
    max_calls: int | None = None

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
            request_fields=RequestFields.parse(_env("REQUEST_FIELDS", ""), f"{ENV_PREFIX}REQUEST_FIELDS"),
            max_calls=number("MAX_CALLS", int, None, 0),
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



def scrub(error: object, config: JudgeConfig, limit: int = 200, secrets: list[str] | None = None) -> str:
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

_scrub = scrub
