"""MCGA metrics: the official scores, strict variants reported beside them, and CMC.

All scores are returned in **percent (0-100)**, the unit of the paper's tables, unless a docstring says
otherwise. "Official" functions reproduce ``eval/eval_model.py`` of github.com/yxduir/MCGA (the script
that produced the paper's numbers), including its quirks; "strict" functions are our own stricter
readings of the same outputs, named so that nobody mistakes one for the other:

==================  ================================================  ==========================================
metric              official rule                                      strict variant (ours)
==================  ================================================  ==========================================
ASR CER             hypothesis after the last ``":\\n"``/``": '"``/   whole output, no cut; characters not
                    ``":'"``, first 100 chars; normalised chars are   space-joined, so CER = char edits / ref
                    joined with spaces, corpus CER over the joined    chars (the usual character error rate)
                    strings (the spaces count as characters)
SU/SR accuracy      exact; else first standalone letter A-G; else     one option letter read from an answer
                    gold contained in the output (lenient)            phrase, a lone letter or a leading letter;
                                                                      anything else is a parse failure = wrong
SQA F1              containment, else bag-of-tokens F1                 (none)
==================  ================================================  ==========================================
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib.metadata import version

import jiwer

from mcga.normalize import normalize_for_cer, normalizer_signature

# Order used by the official tables (``GENRE_ORDER`` / ``DYNASTY_ORDER`` in eval_model.py).
GENRE_ORDER = ("诗", "词", "曲", "赋", "文")
DYNASTY_ORDER = ("先秦", "汉", "魏晋", "南北朝", "隋", "唐", "五代", "宋", "元", "明", "清")

OFFICIAL_HYPOTHESIS_SEPARATORS = (":\n", ": '", ":'")
OFFICIAL_HYPOTHESIS_MAX_CHARS = 100


# --------------------------------------------------------------------------------------------- ASR
def official_hypothesis_text(output: str | None) -> str:
    """The part of a model output that the official ASR scoring keeps.

    For each separator in ``(":\\n", ": '", ":'")`` in that order, if present, keep the text after its last
    occurrence; then keep the first 100 characters (official ``process_text(is_hyp=True)``).
    """
    if not output:
        return ""
    text = str(output)
    for separator in OFFICIAL_HYPOTHESIS_SEPARATORS:
        if separator in text:
            text = text.split(separator)[-1]
    return text[:OFFICIAL_HYPOTHESIS_MAX_CHARS]


def _corpus_cer_percent(refs: Sequence[str], hyps: Sequence[str]) -> float:
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    if not refs:
        raise ValueError("CER of an empty corpus is undefined")
    return 100.0 * float(jiwer.cer(list(refs), list(hyps)))


def _space_join(normalised: str) -> str:
    return " ".join(normalised)


def official_cer_percent(references: Sequence[str], outputs: Sequence[str]) -> float:
    """Corpus CER (percent) exactly as the official MCGA script computes it.

    Args:
        references: gold transcripts (field ``asr``), one per item.
        outputs: raw model outputs, aligned with ``references``.

    Returns:
        ``100 * jiwer.cer(refs, hyps)`` where each side is normalised (:func:`mcga.normalize.normalize_for_cer`),
        the hypothesis first cut by :func:`official_hypothesis_text`, and every string's characters are joined
        with single spaces. jiwer counts those spaces as characters: total edits / total characters over the
        whole corpus, so a substitution-dominated CER comes out lower than a plain character CER.

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """
    refs = [_space_join(normalize_for_cer(r)) for r in references]
    hyps = [_space_join(normalize_for_cer(official_hypothesis_text(o))) for o in outputs]
    return _corpus_cer_percent(refs, hyps)


def strict_cer_percent(references: Sequence[str], outputs: Sequence[str]) -> float:
    """Plain character CER (percent): the whole output, same normaliser, no separator rule, no cut, no spaces.

    Total character edits / total reference characters over the corpus. Differs from
    :func:`official_cer_percent` when outputs carry a preamble or run past 100 characters (hallucination
    loops are counted in full here) and by the absence of the joining spaces.

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """
    refs = [normalize_for_cer(r) for r in references]
    hyps = [normalize_for_cer(o) for o in outputs]
    return _corpus_cer_percent(refs, hyps)


def official_cer_percent_by_group(references: Sequence[str], outputs: Sequence[str], groups: Sequence[str], order: Iterable[str] = ()) -> dict[str, float]:
    """Official corpus CER (percent) inside each group (e.g. genre or dynasty), as the official breakdowns.

    Returns:
        ``{group: cer_percent}`` with groups in ``order`` first, then any others in first-seen order.
    """
    members: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        members.setdefault(str(group), []).append(index)
    ordered = [g for g in order if g in members] + [g for g in members if g not in order]
    return {g: official_cer_percent([references[i] for i in members[g]], [outputs[i] for i in members[g]]) for g in ordered}


# --------------------------------------------------------------------------------------------- SQA
_NOT_WORD_OR_SPACE = re.compile(r"[^\w\s]")


def official_sqa_f1(gold: str | None, prediction: str | None) -> float:
    """Official SQA score of one item, as a **fraction (0-1)**.

    Both sides: remove ``[^\\w\\s]``, lower-case, split on whitespace. Empty on either side: 1 if both empty
    else 0. If the gold tokens joined without spaces are a substring of the prediction's tokens joined the
    same way: 1. Otherwise bag-of-tokens F1. Chinese answers are one token, so this is containment.
    ``None`` is scored as the string ``"None"`` (the official code calls ``str()`` on the cell).
    """
    gold_tokens = _NOT_WORD_OR_SPACE.sub("", str(gold)).lower().split()
    pred_tokens = _NOT_WORD_OR_SPACE.sub("", str(prediction)).lower().split()
    if not gold_tokens or not pred_tokens:
        return 1.0 if gold_tokens == pred_tokens else 0.0
    if "".join(gold_tokens) in "".join(pred_tokens):
        return 1.0
    common = sum((Counter(gold_tokens) & Counter(pred_tokens)).values())
    precision, recall = common / len(pred_tokens), common / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall) if precision + recall > 0 else 0.0


# ---------------------------------------------------------------------------------- SU / SR (MCQ)
_FIRST_STANDALONE_LETTER = re.compile(r"\b([A-G])\b")


def official_mcq_correct(gold: str | None, prediction: str | None) -> bool:
    """Official SU/SR correctness of one item (lenient).

    Upper-case and strip both; correct if equal; else if the first standalone letter ``\\b[A-G]\\b`` of the
    prediction equals the gold; else if the gold with punctuation and spaces removed is a substring of the
    prediction with punctuation and spaces removed. The last rule accepts any output that merely contains
    the gold letter (``"ABCD"`` is correct for every gold), which is why :func:`strict_mcq_letter` exists.
    """
    gold_str, pred_str = str(gold).strip().upper(), str(prediction).strip().upper()
    if gold_str == pred_str:
        return True
    match = _FIRST_STANDALONE_LETTER.search(pred_str)
    if match and match.group(1) == gold_str:
        return True
    gold_clean = _NOT_WORD_OR_SPACE.sub("", gold_str).replace(" ", "")
    pred_clean = _NOT_WORD_OR_SPACE.sub("", pred_str).replace(" ", "")
    return bool(gold_clean) and gold_clean in pred_clean


_OPEN_WRAPPERS = "([（【\"“'‘*"
_ANSWER_PHRASE = re.compile(
    r"(?:正确答案|最终答案|答案|正确选项|选项|选择|应选|选|final answer|answer|option|choice)"
    r"\s*(?:应该是|应为|应是|是|为|is|would be|should be)?\s*[:：]?\s*"
    rf"[{re.escape(_OPEN_WRAPPERS)}]*\s*(?<![A-Za-z])([A-Za-z])(?![A-Za-z])",
    re.IGNORECASE,
)
_LONE_LETTER = re.compile(r"^[\W_]*([A-Za-z])[\W_]*$")
_LEADING_LETTER = re.compile(
    rf"^\s*[{re.escape(_OPEN_WRAPPERS)}]*\s*([A-Za-z])(?![A-Za-z])\s*(?:[.．、:：)）\]】,，;；*]|\s+(?=[^\x00-\x7f])|$)"
)


def strict_mcq_letter(prediction: str | None, letters: str = "ABCD") -> str | None:
    """Read one option letter from a model output, or ``None`` when it cannot be read unambiguously.

    After NFKC (full-width letters become ASCII), the first rule that applies decides:

    1. answer phrases (``答案：A``, ``答案是B``, ``选C``, ``正确选项为 D``, ``The answer is A``, ``option B``):
       the letter they name; if several phrases name different letters, ``None``;
    2. the whole output is one letter, possibly wrapped (``"B"``, ``"(B)"``, ``"**B**"``, ``"b。"``);
    3. the output starts with a letter and a delimiter (``"C. 思念家乡"``, ``"D、"``, ``"(A) ..."``).

    A letter outside ``letters`` is ``None`` too. ``"A dog barks"`` (article, not option), ``"ABCD"`` and
    ``"因为B选项错误"`` alone give ``None``. The result is upper-case.
    """
    if not prediction:
        return None
    text = unicodedata.normalize("NFKC", str(prediction)).strip()
    named = {m.group(1).upper() for m in _ANSWER_PHRASE.finditer(text)}
    if named:
        letter = named.pop() if len(named) == 1 else None
    else:
        match = _LONE_LETTER.match(text) or _LEADING_LETTER.match(text)
        letter = match.group(1).upper() if match else None
    return letter if letter is not None and letter in letters.upper() else None


# --------------------------------------------------------------------------------------------- CMC
def cross_modal_consistency(sqa: float, qa: float, su: float, lu: float, sr: float, lr: float) -> float:
    """Cross-modal consistency (paper eq. 1): ``(SQA/QA + SU/LU + SR/LR) / 3 * 100``.

    Args:
        sqa, su, sr: audio-mode scores; qa, lu, lr: text-mode scores of the same tasks (any one unit, the
            same for all six; the paper uses percent).

    Returns:
        CMC in percent; above 100 when the audio mode beats the text mode.

    Raises:
        ValueError: a text-mode score is 0 (the ratio is undefined).
    """
    for name, value in (("QA", qa), ("LU", lu), ("LR", lr)):
        if value == 0:
            raise ValueError(f"CMC is undefined: text-mode {name} score is 0")
    return (sqa / qa + su / lu + sr / lr) / 3 * 100


# ---------------------------------------------------------------------------------- signatures
_RULES = {
    "asr": "cer_official=after-last-sep+first100+space-joined-corpus; cer_strict=whole-output+char-corpus",
    "sqa": "f1_official=strip-punct+lower+containment-else-bag-f1",
    "su": "acc_official=exact/first-\\b[A-G]\\b/gold-substring; acc_strict=answer-phrase>lone>leading-letter(ABCD), unparseable=wrong",
}
_RULES["sr"] = _RULES["su"]


def task_signature(task: str) -> str:
    """sacrebleu-style signature of the metrics of one MCGA task: rules, normaliser, library versions, unit.

    Example (asr): ``mcga-scoring:1|cer_official=...; cer_strict=...|norm:t2s(opencc-1.4.2)+fullwidth+
    whisper-basic(whisper-normalizer-0.1.15)+nospace|jiwer-4.0.0|unit:percent``. Two results with the same
    signature were computed the same way.

    Raises:
        KeyError: ``task`` has no rule-scored metrics here.
    """
    parts = ["mcga-scoring:1", _RULES[task]]
    if task == "asr":
        parts += [normalizer_signature(), f"jiwer-{version('jiwer')}"]
    return "|".join(parts + ["unit:percent"])
