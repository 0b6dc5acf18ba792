"""Our judge client as an lmms-eval ``llm_judge`` provider named ``audio_judge``.

lmms-eval's ``llm_judge`` (``lmms_eval/llm_judge/``: ``ServerInterface``, ``Request``, ``Response``,
``ProviderFactory.register_provider``; the same API in lmms-eval 0.7.2, 0.7.3 and upstream main) has no reply cache,
retries every error alike with a fixed sleep and then raises. This provider puts :class:`audio_bench_core.judge.Judge`
behind that interface, so that any lmms-eval task reaches what it adds (the persistent cache, typed retries with
``Retry-After``, the whole-call time bound, the circuit breaker, the request fields per judge family, the reply read by
its whole shape, and the accounting in :meth:`AudioJudgeProvider.provenance`) by naming the provider::

    from lmms_eval.llm_judge import Request, ServerConfig, get_server

    server = get_server("audio_judge", ServerConfig(model_name="gpt-5-mini", max_tokens=256))
    response = server.evaluate(Request(messages=[{"role": "user", "content": prompt}]))
    response.success, response.content, response.model_used, response.usage, response.error_message

The endpoint, key and the other settings are the ``AUDIO_JUDGE_*`` variables (:class:`audio_bench_core.judge.JudgeConfig`);
a ``ServerConfig`` passed explicitly sets the model, temperature and token limit. ``Response.content`` is the judge's
final text (its reasoning removed); a call that failed is ``success=False`` with ``error_message`` naming the kind
(``truncated: ...``, ``refusal: ...``, ...) and never raises. Importing this module registers the provider
(:func:`register_judge_provider`).

A judged task built on the shared judge pass (:func:`audio_bench_core.judge.judge_task`) reaches the judge the same way:
the pass makes its calls through :class:`LlmJudgeClient`, i.e. ``get_server`` of this provider, ``Request`` in,
``Response`` out.
"""

from __future__ import annotations

import dataclasses
import threading

from lmms_eval.llm_judge import ProviderFactory, Request, Response, ServerConfig, ServerInterface, get_server

from audio_bench_core.judge import Judge, JudgeConfig, JudgeReply, JudgeRequest, Validator

#: The name an lmms-eval task gives ``get_server`` / ``ProviderFactory.create_provider`` (``API_TYPE``) for this provider.
PROVIDER_NAME = "audio_judge"


class AudioJudgeProvider(ServerInterface):
    """An ``llm_judge`` provider backed by :class:`audio_bench_core.judge.Judge` (one judge pass per provider instance:
    its :meth:`provenance` describes every call the instance made).

    Args:
        config: lmms-eval's ``ServerConfig``. When given, its ``model_name``, ``temperature`` and ``max_tokens`` replace
            ``AUDIO_JUDGE_MODEL``, ``AUDIO_JUDGE_TEMPERATURE`` and the per-request token limit; when None, the
            ``AUDIO_JUDGE_*`` settings stand and the limit is the server's default.
    Raises:
        ValueError: an ``AUDIO_JUDGE_*`` variable is malformed (named).
    """

    def __init__(self, config: ServerConfig | None = None) -> None:
        judge_config = JudgeConfig.from_env()
        if config is not None:
            judge_config = dataclasses.replace(judge_config, model=config.model_name, temperature=config.temperature)
        super().__init__(config or ServerConfig(model_name=judge_config.model))
        self.judge_config, self._given = judge_config, config is not None
        self._judge: Judge | None = None
        self._lock = threading.Lock()

    def is_available(self) -> bool:
        """True when the API-key variable ``AUDIO_JUDGE_API_KEY_VAR`` names is set."""
        return self.judge_config.configured

    @property
    def judge(self) -> Judge:
        """The judge client, made on first use. Raises RuntimeError when no judge is configured (the reason named)."""
        with self._lock:
            if self._judge is None:
                self._judge = Judge(self.judge_config)
            return self._judge

    def judge_request(self, request: Request) -> JudgeRequest:
        """Our :class:`JudgeRequest` for an ``llm_judge`` ``Request``: its messages (with the configured system prompt,
        as ``ServerInterface.prepare_messages`` adds it) and the token limit of ``request.config`` or this provider's
        ``ServerConfig`` (None, the server's default, when neither was given).

        Raises:
            ValueError: the request carries images, non-text message content, or names another judge model.
        """
        if request.images:
            raise ValueError(f"the {PROVIDER_NAME} judge provider sends text prompts only; this request carries {len(request.images)} image(s)")
        config = request.config or (self.config if self._given else None)
        if config is not None and config.model_name != self.judge_config.model:
            raise ValueError(f"a request for judge model {config.model_name!r} sent to the {PROVIDER_NAME} provider of {self.judge_config.model!r}")
        messages = self.prepare_messages(request)
        for message in messages:
            if not isinstance(message.get("content"), str):
                raise ValueError(f"the {PROVIDER_NAME} judge provider sends text messages only; got content {type(message.get('content')).__name__}")
        return JudgeRequest.of(messages, config.max_tokens if config is not None else None)

    def evaluate(self, request: Request) -> Response:
        """One judge call (from the cache when the same request was answered before). Never raises for API errors."""
        return self.evaluate_many([request])[0]

    def evaluate_many(self, requests: list[Request], description: str = "judge", validate: Validator | list[Validator | None] | None = None) -> list[Response]:
        """All ``requests`` with bounded concurrency and a progress bar (:meth:`audio_bench_core.judge.Judge.complete_many`),
        in input order; ``validate`` as there (a reply it refuses is asked again, then failed, never cached)."""
        replies = self.judge.complete_many([self.judge_request(request) for request in requests], description, validate=validate)
        return [response_of(reply, self.judge_config.model) for reply in replies]

    def provenance(self) -> dict:
        """What this provider's calls used and did (:meth:`audio_bench_core.judge.Judge.provenance`)."""
        return self.judge.provenance()


def response_of(reply: JudgeReply, requested_model: str) -> Response:
    """lmms-eval's ``Response`` for one of our replies: ``content`` = the judge's final text (reasoning removed; ""
    when the call failed), ``model_used`` = the model the server reported (the requested one when it reported none),
    ``usage`` as reported, ``success``/``error_message`` from the reply, ``raw_response`` = the :class:`JudgeReply`."""
    return Response(
        content=(reply.final or "") if reply.ok else "",
        model_used=reply.reported_model or requested_model,
        usage=reply.usage,
        raw_response=reply,
        success=reply.ok,
        error_message=reply.error,
    )


class LlmJudgeClient:
    """The client of one judge pass (:func:`audio_bench_core.judge.judge_task`, ``client=LlmJudgeClient``) reached
    through lmms-eval's ``llm_judge``: the provider comes from ``get_server(PROVIDER_NAME, ...)`` (this module's own
    class when another copy of the module registered the name last), each of our
    :class:`JudgeRequest` is sent as an ``llm_judge`` ``Request`` (its messages, and a ``ServerConfig`` carrying its token
    limit) and comes back as a ``Response`` whose ``raw_response`` is the :class:`JudgeReply` the pass reads. The request
    body sent is the one :class:`Judge` builds for the same :class:`JudgeRequest` (the provider's tests check it).

    Args:
        config: the pass's judge settings; they must be the ones the provider reads (``AUDIO_JUDGE_*``).
    Raises:
        ValueError: ``config`` differs from the provider's settings (the differing fields named, never a key).
    """

    def __init__(self, config: JudgeConfig) -> None:
        server_config = ServerConfig(model_name=config.model, temperature=config.temperature)
        self.server = get_server(PROVIDER_NAME, server_config)
        if not isinstance(self.server, AudioJudgeProvider):
            # Another copy of this module (loaded under another name) registered the name last: the pass uses its own
            # copy's provider, whose settings, replies, cache and budget are the classes it reads (a copy's JudgeConfig
            # never equals ours).
            self.server = AudioJudgeProvider(server_config)
        if self.server.judge_config != config:
            differ = [f.name for f in dataclasses.fields(config) if getattr(config, f.name) != getattr(self.server.judge_config, f.name)]
            raise ValueError(f"the judge pass's settings differ from the {PROVIDER_NAME} provider's AUDIO_JUDGE_* settings in {', '.join(differ)}")
        self.config = config

    def request_of(self, request: JudgeRequest) -> Request:
        """The ``llm_judge`` ``Request`` of one of our requests (its token limit in ``config.max_tokens``; None: the
        server's default)."""
        server_config = ServerConfig(model_name=self.config.model, temperature=self.config.temperature, max_tokens=request.max_tokens)
        return Request(messages=[{"role": role, "content": content} for role, content in request.messages], config=server_config)

    def complete_many(self, requests: list[JudgeRequest], description: str = "judge", validate: Validator | list[Validator | None] | None = None) -> list[JudgeReply]:
        """:meth:`Judge.complete_many` through the provider's ``evaluate_many``: the replies in input order."""
        responses = self.server.evaluate_many([self.request_of(request) for request in requests], description, validate=validate)
        return [response.raw_response for response in responses]

    def request_params(self, request: JudgeRequest) -> dict:
        """The request fields sent for ``request`` (:meth:`Judge.request_params`)."""
        return self.server.judge.request_params(request)

    def provenance(self) -> dict:
        """What the pass's calls used and did (:meth:`AudioJudgeProvider.provenance`)."""
        return self.server.provenance()

    @property
    def core_judge(self) -> Judge:
        """The :class:`Judge` behind the provider, whose cache and settings the audit of cached verdicts and re-judging
        use (:mod:`audio_bench_core.judge_identity`)."""
        return self.server.judge


def register_judge_provider() -> None:
    """Register :class:`AudioJudgeProvider` as ``llm_judge`` provider :data:`PROVIDER_NAME` (done when this module is
    imported; a second call replaces the entry with this module's class)."""
    ProviderFactory.register_provider(PROVIDER_NAME, AudioJudgeProvider)


register_judge_provider()  # importing this module registers the provider (also where the entry point could not)
