"""The judged MCGA tasks: S2TT (LLM-B) and SEC (LLM-C), as the official ``eval/eval_model.py`` scores them.

This module holds what is MCGA-specific: the official judge prompts (``official_judge_prompts.json``
beside this module, verbatim), how a model output is cut into what the judge sees, how a score is read
from a judge reply, the SEC sentence CER, and the reference-based S2TT metrics. It makes no API call:
:mod:`audio_bench_core.judge` sends the requests built here, and hands the readers below the judge's final
text (its reply with any reasoning removed; a reply whose reasoning never closed has no verdict).

Two readings of every judge reply, reported side by side (as ``cer_official`` / ``cer_strict`` for ASR):

- **official-compatible** (``llm_bf`` ... ``llm_b``, ``sec_p`` ... ``llm_c``): the official code's reading on every
  reply shape (:func:`official_s2tt_score`: the first digit of the reply, none -> the item is left out of the
  mean; :func:`official_sec_score_as_scored`: the number in the first ``[x/N]``, else the first integer, else 0,
  where for SEC-S the official code first appends its sentence-CER text ``"\n[ASR 准确率校验]\n- CER: 1.0000"``
  to the reply, so a reply without a number reads the CER's integer part: 0 below 100 %, 1 at 100 %, 2 at
  200 %). A reply this reading scores is cached and never asked again.
- **strict** (``llm_bf_strict`` ... ``llm_c_strict``, :func:`s2tt_judge_score`, :func:`sec_judge_score`): a number
  counts only when it is the judge's one verdict and lies on the rubric; the item is otherwise judge_failed in the
  strict figures, with the reason.

Deliberate differences from the official script, in both readings (all in the direction of "no silent failure"):

- A judge call that fails after its retries is *judge_failed*: left out of that dimension's mean and counted.
  The official S2TT code does the same (score ``None``), but its SEC code turns a failed call into the text
  ``请求失败: <error>`` and reads a score from it (the first integer of the error text, e.g. ``429`` from an HTTP
  429 message).
- A reply whose reasoning never closed (a reasoning judge cut off by ``max_tokens``) holds no verdict: judge_failed,
  never read. The official judge, ``deepseek-chat``, does not reason; the official code would read the draft.
- Retries: the official SEC code tries 3 times with 1 s pauses, its S2TT code once; we retry both on timeouts,
  429 and 5xx with exponential backoff (``AUDIO_JUDGE_MAX_ATTEMPTS``, default 3), and ask again (within the same
  budget) for an S2TT reply without a digit, which the official code leaves out at once.

Everything else (prompts, messages, ``max_tokens``, temperature, output splitting, score extraction,
means and scaling) follows the official script.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from statistics import fmean
from typing import Sequence

from mcga.metrics import CER_LIBRARY, cer_from_edits, character_edits
from mcga.normalize import normalize_for_cer, normalizer_signature

_PROMPTS_FILE = Path(__file__).with_name("official_judge_prompts.json")

#: S2TT judge dimensions in the official order: metric name -> key of the official prompt.
S2TT_DIMENSIONS = {"llm_bf": "beauty_of_form", "llm_bm": "beauty_of_meaning", "llm_bs": "beauty_of_sound"}
#: The official S2TT judge call: user message only, ``max_tokens=10``.
S2TT_JUDGE_MAX_TOKENS = 10
#: S2TT scores are 1-5; LLM-B and its parts are reported ×20 (0-100).
S2TT_SCALE = 20
#: The official separator before the translation in an S2TT output.
S2TT_TRANSLATION_MARKER = "译文："

#: SEC judge dimensions: metric name -> (official prompt key, reference field, index of the output part, maximum).
SEC_DIMENSIONS = {
    "sec_p": ("evaluate_voice_persona", "sec_1", 0, 2),
    "sec_g": ("evaluate_global_emotion", "sec_2", 1, 3),
    "sec_s": ("evaluate_sentence_emotion", "sec_3", 2, 5),
}
#: LLM-C = (mean SEC-P + mean SEC-G + mean SEC-S) ×10 (0-100).
SEC_SCALE = 10


@lru_cache(maxsize=1)
def official_judge_prompts() -> dict:
    """The official judge prompts: ``{"s2tt_beauty_prompts": {...}, "sec_judge_prompts": {...}, ...}``."""
    return json.loads(_PROMPTS_FILE.read_text(encoding="utf-8"))


def judge_prompt_hashes(task: str) -> dict[str, str]:
    """sha256 (first 16 hex digits) of each judge prompt template of ``task`` (``s2tt`` or ``sec``), for provenance.

    Raises:
        KeyError: ``task`` is not a judged task.
    """
    prompts = official_judge_prompts()
    templates = {"s2tt": prompts["s2tt_beauty_prompts"], "sec": prompts["sec_judge_prompts"]}[task]
    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] for name, text in templates.items()}


# ------------------------------------------------------------------------------------------------ S2TT
def s2tt_translation(output: str | None) -> str:
    """The translation in an S2TT output: the text after the last ``译文：``, stripped (whole output if absent)."""
    return (output or "").split(S2TT_TRANSLATION_MARKER)[-1].strip()


def s2tt_judge_messages(dimension: str, source: str, translation: str) -> list[dict]:
    """The official judge request for one S2TT dimension: one user message, the template filled in.

    Args:
        dimension: ``llm_bf``, ``llm_bm`` or ``llm_bs``.
        source: the gold Chinese text (the row's ``asr``), as the official script sends it.
        translation: :func:`s2tt_translation` of the model output.
    """
    template = official_judge_prompts()["s2tt_beauty_prompts"][S2TT_DIMENSIONS[dimension]]
    return [{"role": "user", "content": template.format(source=source, translation=translation, score="")}]


_FIRST_DIGIT = re.compile(r"\d")


def official_s2tt_score(reply: str | None) -> int | None:
    """Official S2TT score extraction: the first digit character of the stripped reply, or None.

    ``"4"`` -> 4; ``"Score: [3/5]"`` -> 3; ``"10"`` -> 1 (one digit, as the official ``re.search(r'\\d')``);
    ``"4\\n\\n1. **Structure** ... 8 lines"`` -> 4; ``"excellent"`` -> None (the official code leaves the item out).
    """
    match = _FIRST_DIGIT.search((reply or "").strip())
    return int(match.group()) if match else None


def official_s2tt_judge_score(reply: str | None) -> float | str:
    """The official-compatible S2TT judge score (``llm_bf``/``llm_bm``/``llm_bs``): :func:`official_s2tt_score` as a
    float, or, for a reply without a digit (which the official code leaves out of the mean), the reason."""
    score = official_s2tt_score(reply)
    return f"no digit in the judge reply {_snippet(reply)} (the official code leaves the item out)" if score is None else float(score)


#: The S2TT rubric: integer scores 1-5 (official prompts "1 point" ... "5 point").
S2TT_SCORE_RANGE = (1, 5)

_NUMBER = r"\d+(?:\.\d+)?"
#: A range spec such as ``1-5`` or ``0～2`` (the rubric quoted back, not a score).
_RANGE_SPEC = re.compile(rf"{_NUMBER}\s*(?:-|–|—|~|～|〜|至|到|\bto\b)\s*{_NUMBER}", re.IGNORECASE)
#: A scale mention such as ``/5``, ``out of 5`` or ``满分5``: group 1 is the scale maximum.
_SCALE = re.compile(rf"(?:/|\bout\s+of\b|满分(?:为|是|:|：)?)\s*({_NUMBER})", re.IGNORECASE)


def _score_numbers(reply: str) -> tuple[list[float], list[float]]:
    """``(score candidates, scale maxima)`` in a judge reply: every number that is not part of a range spec
    (``1-5``) or a scale mention (``/5``, ``out of 5``, ``满分5``), and the maxima those scale mentions name."""
    text = _RANGE_SPEC.sub(" ", reply)
    maxima = [float(m) for m in _SCALE.findall(text)]
    text = _SCALE.sub(" ", text)
    return [float(n) for n in re.findall(_NUMBER, text)], maxima


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _check_reading(reply: str, official: float, low: int, high: int, integer: bool, rule: str) -> float | str:
    """The score ``official`` if it is the reply's one score and lies on the rubric, else the reason it is not.

    The reply's score is its one distinct number once range specs and scale mentions are set aside; a reply
    with none or several, a scale other than ``high``, a reading that differs from ``official``, a fraction
    where the rubric has integers, or a value outside ``low``-``high`` has no valid score.
    """
    shown = _snippet(reply)
    candidates, maxima = _score_numbers(reply)
    scale = next((m for m in maxima if m != high), None)
    if scale is not None:
        return f"the reply {shown} scores on a 0-{_number(scale)} scale, not the rubric's {low}-{high}; {rule} reads {_number(official)}"
    distinct = sorted(set(candidates), key=candidates.index)
    if len(distinct) > 1:
        return f"the reply {shown} holds several numbers ({', '.join(map(_number, distinct))}); {rule} reads {_number(official)}"
    if not distinct or distinct[0] != official:
        score = f"its score is {_number(distinct[0])}" if distinct else "it holds no score"
        return f"{rule} reads {_number(official)} from the reply {shown}, but {score}"
    if (integer and official != int(official)) or not low <= official <= high:
        return f"score {_number(official)} in the reply {shown} is outside the rubric's {'integer ' if integer else ''}{low}-{high} ({rule} counts it)"
    return official


def s2tt_judge_score(reply: str | None) -> float | str:
    """The strict S2TT judge score (``llm_bf_strict`` ...), or the reason the reply has none (judge_failed there).

    Valid when the official first digit (:func:`official_s2tt_score`) is the reply's one score and an integer
    1-5: ``"4"``, ``"Score: 3"``, ``"[3/5]"``, ``"4 points"`` -> the score; a first line that holds only the score,
    followed by an explanation with numbers of its own (``"4\\n\\n1. **Structure**: 8 lines ..."``), counts as
    that score. Not valid: ``"excellent"`` (no digit), ``"0"`` (outside 1-5; official counts 0), ``"10"``
    (official reads 1), ``"评分（1-5分）：4"`` (official reads the 1 of the range), ``"3.5"``, ``"[8/10]"`` (another
    scale), ``"form 4, sound 2"`` (several numbers).

    Returns:
        The score as a float, or a one-line reason naming the reply and what the official rule reads.
    """
    official = official_s2tt_score(reply)
    if official is None:
        return f"no score in the judge reply {_snippet(reply)}"
    text = (reply or "").strip()
    first_line, _, rest = text.partition("\n")
    if rest.strip():
        leading = _check_reading(first_line.strip(), float(official), *S2TT_SCORE_RANGE, True, "the official first-digit rule")
        if not isinstance(leading, str):
            return leading
    return _check_reading(text, float(official), *S2TT_SCORE_RANGE, True, "the official first-digit rule")


def _snippet(text: str | None, limit: int = 60) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def s2tt_reference_metrics(references: Sequence[str], translations: Sequence[str]) -> dict[str, float | str]:
    """Corpus chrF++ and BLEU (sacrebleu, 0-100) of the translations against the gold ``s2tt`` references.

    Not part of the official protocol (which only has LLM-B); they need no judge. Returns
    ``{"chrf_pp": ..., "bleu": ..., "chrf_pp_signature": ..., "bleu_signature": ...}``.

    Raises:
        ValueError: the two sequences differ in length or are empty.
    """
    from sacrebleu.metrics import BLEU, CHRF

    if len(references) != len(translations) or not references:
        raise ValueError(f"need as many translations as references, at least one (got {len(translations)} and {len(references)})")
    chrf, bleu = CHRF(word_order=2), BLEU()
    chrf_score = chrf.corpus_score(list(translations), [list(references)])
    bleu_score = bleu.corpus_score(list(translations), [list(references)])
    return {
        "chrf_pp": chrf_score.score,
        "bleu": bleu_score.score,
        "chrf_pp_signature": str(chrf.get_signature()),
        "bleu_signature": str(bleu.get_signature()),
    }


# ------------------------------------------------------------------------------------------------- SEC
def split_sec_output(output: str | None) -> tuple[str, str, str]:
    """Official three-part split of an SEC output: (persona line, overall-tone line, the rest).

    The official code replaces ``"\\n\\n"`` by ``"\\n"`` once (a run of three newlines leaves one blank
    line) and splits at the first two newlines; missing parts are ``""``.
    """
    parts = (output or "").replace("\n\n", "\n").split("\n", 2)
    return tuple(parts + [""] * (3 - len(parts)))  # type: ignore[return-value]


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def sec_judge_messages(dimension: str, reference: str, output_part: str) -> list[dict]:
    """The official judge request for one SEC dimension: the fixed system message, then the filled template.

    Args:
        dimension: ``sec_p``, ``sec_g`` or ``sec_s``.
        reference: the gold ``sec_1`` / ``sec_2`` / ``sec_3`` of the row.
        output_part: the matching part of :func:`split_sec_output` (the whole remainder for ``sec_s``).
    """
    prompts = official_judge_prompts()["sec_judge_prompts"]
    key, field, index, _ = SEC_DIMENSIONS[dimension]
    values = {field: reference, f"sec_r_{index + 1}": output_part}
    content = _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), prompts[key])
    return [{"role": "system", "content": prompts["system"]}, {"role": "user", "content": content}]


_BRACKET_SCORE = re.compile(r"\[(\d+\.?\d*)/\d+\]")
_BRACKET_FULL = re.compile(r"\[(\d+\.?\d*)/(\d+)\]")  # the same match, with the scale maximum N as group 2
_FIRST_INTEGER = re.compile(r"\d+")


def official_sec_score(reply: str | None) -> float | None:
    """Official SEC score extraction: the number in the first ``[x/N]``, else the first integer, else None.

    ``"...最终得分：[1.5/2]"`` -> 1.5; ``"得分：2分"`` -> 2; a Markdown table without ``[x/N]`` -> its first
    integer (usually a sentence number, as in the official script). Where the official script scores 0 (no
    number at all), this returns None; :func:`official_sec_score_as_scored` gives what the official code counts.
    """
    text = reply or ""
    match = _BRACKET_SCORE.search(text)
    if match:
        return float(match.group(1))
    match = _FIRST_INTEGER.search(text)
    return float(match.group()) if match else None


#: What the official SEC-S code appends to the judge's reply before reading its score (``{:.4f}``: the CER fraction).
OFFICIAL_SEC_CER_TEXT = "\n[ASR 准确率校验]\n- CER: {:.4f}"


def official_sec_score_as_scored(reply: str | None, cer_text: str = "") -> float:
    """What the official SEC code adds to the mean for a reply: :func:`official_sec_score` of ``reply + cer_text``,
    or 0 when that holds no number.

    ``cer_text`` is ``""`` for SEC-P and SEC-G; for SEC-S it is :func:`official_sec_cer_text` of the item, which
    the official code appends to the reply before reading it, so that an SEC-S reply without a number scores the
    integer part of the sentence CER (``"无法判断"`` at CER 100 % -> 1, at 200 % -> 2, below 100 % -> 0).
    """
    score = official_sec_score((reply or "") + cer_text)
    return 0.0 if score is None else score


def official_sec_judge_score(dimension: str, reply: str | None, item: dict | None = None) -> float:
    """The official-compatible SEC judge score (``sec_p``/``sec_g``/``sec_s``): :func:`official_sec_score_as_scored`,
    with the item's ``cer_text`` appended for ``sec_s`` (the item as :mod:`lmms_eval_tasks.mcga.hooks` builds it).

    Raises:
        KeyError: unknown ``dimension``, or an SEC-S ``item`` without ``cer_text``.
    """
    SEC_DIMENSIONS[dimension]
    return official_sec_score_as_scored(reply, item["cer_text"] if dimension == "sec_s" and item is not None else "")


def sec_judge_score(dimension: str, reply: str | None) -> float | str:
    """The strict SEC judge score of ``dimension`` (``sec_p_strict`` ...), or the reason the reply has none.

    With a ``[x/N]`` on the dimension's scale (the format the official prompts ask for "at the end": SEC-P
    ``[x/2]``, SEC-G ``[x/3]``, SEC-S ``[x/5]``), the *last* one is the verdict (the judge's final score, not a
    bracket quoted from the caption or a running tally before it), valid when ``0 <= x <= N`` (``[1.5/2]`` ->
    1.5; ``[3/2]`` is not). Brackets only on another scale (SEC-P ``[4/5]``) are not valid. Without any bracket,
    the official first integer must be the reply's one score on that scale (``"得分：2分"`` -> 2; a Markdown table
    of sentence numbers and ``最终总分：4分`` is not: officially it scores its first sentence number). No number at
    all is not valid (officially 0, or for SEC-S the CER's integer part).

    Args:
        dimension: ``sec_p``, ``sec_g`` or ``sec_s``.
        reply: the judge's final text.
    Returns:
        The score as a float, or a one-line reason naming the reply and what the official rule reads.
    Raises:
        KeyError: unknown ``dimension``.
    """
    high = SEC_DIMENSIONS[dimension][3]
    text = reply or ""
    official = official_sec_score(text)
    if official is None:
        return f"no score in the judge reply {_snippet(text)} (the official script scores 0)"
    brackets = list(_BRACKET_FULL.finditer(text))
    on_scale = [bracket for bracket in brackets if float(bracket.group(2)) == high]
    if on_scale:
        verdict = on_scale[-1]
        score = float(verdict.group(1))
        if score > high:
            return f"score {_number(score)} in {verdict.group(0)} is outside the rubric's 0-{high} (the official rule counts it)"
        return score
    if brackets:
        return f"the reply's {brackets[0].group(0)} is not on the rubric's 0-{high} scale; the official rule reads {_number(official)}"
    return _check_reading(text, official, 0, high, False, "the official first-integer rule")


def sec_sentence_text(sentences_part: str) -> str:
    """The sentence texts of the SEC output's third part: per line, the text before the first ``|``, joined."""
    lines = sentences_part.strip().split("\n")
    return "".join(line.split("|")[0].strip() if "|" in line else line.strip() for line in lines)


def official_sec_cer(asr: str, sentences_part: str) -> float:
    """CER (fraction, unrounded) of the SEC sentence texts against the gold transcript, per item, as the official script.

    Both sides go through :func:`mcga.normalize.normalize_for_cer`, then ``jiwer.cer`` on the plain strings (no space
    joining, unlike the ASR task), counted by :func:`mcga.metrics.character_edits` (tests check it equals
    ``jiwer.cer`` on the real rows); an empty reference gives jiwer's value, the number of inserted characters.
    """
    reference, hypothesis = normalize_for_cer(asr), normalize_for_cer(sec_sentence_text(sentences_part))
    return cer_from_edits(character_edits([reference], [hypothesis]))


def official_sec_cer_percent(asr: str, sentences_part: str) -> float:
    """:func:`official_sec_cer` ×100, rounded to 4 decimals, as the official script stores it before averaging."""
    return round(100.0 * official_sec_cer(asr, sentences_part), 4)


def official_sec_cer_text(cer: float) -> str:
    """The text the official SEC-S code appends to the judge's reply before reading its score (``cer``: fraction)."""
    return OFFICIAL_SEC_CER_TEXT.format(cer)


# ------------------------------------------------------------------------------------- prompt framing
#: What in a candidate text (S2TT translation, SEC output part) reads like judge-prompt framing: the official
#: prompts put the candidate in as it is (they stay byte-identical, by design), so such text can address the judge
#: as if it were part of the prompt. Counted per item (``candidate_prompt_framing``), never changed or removed.
PROMPT_FRAMING = {
    "the judge prompts' own markers": re.compile(
        r"/\*|\*/|Original Chinese poem\s*:|English translation\s*:|Evaluation \(score only\)|\[ASR 准确率校验\]"
        r"|参考答案\s*[:：]|待评估识别结果|评分(?:规则|标准|算法)|输出要求",
        re.IGNORECASE,
    ),
    "a Markdown heading line": re.compile(r"^[ \t]*#{1,6}[ \t]", re.MULTILINE),
    "a score in a verdict format": re.compile(
        r"\[\s*(?:\d+(?:\.\d+)?|得分)\s*/\s*\d+\s*\]|最终(?:总)?得?分\s*[:：]|\bscore(?:\s+only)?\s*[:：]|\b[1-5]\s+points?\s*:", re.IGNORECASE
    ),
    "an instruction to the judge": re.compile(
        r"\bignore\b.{0,40}\b(?:instructions?|above|previous)\b|忽略.{0,10}(?:指令|以上|上述|之前|要求)|\b(?:output|reply|respond|give)\b.{0,30}\bscore\b",
        re.IGNORECASE,
    ),
}
#: In the SEC prompts the candidate sits between ASCII double quotes (``# 待评估识别结果: "{sec_r_1}"``).
SEC_QUOTE_CLOSE = "an ASCII double quote (closes the SEC prompt's quoted block)"


def prompt_framing(text: str | None, quoted: bool = False) -> list[str]:
    """The kinds of prompt-like framing (:data:`PROMPT_FRAMING`) found in a candidate text; ``[]`` for none.

    Args:
        text: the candidate as the judge prompt receives it.
        quoted: the prompt puts it between ASCII double quotes (SEC), so a ``"`` inside can close that block.
    """
    text = text or ""
    found = [name for name, pattern in PROMPT_FRAMING.items() if pattern.search(text)]
    return found + ([SEC_QUOTE_CLOSE] if quoted and '"' in text else [])


# --------------------------------------------------------------------------------------------- scoring
def llm_b(means: dict[str, float | None]) -> float | None:
    """LLM-B (0-100): the mean of the three S2TT dimension means (1-5 each) ×20.

    Args:
        means: ``{"llm_bf": ..., "llm_bm": ..., "llm_bs": ...}`` on the judge's 1-5 scale; None where no
            item of that dimension was scored.
    Returns:
        LLM-B, or None if a dimension has no mean.
    """
    values = [means[name] for name in S2TT_DIMENSIONS]
    return None if None in values else fmean(values) * S2TT_SCALE


def llm_c(means: dict[str, float | None]) -> float | None:
    """LLM-C (0-100): (mean SEC-P + mean SEC-G + mean SEC-S) ×10.

    Args:
        means: ``{"sec_p": 0-2, "sec_g": 0-3, "sec_s": 0-5}`` means; None where no item was scored.
    Returns:
        LLM-C, or None if a dimension has no mean.
    """
    values = [means[name] for name in SEC_DIMENSIONS]
    return None if None in values else sum(values) * SEC_SCALE


def judged_signature(task: str) -> str:
    """Signature of the rules of a judged task (prompts hashed, extraction, scaling, libraries)."""
    hashes = ",".join(f"{name}={digest}" for name, digest in judge_prompt_hashes(task).items())
    reply = "reply=after-reasoning,unfinished-reasoning=judge_failed"
    if task == "s2tt":
        rules = (
            f"translation=after-last-译文：; {reply}; official=first-digit,none=left-out; "
            "strict=one-score-or-leading-line(1-5),else=judge_failed; llm_b=mean(3 means)x20"
        )
        libraries = f"sacrebleu-{version('sacrebleu')}"
    else:
        rules = (
            f"split=replace(\\n\\n,\\n)+split(\\n,2); {reply}; official=[x/N]>first-int>0,sec_s+cer-text; "
            "strict=last-[x/N]-on-scale>one-int-on-scale,else=judge_failed; llm_c=sum(3 means)x10; cer_sentences=per-item-mean"
        )
        libraries = f"{normalizer_signature()}|{CER_LIBRARY}-{version(CER_LIBRARY)}"
    return f"mcga-judged:2|{task}|{rules}|prompts:{hashes}|{libraries}"
