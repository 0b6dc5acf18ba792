"""Judge requests and replies (:class:`JudgeRequest`, :class:`JudgeReply`), a reply read by its whole shape
(:func:`read_reply`) and what makes a reply unusable. Part of :mod:`audio_bench_core.judge`.

A chat-completions reply is read whole before any verdict is (:func:`read_reply`): error objects (top level or in the
choice, whatever the HTTP status that carried them), the finish reason, a refusal, tool calls, and the content as a
string or as a list of typed parts. Text parts are the reply; thinking/reasoning parts and the ``reasoning_content`` /
``reasoning`` / ``reasoning_details`` fields are the judge's reasoning, kept apart and never read for a verdict. A
reply cut at the token limit (``finish_reason`` ``"length"``) has no verdict, even when its content is empty and its
draft sits in ``reasoning_content``. Each failure names its kind (:data:`REPLY_FAILURE_KINDS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from audio_bench_core.reasoning import ReasoningSplit, split_reasoning


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
    #: The ``usage`` object the server reported (``prompt_tokens``, ``completion_tokens``, ...), stored with a cached
    #: reply and served with it (the tokens of the call that made it, not of this run); None when not reported.
    usage: dict | None = field(default=None, compare=False)
    #: ``finish_reason`` of the reply's choice as the server sent it (None when not sent, or from the cache).
    finish_reason: str | None = None
    #: The reasoning the server sent beside the content (``reasoning_content``, thinking parts): never a verdict.
    reasoning_field: str | None = None
    #: Error kind of a failed call (:data:`REPLY_FAILURE_KINDS`, an HTTP error name, ...); None when ``ok``.
    kind: str | None = None

    @property
    def reported_model(self) -> str | None:
        """The judge model id the server reported in the reply's ``model`` field (= :attr:`model`)."""
        return self.model

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


#: Error kind of a reply without a valid score (provenance ``errors``).
NO_VALID_SCORE = "no valid score"
#: Error kind of a reply whose reasoning never closed: the judge gave no verdict (its draft is never read).
UNFINISHED_REASONING = "unfinished reasoning"
#: Error kind of calls not made or not finished because the pass stopped.
NOT_JUDGED = "not judged"
#: Error kinds of a reply read by its whole shape (:func:`read_reply`).
TRUNCATED = "truncated"  # finish_reason "length": cut at the token limit, a draft; never a verdict, never cached
REFUSAL = "refusal"  # the message's refusal field or part, or finish_reason "content_filter"
TOOL_CALL = "tool_call"  # tool_calls / function_call instead of a text reply
PROVIDER_ERROR = "provider_error"  # an error object in the reply body (whatever the HTTP status that carried it)
NO_CONTENT = "no_content"  # no choices, no message, or no text in it (only reasoning, only non-text parts)
REPLY_FAILURE_KINDS = (TRUNCATED, REFUSAL, TOOL_CALL, PROVIDER_ERROR, NO_CONTENT)

#: finish_reason values of a reply cut at its token limit (OpenAI/vLLM/SGLang "length"; Anthropic-compatible
#: "max_tokens"; Gemini-compatible "MAX_TOKENS").
_TRUNCATED_FINISH = ("length", "max_tokens", "max_output_tokens")
_TEXT_PARTS = ("text", "output_text")
_REASONING_PARTS = ("thinking", "reasoning", "reasoning_text", "redacted_thinking", "summary_text")
#: Words of an error object that say it is transient (worth asking again): rate limits, overload, server errors.
_TRANSIENT_WORDS = ("rate_limit", "rate limit", "ratelimit", "overloaded", "server_error", "server error", "internal", "timeout",
                    "timed out", "unavailable", "capacity", "try again", "resource_exhausted", "too many requests", "bad gateway")  # fmt: skip


@dataclass(frozen=True)
class ReplyShape:
    """A reply body read whole (:func:`read_reply`).

    ``content``: the text parts joined (None when there is none); ``reasoning``: the reasoning the server sent apart
    (fields and parts, joined; None when none); ``failure``: ``(kind, detail, transient)`` when the reply holds no
    verdict (``detail`` without the kind; ``transient``: a provider error worth retrying), else None.
    """

    content: str | None
    reasoning: str | None = None
    finish_reason: str | None = None
    model: str | None = None
    usage: dict | None = None
    failure: tuple[str, str, bool] | None = None


def _text_of(value) -> str:
    """The text in a reasoning value: a string, a list of strings/parts, or a part (``text``/``thinking``/``summary``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text_of(item) for item in value)
    if isinstance(value, dict):
        for name in ("text", "thinking", "reasoning", "content", "summary"):
            if name in value:
                return _text_of(value[name])
    return ""


def _error_failure(error, where: str) -> tuple[str, str, bool]:
    """``(PROVIDER_ERROR, detail, transient)`` for an error object (dict or text) found ``where`` in a reply."""
    if isinstance(error, dict):
        fields = {name: error.get(name) for name in ("code", "type", "status", "message") if error.get(name) not in (None, "")}
        inner = error.get("error")
        if isinstance(inner, dict):  # {"type": "error", "error": {"type": "overloaded_error", ...}}
            fields.update({name: inner.get(name) for name in ("code", "type", "status", "message") if inner.get(name) not in (None, "")})
    else:
        fields = {"message": str(error)}
    numbers = []
    for name in ("code", "status"):
        try:
            numbers.append(int(str(fields.get(name, "")).strip()))
        except ValueError:
            pass
    words = " ".join(str(value) for value in fields.values()).lower()
    transient = any(n in (408, 425, 429) or 500 <= n <= 599 for n in numbers) or any(word in words for word in _TRANSIENT_WORDS)
    shown = ", ".join(f"{name} {value!r}" for name, value in fields.items()) or repr(error)
    return PROVIDER_ERROR, f"the reply carries an error object {where} ({shown}){'; transient, asked again' if transient else ''}", transient


def read_reply(body) -> ReplyShape:
    """Read a chat-completions reply body (parsed JSON) by its whole shape. Never raises.

    Rules, in order: an error object (top level, or in the first choice, or ``finish_reason`` ``"error"``) is a
    :data:`PROVIDER_ERROR` (transient when its code/status is 408/425/429/5xx or its words say rate limit, overload,
    unavailable, ...); no choice or no message is :data:`NO_CONTENT`; a non-empty ``refusal`` (field or part) or
    ``finish_reason`` ``"content_filter"`` is a :data:`REFUSAL`; ``tool_calls``/``function_call`` (or that finish
    reason) is a :data:`TOOL_CALL`; ``finish_reason`` ``"length"`` is :data:`TRUNCATED` whatever the content holds;
    content as a string is the reply (a blank string too: the task's score function reads it), content as a list of
    parts is the join of its text parts (reasoning parts go to ``reasoning``), and a reply with no text is
    :data:`NO_CONTENT` (the detail says when it held only reasoning).

    Args:
        body: the reply's JSON (any value; a non-object is :data:`NO_CONTENT`).
    Returns:
        The :class:`ReplyShape`; ``failure`` set when the reply holds no verdict.
    """
    body = body if isinstance(body, dict) else {}
    model = body.get("model") if isinstance(body.get("model"), str) else None
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None

    def shape(content=None, reasoning=None, finish=None, failure=None) -> ReplyShape:
        return ReplyShape(content, reasoning or None, finish, model, usage, failure)

    if body.get("error") not in (None, "", {}) or body.get("type") == "error":
        return shape(failure=_error_failure(body.get("error") or body, "at its top level"))
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict):
        return shape(failure=(NO_CONTENT, "the reply has no choices", False))
    finish = first.get("finish_reason") if isinstance(first.get("finish_reason"), str) else None
    if first.get("error") not in (None, "", {}):
        return shape(finish=finish, failure=_error_failure(first["error"], "in its choice"))
    message = first.get("message")
    if not isinstance(message, dict):
        if finish == "error":
            return shape(finish=finish, failure=_error_failure({"message": "finish_reason 'error'"}, "(finish_reason 'error')"))
        return shape(finish=finish, failure=(NO_CONTENT, "the reply's choice has no message", False))
    raw = message.get("content")
    texts: list[str] = []
    reasoning = [_text_of(message.get(name)) for name in ("reasoning_content", "reasoning", "reasoning_details")]
    refusals = [message["refusal"]] if isinstance(message.get("refusal"), str) and message["refusal"].strip() else []
    other_parts: list[str] = []
    if isinstance(raw, str):
        texts.append(raw)
    elif isinstance(raw, list):
        for part in raw:
            kind = part.get("type") if isinstance(part, dict) else None
            if isinstance(part, str):
                texts.append(part)
            elif kind in _TEXT_PARTS and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind in _REASONING_PARTS:
                reasoning.append(_text_of({k: v for k, v in part.items() if k != "type"}))
            elif kind == "refusal":
                refusals.append(_text_of(part.get("refusal")) or "(no text)")
            else:
                other_parts.append(str(kind))
    content = "".join(texts) if texts else None
    thought = "".join(reasoning)
    if finish == "error":
        return shape(content, thought, finish, _error_failure({"message": "finish_reason 'error'"}, "(finish_reason 'error')"))
    if refusals or finish == "content_filter":
        said = _snippet(" ".join(refusals)) if refusals else "(finish_reason 'content_filter')"
        return shape(content, thought, finish, (REFUSAL, f"the judge refused {said}", False))
    calls = message.get("tool_calls") or ([message["function_call"]] if message.get("function_call") else [])
    if calls or finish in ("tool_calls", "function_call"):
        names = [str((call.get("function") or call).get("name", "?")) for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        return shape(content, thought, finish, (TOOL_CALL, f"the judge called tool(s) {names or '(unnamed)'} instead of replying", False))
    if finish in _TRUNCATED_FINISH:
        detail = (f"the reply was cut at the token limit (finish_reason {finish!r}; {len(content or '')} characters of content, "
                  f"{len(thought)} of reasoning): a draft, not a verdict; raise AUDIO_JUDGE_MAX_TOKENS")  # fmt: skip
        return shape(content, thought, finish, (TRUNCATED, detail, False))
    if content is None:
        held = f"only reasoning ({len(thought)} characters), no text" if thought else f"no text part (parts: {other_parts})" if other_parts else "no message content"
        return shape(None, thought, finish, (NO_CONTENT, f"the reply has {held}", False))
    return shape(content, thought, finish)

#: What a validator returns for the judge's final text (the reply with its reasoning removed: :attr:`JudgeReply.final`):
#: None when the reply is usable, else the reason it is not.
Validator = Callable[[str], str | None]


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



def _snippet(text: str | None, limit: int = 60) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
