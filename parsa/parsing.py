"""Reading answers out of real model output (paper §4.1-4.2: JSON answers; no valid label -> excluded).

Step 1, :func:`extract_json_object`: find the JSON object in the response. Accepted: a bare object; an object
inside Markdown code fences; an object with prose before or after; ``<think>...</think>`` blocks (removed first);
JSON with single-quoted strings, trailing commas, or Python literals (``True``/``False``/``None``). When several
objects are present, the first one that holds the answer key wins, else the first one that parses.

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
- multiple choice: an integer; a string of one number in any digit script (``"3"``, ``"۳"``, ``"٣"``,
  ``"Option 3"``, ``"3)"``, ``"3. <option text>"``, ``"گزینهٔ 3"``/``"گزینه‌ی 3"``/``"گزینه 3"``, read after
  :func:`parsa.normalize.normalize_orthography`); or the text of exactly one option (normalised comparison;
  an option ``"A (B)"`` also matches ``"A"`` or ``"B"``, an option ``"A/B/C"`` matches each part; for vazn and
  sabk, transliterated metre/form words are mapped to Persian first). Out of range or ambiguous -> excluded.
  Option letters (``"B"``) are not accepted: the prompts number the options.
- NER: a list of ``{"type", "span"}`` objects (also ``label``/``entity_type`` for the type and ``text``/
  ``value``/``entity`` for the span, or ``[type, span]`` pairs, or a ``{type: span | [spans]}`` mapping). Entries
  without a type or span are skipped and counted. An empty list is a valid answer (no entities).
- ASR and translation: a string. With no JSON, the raw response is the hypothesis (``json_fallback``).

Refusals: ASR and En->Fa translation: a hypothesis with no Persian script is a refusal (paper §6.1 and Table 3's
definition). Other tasks: a response with no valid answer that matches :data:`REFUSAL_PATTERN` is ``refused``,
any other invalid response is ``excluded``. Both are left out of the scored set (§4.2); the counts are reported.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from dataclasses import dataclass

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

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*\s*")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@dataclass
class ParsedAnswer:
    """What could be read from one response.

    Attributes:
        status: ``"scored"``, ``"excluded"`` or ``"refused"``.
        value: the validated answer (canonical label, option number, hypothesis text, entity list) or ``None``.
        reason: why the item is not scored (``"no_json"``, ``"missing_key"``, ``"invalid_label"``,
            ``"invalid_option"``, ``"ambiguous_option"``, ``"empty"``, ``"no_persian_script"``, ``"refusal_phrase"``,
            ``"invalid_entities"``), ``""`` when scored.
        json_fallback: no JSON object was found and the bare response was used.
        raw_value: the value as the model wrote it (before validation), for the logs.
        skipped_entities: NER entries without a usable type or span.
    """

    status: str
    value: object = None
    reason: str = ""
    json_fallback: bool = False
    raw_value: object = None
    skipped_entities: int = 0


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
def _object_candidates(text: str) -> list[str]:
    """Balanced ``{...}`` substrings, outermost first, in order of appearance (quotes respected)."""
    candidates, depth, start, quote, escaped = [], 0, -1, "", False
    for index, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth > 0:
            quote = ch if ch == '"' or _opens_single_quoted(text, index) else ""
        elif ch == "{":
            if depth == 0:
                start = index
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                candidates.append(text[start:index + 1])
    return candidates


def _opens_single_quoted(text: str, index: int) -> bool:
    """A ``'`` opens a string only right after ``{ [ , :`` (so ``I'm`` inside a double-quoted value is harmless).
    Looks back over whitespace only (copying the text before every quote was quadratic in the answer's length)."""
    index -= 1
    while index >= 0 and text[index].isspace():
        index -= 1
    return index >= 0 and text[index] in "{[,:"


def _load_object(candidate: str) -> dict | None:
    attempts = [candidate, _TRAILING_COMMA.sub(r"\1", candidate)]
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    try:  # single quotes, Python literals
        value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", candidate).replace("true", "True").replace("false", "False").replace("null", "None"))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # TypeError: an unhashable key, {{}: 1}
        return None
    return value if isinstance(value, dict) else None


def strip_wrappers(response: str | None) -> str:
    """The response without ``<think>`` blocks and Markdown code-fence markers, stripped."""
    text = response or ""
    last = text.lower().rfind("</think>")  # ASCII tags: lower() keeps their positions in the ASCII part
    if last >= 0:  # an opening tag after the last closing one can never match: _THINK would scan to the end from each
        cut = _ascii_position(text, last + len("</think>"))
        text = _THINK.sub("", text[:cut]) + text[cut:]
    return _FENCE.sub("", text).replace("```", "").strip()


def _ascii_position(text: str, lowered_index: int) -> int:
    """The index in ``text`` of position ``lowered_index`` of ``text.lower()`` (they differ only after a character
    whose lower case is longer, such as ``İ``)."""
    if len(text.lower()) == len(text):
        return lowered_index
    position = consumed = 0
    while consumed < lowered_index:
        consumed += len(text[position].lower())
        position += 1
    return position


def extract_json_object(response: str | None, answer_key: str | None = None) -> dict | None:
    """The JSON object in a model response, or ``None`` when there is none.

    Args:
        response: raw model output.
        answer_key: when given, the first object holding this key (any casing) is preferred.

    Returns:
        The parsed object (a dict). See the module docstring for what is tolerated.
    """
    text = strip_wrappers(response)
    if "{" not in text:  # no candidate can start
        return None
    whole = _whole_object(text)
    if whole is not None:
        return whole
    objects = [obj for obj in (_load_object(c) for c in _object_candidates(text)) if obj is not None]
    if not objects:
        return None
    if answer_key:
        for obj in objects:
            if _find_key(obj, answer_key) is not None:
                return obj
    return objects[0]


def _whole_object(text: str) -> dict | None:
    """``text`` parsed by ``json.loads`` when all of it is one JSON object (the usual answer), else ``None``.

    Then :func:`_object_candidates` would find exactly one candidate, ``text`` itself (it reads double-quoted
    strings and their backslash escapes as JSON does, a ``'`` cannot stand outside a JSON string, and the braces
    outside strings balance only at the last character), and :func:`_load_object` would return the same
    ``json.loads`` result: the scan is skipped, the answer is the same (tested against the full path)."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _find_key(obj: dict, key: str) -> str | None:
    if key in obj:
        return key
    folded = {str(k).strip().casefold(): k for k in obj}
    return folded.get(key.casefold())


def answer_value(obj: dict, answer_key: str) -> tuple[bool, object]:
    """``(found, value)``: the answer field of a parsed object: ``answer_key`` in any casing, else the first of
    :data:`FALLBACK_KEYS`; reasoning fields are never used."""
    for key in (answer_key, *FALLBACK_KEYS):
        found = _find_key(obj, key)
        if found is not None and found.casefold() not in REASONING_KEYS:
            return True, obj[found]
    return False, None


def bare_answer(response: str | None) -> str:
    """A response with no JSON read as a bare answer: wrappers, surrounding quotes and a final full stop removed."""
    text = strip_wrappers(response).strip().strip("\"'`«»“”*").strip()
    return text[:-1].strip() if text.endswith((".", "۔")) else text


# ------------------------------------------------------------------------------------------- labels
def _alias_index(task: str) -> dict[str, str]:
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
    if isinstance(value, bool):
        value = "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        return None
    return _alias_index(task).get(label_key(str(value)))


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
    n = len(options)
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        return None, "invalid_option"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return (value, "") if 1 <= value <= n else (None, "invalid_option")
    text = normalize_orthography(str(value)).strip()
    # each whitespace run kept as its first character: _NUMBER_ANSWER reads \s* only, and its adjacent \W* and \s*
    # backtracked over a long run (an answer of "!", 1,000 spaces, "!" did not finish in two minutes)
    text = _WHITESPACE_RUN.sub(lambda run: run.group()[0], text)
    number = _NUMBER_ANSWER.match(text)
    if number and len(number.group(1).lstrip("0")) <= 6 and 1 <= int(number.group(1)) <= n:  # a 5,000-digit "number" is no option
        return int(number.group(1)), ""
    answer = _map_words(task, text).replace(" ", "")
    if not answer:
        return None, "invalid_option"
    hits = [i for i, option in enumerate(options, start=1) if answer in _option_variants(task, str(option))]
    if len(hits) == 1:
        return hits[0], ""
    return None, "ambiguous_option" if hits else "invalid_option"


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
def _read_field(response: str, answer_key: str) -> tuple[bool, object, bool]:
    """``(found, value, json_fallback)``."""
    obj = extract_json_object(response, answer_key)
    if obj is None:
        return True, bare_answer(response), True
    found, value = answer_value(obj, answer_key)
    return found, value, False


def _not_scored(response: str, reason: str, json_fallback: bool, raw_value: object = None) -> ParsedAnswer:
    if looks_like_refusal(response):
        return ParsedAnswer("refused", None, "refusal_phrase", json_fallback, raw_value)
    return ParsedAnswer("excluded", None, reason, json_fallback, raw_value)


def parse_response(task: str, doc: dict, response: str | None) -> ParsedAnswer:
    """Read and validate the answer of one response for ``task`` (rules in the module docstring).

    Args:
        task: short task name.
        doc: the canonical document (``options`` is read for multiple choice).
        response: the raw model output (``None`` counts as empty).

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
    found, value, fallback = _read_field(response, spec.answer_key)
    if spec.kind in ("classification", "multiple_choice") and isinstance(value, list) and len(value) == 1:
        value = value[0]  # {"emotion": ["anger"]}
    if spec.kind in ("asr", "translation"):
        return _parse_text_answer(spec, response, found, value, fallback)
    if not found:
        return _not_scored(response, "missing_key", fallback)
    if spec.kind == "classification":
        label = match_label(task, value)
        return ParsedAnswer("scored", label, "", fallback, value) if label else _not_scored(response, "no_json" if fallback else "invalid_label", fallback, value)
    if spec.kind == "multiple_choice":
        number, reason = match_option(task, value, list(doc.get("options") or []))
        return ParsedAnswer("scored", number, "", fallback, value) if number else _not_scored(response, "no_json" if fallback else reason, fallback, value)
    entities, skipped = parse_entities(value) if not fallback else (None, 0)
    if entities is None:
        return _not_scored(response, "no_json" if fallback else "invalid_entities", fallback, value)
    return ParsedAnswer("scored", entities, "", False, value, skipped_entities=skipped)


def _parse_text_answer(spec, response: str, found: bool, value: object, fallback: bool) -> ParsedAnswer:
    """ASR and translation: the answer string, or the raw response when the JSON lacks the field."""
    if not found or not isinstance(value, str):
        value, fallback = (value if isinstance(value, (int, float)) and not isinstance(value, bool) else bare_answer(response)), True
    text = str(value).strip()
    if spec.target_language == "fa" and not has_persian_script(text):
        return ParsedAnswer("refused", None, "no_persian_script", fallback, text)
    if not text:
        return ParsedAnswer("excluded", None, "empty", fallback, text)
    if fallback and looks_like_refusal(text):
        return ParsedAnswer("refused", None, "refusal_phrase", fallback, text)
    return ParsedAnswer("scored", text, "", fallback, text)
