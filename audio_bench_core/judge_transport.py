"""One judge call's transport: the time bound of a whole call (:func:`_deadline_transport`), ``Retry-After``
(:func:`_retry_after`) and the failed-attempt types the retries are decided by. Part of :mod:`audio_bench_core.judge`."""

from __future__ import annotations

import email.utils
import math
import threading
import time

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


