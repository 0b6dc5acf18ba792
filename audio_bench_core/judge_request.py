"""The request body of a judge call, built the way the judge model's family needs, with the user's field overrides,
and adapted once when an endpoint refuses a parameter. Part of :mod:`audio_bench_core.judge`.

Families (:func:`sampling_fields`), as lmms-eval's own ``llm_judge`` OpenAI provider builds them
(``lmms_eval/llm_judge/providers/openai.py``, ``build_sampling_kwargs``):

- OpenAI reasoning models (``gpt-5*``, ``o1*``, ``o3*``, ``o4*``; also behind a router prefix such as
  ``openai/o3-mini``): the token limit is sent as ``max_completion_tokens`` and no ``temperature`` (they answer
  HTTP 400 to ``max_tokens`` and to a temperature other than their default);
- every other model (DeepSeek, vLLM/SGLang, Mistral, ...): ``max_tokens`` and ``temperature``.

Judges we did not foresee: ``AUDIO_JUDGE_REQUEST_FIELDS`` (:class:`RequestFields`) renames, drops or sets any
request field. An endpoint that still answers HTTP 400 naming an unsupported parameter we sent has it renamed (when
the error names the replacement) or dropped, once per pass, and the call is sent again (:func:`adaptation_for`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

#: Model-id prefixes of OpenAI's reasoning models (lmms-eval ``llm_judge``'s ``_is_reasoning_model``).
REASONING_MODEL_PREFIXES = ("gpt-5", "o1", "o3", "o4")

#: Fields an override may not touch: the prompt is the benchmark's, and the judge reads one JSON reply, not a stream.
PROTECTED_FIELDS = ("messages", "stream")


def is_reasoning_model(model: str) -> bool:
    """True for an OpenAI reasoning model id (``gpt-5*``, ``o1/o3/o4*``), also after a router prefix (``openai/o3``)."""
    return model.rsplit("/", 1)[-1].strip().lower().startswith(REASONING_MODEL_PREFIXES)


def sampling_fields(model: str, temperature: float, max_tokens: int | None) -> dict:
    """The token-limit and temperature fields of a chat-completions body for ``model``.

    Args:
        model: the judge model id as configured.
        temperature: the configured sampling temperature.
        max_tokens: the token limit (tokens of the reply; for reasoning models they include the reasoning tokens), or
            None for the server's default (no field sent).
    Returns:
        ``{"max_completion_tokens": n}`` for a reasoning model (no temperature), else ``{"temperature": t,
        "max_tokens": n}`` (``max_tokens`` left out when None). The order of the keys is the order they are sent in.
    """
    if is_reasoning_model(model):
        return {} if max_tokens is None else {"max_completion_tokens": max_tokens}
    fields: dict = {"temperature": temperature}
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    return fields


@dataclass(frozen=True)
class RequestFields:
    """Overrides of the request body, read from ``AUDIO_JUDGE_REQUEST_FIELDS`` (a JSON object)::

        {"rename": {"max_tokens": "max_completion_tokens"}, "drop": ["temperature"], "set": {"reasoning_effort": "low"}}

    Applied in that order after the family rule (:func:`sampling_fields`): ``rename`` moves a field's value to another
    name (nothing happens when the field is not sent), ``drop`` removes fields, ``set`` adds or replaces fields with
    any JSON value (provider extras such as ``{"chat_template_kwargs": {"enable_thinking": false}}``). The overrides
    are part of the request, hence of the cache key. Stored as canonical JSON texts so that the config stays hashable.
    """

    rename: tuple[tuple[str, str], ...] = ()
    drop: tuple[str, ...] = ()
    set: tuple[tuple[str, str], ...] = ()  # (field, JSON text of its value)

    @classmethod
    def parse(cls, text: str, source: str = "AUDIO_JUDGE_REQUEST_FIELDS") -> RequestFields:
        """From the JSON ``text`` ("" for none).

        Raises:
            ValueError: not a JSON object, an unknown key, a wrong type, or a protected field (``messages``,
                ``stream``); the message names ``source`` and what was wrong.
        """
        if not text.strip():
            return cls()
        try:
            spec = json.loads(text)
        except ValueError as error:
            raise ValueError(f"{source}={text!r} is not valid JSON ({error})") from None
        if not isinstance(spec, dict):
            raise ValueError(f"{source}={text!r} must be a JSON object with keys rename, drop, set")
        unknown = sorted(set(spec) - {"rename", "drop", "set"})
        if unknown:
            raise ValueError(f"{source}: unknown key(s) {unknown}; the keys are rename (object), drop (list), set (object)")
        rename, drop, values = spec.get("rename", {}), spec.get("drop", []), spec.get("set", {})
        if not (isinstance(rename, dict) and all(isinstance(v, str) and v for v in rename.values())):
            raise ValueError(f"{source}: rename must map field names to new field names, got {rename!r}")
        if not (isinstance(drop, list) and all(isinstance(v, str) for v in drop)):
            raise ValueError(f"{source}: drop must be a list of field names, got {drop!r}")
        if not isinstance(values, dict):
            raise ValueError(f"{source}: set must be an object of field values, got {values!r}")
        touched = [*rename, *rename.values(), *drop, *values]
        protected = sorted(set(touched) & set(PROTECTED_FIELDS))
        if protected:
            raise ValueError(f"{source}: {protected} cannot be overridden (the prompt is the benchmark's; the judge reads one JSON reply)")
        return cls(
            tuple(rename.items()),
            tuple(drop),
            tuple((name, json.dumps(value, ensure_ascii=False, sort_keys=True)) for name, value in values.items()),
        )

    def __bool__(self) -> bool:
        return bool(self.rename or self.drop or self.set)

    def apply(self, body: dict) -> dict:
        """``body`` (not changed) with the overrides applied: a new dict."""
        out = dict(body)
        for old, new in self.rename:
            if old in out:
                out[new] = out.pop(old)
        for name in self.drop:
            out.pop(name, None)
        for name, value in self.set:
            out[name] = json.loads(value)
        return out

    def as_dict(self) -> dict:
        """The overrides as the JSON object they were read from (for the provenance)."""
        return {"rename": dict(self.rename), "drop": list(self.drop), "set": {name: json.loads(value) for name, value in self.set}}


# OpenAI: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
#         "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported."
# vLLM/others: "... 'top_k' is not a supported parameter", "Extra inputs are not permitted" (pydantic, with the field in loc)
_UNSUPPORTED = re.compile(r"unsupported (?:parameter|value)s?\W+['\"`]?([A-Za-z_][\w.]*)['\"`]?", re.IGNORECASE)
_NOT_SUPPORTED = re.compile(r"['\"`]([A-Za-z_][\w.]*)['\"`] (?:is not (?:a )?supported|is not permitted|not supported)", re.IGNORECASE)
_INSTEAD = re.compile(r"use ['\"`]([A-Za-z_]\w*)['\"`] instead", re.IGNORECASE)


def adaptation_for(message: str, body: dict) -> tuple[str, str | None] | None:
    """What to change in ``body`` after an HTTP 400 whose error ``message`` names an unsupported parameter of it.

    Returns:
        ``(field, new name)`` to rename (the message says "Use '<new>' instead" and ``<new>`` is not sent yet),
        ``(field, None)`` to drop it, or None when the message names no field of ``body`` (then nothing is changed:
        the error is not about a parameter we can leave out).
    """
    match = _UNSUPPORTED.search(message) or _NOT_SUPPORTED.search(message)
    if match is None:
        return None
    field = match.group(1)
    if field not in body or field in PROTECTED_FIELDS or field == "model":
        return None
    instead = _INSTEAD.search(message)
    new = instead.group(1) if instead else None
    return (field, new) if new and new != field and new not in body else (field, None)
