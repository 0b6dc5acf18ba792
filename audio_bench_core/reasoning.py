"""Reasoning traces in model answers and judge replies: what is the final text, and was it finished?

Reasoning models (Qwen3 / Qwen3-Omni Thinking, DeepSeek-R1, Kimi-Audio, Step-Audio-R1, Magistral, Seed-OSS,
gpt-oss, ...) write a draft before their answer, and servers without a reasoning parser pass it through inside
the reply. A number read from the draft is a wrong number, so every answer and every judge reply is split with
:func:`split_reasoning` before anything is read from it. Framework-free (standard library only).

Spellings recognised (case-insensitive; :data:`REASONING_SPELLINGS`):

- tags ``<think>``, ``<thinking>``, ``<thought>``, ``<thoughts>``, ``<reasoning>``, ``<analysis>`` (in lmms-eval's
  default ``--reasoning_tags``), ``<seed:think>`` and their closing tags, with optional spaces or attributes inside the tag (``<think >``, ``<think type="x">``);
- ``[THINK] ... [/THINK]`` (Mistral Magistral);
- ``◁think▷ ... ◁/think▷`` (Kimi);
- ``<|begin_of_thought|> ... <|end_of_thought|>`` (Sky-T1 / OpenThoughts; their ``<|begin_of_solution|>`` and
  ``<|end_of_solution|>`` markers are dropped, the solution kept);
- gpt-oss "harmony" channels: ``<|channel|>analysis<|message|> ... <|end|>`` is reasoning; the final channel's
  markers (``<|start|>assistant``, ``<|channel|>final<|message|>``, ``<|return|>``) are dropped.

Answer wrappers (:data:`ANSWER_WRAPPERS`): models trained on R1-style templates (``<think>…</think><answer>…</answer>``:
R1-AQA, SARI, Omni-R1 and the like) or Audio-Reasoner's (``<THINK>…</THINK><RESPONSE>…</RESPONSE>``) put the final
answer inside ``<answer>``, ``<response>``, ``<final_answer>`` or ``<final>`` tags. Outside reasoning, when at least one
such block is closed, the answer is the text inside the closed blocks (joined by new lines, in order), as those models'
own evaluation scripts read it; other text outside them (a preamble) is dropped. Stray wrapper tags (an opening tag
never closed, a lone closing tag) are dropped and the text around them kept. The tags never reach a scorer (an ASR
hypothesis holding ``<answer>`` would count its letters as errors).

Rule (one left-to-right pass, linear in the text's length): text outside every block is the answer; an opening
tag starts a block and a closing tag of any spelling ends the innermost open block; a closing tag with no block
open means the chat template pre-filled the opening tag, so everything before it is reasoning too; a block still
open at the end never closed (generation stopped inside the draft): :attr:`ReasoningSplit.unfinished`, and the
answer is only the text outside the blocks (usually empty), never the draft.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: (opening, closing) spellings, for the docs and the report; the regular expression below is built from them.
REASONING_SPELLINGS = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<thought>", "</thought>"),
    ("<thoughts>", "</thoughts>"),
    ("<reasoning>", "</reasoning>"),
    ("<analysis>", "</analysis>"),
    ("<seed:think>", "</seed:think>"),
    ("[THINK]", "[/THINK]"),
    ("◁think▷", "◁/think▷"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
)

#: Tags around the final answer (module docstring): the text inside closed ones is the answer.
ANSWER_WRAPPERS = ("<answer>", "<response>", "<final_answer>", "<final>")
_WRAPPER_TAG = re.compile(r"<\s*(?P<close>/)?\s*(?:answer|response|final_answer|final)\s*>", re.IGNORECASE)

_TAG_NAMES = r"(?:think|thinking|thoughts?|reasoning|analysis|seed:think)"
_EVENTS = re.compile(
    r"(?P<xml_close><\s*/\s*" + _TAG_NAMES + r"\s*>)"
    r"|(?P<xml_open><\s*" + _TAG_NAMES + r"(?:\s[^<>]{0,200})?>)"
    r"|(?P<bracket_close>\[\s*/\s*think\s*\])|(?P<bracket_open>\[\s*think\s*\])"
    r"|(?P<kimi_close>◁\s*/\s*think\s*▷)|(?P<kimi_open>◁\s*think\s*▷)"
    r"|(?P<thought_close><\|end_of_thought\|>)|(?P<thought_open><\|begin_of_thought\|>)"
    r"|(?P<harmony_open><\|channel\|>\s*analysis\s*<\|message\|>)"
    r"|(?P<harmony_end><\|end\|>)"
    r"|(?P<marker><\|(?:begin|end)_of_solution\|>|<\|start\|>\s*assistant|<\|channel\|>\s*final\s*<\|message\|>|<\|return\|>)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ReasoningSplit:
    """One response split into its final text and its reasoning.

    Attributes:
        answer: the text outside every reasoning block, stripped (the input unchanged when it holds no
            reasoning spelling or answer wrapper); only the text inside closed answer wrappers when there are
            any (module docstring); ``""`` when everything was reasoning.
        trace_chars: characters of reasoning removed (tags included), 0 when none.
        unfinished: a reasoning block was still open at the end of the text: the model gave no final answer.
        has_reasoning: any reasoning spelling was found (closed, pre-filled or unfinished).
    """

    answer: str
    trace_chars: int = 0
    unfinished: bool = False
    has_reasoning: bool = False


def split_reasoning(text: str | None) -> ReasoningSplit:
    """Split ``text`` into its final answer and its reasoning (rule in the module docstring).

    ``None`` is read as ``""``. Examples: ``"<think>B?</think>A"`` -> answer ``"A"``; ``"B? </think> A"``
    (pre-filled opening tag) -> ``"A"``; ``"<think>it is B"`` -> ``""``, unfinished; ``"◁think▷…◁/think▷A"`` -> ``"A"``.
    """
    text = text or ""
    if "<" not in text and "◁" not in text and "[" not in text:  # every spelling and wrapper starts with one of these
        return ReasoningSplit(answer=text)
    events = list(_EVENTS.finditer(text))
    if not events:
        return ReasoningSplit(answer=_unwrapped_answer(text))
    answer_parts: list[str] = []
    trace_chars = 0
    depth = 0
    position = 0
    found = False
    for event in events:
        kind = event.lastgroup
        segment = text[position : event.start()]
        if depth:
            trace_chars += len(segment)
        else:
            answer_parts.append(segment)
        position = event.end()
        tag_chars = event.end() - event.start()
        if kind == "marker" or (kind == "harmony_end" and not depth):
            continue  # markers of the final channel / solution: dropped, not reasoning
        found = True
        trace_chars += tag_chars
        if kind.endswith("_open"):
            depth += 1
        elif depth:
            depth -= 1
        else:  # a closing tag with nothing open: the opening tag was pre-filled, so all before it was reasoning
            trace_chars += sum(len(part) for part in answer_parts)
            answer_parts = []
    tail = text[position:]
    if depth:
        trace_chars += len(tail)
    else:
        answer_parts.append(tail)
    answer = "\n".join(part.strip() for part in answer_parts if part.strip())
    return ReasoningSplit(answer=_unwrapped_answer(answer), trace_chars=trace_chars, unfinished=depth > 0, has_reasoning=found)


def _unwrapped_answer(answer: str) -> str:
    """``answer`` read through its answer wrappers (module docstring): the text inside closed ``<answer>``-like blocks
    when there are any, else ``answer`` without stray wrapper tags. One pass over the tags (linear)."""
    tags = list(_WRAPPER_TAG.finditer(answer)) if "<" in answer else []
    if not tags:
        return answer
    inside: list[str] = []
    outside: list[str] = []
    is_open = False  # an opening tag is waiting for its closing tag (wrappers are not nested in practice)
    position = 0  # end of the previous tag
    for tag in tags:
        if tag["close"] and is_open:
            inside.append(answer[position : tag.start()])
        else:  # text before an opening tag, or before a lone closing tag, or after an opening tag never closed
            outside.append(answer[position : tag.start()])
        is_open = not tag["close"]
        position = tag.end()
    outside.append(answer[position:])
    parts = inside if inside else outside
    return "\n".join(part.strip() for part in parts if part.strip())
