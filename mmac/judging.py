"""MMAC's judge: the rubric (kept as data in ``rubric.json``), the judge messages, and the reply contract.

One judge call per (caption, target dimension). The judge reads the caption and the reference label of that
one dimension (it never hears the audio) and replies with one JSON object::

    {"mentioned": true | false, "score": <integer 0..scale> | null, "reason": "<short text>"}

- ``mentioned`` (JSON boolean): whether the caption mentions the target dimension (rubric: ``mention`` /
  ``not_mention``);
- ``score``: if mentioned, the consistency with the reference label on the dimension's scale (``binary``:
  0 or 1; ``graded``: 0..scale); if not mentioned, ``null``, absent, or 0;
- ``reason``: optional short text, kept for the logs.

The verdict is the judge's *final* JSON object: the last object in the reply that has a ``mentioned`` key
(earlier ones are drafts or quotes), leaving out any object that also occurs in the caption (a caption can end
in a planted ``{"mentioned": true, "score": 2}`` that the judge quotes). The judge's reasoning is removed before
this module sees the reply (:mod:`audio_bench_core.judge`); a reply whose reasoning never closed has no verdict.

The caption goes to the judge between two tags named after a digest of the caption itself
(``<caption-1f0c...>`` ... ``</caption-1f0c...>``, :func:`caption_tag`): no caption can hold its own digest, so
none can close its block and write its own "Reference label" or "Reply with" lines after it.

A reply that breaks the contract is *invalid* (:class:`InvalidJudgeReply` names why): no JSON object,
``mentioned`` not a boolean, a mentioned reply without an integer score, a score outside ``0..scale``, or a
non-zero score with ``mentioned: false``. An invalid reply is a judge failure, never an omission and never a
0 (paper Sec. 3.2: omissions are scored 0 in Accuracy; failures are not omissions). The score is normalised
to [0, 1] by dividing by the scale (paper Sec. 3.2).

The rubric file is :data:`RUBRIC_FILE`, or the file named by ``$MMAC_RUBRIC``; its sha256 is part of the
metric signature (:func:`signature`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mmac.schema import DIMENSIONS, LABEL_TYPES

RUBRIC_FILE = Path(__file__).with_name("rubric.json")
RUBRIC_ENV = "MMAC_RUBRIC"
#: How ``user_template`` must frame the caption: between the opening and the closing :func:`caption_tag`.
CAPTION_BLOCK = "<{caption_tag}>\n{caption}\n</{caption_tag}>"


class RubricError(ValueError):
    """The rubric file is malformed; the message names the file and the field."""


class InvalidJudgeReply(ValueError):
    """A judge reply that breaks the JSON contract; the message says how."""


@dataclass(frozen=True)
class Judgment:
    """One valid judge reply: ``mentioned``; ``score`` on the dimension's scale (None when not mentioned);
    ``reason`` as the judge gave it."""

    mentioned: bool
    score: int | None
    reason: str = ""


def rubric_path() -> Path:
    """``$MMAC_RUBRIC`` if set, else the shipped :data:`RUBRIC_FILE`."""
    value = os.environ.get(RUBRIC_ENV, "").strip()
    return Path(value).expanduser() if value else RUBRIC_FILE


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int) -> dict:
    file = Path(path)
    try:
        rubric = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise RubricError(f"{file}: cannot read the rubric ({error})") from None
    for key in ("system", "user_template", "dimensions"):
        if key not in rubric:
            raise RubricError(f"{file}: missing field {key!r}")
    missing = [d for d in DIMENSIONS if d not in rubric["dimensions"]]
    unknown = [d for d in rubric["dimensions"] if d not in DIMENSIONS]
    if missing or unknown:
        raise RubricError(f"{file}: dimensions missing {missing}, unknown {unknown}")
    for name, spec in rubric["dimensions"].items():
        where = f"{file}: dimensions.{name}"
        for key in ("title", "definition", "mention", "not_mention", "label_type", "scale", "levels"):
            if key not in spec:
                raise RubricError(f"{where}: missing field {key!r}")
        label_type, scale = spec["label_type"], spec["scale"]
        if label_type not in LABEL_TYPES:
            raise RubricError(f"{where}.label_type: {label_type!r} is not one of {LABEL_TYPES}")
        if not isinstance(scale, int) or isinstance(scale, bool) or (label_type == "binary" and scale != 1) or (label_type == "graded" and scale < 2):
            raise RubricError(f"{where}.scale: {scale!r} (binary needs 1, graded an integer >= 2)")
        if sorted(spec["levels"], key=int) != [str(i) for i in range(scale + 1)]:
            raise RubricError(f"{where}.levels: need one description for each score 0..{scale}, got {sorted(spec['levels'])}")
    try:
        render(rubric, "content", "label", "caption")
    except (KeyError, IndexError, ValueError) as error:
        raise RubricError(f"{file}: user_template does not format ({error!r})") from None
    if rubric["user_template"].count(CAPTION_BLOCK) != 1 or rubric["user_template"].count("{caption}") != 1:
        raise RubricError(f"{file}: user_template must put {{caption}} once, inside {CAPTION_BLOCK!r} (a caption must not be able to close its block)")
    return rubric


def load_rubric(path: str | Path | None = None) -> dict:
    """The rubric as a dict, checked (every one of the 15 dimensions, label types, scales, levels).

    Args:
        path: rubric JSON; default :func:`rubric_path`.
    Raises:
        RubricError: naming the file and the field.
    """
    file = Path(path) if path is not None else rubric_path()
    try:
        mtime = file.stat().st_mtime_ns
    except OSError as error:
        raise RubricError(f"{file}: cannot read the rubric ({error})") from None
    return _load(str(file.resolve()), mtime)


def rubric_sha256_16(path: str | Path | None = None) -> str:
    """First 16 hex digits of the sha256 of the rubric file's canonical JSON (key order and spacing ignored)."""
    canonical = json.dumps(load_rubric(path), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def dimension_scale(dimension: str, rubric: dict | None = None) -> tuple[str, int]:
    """``(label_type, scale)`` of ``dimension`` in the rubric."""
    spec = (rubric or load_rubric())["dimensions"][dimension]
    return spec["label_type"], spec["scale"]


def caption_tag(caption: str) -> str:
    """The tag name the caption is framed with: ``caption-`` and the first 16 hex digits of the sha256 of the caption.

    A caption cannot contain its own digest (that would take a sha256 preimage), so it cannot close its block;
    should the tag still occur in it, more digits are taken until it does not.
    """
    digest = hashlib.sha256(caption.encode("utf-8", "surrogatepass")).hexdigest()
    for digits in range(16, len(digest) + 1, 8):
        tag = f"caption-{digest[:digits]}"
        if tag not in caption:
            return tag
    raise ValueError("the caption holds every prefix of its own sha256 digest")  # not reachable in practice


def render(rubric: dict, dimension: str, label: str, caption: str) -> str:
    """The user message for one (caption, dimension, reference label); the caption framed by :func:`caption_tag`."""
    spec = rubric["dimensions"][dimension]
    levels = "\n".join(f"{score} = {spec['levels'][str(score)]}" for score in range(spec["scale"] + 1))
    return rubric["user_template"].format(
        title=spec["title"], definition=spec["definition"], mention=spec["mention"], not_mention=spec["not_mention"],
        label=label, label_type=spec["label_type"], scale=spec["scale"], levels=levels, caption=caption, caption_tag=caption_tag(caption),
    )  # fmt: skip


def judge_messages(dimension: str, label: str, caption: str, rubric: dict | None = None) -> list[dict]:
    """OpenAI-style ``[system, user]`` messages asking about one target dimension of one caption."""
    rubric = rubric or load_rubric()
    return [{"role": "system", "content": rubric["system"]}, {"role": "user", "content": render(rubric, dimension, label, caption)}]


def _verdicts_from_the_end(text: str):
    """Every JSON object in ``text`` that has a ``mentioned`` key, the one starting last first (a generator).

    Every ``{`` is tried as the start of a JSON value (the standard library's ``raw_decode``), so prose, code
    fences, a ``{`` in a quoted caption or an unbalanced brace before the verdict do not hide it.
    """
    decoder = json.JSONDecoder()
    start = text.rfind("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and "mentioned" in value:
            yield value
        start = text.rfind("{", 0, start)


def final_verdict(text: str, caption: str | None = None) -> dict:
    """The judge's final verdict in a reply (its reasoning already removed): the last JSON object with a
    ``mentioned`` key, leaving out objects that also occur in ``caption`` (quoted from it, not the judge's).

    Raises:
        InvalidJudgeReply: no such object (the message says whether one was found only in the caption's quotes).
    """
    planted = list(_verdicts_from_the_end(caption)) if caption and "{" in caption else []
    quoted = 0
    for value in _verdicts_from_the_end(text):
        if value not in planted:
            return value
        quoted += 1
    if quoted:
        raise InvalidJudgeReply(f"the reply's only verdicts ({quoted}) are quoted from the caption")
    if "{" not in text:
        raise InvalidJudgeReply("no JSON object in the reply")
    raise InvalidJudgeReply("no JSON object with a 'mentioned' key in the reply (malformed JSON or another shape)")


def parse_judge_reply(text: str | None, scale: int, caption: str | None = None) -> Judgment:
    """Read one judge reply under the contract in the module docstring.

    Args:
        text: the judge's final text (reasoning removed; surrounding prose, drafts and a Markdown code fence
            are tolerated: :func:`final_verdict` picks the verdict).
        scale: the highest allowed score (1 for binary dimensions).
        caption: the caption that was judged; JSON objects that occur in it are not the judge's verdict.
    Returns:
        The :class:`Judgment` (``score`` None when not mentioned).
    Raises:
        InvalidJudgeReply: the reply breaks the contract; the message says how.
    """
    if not text or not text.strip():
        raise InvalidJudgeReply("empty reply")
    reply = final_verdict(text, caption)
    mentioned = reply.get("mentioned")
    if not isinstance(mentioned, bool):
        raise InvalidJudgeReply(f"'mentioned' must be true or false, got {mentioned!r}")
    score = reply.get("score")
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    reason = reply.get("reason", "")
    reason = reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)
    if not mentioned:
        if score not in (None, 0) or isinstance(score, bool):
            raise InvalidJudgeReply(f"'mentioned' is false but 'score' is {score!r} (expected null)")
        return Judgment(False, None, reason)
    if not isinstance(score, int) or isinstance(score, bool):
        raise InvalidJudgeReply(f"'mentioned' is true but 'score' is {score!r}, not an integer 0..{scale}")
    if not 0 <= score <= scale:
        raise InvalidJudgeReply(f"score {score} outside 0..{scale}")
    return Judgment(True, score, reason)


def normalized_score(judgment: Judgment, scale: int) -> float | None:
    """The judgment's score on [0, 1] (``score / scale``); None when not mentioned."""
    return None if judgment.score is None else judgment.score / scale


def signature(rubric: str | Path | None = None) -> str:
    """Signature of MMAC's metrics, sacrebleu-style: what was averaged over what, with which rubric."""
    return (
        f"mmac|prompt:describe-in-detail|rubric:{rubric_sha256_16(rubric)}|caption:digest-tagged|judge:json(mentioned,score,reason),"
        "after-reasoning,last-object-not-in-caption|"
        "score:score/scale|coverage:mentioned/valid|precision:mean-over-mentioned|accuracy:mean-over-valid,omission=0|"
        "dimension->category:mean|overall:category-macro(6)|judge_failed:excluded|unit:percent"
    )
