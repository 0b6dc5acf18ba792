"""The judge client (:class:`Judge`): cache, bounded concurrency, retries, circuit breaker and accounting around
one OpenAI-compatible chat-completions endpoint. Part of :mod:`audio_bench_core.judge`."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import time
import weakref
from collections import Counter
from collections.abc import Sequence

from loguru import logger

from audio_bench_core import judge_budget
from audio_bench_core.judge_cache import JudgeCache, JudgeCacheError, _NoCache
from audio_bench_core.judge_config import JudgeConfig, _client_url, _mask, scrub
from audio_bench_core.judge_reply import (
    NOT_JUDGED,
    PROVIDER_ERROR,
    JudgeReply,
    JudgeRequest,
    ReplyShape,
    Validator,
    _unusable,
    read_reply,
)
from audio_bench_core.judge_request import adaptation_for, sampling_fields
from audio_bench_core.judge_transport import (
    _CALL,
    MAX_WAIT_S,
    _deadline_transport,
    _Failed,
    _retry_after,
    _Retryable,
    _Stopped,
    _Unusable,
)

#: Seconds between two cache writes of a pass (:meth:`Judge.complete_many`): at most this much of the replies
#: received is lost if the process is killed outright (not Ctrl-C, which stores them first).
_STORE_EVERY_S = 0.5


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
        #: The judge-call budget shared by every pass of the process (``AUDIO_JUDGE_MAX_CALLS``).
        self.budget = judge_budget.process_budget(self.config.max_calls)
        self.stats: Counter = Counter()
        self.models_reported: Counter = Counter()
        self.errors: Counter = Counter()
        self._stop = threading.Event()
        self.stop_reason: str | None = None
        self.breaker_tripped: str | None = None
        self._consecutive_failures = 0
        #: Request fields this pass renamed or dropped after the endpoint refused them (HTTP 400 "Unsupported
        #: parameter"): ``{field: new name or None (dropped)}``, with the endpoint's words (:meth:`_adapt`).
        self.adapted: dict[str, str | None] = {}
        self.adapted_because: dict[str, str] = {}
        self.usage: Counter = Counter()  # token counts the fresh replies of this pass reported (``usage``), summed

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
        credentials masked (:func:`redact_url`): they never reach the cache and do not change its key.

        The token limit and temperature follow the judge model's family
        (:func:`audio_bench_core.judge_request.sampling_fields`), then ``AUDIO_JUDGE_REQUEST_FIELDS`` is applied. For
        the default (official) configuration this is ``{base_url, model, messages, temperature[, max_tokens]}``, in
        that order, as the official script sends it. Fields the endpoint refused during this pass are changed only
        when the call is sent (:meth:`_body`), not here: the cache key stays that of the configured request.
        """
        max_tokens = self.config.max_tokens if self.config.max_tokens is not None else request.max_tokens
        params = {
            "base_url": self._endpoint,
            "model": self.config.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            **sampling_fields(self.config.model, self.config.temperature, max_tokens),
        }
        return self.config.request_fields.apply(params) if self.config.request_fields else params

    def _body(self, params: dict) -> dict:
        """The body sent for ``params``: without ``base_url``, with the fields the endpoint refused renamed or dropped."""
        body = {k: v for k, v in params.items() if k != "base_url"}
        for name, new in list(self.adapted.items()):
            if name in body:
                value = body.pop(name)
                if new is not None and new not in body:
                    body[new] = value
        return body

    def _adapt(self, error, body: dict) -> bool:
        """After an HTTP 400 naming a field of ``body`` as unsupported: rename it (when the endpoint names the
        replacement) or drop it for the rest of this pass, warn once, and return True (the call is sent again)."""
        message = self._scrub(error, limit=1000)
        change = adaptation_for(message, body)
        if change is None:
            return False
        name, new = change
        with self._lock:
            if name in self.adapted:  # another worker adapted it already; this body was built before
                return True
            self.adapted[name], self.adapted_because[name] = new, message[:300]
        done = f"renamed to {new!r}" if new else "no longer sent"
        logger.warning(
            f"judge: the endpoint refused the request field {name!r} ({message[:200]}); for the rest of this pass it is {done}. "
            f"To make it permanent, set AUDIO_JUDGE_REQUEST_FIELDS (docs/judge.md, section Judge families)"
        )
        return True

    @staticmethod
    def cache_key(params: dict) -> str:
        """sha256 of the canonical JSON of :meth:`request_params` (a lone surrogate in a prompt is hashed as it is)."""
        return hashlib.sha256(json.dumps(params, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()

    def _attempt(self, params: dict) -> ReplyShape:
        """One HTTP attempt (sent again at once for each field the endpoint refused and :meth:`_adapt` changed); its outcome
        feeds the circuit breaker. A reply without a verdict (truncated, refusal, ...) is returned, not raised: it is
        a reply (the endpoint works); an error object in the body is raised as a failed attempt."""
        try:
            for _ in range(len(params)):  # each refused field is adapted once: at most one resend per field
                try:
                    shape = self._attempt_once(params)
                    break
                except _Adapted:
                    self._take_call()  # the resend is a call too
                    self._count(api_calls=1, adapted_retries=1)
            else:
                self._take_call()
                shape = self._attempt_once(params, adapt=False)
        except _OverBudget:
            raise
        except _Failed as failure:
            self._record_attempt(failure)
            raise
        self._record_attempt(None)
        return shape

    def _attempt_once(self, params: dict, adapt: bool = True) -> ReplyShape:
        """One chat-completions POST through the openai client, read as JSON text.

        The client's documented generic ``post`` (its "undocumented endpoints" API) sends the body as built by
        :meth:`request_params` and returns the body text: base URL, API key, timeout, connection pool and the
        typed errors (timeout, connection, 429, 5xx, other statuses) are the client's, as with
        ``chat.completions.create``; what is skipped is ``create``'s walk of the parameters through its
        TypedDict annotations (a no-op for our plain string messages) and the pydantic ``ChatCompletion`` built
        from the reply, of which only two fields are read: together a third of the client's CPU per call
        (1.5-1.6 ms -> 1.1-1.3 ms), which matters at short latencies and high concurrency, where the replies of
        a wave queue for the interpreter lock.
        """
        openai = self._openai
        body = self._body(params)
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
            if error.status_code == 400 and adapt and self._adapt(error, body):
                raise _Adapted(f"HTTP {error.status_code}", self._scrub(error)) from None
            shape = read_reply(_json_or_none(error.response))
            if shape.failure is not None and shape.failure[0] == PROVIDER_ERROR and shape.failure[2]:  # e.g. a 400 saying "overloaded"
                raise _Retryable(f"HTTP {error.status_code}", self._scrub(error)) from None
            raise _Failed(f"HTTP {error.status_code}", self._scrub(error)) from None
        finally:
            _CALL.deadline = None
        try:
            reply = json.loads(text)
        except ValueError as error:  # the body was not valid JSON
            raise _Failed("malformed reply", self._scrub(error)) from None
        shape = read_reply(reply)
        if shape.failure is not None and shape.failure[0] == PROVIDER_ERROR:  # an error inside a 200: retried when transient
            kind, detail, transient = shape.failure
            raise (_Retryable if transient else _Failed)(kind, _mask(detail, self._secrets or [])) from None
        return shape

    def _scrub(self, error: Exception, limit: int = 200) -> str:
        """The error text on one line, at most ``limit`` characters, with the API key and URL credentials masked."""
        return scrub(error, self.config, limit, getattr(self, "_secrets", None))

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
        hit = self.cache.get_many([key], usage=True).get(key)
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
        return JudgeReply(content=hit[0], model=hit[1], cached=True, usage=hit[2] if len(hit) > 2 else None)

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
                    self._take_call()
                    attempts += 1
                    self._count(api_calls=1)
                    shape = self._attempt(params)
                    self._count_usage(shape.usage)
                    if shape.failure is not None:  # no verdict in the reply (truncated, refusal, tool call, no content): not asked again
                        raise _NoVerdict(shape.failure[0], shape.failure[1], shape)
                    content, model = shape.content, shape.model
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
        except _NoVerdict as error:
            self._count_model(error.shape.model)
            return self._failed(error.kind, error.detail, attempts, model=error.shape.model, shape=error.shape), None
        except _Stopped as error:
            return self._failed(error.kind, error.detail, attempts, prefix=False), None
        except _Failed as error:
            return self._failed(error.kind, error.detail, attempts), None
        self._count_model(model)
        reply = JudgeReply(content=content, model=model, attempts=attempts, usage=shape.usage, finish_reason=shape.finish_reason, reasoning_field=shape.reasoning)
        sent = {**self._body(params), "base_url": params["base_url"]} if self.adapted else params
        return reply, (key, sent, content, model, hit is not None, shape.usage)

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
        """Count the replies whose verdict was read past the judge's reasoning (inline, or sent apart in
        ``reasoning_content``/thinking parts), and those whose inline reasoning never closed."""
        past = unfinished = 0
        for reply in replies:
            if reply is not None and reply.content is not None and reply.reasoning.has_reasoning:
                unfinished += reply.reasoning.unfinished
                past += reply.ok and not reply.reasoning.unfinished
            elif reply is not None and reply.ok and reply.reasoning_field:  # the reasoning came apart (reasoning_content, parts)
                past += 1
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
        (at concurrency 32 the SQLite work per call had cost about 0.07 of the ideal throughput).

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
        hits = self.cache.get_many(keys, usage=True)
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
            "request_fields": config.request_fields.as_dict() if config.request_fields else None,
            "request_adapted": {name: {"sent_as": new, "because": self.adapted_because[name]} for name, new in self.adapted.items()},
            "usage_reported": dict(self.usage),
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
            "adapted_retries": self.stats["adapted_retries"],
            "reasoning_read_past": self.stats["reasoning_read_past"],
            "unfinished_reasoning": self.stats["unfinished_reasoning"],
            "circuit_breaker": {"max_consecutive_failures": config.max_consecutive_failures, "tripped": self.breaker_tripped},
            "max_calls": config.max_calls,
            "judge_skipped_budget": self.errors[judge_budget.BUDGET],
        }

    def _take_call(self) -> None:
        """Take one call from the process's budget (:mod:`audio_bench_core.judge_budget`), or raise ``_OverBudget``."""
        if not self.budget.take():
            raise _OverBudget(judge_budget.BUDGET, self.budget.reason())

    def _count(self, **amounts: int) -> None:
        with self._lock:
            self.stats.update(amounts)

    def _count_model(self, model: str | None) -> None:
        with self._lock:
            self.models_reported[model or "(not reported)"] += 1

    def _count_usage(self, usage: dict | None) -> None:
        """Add a fresh reply's ``usage`` token counts (numbers only, nested ``*_details`` flattened with a dot)."""
        if not usage:
            return
        with self._lock:
            for name, value in usage.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self.usage[name] += value
                elif isinstance(value, dict):
                    self.usage.update({f"{name}.{k}": v for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})

    def _failed(
        self, kind: str, detail: str, attempts: int, content: str | None = None, model: str | None = None, prefix: bool = True,
        shape: ReplyShape | None = None,
    ) -> JudgeReply:
        """A failed call, counted by ``kind``; ``error`` is ``"kind: detail"`` (or ``detail`` alone if not ``prefix``)."""
        with self._lock:
            self.stats["failed"] += 1
            self.errors[kind] += 1
        extra = {"usage": shape.usage, "finish_reason": shape.finish_reason, "reasoning_field": shape.reasoning} if shape is not None else {}
        return JudgeReply(content=content, error=f"{kind}: {detail}" if prefix else detail, model=model, attempts=attempts, kind=kind, **extra)



class _OverBudget(_Stopped):
    """No call was made: the process's judge-call budget is spent (:mod:`audio_bench_core.judge_budget`)."""


class _Adapted(_Failed):
    """HTTP 400 naming an unsupported field, which was renamed or dropped (:meth:`Judge._adapt`): sent again at once."""


class _NoVerdict(_Failed):
    """A reply came back without a verdict (:func:`audio_bench_core.judge_reply.read_reply`'s failure): judge_failed."""

    def __init__(self, kind: str, detail: str, shape: ReplyShape) -> None:
        super().__init__(kind, detail)
        self.shape = shape


def _json_or_none(response):
    """The JSON body of an HTTP error ``response``, or None when it has none."""
    try:
        return response.json()
    except Exception:  # noqa: BLE001 - any unreadable body is "no body"
        return None
