"""Reading answers out of real model output (paper §4.1-4.2: JSON answers; no valid label -> excluded).

Reasoning (``<think>`` blocks and the other spellings) is removed before this module sees a response, by the one
shared reader :func:`audio_bench_core.reasoning.split_reasoning` (in ``audio_bench_core.responses.check_response``);
a response whose reasoning never closed is excluded by :func:`parsa.scoring.score_response` (reason
``unfinished_reasoning``), never mined here.

Step 1, :func:`read_json_answers`: find the JSON objects in the response. Accepted: a bare object; an object
inside Markdown code fences; an object with prose before or after. Near-JSON is **repaired** and counted
(``json_repaired``, the ``repaired_json`` metric): single-quoted strings, trailing commas, Python literals
(``True``/``False``/``None``), and, through the json-repair library (:func:`repair_json_object`), unescaped inner
quotes, a missing closing brace (a truncated answer), comments. A response that names the answer key as JSON
(``"transcription":``) but cannot be read even so is excluded (``invalid_json``): the wrapper and the key are never
scored as the answer.

Step 1b, **several answers** (:func:`final_answer`): the objects holding the answer key are the answers (else those
holding a fallback key; a key repeated inside one object counts each value). When they all give the same valid
answer, that answer; when they differ, the **last** one wins if a retraction (:data:`RETRACTION`: ``wait``,
``actually``, ``correction``, ``final answer``, ``نه،``, ``ببخشید``, ``در واقع``, ``اصلاح``, ...) stands between the
last differing answer and it; otherwise the item is excluded (``ambiguous_answer``, counted in
``ambiguous_answers``). One value naming several labels or options (``"anger or sadness"``, ``"1 یا 2"``,
``[1, 2]``) is ``ambiguous_answer`` too. A classification or option value written as a question (``"anger?"``,
``"۲؟"``) is not an answer (``question``). Prose after the last object is not read (as the paper's rule: prose
is never searched for an answer).

Step 2, reading the answer field: the task's ``answer_key``; else the same key in another casing; else one of
:data:`FALLBACK_KEYS` (``answer``, ``label``, ...). A chain-of-thought ``reasoning`` field is never read as the
answer. If the response holds no JSON object at all, the whole response (fences, quotes and a trailing full stop
removed) is tried as the bare answer, and the record says ``json_fallback: true``. Prose that merely mentions a
label somewhere ("I think it is anger") is not searched: such a response is excluded.

Step 3, validating the answer per task kind:

- classification: the value is matched to a canonical label by :func:`parsa.normalize.label_key` (case, spaces,
  ``_``/``-``, Persian letter variants and digits do not matter) or through the task's alias table in
  ``labels.json`` (other English words, Persian names). JSON booleans read as ``"true"``/``"false"`` (aliases of
  code_switch). No match -> excluded.
- formatting and glosses (classification and multiple choice, :func:`audio_bench_core.answers.read_wrapped`, the
  readers shared with MCGA): a value that does not match as written is read from inside the formatting around it
  (``"**2**"``, ``"$3$"``, ``"\\boxed{4}"``, ``"«۲»"``, ``"「anger」"``: Markdown, LaTeX, backticks, quotes and
  brackets of any script), then with a gloss after it set aside (``"1 (دماوند)"``, ``"anger (خشم)"``, ``"2 - Tehran"``:
  the option's own text or a translation); a gloss (or an option text after the number, ``"1. تهران"``) naming
  another option or label is ``ambiguous_option``/``ambiguous_answer``. The record says how (``reading``).
- conclusions (multiple choice): a value, or a response with no JSON, that states its answer in a concluding clause
  (``"... بنابراین گزینه ۲ درست است"``, ``"پاسخ درست گزینه ۴ است"``, ``"so option 3 is correct"``) is read as that
  option (:func:`concluded_option_number`: the last clause naming an option number names exactly one, with a
  predicate of correctness or choice and no negation, hedge or question; ``reading: "conclusion"``). The paper's
  rule excludes responses "from which no valid label can be extracted" (§4.2); a stated conclusion is an extractable
  answer, so it is read in the headline too. Prose that merely mentions an option or label is still not searched.
- multiple choice: an integer; a string of one number in any digit script (``"3"``, ``"۳"``, ``"٣"``,
  ``"Option 3"``, ``"3)"``, ``"3. <option text>"``, ``"گزینهٔ 3"``/``"گزینه‌ی 3"``/``"گزینه 3"``, read after
  :func:`parsa.normalize.normalize_orthography`); or the text of exactly one option (normalised comparison;
  an option ``"A (B)"`` also matches ``"A"`` or ``"B"``, an option ``"A/B/C"`` matches each part; for vazn and
  sabk, transliterated metre/form words are mapped to Persian first). Out of range or ambiguous -> excluded.
  Option letters (``"B"``) are not accepted: the prompts number the options.
- NER: a list of ``{"type", "span"}`` objects (also ``label``/``entity_type`` for the type and ``text``/
  ``value``/``entity`` for the span, or ``[type, span]`` pairs, or a ``{type: span | [spans]}`` mapping). Entries
  without a type or span are skipped and counted. An empty list is a valid answer (no entities).
- ASR and translation: a string. With no JSON, the raw response is the hypothesis (``json_fallback``); a JSON
  object without the field is ``missing_key``, a field holding no text (``null``, a list) an empty answer.

Refusals: ASR and En->Fa translation: a hypothesis with no Persian script is a refusal (paper §6.1 and Table 3's
definition). Other tasks: a response with no valid answer that matches :data:`REFUSAL_PATTERN` is ``refused``,
any other invalid response is ``excluded``. Both are left out of the scored set (§4.2); the counts are reported.

Out-of-set labels: a classification value that names no label of the task (``{"emotion": "contempt"}``) is
excluded (``invalid_label``: paper §4.2, "responses from which no valid label can be extracted ... are excluded")
and recorded in :attr:`ParsedAnswer.out_of_set` (its :func:`parsa.normalize.label_key`), so that the other reading
(an invented label as a class of its own with F1 0) can be reported beside the headline; an option value naming
no option is recorded the same way (counted, not scored).

Every step is linear in the response's length; json-repair (a recursive parser) is given at most
:data:`REPAIR_MAX_CHARS` characters nested at most :data:`REPAIR_MAX_DEPTH` deep.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import unicodedata
from dataclasses import dataclass

import json_repair

from audio_bench_core.answers import concluded_option, read_wrapped, unwrap_value
from parsa.normalize import label_key, normalize_orthography, normalize_persian
from parsa.tasks import get_task, label_tables

FALLBACK_KEYS = ("answer", "label", "prediction", "output", "result", "final_answer", "transcription", "transcript", "translation", "text")
REASONING_KEYS = ("reasoning", "reason", "thinking", "thought", "thoughts", "explanation", "rationale")

REFUSAL_PATTERN = re.compile(
    r"\b(?:I'?m sorry|I am sorry|sorry, but|I apologi[sz]e|I can(?:no|')t|I cannot|I am unable|I'm unable|I am not able|"
    r"I'm not able|unable to (?:help|assist|transcribe|process|listen|hear|access|analy[sz]e|determine|identify)|"
    r"as an AI|I (?:do not|don't) have the ability)"
    r"|متأسفم|متاسفم|نمی‌توانم|نمیتوانم|نمی توانم|قادر نیستم",
    re.IGNORECASE,
)

#: Words that retract an earlier answer ("wait", "actually", "correction", "final answer"; Persian "no,", "sorry",
#: "in fact", "correction", "mistake", "final answer"), looked for between the last differing answer and the final one.
RETRACTION = re.compile(
    r"(?i:\b(?:wait|actually|correction|corrected|i mean|on second thought|scratch that|i was wrong|my mistake|mistake|oops|sorry"
    r"|final(?:ly)?|revised?|updated?|reconsider(?:ing)?|let me (?:re-?)?(?:check|think|consider|correct|revise)|no(?=[,.!;:]))\b)"
    r"|نه[،,.!]|ببخشید|ببخشيد|در واقع|درواقع|اصلاح|تصحیح|اشتباه|صبر کن|پاسخ نهایی|جواب نهایی|نهایی"
)
#: Longest text (characters) handed to json-repair, and the deepest bracket nesting: it is a recursive parser whose
#: time grows faster than the text (measured: 20 kB 0.3 s, 100 kB 2.2 s). A longer truncated answer is still read
#: (its open string and brackets closed, :func:`_closed_object`); other longer near-JSON is ``invalid_json``.
REPAIR_MAX_CHARS = 20_000
REPAIR_MAX_DEPTH = 100
_FENCE = re.compile(r"```[a-zA-Z]*\s*")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@dataclass
class ParsedAnswer:
    """What could be read from one response.

    Attributes:
        status: ``"scored"``, ``"excluded"`` or ``"refused"``.
        value: the validated answer (canonical label, option number, hypothesis text, entity list) or ``None``.
        reason: why the item is not scored (``"no_json"``, ``"invalid_json"``, ``"missing_key"``,
            ``"invalid_label"``, ``"invalid_option"``, ``"ambiguous_option"``, ``"ambiguous_answer"``, ``"question"``,
            ``"empty"``, ``"no_persian_script"``, ``"refusal_phrase"``, ``"invalid_entities"``,
            ``"unfinished_reasoning"``), ``""`` when scored.
        json_fallback: no JSON object was found and the bare response was used.
        raw_value: the value as the model wrote it (before validation), for the logs.
        skipped_entities: NER entries without a usable type or span.
        json_repaired: the answer's JSON had to be repaired to be read (see the module docstring).
        out_of_set: for an ``invalid_label``/``invalid_option`` value read from JSON, the value's
            :func:`parsa.normalize.label_key` (the class an invented label would be), else ``None``.
        reading: how a classification or option value was read when not as written: ``"unwrapped"`` (formatting
            around it removed), ``"gloss"`` (the option's text or a translation after it set aside), ``"conclusion"``
            (the option a concluding statement names); ``""`` otherwise.
    """

    status: str
    value: object = None
    reason: str = ""
    json_fallback: bool = False
    raw_value: object = None
    skipped_entities: int = 0
    json_repaired: bool = False
    out_of_set: str | None = None
    reading: str = ""


# ------------------------------------------------------------------------------------------- text tests
def has_persian_script(text: str | None) -> bool:
    """True if ``text`` holds at least one Arabic-script letter (U+0600-U+06FF, U+0750-U+077F, presentation
    forms U+FB50-U+FDFF, U+FE70-U+FEFF), the paper's test for an ASR answer (no Persian script = refusal)."""
    for ch in text or "":
        code = ord(ch)
        in_block = 0x0600 <= code <= 0x06FF or 0x0750 <= code <= 0x077F or 0xFB50 <= code <= 0xFDFF or 0xFE70 <= code <= 0xFEFF
        if in_block and unicodedata.category(ch).startswith("L"):
            return True
    return False


def looks_like_refusal(text: str | None) -> bool:
    """True if ``text`` contains an apology/inability phrase (English or Persian) of :data:`REFUSAL_PATTERN`."""
    return bool(REFUSAL_PATTERN.search(text or ""))


# ------------------------------------------------------------------------------------------- JSON
class _JSONObject(dict):
    """A parsed JSON object that remembers the values of keys written more than once (``{"a": 1, "a": 2}``):
    ``json.loads`` keeps the last silently; :func:`final_answer` treats them as several answers."""

    repeated: dict | None = None


def _object_from_pairs(pairs: list[tuple[str, object]]) -> _JSONObject:
    obj = _JSONObject(pairs)
    if len(obj) != len(pairs):
        repeated: dict[str, list] = {}
        for key, value in pairs:
            repeated.setdefault(key, []).append(value)
        obj.repeated = {key: values for key, values in repeated.items() if len(values) > 1}
    return obj


@dataclass(frozen=True)
class FoundObject:
    """One JSON object found in a response: its span ``text[start:end]``, the parsed object, and whether it had to
    be repaired to parse (anything but plain ``json.loads``)."""

    start: int
    end: int
    obj: dict
    repaired: bool = False


def _object_spans(text: str) -> tuple[list[tuple[int, int]], int, str]:
    """``(spans, open_start, closers)``: the ``(start, end)`` of every balanced top-level ``{...}`` in order of
    appearance (double- and single-quoted strings respected); the start of a top-level object still open at the end
    of the text (a truncated answer), else -1; and the characters that would close it (the open string's quote, then
    the open ``[``/``{`` in reverse), ``""`` when it cannot be closed so (a dangling backslash). One pass, linear."""
    spans, depth, start, quote, escaped, last, openers = [], 0, -1, "", False, "", []
    for index, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and depth > 0:
            # a ' opens a string only right after { [ , : (so I'm inside a double-quoted value is harmless)
            quote = ch if ch == '"' or last in ("{", "[", ",", ":") else ""
        elif ch == "{":
            if depth == 0:
                start, openers = index, []
            depth += 1
            openers.append("}")
        elif ch == "}" and depth > 0:
            depth -= 1
            while openers and openers.pop() != "}":
                pass
            if depth == 0:
                spans.append((start, index + 1))
        elif depth > 0 and ch == "[":
            openers.append("]")
        elif depth > 0 and ch == "]" and openers and openers[-1] == "]":
            openers.pop()
        if not ch.isspace():
            last = ch
    if depth == 0:
        return spans, -1, ""
    return spans, start, "" if escaped else quote + "".join(reversed(openers))


def _max_nesting(text: str) -> int:
    """The deepest bracket nesting of ``text`` (``{`` and ``[`` minus ``}`` and ``]``, strings not told apart: an
    upper bound for what a JSON parser recurses into). Linear, C-speed per character class."""
    depth = deepest = 0
    for ch in re.findall(r"[{}\[\]]", text):
        depth = depth + 1 if ch in "{[" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def repair_json_object(text: str) -> dict | None:
    """The JSON object that the json-repair library reads from near-JSON ``text`` (unescaped inner quotes, a missing
    closing brace, comments, single quotes, trailing commas), or ``None`` when it reads no non-empty object.

    json-repair is a recursive parser: ``text`` longer than :data:`REPAIR_MAX_CHARS` or nested deeper than
    :data:`REPAIR_MAX_DEPTH` is not handed to it (``None``), and any error it raises is read as ``None``.
    """
    if len(text) > REPAIR_MAX_CHARS or _max_nesting(text) > REPAIR_MAX_DEPTH:
        return None
    try:
        value = json_repair.loads(text)
    except (Exception, RecursionError):  # a library fault on hostile text is "no object", never a crash
        return None
    return value if isinstance(value, dict) and value else None


def _json_object(text: str) -> dict | None:
    """``text`` parsed by ``json.loads`` as an object (keys written twice recorded, :class:`_JSONObject`), else ``None``."""
    try:
        value = json.loads(text, object_pairs_hook=_object_from_pairs)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _load_object(candidate: str) -> tuple[dict | None, bool]:
    """``(object, repaired)``: ``candidate`` parsed as a JSON object by ``json.loads`` (``repaired`` False), else
    after removing trailing commas, else as a Python literal (single quotes, ``True``/``None``), else by
    :func:`repair_json_object` (``repaired`` True); ``(None, False)`` when none reads an object."""
    value = _json_object(candidate)
    if value is not None:
        return value, False
    without_commas = _TRAILING_COMMA.sub(r"\1", candidate)
    value = _json_object(without_commas)
    if value is not None:
        return value, True
    try:  # single quotes, Python literals
        value = ast.literal_eval(without_commas.replace("true", "True").replace("false", "False").replace("null", "None"))
        if isinstance(value, dict):
            return value, True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # TypeError: an unhashable key, {{}: 1}
        pass
    value = repair_json_object(candidate)
    return (value, True) if value is not None else (None, False)


def strip_wrappers(response: str | None) -> str:
    """The response without Markdown code-fence markers, stripped (reasoning was removed before, see the module
    docstring)."""
    return _FENCE.sub("", response or "").replace("```", "").strip()


def read_json_answers(text: str) -> list[FoundObject]:
    """Every JSON object in ``text`` (a response after :func:`strip_wrappers`), in order of appearance.

    A text that is one JSON object is read by one ``json.loads`` (the usual answer); otherwise every balanced
    ``{...}`` is tried (:func:`_load_object`), and a top-level object left open at the end (a truncated answer) is
    tried through :func:`repair_json_object`. See the module docstring for what is repaired.
    """
    if "{" not in text:  # no candidate can start
        return []
    whole = _whole_object(text)
    if whole is not None:
        return [FoundObject(0, len(text), whole)]
    spans, open_start, closers = _object_spans(text)
    found = []
    for start, end in spans:
        obj, repaired = _load_object(text[start:end])
        if obj is not None:
            found.append(FoundObject(start, end, obj, repaired))
    if open_start >= 0:
        obj = _closed_object(text[open_start:], closers)
        if obj is not None:
            found.append(FoundObject(open_start, len(text), obj, True))
    return found


def _closed_object(truncated: str, closers: str) -> dict | None:
    """A top-level object cut off at the end of the text (generation stopped): ``json.loads`` of it with its open
    string and brackets closed (linear at any length), else :func:`repair_json_object` (bounded)."""
    if closers:
        value = _json_object(truncated + closers if closers.startswith('"') else truncated.rstrip().rstrip(",") + closers)
        if value:
            return value
    return repair_json_object(truncated)



def extract_json_object(response: str | None, answer_key: str | None = None) -> dict | None:
    """The JSON object of a model response that holds its answer, or ``None`` when there is none.

    Args:
        response: model output (reasoning already removed).
        answer_key: when given, the last object holding this key (any casing) is returned (the final answer,
            :func:`final_answer`), else the first object.
    """
    found = read_json_answers(strip_wrappers(response))
    if not found:
        return None
    if answer_key:
        keyed = [f.obj for f in found if _find_key(f.obj, answer_key) is not None]
        if keyed:
            return keyed[-1]
    return found[0].obj


def _whole_object(text: str) -> dict | None:
    """``text`` parsed by ``json.loads`` when all of it is one JSON object (the usual answer), else ``None``.

    Then :func:`_object_spans` would find exactly one span, ``text`` itself (it reads double-quoted strings and
    their backslash escapes as JSON does, a ``'`` cannot stand outside a JSON string, and the braces outside strings
    balance only at the last character), and :func:`_load_object` would return the same ``json.loads`` result: the
    scan is skipped, the answer is the same (tested against the full path)."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if isinstance(value, dict) and text.count('":') > len(value):  # nested objects, or a key written twice
        return _json_object(text)
    return value if isinstance(value, dict) else None


def _find_key(obj: dict, key: str) -> str | None:
    if key in obj:
        return key
    folded = {str(k).strip().casefold(): k for k in obj}
    return folded.get(key.casefold())


def answer_value(obj: dict, answer_key: str) -> tuple[bool, object]:
    """``(found, value)``: the answer field of a parsed object: ``answer_key`` in any casing, else the first of
    :data:`FALLBACK_KEYS`; reasoning fields are never used."""
    found = _answer_field(obj, answer_key)
    return (True, obj[found]) if found is not None else (False, None)


def _answer_field(obj: dict, answer_key: str) -> str | None:
    """The key of ``obj`` that :func:`answer_value` reads, or ``None``."""
    for key in (answer_key, *FALLBACK_KEYS):
        found = _find_key(obj, key)
        if found is not None and found.casefold() not in REASONING_KEYS:
            return found
    return None


def _answer_values(found: list[FoundObject], answer_key: str) -> list[tuple[FoundObject, object]]:
    """The answers of a response, in order: from the objects holding ``answer_key`` (any casing), else from those
    holding a fallback key (:func:`answer_value`); a key written twice in one object gives each of its values."""
    keyed = [f for f in found if _find_key(f.obj, answer_key) is not None] or [f for f in found if _answer_field(f.obj, answer_key) is not None]
    answers = []
    for item in keyed:
        field = _answer_field(item.obj, answer_key)
        repeated = (getattr(item.obj, "repeated", None) or {}).get(field)
        answers.extend((item, value) for value in (repeated or [item.obj[field]]))
    return answers


def _names_answer_key(text: str, answer_key: str) -> bool:
    """True when ``text`` writes an answer key as a JSON key (``"transcription":``, ``'answer' :``): it meant to
    answer in JSON, so its raw text is never the answer."""
    keys = "|".join(re.escape(k) for k in (answer_key, *FALLBACK_KEYS))
    return re.search(r"[\"'“”]\s*(?:" + keys + r")\s*[\"'“”]\s*:", text, re.IGNORECASE) is not None


def bare_answer(response: str | None) -> str:
    """A response with no JSON read as a bare answer: wrappers, surrounding quotes and a final full stop removed."""
    text = strip_wrappers(response).strip().strip("\"'`«»“”*").strip()
    return text[:-1].strip() if text.endswith((".", "۔")) else text


# ------------------------------------------------------------------------------------------- labels
@functools.lru_cache(maxsize=None)
def _alias_index(task: str) -> dict[str, str]:
    """``{label_key: canonical label}`` of the task's labels and aliases, built once per task (read-only by use)."""
    spec = get_task(task)
    index = {label_key(label): label for label in spec.labels}
    for alias, label in label_tables()[task].get("aliases", {}).items():
        index.setdefault(label_key(alias), label)
    return index


def match_label(task: str, value: object) -> str | None:
    """The canonical label of ``task`` that ``value`` names, or ``None``.

    Matching is exact on :func:`parsa.normalize.label_key` of the label or of an alias (``labels.json``); booleans
    become ``"true"``/``"false"``; lists/dicts never match.

    Raises:
        KeyError: unknown task.
    """
    return label_reading(task, value)[0]


def label_reading(task: str, value: object) -> tuple[str | None, str]:
    """``(label, how)``: :func:`match_label` with how the value was read (:func:`audio_bench_core.answers.read_wrapped`:
    ``""`` as written, ``"unwrapped"`` from inside formatting such as ``**anger**`` or ``«خشم»``, ``"gloss"`` with a
    translation after it set aside, ``"anger (خشم)"``), or ``(None, "conflict")`` when the gloss names another label
    (``"anger (sadness)"``), else ``(None, "")``."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        return None, ""
    index = _alias_index(task)
    return read_wrapped(str(value), lambda text: index.get(label_key(text)))


# ------------------------------------------------------------------------------------------- options
# Run on normalize_orthography(text): the ezafe of گزینهٔ / گزینه‌ی / گزینه ی is already gone, ZWNJs removed.
_NUMBER_ANSWER = re.compile(r"^\W*(?:option|choice|answer|گزینه(?:\s*ی)?)?\s*(?:شماره|number|no\.?)?\s*[:#]?\s*(\d+)\s*(?:[.)\-:،]|$)(.*)$", re.IGNORECASE | re.DOTALL)
_WHITESPACE_RUN = re.compile(r"\s{2,}")
_PARENTHESIS = re.compile(r"^(.*?)\((.*?)\)\s*$")
_PART_SEPARATORS = re.compile(r"[/،,|]")


def _map_words(task: str, text: str) -> str:
    aliases = label_tables().get(task, {}).get("option_aliases", {})
    if not aliases:
        return normalize_persian(text)
    table = {normalize_persian(k): normalize_persian(v) for k, v in aliases.items()}
    words = normalize_persian(text.replace("'", "").replace("’", "")).split()
    return " ".join(table.get(word, word) for word in words)


def _option_variants(task: str, option: str) -> set[str]:
    texts = {option}
    match = _PARENTHESIS.match(option)
    if match:
        texts.update({match.group(1), match.group(2)})
    texts |= {part for text in texts for part in _PART_SEPARATORS.split(text) if part.strip()}
    return {key for key in (_map_words(task, text).replace(" ", "") for text in texts) if key}


def match_option(task: str, value: object, options: list[str]) -> tuple[int | None, str]:
    """The 1-based option number a multiple-choice answer names: ``(number, "")`` or ``(None, reason)``.

    ``value`` may be an int, a numeric string in any digit script, ``"Option 3"``/``"3)"``/``"3. text"``, or the
    text of exactly one option (see the module docstring). Reasons: ``"invalid_option"`` (no option or out of
    range), ``"ambiguous_option"`` (the text matches several options).
    """
    number, reason, _ = option_reading(task, value, options)
    return number, reason


def option_reading(task: str, value: object, options: list[str]) -> tuple[int | None, str, str]:
    """``(number, reason, how)``: :func:`match_option` with how the value was read (as in :func:`label_reading`:
    ``"unwrapped"`` for ``"**2**"``, ``"$3$"``, ``"\\boxed{4}"``; ``"gloss"`` for ``"1 (دماوند)"``); a gloss or an
    option text after the number that names another option (``"1 (تهران)"``, ``"1. تهران"`` with Tehran option
    2) is ``"ambiguous_option"``."""
    n = len(options)
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        return None, "invalid_option", ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return ((value, "", "") if 1 <= value <= n else (None, "invalid_option", ""))
    reasons = []

    def read(text: str) -> int | None:
        number, reason = _option_in_text(task, text, options)
        reasons.append(reason)
        return number

    number, how = read_wrapped(str(value), read)
    if number is not None:
        return number, "", how
    if how == "conflict" or "ambiguous_option" in reasons:
        return None, "ambiguous_option", ""
    return None, "invalid_option", ""


def _option_in_text(task: str, value: str, options: list[str]) -> tuple[int | None, str]:
    """:func:`match_option` of one string as written: a number (with an option text after it that names no other
    option) or the text of exactly one option."""
    n = len(options)
    text = normalize_orthography(str(value)).strip()
    # each whitespace run kept as its first character: _NUMBER_ANSWER reads \s* only, and its adjacent \W* and \s*
    # backtracked over a long run (an answer of "!", 1,000 spaces, "!" did not finish in two minutes)
    text = _WHITESPACE_RUN.sub(lambda run: run.group()[0], text)
    number = _NUMBER_ANSWER.match(text)
    if number and len(number.group(1).lstrip("0")) <= 6 and 1 <= int(number.group(1)) <= n:  # a 5,000-digit "number" is no option
        named = _option_by_text(task, unwrap_value(number.group(2)), options) if number.group(2).strip() else None
        if named is not None and named != int(number.group(1)):  # "1. تهران" with Tehran option 2
            return None, "ambiguous_option"
        return int(number.group(1)), ""
    answer = _map_words(task, text).replace(" ", "")
    if not answer:
        return None, "invalid_option"
    hits = [i for i, option in enumerate(options, start=1) if answer in _option_variants(task, str(option))]
    if len(hits) == 1:
        return hits[0], ""
    return None, "ambiguous_option" if hits else "invalid_option"


def _option_by_text(task: str, text: str, options: list[str]) -> int | None:
    """The one option whose text (or a variant, :func:`_option_variants`) ``text`` is, else ``None``."""
    answer = _map_words(task, normalize_orthography(text)).replace(" ", "")
    hits = [i for i, option in enumerate(options, start=1) if answer and answer in _option_variants(task, str(option))]
    return hits[0] if len(hits) == 1 else None


_OPTION_NUMBER = re.compile(r"(?<![\d.])(\d{1,6})(?!\.?\d)")


def concluded_option_number(text: str, n_options: int) -> int | None:
    """The option number a concluding statement of ``text`` names (``"... بنابراین گزینه ۲ درست است"``, ``"so
    option 3 is correct"``), by :func:`audio_bench_core.answers.concluded_option` over the option numbers 1..n that
    stand alone in a clause (after :func:`parsa.normalize.normalize_orthography`: any digit script), else ``None``.
    Options are referred to by number only (the prompts number them)."""
    def references(clause: str) -> list[str]:
        return [found for found in _OPTION_NUMBER.findall(clause) if 1 <= int(found) <= n_options]

    found = concluded_option(normalize_orthography(text), references)
    return int(found) if found else None


# ------------------------------------------------------------------------------------------- NER
_TYPE_KEYS = ("type", "label", "entity_type", "category", "slot")
_SPAN_KEYS = ("span", "text", "value", "entity", "word", "mention")


def _entry_field(entry: dict, keys: tuple[str, ...]) -> str:
    for key in keys:
        found = _find_key(entry, key)
        if found is not None and isinstance(entry[found], (str, int, float)) and not isinstance(entry[found], bool):
            return str(entry[found]).strip()
    return ""


def parse_entities(value: object) -> tuple[list[dict] | None, int]:
    """``(entities, skipped)``: entity answers as ``[{"type": str, "span": str}, ...]``, or ``(None, 0)`` when the
    value is not a list or mapping. ``skipped`` counts entries without a type or span."""
    pairs: list[tuple[object, object]] = []
    if isinstance(value, dict):
        for etype, spans in value.items():
            pairs.extend((etype, span) for span in (spans if isinstance(spans, list) else [spans]))
    elif isinstance(value, list):
        for entry in value:
            if isinstance(entry, dict):
                pairs.append((_entry_field(entry, _TYPE_KEYS), _entry_field(entry, _SPAN_KEYS)))
            elif isinstance(entry, (list, tuple)) and len(entry) == 2:
                pairs.append((entry[0], entry[1]))
            else:
                pairs.append(("", ""))
    else:
        return None, 0
    entities, skipped = [], 0
    for etype, span in pairs:
        etype_text = str(etype).strip() if isinstance(etype, (str, int, float)) else ""
        span_text = str(span).strip() if isinstance(span, (str, int, float)) else ""
        if etype_text and span_text:
            entities.append({"type": etype_text, "span": span_text})
        else:
            skipped += 1
    return entities, skipped


# ------------------------------------------------------------------------------------------- per task
_QUESTION_VALUE = re.compile(r"[?？؟]\W*$")
#: Characters of a value's end read for a question mark, and the longest value read as a list of option numbers
#: (both bound regular expressions that could otherwise backtrack over a hostile value).
_TAIL = 64
#: Words and marks joining several answers in one value ("anger or sadness", "1 یا 2", "1/2", "1، 2").
_SEVERAL = re.compile(r"\s+(?:or|and|یا|و)\s+|\s*[/|,،؛;]\s*", re.IGNORECASE)
_NUMBERS_ONLY = re.compile(r"^\W*\d+(?:(?:\s+(?:or|and|یا|و)\s+|\s*[/|,،؛;]\s*|\s+)\d+)+\W*$", re.IGNORECASE)


def _not_scored(response: str, reason: str, json_fallback: bool, raw_value: object = None, **fields) -> ParsedAnswer:
    if looks_like_refusal(response):
        return ParsedAnswer("refused", None, "refusal_phrase", json_fallback, raw_value, **fields)
    return ParsedAnswer("excluded", None, reason, json_fallback, raw_value, **fields)


def parse_response(task: str, doc: dict, response: str | None) -> ParsedAnswer:
    """Read and validate the answer of one response for ``task`` (rules in the module docstring).

    Args:
        task: short task name.
        doc: the canonical document (``options`` is read for multiple choice).
        response: the model output with its reasoning removed (``None`` counts as empty).

    Returns:
        A :class:`ParsedAnswer` with ``status`` ``scored``, ``excluded`` or ``refused``.

    Raises:
        KeyError: unknown task.
    """
    spec = get_task(task)
    response = response or ""
    if not response.strip():
        if spec.kind == "asr" or (spec.kind == "translation" and spec.target_language == "fa"):
            return ParsedAnswer("refused", None, "no_persian_script")
        return ParsedAnswer("excluded", None, "empty")
    text = strip_wrappers(response)
    found = read_json_answers(text)
    if not found:
        if _names_answer_key(text, spec.answer_key):  # JSON that even repair cannot read: never score the wrapper
            return _not_scored(response, "invalid_json", False, text[:200])
        return _validate(task, spec, doc, response, bare_answer(text), fallback=True)
    answers = _answer_values(found, spec.answer_key)
    if not answers:
        return _not_scored(response, "missing_key", False, json_repaired=found[0].repaired)
    readings = [(item, _validate(task, spec, doc, response, value, fallback=False, repaired=item.repaired)) for item, value in answers]
    return final_answer(text, readings)


def _identity(parsed: ParsedAnswer) -> str:
    """What two readings must share to be the same answer: the validated value, or the invalid raw value."""
    value = parsed.value if parsed.status == "scored" else [parsed.status, parsed.reason, parsed.raw_value]
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def final_answer(text: str, readings: list[tuple[FoundObject, ParsedAnswer]]) -> ParsedAnswer:
    """The answer of a response that holds one or more answers (``readings``: each answer's object and its
    validated reading, in order of appearance in ``text``).

    One answer, or several that read the same: the last. Several that differ: the last, if :data:`RETRACTION`
    occurs in the text between the last differing answer's object and the final one's (``{"answer": 1} Wait,
    that is wrong. {"answer": 2}`` -> 2); otherwise excluded as ``ambiguous_answer`` with every raw value in
    ``raw_value``. Linear in the text.
    """
    final_object, final = readings[-1]
    differing = [(item, parsed) for item, parsed in readings[:-1] if _identity(parsed) != _identity(final)]
    if not differing:
        return final
    last_object = differing[-1][0]
    repaired = any(parsed.json_repaired for _, parsed in readings)
    if last_object.end <= final_object.start and RETRACTION.search(text, last_object.end, final_object.start):
        return ParsedAnswer(final.status, final.value, final.reason, final.json_fallback, final.raw_value, final.skipped_entities, repaired, final.out_of_set, final.reading)
    return ParsedAnswer("excluded", None, "ambiguous_answer", False, [parsed.raw_value for _, parsed in readings], json_repaired=repaired)


def _validate(task: str, spec, doc: dict, response: str, value: object, *, fallback: bool, repaired: bool = False) -> ParsedAnswer:
    """One answer value validated for the task's kind (module docstring, step 3)."""
    if spec.kind in ("asr", "translation"):
        return _parse_text_answer(spec, response, value, fallback, repaired)
    if isinstance(value, list) and spec.kind in ("classification", "multiple_choice"):
        if len(value) == 1:
            value = value[0]  # {"emotion": ["anger"]}
        elif len(value) > 1:
            return _several_in_list(task, spec, doc, response, value, fallback, repaired)
    if spec.kind in ("classification", "multiple_choice") and isinstance(value, str) and _QUESTION_VALUE.search(value[-_TAIL:]):
        return _not_scored(response, "question", fallback, value, json_repaired=repaired)  # "anger?" asks, it does not answer
    if spec.kind == "classification":
        label, how = label_reading(task, value)
        if label:
            return ParsedAnswer("scored", label, "", fallback, value, json_repaired=repaired, reading=how)
        if how == "conflict" or _names_several(task, spec, doc, value):
            return _not_scored(response, "ambiguous_answer", fallback, value, json_repaired=repaired)
        out_of_set = _out_of_set(value) if not fallback else None
        return _not_scored(response, "no_json" if fallback else "invalid_label", fallback, value, json_repaired=repaired, out_of_set=out_of_set)
    if spec.kind == "multiple_choice":
        options = list(doc.get("options") or [])
        if isinstance(value, str) and len(value) <= _TAIL and _NUMBERS_ONLY.match(normalize_orthography(value)) and _names_several(task, spec, doc, value):
            return _not_scored(response, "ambiguous_answer", fallback, value, json_repaired=repaired)  # "1، 2", "1 or 2"
        number, reason, how = option_reading(task, value, options)
        if number is None and reason == "invalid_option" and isinstance(value, str):
            number, how = concluded_option_number(value, len(options)), "conclusion"  # "... گزینه ۲ درست است"
        if number:
            return ParsedAnswer("scored", number, "", fallback, value, json_repaired=repaired, reading=how)
        if _names_several(task, spec, doc, value):
            return _not_scored(response, "ambiguous_answer", fallback, value, json_repaired=repaired)
        out_of_set = _out_of_set(value) if not fallback and reason == "invalid_option" else None
        return _not_scored(response, "no_json" if fallback else reason, fallback, value, json_repaired=repaired, out_of_set=out_of_set)
    entities, skipped = parse_entities(value) if not fallback else (None, 0)
    if entities is None:
        return _not_scored(response, "no_json" if fallback else "invalid_entities", fallback, value, json_repaired=repaired)
    return ParsedAnswer("scored", entities, "", False, value, skipped_entities=skipped, json_repaired=repaired)


def _several_in_list(task: str, spec, doc: dict, response: str, values: list, fallback: bool, repaired: bool) -> ParsedAnswer:
    """A list of several values for a one-answer task: their answer when all read the same, else ambiguous."""
    readings = {_identity(_validate(task, spec, doc, response, v, fallback=fallback, repaired=repaired)): v for v in values[:50]}
    if len(readings) == 1 and len(values) <= 50:
        return _validate(task, spec, doc, response, values[0], fallback=fallback, repaired=repaired)
    return _not_scored(response, "ambiguous_answer", fallback, values, json_repaired=repaired)


def _names_several(task: str, spec, doc: dict, value: object) -> bool:
    """True when a value that is no one label/option joins two or more different valid ones (``"anger or
    sadness"``, ``"1 یا 2"``, ``"option 1 / option 3"``); parts are split at :data:`_SEVERAL` (at most 20 read)."""
    if not isinstance(value, str):
        return False
    parts = [part for part in _SEVERAL.split(normalize_orthography(value)) if part and part.strip()][:20]
    if len(parts) < 2:
        return False
    if spec.kind == "classification":
        named = {match_label(task, part) for part in parts}
    else:
        options = list(doc.get("options") or [])
        named = {match_option(task, part, options)[0] for part in parts}
    return len(named - {None}) >= 2


def _out_of_set(value: object) -> str | None:
    """The class an out-of-set value would be (:func:`label_key` of a string or number), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return label_key(str(value)) or None


def _parse_text_answer(spec, response: str, value: object, fallback: bool, repaired: bool = False) -> ParsedAnswer:
    """ASR and translation: the answer string (a number as its digits). A field holding no text (``null``, a list)
    is an empty answer, never the raw response."""
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)
    else:
        text = ""
    if spec.target_language == "fa" and not has_persian_script(text):
        return ParsedAnswer("refused", None, "no_persian_script", fallback, text, json_repaired=repaired)
    if not text:
        return ParsedAnswer("excluded", None, "empty", fallback, text, json_repaired=repaired)
    if fallback and looks_like_refusal(text):
        return ParsedAnswer("refused", None, "refusal_phrase", fallback, text)
    return ParsedAnswer("scored", text, "", fallback, text, json_repaired=repaired)
