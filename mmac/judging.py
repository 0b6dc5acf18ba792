"""MMAC's judge: the rubric (kept as data in ``rubric.json``), the judge messages, and the reply contract.

One judge call per (caption, target dimension). The judge reads the caption and the reference label of that
one dimension (it never hears the audio) and replies with one JSON object::

    {"mentioned": true | false, "score": <integer 0..scale> | null, "reason": "<short text>"}

- ``mentioned`` (JSON boolean): whether the caption mentions the target dimension (rubric: ``mention`` /
  ``not_mention``);
- ``score``: if mentioned, the consistency with the reference label on the dimension's scale (``binary``:
  0 or 1; ``graded``: 0..scale); if not mentioned, ``null``, absent, or 0;
- ``reason``: optional short text, kept for the logs.

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
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


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


def render(rubric: dict, dimension: str, label: str, caption: str) -> str:
    """The user message for one (caption, dimension, reference label)."""
    spec = rubric["dimensions"][dimension]
    levels = "\n".join(f"{score} = {spec['levels'][str(score)]}" for score in range(spec["scale"] + 1))
    return rubric["user_template"].format(
        title=spec["title"], definition=spec["definition"], mention=spec["mention"], not_mention=spec["not_mention"],
        label=label, label_type=spec["label_type"], scale=spec["scale"], levels=levels, caption=caption,
    )  # fmt: skip


def judge_messages(dimension: str, label: str, caption: str, rubric: dict | None = None) -> list[dict]:
    """OpenAI-style ``[system, user]`` messages asking about one target dimension of one caption."""
    rubric = rubric or load_rubric()
    return [{"role": "system", "content": rubric["system"]}, {"role": "user", "content": render(rubric, dimension, label, caption)}]


def _json_object(text: str) -> dict:
    body = _FENCE.sub("", text.strip())
    start = body.find("{")
    if start < 0:
        raise InvalidJudgeReply("no JSON object in the reply")
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError as error:
        raise InvalidJudgeReply(f"malformed JSON ({error.msg})") from None
    if not isinstance(value, dict):
        raise InvalidJudgeReply("the JSON value is not an object")
    return value


def parse_judge_reply(text: str | None, scale: int) -> Judgment:
    """Read one judge reply under the contract in the module docstring.

    Args:
        text: the reply content (surrounding prose and a Markdown code fence are tolerated; the first JSON
            object is read).
        scale: the highest allowed score (1 for binary dimensions).
    Returns:
        The :class:`Judgment` (``score`` None when not mentioned).
    Raises:
        InvalidJudgeReply: the reply breaks the contract; the message says how.
    """
    if not text or not text.strip():
        raise InvalidJudgeReply("empty reply")
    reply = _json_object(text)
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
        f"mmac|prompt:describe-in-detail|rubric:{rubric_sha256_16(rubric)}|judge:json(mentioned,score,reason)|"
        "score:score/scale|coverage:mentioned/valid|precision:mean-over-mentioned|accuracy:mean-over-valid,omission=0|"
        "dimension->category:mean|overall:category-macro(6)|judge_failed:excluded|unit:percent"
    )
