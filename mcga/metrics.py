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
                    joined with spaces, corpus CER over the joined    chars (the usual character error rate);
                    strings (the spaces count as characters); OpenCC  reference as written, reply chars not in
                    t2s on both sides                                 the reference converted by t2s
SU/SR accuracy      exact; else first standalone letter A-G; else     the letter a human reads: an answer
                    gold contained in the output (lenient)            declaration (simplified or traditional),
                                                                      a lone or leading letter, or one option's
                                                                      text; ambiguous or none = parse failure
SQA F1              containment, else bag-of-tokens F1                 (none)
==================  ================================================  ==========================================
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version

from audio_bench_core.answers import CLOSING_MARKS, OPENING_MARKS, concluded_option
from mcga.normalize import (
    clear_normalisation_cache,
    normalize_for_cer,
    normalize_for_strict_cer,
    normalizer_signature,
    opencc_converter,
    simplify_reply_against_reference,
)

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


def character_edits(refs: Sequence[str], hyps: Sequence[str]) -> list[tuple[int, int]]:
    """``[(character edits, reference characters), ...]`` per pair, as ``jiwer.cer`` counts them.

    jiwer (``process_characters``, default transform: strip, then one token per character) aligns each pair with
    rapidfuzz's Levenshtein opcodes and counts S + D + I over H + S + D; the number of non-equal opcode positions
    is the Levenshtein distance, so this calls an exact Levenshtein distance once per pair (rapidfuzz's, jiwer's own
    engine; editdistance gives the same counts) instead of building jiwer's alignment objects (13x slower per
    pair). Corpus CER is ``sum(edits) / sum(reference characters)`` (:func:`cer_from_edits`); the tests check it
    equals ``jiwer.cer`` on the release-shaped set and on random strings.

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    if not refs:
        raise ValueError("CER of an empty corpus is undefined")
    from rapidfuzz.distance.Levenshtein import distance

    pairs = []
    for ref, hyp in zip(refs, hyps):
        ref, hyp = ref.strip(), hyp.strip()
        pairs.append((distance(ref, hyp), len(ref)))
    return pairs


def cer_from_edits(pairs: Sequence[tuple[int, int]]) -> float:
    """Corpus CER (a fraction) from :func:`character_edits`, as ``jiwer.cer`` returns it; jiwer's edge case kept:
    with no reference character at all, jiwer returns the number of insertions."""
    edits, ref_chars = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    return float(edits / ref_chars if ref_chars else edits)


def _cer_percent_from_edits(pairs: Sequence[tuple[int, int]]) -> float:
    """Corpus CER in percent from :func:`character_edits` (100 x :func:`cer_from_edits`)."""
    return 100.0 * cer_from_edits(pairs)


def _corpus_cer_percent(refs: Sequence[str], hyps: Sequence[str]) -> float:
    return _cer_percent_from_edits(character_edits(refs, hyps))


def _space_join(normalised: str) -> str:
    return " ".join(normalised)


def _official_pairs(references: Sequence[str], outputs: Sequence[str]) -> tuple[list[str], list[str]]:
    refs = [_space_join(normalize_for_cer(r)) for r in references]
    hyps = [_space_join(normalize_for_cer(official_hypothesis_text(o))) for o in outputs]
    return refs, hyps


def _official_edits(references: Sequence[str], outputs: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """:func:`character_edits` of :func:`_official_pairs`, memoised per corpus (by content, not identity): the corpus
    CER and the CER by genre and by dynasty of one task read the same pairs, which are aligned once. (A corpus
    holding an unhashable value is computed without the memo.)"""
    try:
        key = (tuple(references), tuple(outputs))
        hash(key)
    except TypeError:
        return tuple(character_edits(*_official_pairs(references, outputs)))
    return _official_edits_memo(*key)


@lru_cache(maxsize=4)
def _official_edits_memo(references: tuple, outputs: tuple) -> tuple[tuple[int, int], ...]:
    return tuple(character_edits(*_official_pairs(references, outputs)))


def clear_scoring_cache() -> None:
    """Forget the memoised per-corpus edits and the normalised strings (results do not change; benchmarks time cold
    runs)."""
    _official_edits_memo.cache_clear()
    clear_normalisation_cache()


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
    return _cer_percent_from_edits(official_cer_parts(references, outputs))


def official_cer_parts(references: Sequence[str], outputs: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Per-item ``(character edits, reference characters)`` of :func:`official_cer_percent` (its corpus CER is
    ``100 * sum(edits) / sum(characters)`` of these): the parts a paired resampling sums.

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """
    if len(references) != len(outputs):
        raise ValueError(f"{len(references)} references but {len(outputs)} hypotheses")
    return _official_edits(references, outputs)


def strict_cer_percent(references: Sequence[str], outputs: Sequence[str]) -> float:
    """Plain character CER (percent): the whole output, no separator rule, no cut, no joining spaces, and
    script variants that do not change a character.

    Both sides: full-width to half-width, Whisper ``BasicTextNormalizer``, whitespace removed
    (:func:`mcga.normalize.normalize_for_strict_cer`). The reference is then taken as written (MCGA gold is
    simplified Chinese); reply characters that are not in the reference become their OpenCC ``t2s`` form
    (:func:`mcga.normalize.simplify_reply_against_reference`). The official rule converts both sides with
    ``t2s``, which rewrites correct simplified characters in context: reference ``夜深乾清宫里静`` gets CER 0
    for the wrong ``夜深干清宫里静`` and 7.69 for the same line in traditional script; here those are 1/7 and 0.

    Total character edits / total reference characters over the corpus. Differs from
    :func:`official_cer_percent` also when outputs carry a preamble or run past 100 characters (hallucination
    loops are counted in full here).

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """
    return _cer_percent_from_edits(strict_cer_parts(references, outputs))


def strict_cer_parts(references: Sequence[str], outputs: Sequence[str]) -> list[tuple[int, int]]:
    """Per-item ``(character edits, reference characters)`` of :func:`strict_cer_percent` (summed the same way).

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """
    refs = [normalize_for_strict_cer(r) for r in references]
    hyps = [simplify_reply_against_reference(normalize_for_strict_cer(o), ref) for o, ref in zip(outputs, refs)]
    return character_edits(refs, hyps)


def _group_members(groups: Sequence[str], order: Iterable[str]) -> dict[str, list[int]]:
    members: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        members.setdefault(str(group), []).append(index)
    order = list(order)
    return {g: members[g] for g in [g for g in order if g in members] + [g for g in members if g not in order]}


def official_cer_percent_by_group(references: Sequence[str], outputs: Sequence[str], groups: Sequence[str], order: Iterable[str] = ()) -> dict[str, float]:
    """Official corpus CER (percent) inside each group (e.g. genre or dynasty), as the official breakdowns.

    Returns:
        ``{group: cer_percent}`` with groups in ``order`` first, then any others in first-seen order.
    """
    if not (len(references) == len(outputs) == len(groups)):
        raise ValueError(f"{len(references)} references, {len(outputs)} outputs and {len(groups)} group labels")
    members = _group_members(groups, order)
    pairs = _official_edits(references, outputs) if references else ()
    return {g: _cer_percent_from_edits([pairs[i] for i in index]) for g, index in members.items()}


def group_sizes(groups: Sequence[str], order: Iterable[str] = ()) -> dict[str, int]:
    """``{group: number of items}`` in the same order as :func:`official_cer_percent_by_group` (the counts the
    official script prints under each breakdown, its ``Count (条数)`` table)."""
    return {g: len(index) for g, index in _group_members(groups, order).items()}


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


#: Formatting before a letter: brackets and quotes of any script (「B」, 『C』, “B”, 【B】), Markdown emphasis, backticks,
#: LaTeX math and ``\boxed{`` / ``\text{`` (reasoning models trained on maths write ``\boxed{B}``): the shared set of
#: :data:`audio_bench_core.answers.OPENING_MARKS`.
_WRAP = rf"(?:{OPENING_MARKS}\s*){{0,6}}"  # at most 6 layers (``**「B」**`` is 3): a bounded scan per position, so a
# hostile run of marks ("(" * 100,000) stays linear (an unbounded run made every search position rescan it)
# An option letter: upper-case, or lower-case only where no word follows ("答案是b。"), so that the article in
# "I cannot answer a question" is not read as option A.
_LETTER = r"(?<![A-Za-z])([A-Z]|[a-z](?=\s*(?:$|[^\sA-Za-z])))(?![A-Za-z])"
#: Words after a letter that say the option is wrong ("我觉得A不对"): such a letter is not an answer.
_CLOSE = rf"(?:{CLOSING_MARKS}\s*){{0,6}}"
_NEGATED = r"(?!" + _CLOSE + r"\s*(?:选项|项)?\s*(?:不对|不正确|错误|错|是错|不是|(?i:is wrong|is incorrect|is not|isn't)))"
#: A second letter offered beside the first ("答案是A或B", "A and B", "A、B", "A，B。"): the answer is ambiguous.
_SECOND_LETTER = (r"(?P<second>" + _CLOSE + r"\s*(?:或者|或|和|与|及|、|/|(?i:\bor\b|\band\b))\s*(?i:选项|option)?\s*" + _WRAP + r"\s*[A-Za-z](?![A-Za-z])"
                  r"|" + _CLOSE + r"\s*[,，]\s*" + _WRAP + r"\s*[A-Za-z](?=" + _CLOSE + r"\s*(?:$|[。.,，、;；!！]|和|与|或|(?i:\band\b|\bor\b))))?")
#: Phrases that declare the answer; a mere mention of an option ("选项A的说法…", "Option A is a distractor") is not one.
_ANSWER_PHRASE = re.compile(
    r"(?i:正确答案|最终答案|参考答案|答案|正确的选项|正确选项|应选|选择|我选|我觉得|我认为|我猜|应该|应当|(?<![\w])选"
    r"|final answer|correct answer|correct option|correct choice|the answer|answer|i choose|i pick|i select|i would choose|i'd choose"
    r"|i would go with|i'd go with|my choice|(?=\\boxed))"
    r"\s*(?i:应该是|应该选|应为|应是|就是|还是|是|为|选择|选|is|would be|should be|will be|=)?\s*[:：]?\s*(?i:选项|option|choice)?\s*"
    + _WRAP + r"\s*" + _LETTER + _NEGATED + _SECOND_LETTER
)
#: An option affirmed as right ("选项C正确", "C选项是正确的", "C is correct").
_AFFIRMED = re.compile(
    r"(?i:选项|option|choice)?\s*" + _WRAP + r"\s*" + _LETTER + r"[\W_]*?\s*(?i:选项|项|option)?\s*"
    r"(?i:是正确的|是对的|正确|对的|是答案|is correct|is right|is the (?:correct |right )?answer)"
)
_LONE_LETTER = re.compile(r"^[\W_]*([A-Za-z])[\W_]*$")
_LEADING_LETTER = re.compile(
    rf"^\s*{_WRAP}\s*([A-Za-z])(?![A-Za-z])\s*(?:[.．、:：)）\]】,，;；*]|\s+(?=[^\x00-\x7f])|(?:选项|项)(?!\s*(?:不对|不正确|错误|错|是错|不是))|$)"
)
_OPTION_LINE = re.compile(r"(?:^|(?<=\s))([A-Da-d])\s*[.．、:：)）]\s*(.+?)\s*(?=(?:\s[A-Da-d]\s*[.．、:：)）])|\n|答案\s*[:：]|$)")
_WHITESPACE_RUN = re.compile(r"\s{2,}")
_LEADING_ANSWER_WORDS = re.compile(r"^(?:正确答案|最终答案|答案|我选择|我选|应该是|我觉得是|我认为是|应选)?(?:是|为)?")


def _first_character(match: re.Match) -> str:
    return match.group()[0]


def parse_mcq_options(question: str | None, letters: str = "ABCD") -> dict[str, str]:
    """The options of an SU/SR question as ``{letter: option text}`` (first occurrence of each letter).

    Reads the release's layouts: one option per line (``"A. 玉\\nB. 剑\\n…\\n答案："``) and inline
    (``"A. 玉 B. 剑 …"``); delimiters ``. ．、: ： ) ）``. Letters outside ``letters`` are ignored; a question
    with no readable option gives ``{}``.
    """
    options: dict[str, str] = {}
    for match in _OPTION_LINE.finditer(unicodedata.normalize("NFKC", str(question or ""))):
        letter = match.group(1).upper()
        if letter in letters.upper() and letter not in options and match.group(2).strip():
            options[letter] = match.group(2).strip()
    return options


def _option_text_key(text: str) -> str:
    return re.sub(r"[\W_]+", "", opencc_converter("t2s").convert(unicodedata.normalize("NFKC", text))).lower()


def _letter_from_option_text(text: str, options: dict[str, str]) -> str | None:
    """The option whose text the reply gives instead of its letter (see :func:`strict_mcq_letter`, rule 4)."""
    reply = _option_text_key(text)
    keys = {letter: _option_text_key(option) for letter, option in options.items()}
    keys = {letter: key for letter, key in keys.items() if key}
    bare = _LEADING_ANSWER_WORDS.sub("", reply)
    exact = {letter for letter, key in keys.items() if key in (reply, bare)}
    if len(exact) == 1:
        return exact.pop()
    contained = {letter for letter, key in keys.items() if len(key) >= 2 and key in reply}
    contained = {a for a in contained if not any(a != b and keys[a] in keys[b] for b in contained)}
    return contained.pop() if len(contained) == 1 else None


#: A sentence boundary: after ``。！!？?；;`` or a line break, or after a full stop followed by a space (so
#: ``C. 思念家乡`` stays one piece only in the sense that nothing is dropped from it: pieces are rejoined as written).
_SENTENCE_BOUNDARY = re.compile(r"(?<=[。！!？?；;\n])|(?<=\.)(?=\s)")
#: A piece that asks rather than answers: it ends with a question mark, or with the question particle 吗/么 (after
#: t2s, so 嗎/麼 too), closing quotes, brackets or emphasis aside.
_QUESTION_END = re.compile(r"(?:[?？]|[吗么])[\s\"”’'）)\]】*。.!！]*$")
#: Words that retract an earlier answer ("答案是A。不对，答案是B", "The answer is A. Wait, actually it is B"), looked
#: for between the last differing declaration and the final one. Read after t2s (traditional forms match too).
_RETRACTION = re.compile(
    r"不对|不是|错了|说错|更正|纠正|改正|修正|改为|改成|等等|等一下|其实|重新考虑|再想想|再看|仔细看|抱歉|最终|最后的答案"
    r"|(?i:\b(?:wait|actually|correction|i mean|on second thought|scratch that|i was wrong|my mistake|mistake|oops|sorry"
    r"|final(?:ly)?|revised?|reconsider(?:ing)?|let me (?:re-?)?(?:check|think|consider|correct|revise)|no(?=[,.!;:]))\b)"
)
#: Words that offer another option beside the declared one ("答案是B，也可能是C", "The answer is B, but it could also
#: be C"): with another option letter after them, the reply names no single answer. Read after t2s.
_HEDGE = re.compile(
    r"也可能|也许|或许|可能是|不排除|也有可能|(?i:\b(?:or maybe|or possibly|or perhaps|could also be|might also be|may also be"
    r"|possibly|perhaps|alternatively|not sure|unsure)\b)"
)
_UPPER_LETTER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])")


@lru_cache(maxsize=8)
def _letter_references(letters: str):
    """``clause -> [letter, ...]``: the option letters of ``letters`` standing alone in a clause (upper-case, no
    Latin letter on either side), for :func:`audio_bench_core.answers.concluded_option`."""
    pattern = re.compile(r"(?<![A-Za-z])([" + re.escape(letters.upper()) + r"])(?![A-Za-z])")
    return lambda clause: pattern.findall(clause)


@dataclass(frozen=True)
class StrictReading:
    """What :func:`strict_mcq_reading` read from one reply.

    Attributes:
        letter: the option letter (upper-case), or ``None``.
        reason: ``""`` when a letter was read; else ``"ambiguous"`` (several letters declared or offered, with no
            clear retraction making the last one final), ``"question"`` (the reply only asks, e.g. ``答案是B吗？``,
            ``Is it B?``), or ``"no_letter"``.
    """

    letter: str | None
    reason: str = ""


def _statements(text: str) -> tuple[str, bool, bool]:
    """``(text without its questions, whether any piece was a question, whether the first piece is one)``: the
    pieces of ``text`` between sentence boundaries that ask (:data:`_QUESTION_END`) are dropped, the others are kept
    as written. Linear in the text."""
    if "?" not in text and "？" not in text and "吗" not in text and "么" not in text:  # nothing asks (the usual reply)
        return text, False, False
    pieces = _SENTENCE_BOUNDARY.split(text)
    asks = [bool(_QUESTION_END.search(piece)) for piece in pieces]
    if not any(asks):
        return text, False, False
    first_asks = next((ask for piece, ask in zip(pieces, asks) if piece.strip()), False)
    return "".join(piece for piece, ask in zip(pieces, asks) if not ask), True, first_asks


def strict_mcq_letter(prediction: str | None, letters: str = "ABCD", options: dict[str, str] | None = None) -> str | None:
    """The option letter a human reads in a model output, or ``None`` (:func:`strict_mcq_reading`, letter only)."""
    return strict_mcq_reading(prediction, letters, options).letter


def strict_mcq_reading(prediction: str | None, letters: str = "ABCD", options: dict[str, str] | None = None) -> StrictReading:
    """Read the option letter a human reads in a model output (``acc_strict``), or say why there is none.

    The output is NFKC-normalised (full-width letters become ASCII) and OpenCC ``t2s``-converted (so
    ``我選擇 C`` and ``正確選項為 D`` read like their simplified forms). Its **questions are dropped** first: a
    sentence ending with ``?``/``？`` or the particle ``吗``/``么`` asks, it does not answer (``答案是B吗？``,
    ``是B嗎``, ``Is it B?``, ``B？``); a reply that is only questions gives reason ``"question"``. Then the first rule
    that applies decides:

    1. answer declarations (``答案：A``, ``答案是B``, ``选C``, ``我选择 C``, ``正确选项为 D``, ``我觉得是B``,
       ``应该是 C``, ``The answer is A``, ``I choose B``) and options affirmed as right (``选项C正确``,
       ``C is correct``): the letter they name. Mentions of other options around it (``答案是B。选项A的说法与原文
       不符。``, ``The answer is C. Option A is a common distractor.``) are not declarations and do not count.
       When declarations name different letters, or one offers two (``答案是A或B``, ``答案：A、B``), the **last**
       declaration wins if a retraction (:data:`_RETRACTION`: ``不对``, ``更正``, ``最终``, ``wait``,
       ``actually``, ``final``, ...) stands between the last differing declaration and the final letter
       (``答案是A。不对，答案是B`` is B; ``The answer is A. Wait, the answer is B`` is B); otherwise the reply is
       ``"ambiguous"`` (``答案是A。答案是B``, ``答案是A或B``), and so is a final declaration followed by a retraction
       or a hedge (:data:`_HEDGE`: ``也可能是``, ``or maybe``, ``could also be``) and another option letter
       (``答案是A。不对，是B``, ``我认为是B，也可能是C``). A letter called wrong (``我觉得A不对``) is not declared.
       ``\boxed{B}`` (and ``\boxed{\text{B}}``) declares B;
    1b. with no declaration, a **concluding statement** (:func:`audio_bench_core.answers.concluded_option`): the
       last clause naming an option names exactly one, with a predicate of correctness or choice and no negation,
       hedge or question (``……，B项符合题意。``, ``正确的是C``, ``故本题选D``, ``Option B is correct``); ``B项错误``,
       ``可能是C``, ``A和B都正确`` state none;
    2. the whole output is one letter, possibly wrapped (``"B"``, ``"(B)"``, ``"**B**"``, ``"「B」"``, ``"$B$"``, ``"b。"``);
    3. the output starts with a letter and a delimiter or ``选项`` (``"C. 思念家乡"``, ``"D、"``, ``"B选项"``);
    4. with ``options`` (``{letter: text}``, e.g. from :func:`parse_mcq_options`): the reply gives one option's
       text instead of its letter (equal to it after removing punctuation, spaces and a leading ``答案是``, or
       containing exactly one option text of 2+ characters that is not part of another contained option).

    A letter outside ``letters`` is ``"no_letter"`` too. ``"A dog barks"`` (article, not option), ``"ABCD"``,
    ``"options A and B"`` and ``"因为B选项错误"`` give ``None``. Linear in the output's length.
    """
    if not prediction:
        return StrictReading(None, "no_letter")
    converted = opencc_converter("t2s").convert(unicodedata.normalize("NFKC", str(prediction))).strip()
    # Every run of whitespace kept as its first character: the rules read \s* and \s+ only, so what they find is the
    # same, and adjacent \s* can no longer backtrack over a long run ("答案" + 250 spaces took minutes; now linear).
    converted = _WHITESPACE_RUN.sub(_first_character, converted)
    text, asked, opens_with_question = _statements(converted)
    text = text.strip()
    declared = sorted([*_ANSWER_PHRASE.finditer(text), *_AFFIRMED.finditer(text)], key=lambda m: m.start(1))
    if declared:
        final = declared[-1]
        letter = final.group(1).upper()
        differing = [m for m in declared if m.group(1).upper() != letter or m.groupdict().get("second")] if len(declared) > 1 or final.groupdict().get("second") else []
        if differing:
            last = differing[-1]
            if last is final or not _RETRACTION.search(text, last.end(), final.start(1)):
                return StrictReading(None, "ambiguous")
        for after in (_RETRACTION, _HEDGE):  # "答案是A。不对，是B", "答案是A，也可能是B": no single final answer
            found = after.search(text, final.end())
            if found and any(m.group(1) in letters.upper() and m.group(1) != letter for m in _UPPER_LETTER.finditer(text, found.end())):
                return StrictReading(None, "ambiguous")
    else:  # a concluding statement ("……，B项符合题意。"), then position rules on the reply as written, unless it
        # opens with a question ("B？", an echoed question)
        letter = concluded_option(text, _letter_references(letters))
        match = None if letter or opens_with_question else (_LONE_LETTER.match(converted) or _LEADING_LETTER.match(converted))
        letter = letter or (match.group(1).upper() if match else None)
        if letter is None and options:
            letter = _letter_from_option_text(text, options)
    if letter is not None and letter in letters.upper():
        return StrictReading(letter)
    return StrictReading(None, "question" if asked and not text else "no_letter")


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
#: Bumped whenever a rule below changes what a score is. 4: answers inside <answer>-like tags; strict MC reads
#: \boxed{X} and calls a hedged answer ambiguous. 5: strict MC reads a letter in any script's quotes/brackets, LaTeX
#: math or backticks, and a concluding statement (the one option a final clause affirms).
SCORING_VERSION = "5"
#: The library whose CER the signatures name (:func:`character_edits` counts edits as it does), with its version.
CER_LIBRARY = "jiwer"
_RULES = {
    "asr": "cer_official=after-last-sep+first100+space-joined-corpus; cer_strict=whole-output+char-corpus+ref-as-written+reply-t2s-except-ref-chars; both=reasoning-removed+answer-tags-read",
    "sqa": "f1_official=strip-punct+lower+containment-else-bag-f1; reasoning-removed+answer-tags-read",
    "su": "acc_official=exact/first-\\b[A-G]\\b/gold-substring; acc_strict=t2s+questions-dropped+declaration(last-if-retracted,hedged=ambiguous,boxed,any-script-wrappers)>conclusion(last-option-clause:one-option+affirmed,not-negated/hedged/asked)>lone>leading-letter>option-text(ABCD), ambiguous/unparseable=wrong; both=reasoning-removed+answer-tags-read",
}
_RULES["sr"] = _RULES["su"]


def task_signature(task: str) -> str:
    """sacrebleu-style signature of the metrics of one MCGA task: rules, normaliser, library versions, unit.

    Example (asr): ``mcga-scoring:4|cer_official=...; cer_strict=...|norm:t2s(opencc-1.4.2)+fullwidth+
    whisper-basic(whisper-normalizer-0.1.15)+nospace|jiwer-4.0.0|unit:percent``. Two results with the same
    signature were computed the same way.

    Raises:
        KeyError: ``task`` has no rule-scored metrics here.
    """
    parts = [f"mcga-scoring:{SCORING_VERSION}", _RULES[task]]
    if task == "asr":
        parts += [normalizer_signature(), f"{CER_LIBRARY}-{version(CER_LIBRARY)}"]
    return "|".join(parts + ["unit:percent"])
