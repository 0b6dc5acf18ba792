"""How an answer value is read as the model wrote it, shared by the strict readers (MCGA's ``acc_strict``, PARSA's
option and label reading). Framework-free; no benchmark's rules live here, only what the readers share:

- :func:`response_text`: a response that is not a string (a list, a dict of content parts, a number, as some model
  wrappers and replay files give) read as its text, or refused with the reason; never its Python ``repr``.
- :func:`unwrap_value`: the formatting around a whole value removed (Markdown emphasis ``**x**`` / ``__x__`` /
  ``*x*`` / ``_x_``, LaTeX math ``$x$`` / ``$$x$$`` / ``\\(x\\)`` / ``\\[x\\]``, ``\\boxed{x}`` / ``\\text{x}`` and
  kin, backticks and code fences, HTML emphasis ``<b>x</b>``, quotes and brackets of any script: every Unicode
  opening/initial punctuation mark with a closing/final one, ``「x」``, ``『x』``, ``“x”``, ``„x“``, ``«x»``,
  ``《x》``, ``【x】``, ``（x）``, ``(x)``, ``[x]``, ``{x}`` ...). Formatting is not the answer's content.
- :func:`split_gloss`: a value followed by a gloss, ``"1 (دماوند)"`` / ``"anger (خشم)"`` / ``"2 - Tehran"``: the
  option's own text or a translation after the answer. The reader decides what the gloss may say (it must not name
  another option).
- :data:`OPENING_MARKS` / :data:`CLOSING_MARKS`: regular-expression fragments for one opening / closing mark (the same set), for readers that find a
  value inside a sentence (MCGA's ``答案为「B」``, ``答案：$B$``, ``答案是 `C```).
- :func:`concluded_option`: the option a concluding statement names ("……，B项符合题意。", "正确的是C",
  "so the answer is C", "گزینه ۲ درست است"), by a small grammar (below), in Chinese, English and Persian.

**Conclusion grammar.** The text is cut into sentences (at ``。！!？?؟；;؛``, a line break, or a full stop before a
space or the end) and each sentence into clauses (at ``，,،``). The *conclusion* is the last clause that names an
option (the caller's pattern: MCGA's letters, PARSA's option numbers). It states an answer when

1. it names exactly one option (``"A和B都正确"``, ``"گزینه ۱ یا ۲"`` name two: no answer);
2. it holds a predicate of correctness or choice (:data:`_AFFIRM`: 正确, 符合, 选, 答案, 当选; correct, right, answer,
   choose, pick, best; درست, صحیح, پاسخ, جواب, انتخاب, بهترین ...); a mere mention ("Option B is a distractor",
   "选项B描述了…") has none;
3. it holds no negation (:data:`_NEGATION`: 不, 错, 误, 非, 未; not, wrong, incorrect, except; نادرست, غلط, اشتباه,
   نیست ...): ``"B项错误"``, ``"The answer is not C"``, ``"گزینه ۲ درست نیست"`` state no answer;
4. it holds no hedge (:data:`_HEDGE`: 可能, 也许, 或许; maybe, perhaps, probably, might; شاید, احتمالاً, ممکن): a
   guess is not a stated answer;
5. it does not ask (its sentence ends with ``?``/``？``/``؟``, or it ends with 吗/呢/么, or opens with ``آیا``).

The order of words is free (Chinese 正确的是C / C项正确, Persian SOV ``پاسخ درست گزینه ۲ است``), which is why the
grammar is a set of conditions over the clause rather than phrase templates. Linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# ------------------------------------------------------------------------------------------- responses that are not text
#: Keys of a dict response (a chat message, a content part, a wrapper's output record) that hold its text.
TEXT_KEYS = ("text", "content", "output_text", "generated_text")
#: Content-part types that are not the answer (reasoning parts of Responses-style output): skipped when joining parts.
NON_ANSWER_PART_TYPES = (
    "reasoning",
    "thinking",
    "image",
    "image_url",
    "audio",
    "input_audio",
    "video",
    "refusal_reason",
)
_MAX_DEPTH = 6


class NotText(ValueError):
    """A response that holds no text to score (a dict with no text key, several candidate answers, bytes ...)."""


def response_text(value: object) -> str:
    """The text of one model response, whatever shape the model wrapper or replay file gave it.

    - ``str``: itself; ``None``: ``""`` (an empty response);
    - a number (not a bool): its decimal text (``2`` -> ``"2"``), as a JSON answer file holds option numbers;
    - a list or tuple of one item: that item's text (lmms-eval's ``[response]``, a replay file's ``["..."]``); a list
      of content parts (dicts with ``type``/``text``, strings): the text parts joined in order, parts of
      :data:`NON_ANSWER_PART_TYPES` skipped; ``[]``: ``""``;
    - a dict: the first of :data:`TEXT_KEYS` it holds, read the same way (``{"text": ...}``, a chat message
      ``{"role", "content": str | parts}``), or a ``message`` dict in it (an OpenAI choice).

    Raises:
        NotText: a bool, bytes, a dict without text, a list of several plain strings (several candidate answers,
            not one), nesting deeper than 6, or any other type; the message names what was found.
    """
    return _text(value, 0)


def _text(value: object, depth: int) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if depth > _MAX_DEPTH:
        raise NotText(f"nested more than {_MAX_DEPTH} levels deep")
    if isinstance(value, bool):
        raise NotText(f"a bool ({value}), not text")
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return _text(value[0], depth + 1)
        if not value:
            return ""
        if all(isinstance(item, str) for item in value):
            raise NotText(f"a list of {len(value)} strings (several candidate answers, not one): {_preview(value)}")
        parts = [
            item
            for item in value
            if not (isinstance(item, dict) and str(item.get("type", "")).lower() in NON_ANSWER_PART_TYPES)
        ]
        return "".join(_text(item, depth + 1) for item in parts)
    if isinstance(value, dict):
        for key in TEXT_KEYS:
            if key in value:
                return _text(value[key], depth + 1)
        if isinstance(value.get("message"), dict):
            return _text(value["message"], depth + 1)
        raise NotText(f"a dict with no text (keys {sorted(map(str, value))[:8]})")
    raise NotText(f"a {type(value).__name__} ({_preview(value)}), not text")


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------------------------------- formatting around a value
def _punctuation_by_category() -> dict[str, str]:
    found: dict[str, list[str]] = {"Ps": [], "Pe": [], "Pi": [], "Pf": []}
    for code in range(0x10000):
        category = unicodedata.category(chr(code))
        if category in found:
            found[category].append(chr(code))
    return {category: "".join(chars) for category, chars in found.items()}


_PUNCTUATION = _punctuation_by_category()


def _marks(categories: tuple[str, ...]) -> str:
    return "".join(_PUNCTUATION[c] for c in categories)


#: Opening brackets (Unicode ``Ps``), quotes (``Pi``/``Pf``: scripts use them either way round) and closing ones, of every
#: script in the BMP.
_OPENERS = _marks(("Ps", "Pi", "Pf")) + "\"'`"  # Pf too: »x« (Danish), ”x” (Swedish)
_CLOSERS = _marks(("Pe", "Pf", "Pi")) + "\"'`"  # Pi too: „x“ (German)
_BRACKET_OPEN = _marks(("Ps",))
_BRACKET_CLOSE = _marks(("Pe",))
#: Symmetric and paired multi-character marks: Markdown, LaTeX, code, HTML emphasis (longest first).
_PAIRED = (("```", "```"), ("$$", "$$"), ("**", "**"), ("__", "__"), ("\\(", "\\)"), ("\\[", "\\]"), ("*", "*"), ("_", "_"), ("$", "$"),
           ("~~", "~~"), ("==", "=="))  # fmt: skip
_LATEX_COMMAND = re.compile(
    r"^\\(?:boxed|fbox|text|textbf|textit|textrm|texttt|mathrm|mathbf|mathit|mathsf|mathtt|emph|underline|bm)\s*\{(.*)\}$",
    re.DOTALL,
)
_HTML_EMPHASIS = re.compile(r"^<(b|strong|em|i|u|mark|code)>(.*)</\1>$", re.DOTALL | re.IGNORECASE)
_FENCE_LANGUAGE = re.compile(r"^```[A-Za-z]*\s*")
#: One opening mark as found before a value inside a sentence (a character of the set, or a Markdown, LaTeX or
#: ``\boxed{``-like opener): a regular-expression fragment (no groups).
OPENING_MARKS = (
    r"(?:["
    + re.escape(_OPENERS)
    + r"*_$~]|\\[(\[]|\\(?:boxed|fbox|text|textbf|textit|textrm|texttt|mathrm|mathbf|mathit|mathsf|mathtt|emph|underline|bm)\s*\{)"
)


#: One closing mark after a value inside a sentence (the same set; ``}`` closes ``\boxed{``): a fragment (no groups).
CLOSING_MARKS = r"(?:[" + re.escape(_CLOSERS) + r"*_$~}]|\\[)\]])"


def _balanced(text: str) -> bool:
    """True when every bracket (``Ps``/``Pe``) and brace of ``text`` closes one opened before it (kinds not matched:
    scripts pair them differently)."""
    depth = 0
    for ch in text:
        if ch in _BRACKET_OPEN:
            depth += 1
        elif ch in _BRACKET_CLOSE:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _unwrap_once(text: str) -> str | None:
    match = _LATEX_COMMAND.match(text)
    if match and _balanced(match.group(1)):
        return match.group(1)
    match = _HTML_EMPHASIS.match(text)
    if match:
        return match.group(2)
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        return _FENCE_LANGUAGE.sub("", text[:-3])
    for opener, closer in _PAIRED:
        if len(text) > len(opener) + len(closer) and text.startswith(opener) and text.endswith(closer):
            return text[len(opener) : -len(closer)]
    if len(text) >= 3 and text[0] in _OPENERS and text[-1] in _CLOSERS and _balanced(text[1:-1]):
        return text[1:-1]
    return None


_TRAILING_STOP = re.compile(r"(?<=\S)[.。!！۔]+$")


#: LaTeX commands whose backslash a JSON string read as an escape (``"\boxed{4}"`` written unescaped in JSON is a
#: backspace and ``oxed{4}``; ``\text`` a tab and ``ext``; ``\fbox`` a form feed and ``box``): put back.
_JSON_EATEN_LATEX = re.compile(r"\x08(?=oxed\s*\{)|\t(?=ext(?:bf|it|rm|tt)?\s*\{)|\x0c(?=box\s*\{)")
_EATEN = {"\x08": "\\b", "\t": "\\t", "\x0c": "\\f"}


def unwrap_value(text: str) -> str:
    """``text`` with the formatting around the whole of it removed, layer by layer (``"**「B」**"`` -> ``"B"``,
    ``"$\\boxed{4}$"`` -> ``"4"``, ``"«خشم»"`` -> ``"خشم"``, ``"(2)"`` -> ``"2"``), surrounding whitespace and a full
    stop after the last mark (``"**2**."``) too. Marks inside the value are kept; brackets are removed only when
    what they hold is balanced (``"(a) b (c)"`` stays). Linear per layer; at most 20 layers."""
    text = _JSON_EATEN_LATEX.sub(lambda eaten: _EATEN[eaten.group()], text).strip()
    for _ in range(20):
        stripped = _TRAILING_STOP.sub("", text).strip()
        inner = _unwrap_once(stripped)
        if inner is None or not inner.strip():
            return text
        text = inner.strip()
    return text


_GLOSS_SEPARATOR = re.compile(r"\s+[-–—]\s+")


def split_gloss(text: str) -> tuple[str, str] | None:
    """``(answer, gloss)`` of a value written as an answer followed by a gloss: a bracketed text at its end
    (``"1 (دماوند)"``, ``"anger (خشم)"``, ``"B【思念家乡】"``) or after a spaced dash (``"2 - Tehran"``), else ``None``.
    Both parts are :func:`unwrap_value`-ed. The caller checks that the gloss names no other option or label."""
    text = unwrap_value(text)
    if len(text) >= 3 and text[-1] in _BRACKET_CLOSE:
        depth = 0
        for index in range(len(text) - 1, -1, -1):
            ch = text[index]
            if ch in _BRACKET_CLOSE:
                depth += 1
            elif ch in _BRACKET_OPEN:
                depth -= 1
                if depth == 0:
                    head, gloss = text[:index].strip(), text[index + 1 : -1].strip()
                    return (unwrap_value(head), unwrap_value(gloss)) if head and gloss else None
    parts = _GLOSS_SEPARATOR.split(text, maxsplit=1)
    if len(parts) == 2 and parts[0].strip() and parts[1].strip():
        return unwrap_value(parts[0]), unwrap_value(parts[1])
    return None


def read_wrapped(text: str, read: Callable[[str], object]) -> tuple[object, str]:
    """``(value, how)``: what ``read`` (a reader returning ``None`` for no answer) finds in ``text`` as written
    (``how`` ``""``), else in its :func:`unwrap_value` (``"unwrapped"``), else in the answer part of its
    :func:`split_gloss` when the gloss reads as nothing or as the same value (``"gloss"``); ``(None, "conflict")``
    when the gloss names another value (``"1 (تهران)"`` with Tehran option 2), else ``(None, "")``."""
    found = read(text)
    if found is not None:
        return found, ""
    unwrapped = unwrap_value(text)
    if unwrapped != text:
        found = read(unwrapped)
        if found is not None:
            return found, "unwrapped"
    parts = split_gloss(unwrapped)
    if parts:
        head, gloss = read(parts[0]), read(parts[1])
        if head is not None:
            return (head, "gloss") if gloss is None or gloss == head else (None, "conflict")
    return None, ""


# ------------------------------------------------------------------------------------------- conclusions
_SENTENCE = re.compile(r"[^。！!？?؟；;؛\n]*?(?:[。！!？?؟；;؛\n]+|\.(?=\s|$)|$)")
_CLAUSE = re.compile(r"[,，،]")
#: Predicates of correctness or choice (Chinese, English, Persian). 选 not before 项 (选项 is "option").
_AFFIRM = re.compile(
    r"正确|对的|是对|符合|当选|选(?!项)|答案|最佳|最好|最恰当|最合适|最准确|恰当|合适|准确|相符|吻合|成立"
    r"|(?i:\b(?:correct|right|true|answers?|choose|chose|chosen|choosing|pick|picked|select|selected|go(?:ing)? with|best"
    r"|most (?:appropriate|suitable|accurate|fitting|plausible)|fits|matches|applies)\b)"
    r"|درست|صحیح|پاسخ|جواب|انتخاب|مناسب|بهترین|منطبق|مطابق"
)
#: Negations: an option named as wrong is no answer. 非 not in 非常 ("very").
_NEGATION = re.compile(
    r"不|没|非(?!常)|错|误|否|未|排除"
    r"|(?i:\b(?:not|never|wrong|incorrect|false|except|neither|nor|cannot|isn't|aren't|doesn't|don't|wasn't|eliminate[sd]?|rule[sd]? out)\b|n[’']t\b"
    r"|\bno\b(?!\.?\s*\d)|rather than|instead of)"
    r"|نادرست|ناصحیح|غلط|اشتباه|خطا|(?<!\w)نه(?!\w)|(?<!\w)نیست|(?<!\w)نمی|(?<!\w)نبود|(?<!\w)رد\s"
)
#: Hedges: a guess is no stated answer.
_HEDGE = re.compile(
    r"可能|也许|或许|大概|似乎|不确定|猜"
    r"|(?i:\b(?:maybe|perhaps|possibly|probably|likely|might|may|could|guess|unsure|not sure|seems?)\b)"
    r"|شاید|احتمالا|ممکن|گمان|به نظر"
)
_QUESTION = re.compile(r"[?？؟]\W*$|[吗呢么][\W]*$|^\W*آیا")


def concluded_option(text: str, option_references: Callable[[str], list[str]]) -> str | None:
    """The option a concluding statement of ``text`` names, or ``None`` (rules in the module docstring).

    Args:
        text: the reply (reasoning removed), normalised as the caller reads it (MCGA: NFKC + t2s; PARSA: Persian
            orthography, ASCII digits).
        option_references: ``clause -> [option, ...]``, every reference to one of the task's options in a clause,
            in order (e.g. ``["B"]`` for ``"B项符合题意"``, ``["2", "2"]`` for ``"گزینه 2 یعنی 2"``).

    Returns:
        The one option named by the last clause that names any option, when that clause affirms it (a predicate of
        correctness or choice, no negation, no hedge, not a question); else ``None``.
    """
    for sentence in reversed(_SENTENCE.findall(text)):
        asks = bool(_QUESTION.search(sentence.strip()))
        for clause in reversed(_CLAUSE.split(sentence)):
            named = option_references(clause)
            if not named:
                continue
            if asks or len(set(named)) != 1 or _QUESTION.search(clause.strip()):
                return None
            if not _AFFIRM.search(clause) or _NEGATION.search(clause) or _HEDGE.search(clause):
                return None
            return named[0]
    return None


__all__ = [
    "CLOSING_MARKS",
    "OPENING_MARKS",
    "NotText",
    "concluded_option",
    "read_wrapped",
    "response_text",
    "split_gloss",
    "unwrap_value",
]
