"""Judge requests and replies (:class:`JudgeRequest`, :class:`JudgeReply`) and what makes a reply unusable.
Part of :mod:`audio_bench_core.judge`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
