"""What a model's response is before it is scored, shared by every benchmark (MCGA, PARSA-Bench, MMAC).

One call per document, :func:`check_response`, in a task's ``process_results``: it returns the text to score
(:attr:`CheckedResponse.answer`) and one diagnostics record per document that the aggregations of this module
(``agg_<metric>``, listed in the task YAML, see :data:`DIAGNOSTIC_METRICS`) turn into counts in the results,
warnings in the log, and :class:`FailedRunError` for a failed run. The paper-rule figures are not changed by the
diagnostics, except that a failed generation is scored as the empty answer (it is never parsed as an answer).

Per task, counts of documents (all lower-is-better, in the results JSON as ``<metric>,none``):

- ``failed_generations``: the response is a failure placeholder, not an answer: lmms-eval's API models
  (``openai``, ``gemini``, ...) return ``"[LMMS_EVAL_REQUEST_FAILED after N retries] <error>"`` when a request
  fails; a model wrapper may return ``GENERATION_FAILED_PREFIX + " <error>"`` when its generation raised. It is scored
  as the empty answer ``""`` (MCGA: an empty hypothesis/answer; PARSA: what the paper's rule does with an empty
  response). lmms-eval's own local wrappers return ``""`` when generation raises; that is an empty response. A
  response that is not a string is read as its text (a list of one string, text parts, a chat message, a number:
  :func:`audio_bench_core.answers.response_text`), never as its Python ``repr``; one that holds no text (a dict
  without a text key, several candidate strings) is a failed generation (``"response is not text: ..."``).
- ``empty_responses``: the response is empty or whitespace (failed generations not included).
- ``echoed_prompts``: the response reproduces a prompt text (:func:`echoes_prompt`): audio never reached the model.
- ``placeholder_copies``: the response holds an output-format placeholder of the prompt, e.g.
  ``your English translation here`` (:func:`copied_placeholder`).
- ``identical_answers``: the documents that got one same answer, when that answer covers so many distinct inputs
  that the model cannot have used them (audio dropped by the wrapper; rule in :func:`identical_answer_count`),
  else 0.
- ``invalid_text_replaced``: code points that cannot be written as UTF-8 (lone surrogates) replaced by U+FFFD
  before scoring and logging (:func:`valid_text`).
- ``unfinished_reasoning``: responses whose reasoning block never closed (generation stopped inside the draft,
  usually at the token limit): the model gave no final answer. The text scored is what lies outside the
  reasoning (usually ``""``); the draft is never mined for an answer. PARSA excludes such items (reason
  ``unfinished_reasoning``); MCGA scores the text left (both official and strict rules); MMAC judges the
  caption left, an empty one as an omission.
- ``scoring_errors``: documents whose scoring raised (an answer built so that a parser or metric fails on it, e.g.
  JSON nested a thousand levels deep): the document is excluded from the task's scored metrics and the reason
  (exception type and message) is kept in its samples record (:func:`scoring_guard`); the other documents are scored.
- ``long_answers``: answers longer than :data:`SAMPLE_TEXT_MAX_CHARS` (10,000) characters. They are scored in full;
  in the samples file every text longer than that is cut to its first 10,000 characters followed by a note giving
  its full length (:func:`bounded_for_samples`), so one runaway answer cannot write hundreds of megabytes.

**Reasoning** is removed from every response before anything else reads it, by
:func:`audio_bench_core.reasoning.split_reasoning` (``<think>``, ``<thinking>``, ``<reasoning>``, ``◁think▷`` and
the other spellings listed there; a reply whose chat template pre-filled the opening tag so that only
``</think>`` appears; a block that never closes). Idempotent with lmms-eval's own ``reasoning_tags`` /
``auto_strip_thinking``: text with no tags left is returned unchanged. lmms-eval 0.7's CLI removes closed (and
pre-filled) ``<think>``/``<analysis>`` blocks by default (``--reasoning_tags``) before the hooks see a response; it
leaves an unclosed block, which is then read here as unfinished. The number of reasoning characters removed here is
kept per document in the samples (``reasoning_chars`` of the diagnostics record); the raw response, with everything
lmms-eval removed, is the samples' ``resps``.

A run is a **failed run** when more than :data:`FAILED_RUN_SHARE` (50 %) of a task's responses are failed
generations, empty, or unfinished reasoning (no final answer): the aggregation raises :class:`FailedRunError` naming the task, the share and the first
error, so the run stops with a non-zero exit (under ``--verbosity DEBUG``, lmms-eval re-raises it). Wrapped in
:func:`audio_bench_core.numbers.numbers_only` (the aggregations of a task folder run by plain lmms-eval), a failed run
is reported by these counts and a warning instead, and nothing raises.

Adopting this in a benchmark: in ``process_results`` call :func:`check_response`, score ``checked.answer`` and
return ``{**checked.metrics(), ...}`` (diagnostics first, so a failed run stops before any judge is called); list
:func:`yaml_metric_list` in every task YAML.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from loguru import logger

from audio_bench_core.answers import NotText, response_text
from audio_bench_core.reasoning import split_reasoning
from audio_bench_core.text import nfkc  # NFKC, computed faster (shared with the MCGA normaliser)

#: Prefix of the placeholder our models return for a document whose generation raised.
GENERATION_FAILED_PREFIX = "[LMMS_EVAL_AUDIO_PLUGIN_GENERATION_FAILED]"
#: Prefix of lmms-eval's request-failure placeholder (lmms_eval/models/{chat,simple}/{openai,gemini}.py,
#: chat/async_openai.py, 0.7.x: ``f"[LMMS_EVAL_REQUEST_FAILED after {max_retries} retries] {error_preview}"``).
LMMS_EVAL_REQUEST_FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"

DIAGNOSTIC_METRICS = (
    "failed_generations",
    "empty_responses",
    "unfinished_reasoning",
    "echoed_prompts",
    "placeholder_copies",
    "identical_answers",
    "invalid_text_replaced",
    "scoring_errors",
    "long_answers",
)
#: Longest text written as it is to the samples file (characters); longer texts (answers, their parsed copies) are cut
#: there to this many characters plus a note of their full length. Answers longer than this count as ``long_answers``.
SAMPLE_TEXT_MAX_CHARS = 10_000
#: Deepest nesting of lists/objects written to the samples file; anything deeper (e.g. an answer parsed into JSON
#: nested a thousand levels) is written as a note instead.
SAMPLE_MAX_DEPTH = 64

#: A task whose failed generations plus empty responses exceed this share of its documents is a failed run.
FAILED_RUN_SHARE = 0.5
#: Echo: share of the response's character 3-grams found in the prompt text, and share of the prompt text's 3-grams
#: found in the response (both after :func:`normalised_text`); prompt texts shorter than ECHO_MIN_SOURCE_CHARS
#: normalised characters count only when the response equals them.
ECHO_RESPONSE_FROM_PROMPT, ECHO_PROMPT_COVERED, ECHO_MIN_SOURCE_CHARS = 0.8, 0.6, 25
#: Identical answers (:func:`identical_answer_count`): at least IDENTICAL_MIN_INPUTS distinct inputs answered, one
#: answer on more than IDENTICAL_SHARE_OPEN of the answered documents (IDENTICAL_SHARE_CLOSED where answers come from
#: a fixed label or option list), and on more than the most frequent gold answer's share plus IDENTICAL_GOLD_MARGIN.
IDENTICAL_MIN_INPUTS, IDENTICAL_SHARE_OPEN, IDENTICAL_SHARE_CLOSED, IDENTICAL_GOLD_MARGIN = 5, 0.5, 0.9, 0.1

_PREVIEW_CHARS = 80
_NGRAM = 3


class FailedRunError(RuntimeError):
    """Most responses of a task are failed generations or empty: the run produced no answers to score."""


# ------------------------------------------------------------------------------------------- one response
def generation_failure(response: str) -> str | None:
    """The error carried by a failure placeholder, or ``None`` for a real answer.

    ``"[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."`` -> ``"request failed after 5 retries:
    Connection error."``; ``GENERATION_FAILED_PREFIX + " CUDA out of memory"`` -> ``"generation raised: CUDA out of
    memory"``. An empty response is not a failure here (a model may answer nothing); it is counted separately.
    """
    text = (response or "").lstrip()
    if text.startswith(GENERATION_FAILED_PREFIX):
        return f"generation raised: {text[len(GENERATION_FAILED_PREFIX):].strip()}"
    if text.startswith(LMMS_EVAL_REQUEST_FAILED_PREFIX):
        detail, _, error = text[len(LMMS_EVAL_REQUEST_FAILED_PREFIX):].partition("]")
        return f"request failed{detail.rstrip()}: {error.strip()}"
    return None


def valid_text(text: str) -> tuple[str, int]:
    """``(text, n)``: ``text`` with every code point that cannot be encoded as UTF-8 replaced by U+FFFD, and ``n``.

    Only surrogates (U+D800-U+DFFF) are such code points in a Python ``str``. A high+low surrogate pair (text
    decoded as UTF-16 code units) is joined into its character first, so only lone surrogates are replaced.
    """
    try:
        text.encode("utf-8")
        return text, 0
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return joined, joined.count("\ufffd") - text.count("\ufffd")


_NOT_ALPHANUMERIC = re.compile(r"[\W_]+")


def normalised_text(text: str) -> str:
    """NFKC, casefolded, every run of non-alphanumeric characters (spaces, punctuation, symbols, marks, ZWNJ) one
    space, stripped: the form compared by the echo and identical-answer checks (``'{"answer": 3}'`` -> ``answer 3``)."""
    folded = nfkc(text).casefold()
    return _NOT_ALPHANUMERIC.sub(" ", folded).strip()


def _ngrams(text: str) -> set[str]:
    return {text[i : i + _NGRAM] for i in range(len(text) - _NGRAM + 1)}


def echo_overlap(response: str, prompt_text: str) -> tuple[float, float]:
    """``(from_prompt, covered)`` after :func:`normalised_text`: the share of the response's distinct character
    3-grams that occur in ``prompt_text``, and the share of the prompt text's distinct 3-grams that occur in the
    response (0.0 for a text with no 3-gram)."""
    return _overlap(_ngrams(normalised_text(response)), _ngrams(normalised_text(prompt_text)))


def _overlap(answer: set[str], source: set[str]) -> tuple[float, float]:
    shared = len(answer & source)
    return (shared / len(answer) if answer else 0.0), (shared / len(source) if source else 0.0)


@functools.lru_cache(maxsize=4096)
def _prompt_sources(prompt_texts: tuple[str, ...]) -> tuple[frozenset[str], tuple[frozenset[str], ...], frozenset[str]]:
    """The sources :func:`echoes_prompt` compares a response with, for one tuple of prompt texts, memoised (a task
    sends the same system prompt and instruction with every document, so they are prepared once per run, not once
    per document). The sources are each non-empty prompt text and, when there are several, all of them joined;
    returns ``(normalised sources, 3-gram sets of the sources of at least ECHO_MIN_SOURCE_CHARS normalised
    characters, the characters other than the space of those long sources)``."""
    sources = [t for t in prompt_texts if t] + ([" ".join(prompt_texts)] if len(prompt_texts) > 1 else [])
    prepared = [_prompt_text_ngrams(source) for source in sources]
    long_sources = [(normalised, ngrams) for normalised, ngrams in prepared if ngrams is not None]
    characters = frozenset("".join(normalised for normalised, _ in long_sources)) - {" "}
    return frozenset(normalised for normalised, _ in prepared), tuple(ngrams for _, ngrams in long_sources), characters


@functools.lru_cache(maxsize=4096)
def _prompt_text_ngrams(text: str) -> tuple[str, frozenset[str] | None]:
    """One source of :func:`_prompt_sources`, memoised per text (a system prompt is shared by documents whose
    questions differ): ``(normalised text, its 3-grams, or None when shorter than ECHO_MIN_SOURCE_CHARS)``."""
    normalised = normalised_text(text)
    return normalised, (frozenset(_ngrams(normalised)) if len(normalised) >= ECHO_MIN_SOURCE_CHARS else None)


def echoes_prompt(response: str, prompt_texts: Sequence[str]) -> bool:
    """True if ``response`` reproduces one of ``prompt_texts`` (or all of them joined) instead of answering.

    After :func:`normalised_text`, the response echoes a prompt text when it equals it, or, for prompt texts of at
    least :data:`ECHO_MIN_SOURCE_CHARS` (25) characters, when :func:`echo_overlap` is at least (0.8, 0.6): 80 % of
    the response is prompt text and it holds 60 % of the prompt text. So small edits, a prefix such as "Sure:", or
    an echo repeated several times still count; an answer quoting one option, a label, or a span of a transcript
    given in the prompt covers too little of the prompt text to count. Give as prompt texts what a correct answer
    never reproduces: system prompt, instruction, format sentence (:func:`sentences` of them, to find the echo of
    one sentence); a short instruction (a question) then counts only when echoed exactly, since answers restate
    questions ("这首诗的体裁是诗" for "这首诗的体裁是什么？").
    """
    return _echoes_normalised(normalised_text(response), prompt_texts)


def _echoes_normalised(answer: str, prompt_texts: Sequence[str]) -> bool:
    """:func:`echoes_prompt` of a response already passed through :func:`normalised_text`.

    The answer is an echo if it equals some source or overlaps some long source enough, so the sources are tried in
    any order: equality first, as one set look-up. Overlaps that cannot reach the thresholds are not computed (the
    result is the same): a source sharing no character other than the space with the answer shares no 3-gram
    (``from_prompt`` = 0; an answer in another script than the prompt, the usual case), since a normalised text has
    single spaces, so every 3-gram holds another character; and the shared 3-grams are at most as many as either
    side's, so ``from_prompt <= len(source) / len(answer)`` and ``covered <= len(answer) / len(source)`` (the same
    float divisions, which keep that order): when either bound is under its threshold the source is skipped."""
    if len(answer) < 2:
        return False
    equal_sources, long_sources, long_characters = _prompt_sources(tuple(prompt_texts))
    if answer in equal_sources:
        return True
    if not long_sources or long_characters.isdisjoint(set(answer)):
        return False
    answer_ngrams = _ngrams(answer)
    for source_ngrams in long_sources:
        if answer_ngrams and (len(source_ngrams) / len(answer_ngrams) < ECHO_RESPONSE_FROM_PROMPT or len(answer_ngrams) / len(source_ngrams) < ECHO_PROMPT_COVERED):
            continue
        from_prompt, covered = _overlap(answer_ngrams, source_ngrams)
        if from_prompt >= ECHO_RESPONSE_FROM_PROMPT and covered >= ECHO_PROMPT_COVERED:
            return True
    return False


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")


def sentences(text: str) -> list[str]:
    """The sentences and lines of a fixed instruction text (split after ``. ! ? ;`` and their CJK forms, and at line
    breaks), so that an echo of one sentence of a long instruction is found by :func:`echoes_prompt`. Split only
    instruction text, never content (options, passages): an answer may quote an option."""
    return list(_sentences(text))


@functools.lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[str, ...]:
    """:func:`sentences`, memoised: hooks split the same fixed instruction for every document."""
    return tuple(piece.strip() for piece in _SENTENCE_END.split(text) if piece.strip())


def _placeholder_form(text: str) -> str:
    return " ".join(nfkc(text).casefold().split())


def copied_placeholder(response: str, placeholders: Sequence[str]) -> str | None:
    """The first of ``placeholders`` that ``response`` contains (NFKC, case and whitespace ignored), else ``None``.

    Placeholders are compared with their punctuation (``<option number>`` is one, "the option number is 3" does
    not contain it); get them from the prompt's format with :func:`format_placeholders`.
    """
    text = None
    for placeholder in placeholders:
        if placeholder.strip():
            if text is None:  # built only when there is a placeholder to look for
                text = _placeholder_form(response)
            if _placeholder_form(placeholder) in text:
                return placeholder
    return None


_JSON_STRING_VALUE = re.compile(r':\s*"((?:[^"\\]|\\.)+)"')
_ANGLE_PLACEHOLDER = re.compile(r"<[^<>{}\n]{2,60}>")


def format_placeholders(format_text: str) -> list[str]:
    """The placeholders of an output-format text such as ``{"translation": "your English translation here"}`` or
    ``{"answer": <option number>}``: every JSON string value and every ``<...>`` token, in order, without repeats.

    >>> format_placeholders('{"entities": [{"type": "entity type from the list", "span": "entity text in Persian"}]}')
    ['entity type from the list', 'entity text in Persian']
    """
    found = _JSON_STRING_VALUE.findall(format_text) + _ANGLE_PLACEHOLDER.findall(format_text)
    return list(dict.fromkeys(found))


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


@dataclass(frozen=True)
class CheckedResponse:
    """A response checked by :func:`check_response`.

    Attributes:
        answer: the text to score: ``""`` for a failed generation, else the response made valid UTF-8 with its
            reasoning removed (:func:`audio_bench_core.reasoning.split_reasoning`; ``""`` or the text outside the
            draft when the reasoning never closed, see ``record["unfinished_reasoning"]``).
        record: the per-document diagnostics record (JSON-serialisable; logged in the samples under each metric).
    """

    answer: str
    record: dict

    def metrics(self) -> dict[str, dict]:
        """``{metric: record}`` for every metric of :data:`DIAGNOSTIC_METRICS`, for ``process_results``."""
        return dict.fromkeys(DIAGNOSTIC_METRICS, self.record)


def check_response(
    response: str | None,
    *,
    task: str,
    doc_id: object,
    clip: str | None,
    gold: object,
    prompt_texts: Sequence[str] = (),
    placeholders: Sequence[str] = (),
    closed_answer_set: bool = False,
) -> CheckedResponse:
    """Check one response of one document (see the module docstring for what is counted).

    Args:
        response: the model output as lmms-eval passes it (``None`` counts as empty; a list, text parts, a chat
            message or a number is read as its text by :func:`audio_bench_core.answers.response_text`; a value
            holding no text is a failed generation, ``"response is not text: ..."``).
        task: the lmms-eval task name (``mcga_asr``, ``parsa_vazn_text``), named in warnings and errors.
        doc_id: the document's id, shown in warnings.
        clip: the audio the model was given (its path), ``None`` in text mode; with the prompt texts it tells
            distinct inputs apart for the identical-answer rule.
        gold: the document's gold answer (any value; compared after ``str`` and :func:`normalised_text`).
        prompt_texts: texts a correct answer never reproduces (system prompt, instruction, format sentence); see
            :func:`echoes_prompt`.
        placeholders: the output-format placeholders of the prompt (:func:`format_placeholders`).
        closed_answer_set: the task's answers come from a fixed label or option list (classification, multiple
            choice), where one answer for many documents is expected (see :func:`identical_answer_count`).
    """
    raw, not_text = _response_text(response)
    text, replaced = valid_text(raw)
    failure = not_text or generation_failure(text)
    split = split_reasoning(text if failure is None else "")
    answer = split.answer
    unfinished = split.unfinished
    empty = failure is None and not unfinished and not answer.strip()
    answered = failure is None and not empty and bool(answer.strip())
    normalised = normalised_text(answer) if answered else ""  # once for the echo check and the answer key
    record = {
        "task": task,
        "id": str(doc_id),
        "failure": failure,
        "empty": empty,
        "echo": answered and _echoes_normalised(normalised, prompt_texts),
        "placeholder": copied_placeholder(answer, placeholders) if answered else None,
        "invalid_text_replaced": replaced,
        "reasoning_chars": split.trace_chars,
        "unfinished_reasoning": unfinished,
        "answer_key": _key(normalised) if answered else None,
        "gold_key": _key(normalised_text(str(gold))),
        "input_key": _key("\x00".join([clip or "", *prompt_texts])),
        "closed_answer_set": closed_answer_set,
        "preview": text[:_PREVIEW_CHARS],
        "chars": len(text),
        "scoring_error": None,
    }
    return CheckedResponse(answer, record)


def _response_text(response: object) -> tuple[str, str | None]:
    """``(text, failure)``: the text of a response of any shape (:func:`audio_bench_core.answers.response_text`: a
    list of one string, text parts, a chat message, a number; ``None`` is ``""``), or ``("", reason)`` for one that
    holds no text, which is then a failed generation (never its Python ``repr`` scored as an answer)."""
    try:
        return response_text(response), None
    except NotText as error:
        return "", f"response is not text: {error}"


# ------------------------------------------------------------------------------------------- one document's scoring
def scoring_guard(task_name, excluded_metrics=None):
    """Decorator for a task's ``process_results(doc, results)``: no answer, however built, stops the scoring of others.

    When scoring one document raises (any ``Exception``: a ``RecursionError`` from an answer nested a thousand levels
    deep, a ``ValueError`` from a 5,000-digit option number ...), the document is excluded and counted instead: the
    result holds the :data:`DIAGNOSTIC_METRICS` records of the document (the response checked again, with
    ``scoring_error`` set to ``"<exception type>: <message>"``; ``scoring_errors`` counts it) plus whatever
    ``excluded_metrics(doc, reason)`` returns for the task's own metrics (a benchmark whose rule excludes items, such
    as PARSA, returns its excluded record; a metric it leaves out does not see the document). Without the guard
    lmms-eval retries ``process_results`` five times, 2 s apart, then ends the run with no results for any task.

    Args:
        task_name: ``doc -> (lmms-eval task name, document id)``, for the warning and the record.
        excluded_metrics: ``(doc, reason) -> {metric: value}`` for the task's metrics of an excluded document;
            default ``{}``.
    """

    def wrap(process_results):
        @functools.wraps(process_results)
        def guarded(doc, results):
            try:
                return process_results(doc, results)
            except Exception as error:  # noqa: BLE001 - one document's failure must not end the run; counted below
                reason = f"{type(error).__name__}: {' '.join(str(error).split())[:_REASON_CHARS]}"
                try:
                    task, doc_id = task_name(doc)
                except Exception:  # noqa: BLE001 - a document too broken to name is still counted
                    task, doc_id = "?", "?"
                logger.warning(f"{task}: scoring document {doc_id} raised {reason}; the document is excluded and counted (scoring_errors)")
                response = results[0] if results else ""
                record = _failed_scoring_record(response, task, doc_id, reason)
                extra = excluded_metrics(doc, reason) if excluded_metrics is not None else {}
                return {**dict.fromkeys(DIAGNOSTIC_METRICS, record), **extra}

        return guarded

    return wrap


_REASON_CHARS = 300


def _failed_scoring_record(response, task: str, doc_id: object, reason: str) -> dict:
    """The diagnostics record of a document whose scoring raised: the response's failure/empty state as
    :func:`check_response` reads it (cheap parts only), ``scoring_error`` = ``reason``; never an answer for the
    identical-answer rule."""
    raw, not_text = _response_text(response)
    text, replaced = valid_text(raw)
    failure = not_text or generation_failure(text)
    return {"task": task, "id": str(doc_id), "failure": failure, "empty": failure is None and not text.strip(), "echo": False, "placeholder": None,
            "invalid_text_replaced": replaced, "answer_key": None, "gold_key": "", "input_key": "", "closed_answer_set": False,
            "preview": text[:_PREVIEW_CHARS], "chars": len(text), "scoring_error": reason}  # fmt: skip


# ------------------------------------------------------------------------------------------- aggregations
def _task(records: list[dict]) -> str:
    return records[0]["task"] if records else "?"


def _share(count: int, records: list[dict]) -> str:
    return f"{count} of {len(records)} responses ({100 * count / len(records):.1f}%)"


def _first(records: list[dict], field: str) -> dict:
    return next(r for r in records if r[field])


def check_failed_run(records: list[dict]) -> None:
    """Raise :class:`FailedRunError` if more than :data:`FAILED_RUN_SHARE` of the documents are failed, empty, or
    unfinished reasoning (no final answer).

    The message names the task, the share and the first error (or says that the model returned empty text, or
    stopped inside its reasoning).
    """
    failed = sum(1 for r in records if r["failure"])
    empty = sum(1 for r in records if r["empty"])
    unfinished = sum(1 for r in records if r.get("unfinished_reasoning"))
    if not records or failed + empty + unfinished <= FAILED_RUN_SHARE * len(records):
        return
    first = next((r for r in records if r["failure"]), None)
    if first:
        cause = f"First error (document {first['id']}): {first['failure']}"
    elif unfinished >= empty:
        cause = (
            "Most responses stopped inside the model's reasoning before any final answer: raise the generation limit "
            "(max_new_tokens / max_tokens) or turn the model's thinking off."
        )
    else:
        cause = "No error was returned: the model gave empty text (lmms-eval's local wrappers return '' when generation raises; see the log above)."
    unfinished_part = f", unfinished reasoning ({unfinished})" if unfinished else ""
    raise FailedRunError(
        f"{_task(records)}: failed run: {_share(failed + empty + unfinished, records)} are failed generations ({failed}) or empty ({empty}){unfinished_part}, "
        f"more than {FAILED_RUN_SHARE:.0%}, so no score of this task means anything; fix the model or server and run again. {cause}"
    )


def agg_failed_generations(records: list[dict], check: bool = True) -> int:
    """Number of failed generations (failure placeholders), scored as empty answers; warns, and raises
    :class:`FailedRunError` for a failed run (:func:`check_failed_run`) unless ``check`` is false (the count alone, for
    a caller that reports a failed run by its counts: :func:`audio_bench_core.numbers.numbers_only`)."""
    if check:
        check_failed_run(records)
    count = sum(1 for r in records if r["failure"])
    if count:
        first = _first(records, "failure")
        logger.warning(f"{_task(records)}: {_share(count, records)} are failed generations, scored as empty answers; first (document {first['id']}): {first['failure']}")
    return count


def agg_empty_responses(records: list[dict], check: bool = True) -> int:
    """Number of empty (or whitespace-only) responses, failed generations not included; warns when there are any;
    raises :class:`FailedRunError` for a failed run unless ``check`` is false (as :func:`agg_failed_generations`)."""
    if check:
        check_failed_run(records)
    count = sum(1 for r in records if r["empty"])
    if count:
        logger.warning(f"{_task(records)}: {_share(count, records)} are empty")
    return count


def agg_unfinished_reasoning(records: list[dict], check: bool = True) -> int:
    """Number of responses whose reasoning never closed (no final answer; see the module docstring for how each
    benchmark scores them); warns with the share and an example, and raises :class:`FailedRunError` for a failed run
    unless ``check`` is false (as :func:`agg_failed_generations`)."""
    if check:
        check_failed_run(records)
    count = sum(1 for r in records if r.get("unfinished_reasoning"))
    if count:
        first = _first(records, "unfinished_reasoning")
        logger.warning(
            f"{_task(records)}: {_share(count, records)} stopped inside their reasoning with no final answer (token limit?); "
            f"first (document {first['id']}, {first['reasoning_chars']} reasoning characters): {first['preview']!r}"
        )
    return count


def agg_echoed_prompts(records: list[dict]) -> int:
    """Number of responses that echo the prompt (:func:`echoes_prompt`); warns with the share and an example."""
    count = sum(1 for r in records if r["echo"])
    if count:
        first = _first(records, "echo")
        logger.warning(
            f"{_task(records)}: {_share(count, records)} echo the prompt instead of answering (did the audio reach the model?); "
            f"first (document {first['id']}): {first['preview']!r}"
        )
    return count


def agg_placeholder_copies(records: list[dict]) -> int:
    """Number of responses holding an output-format placeholder of the prompt; warns with the share and an example."""
    count = sum(1 for r in records if r["placeholder"])
    if count:
        first = _first(records, "placeholder")
        logger.warning(f"{_task(records)}: {_share(count, records)} copy the prompt's format placeholder; first (document {first['id']}): {first['placeholder']!r}")
    return count


def identical_answer_count(records: list[dict]) -> tuple[int, dict | None]:
    """``(n, example)``: the documents that got the most frequent answer, if that answer is degenerate, else ``(0, None)``.

    Rule (over the answered documents: failed and empty ones are counted elsewhere). Let ``A`` be the most frequent
    normalised answer and ``s`` its share. ``A`` is degenerate when

    - the answered documents have at least :data:`IDENTICAL_MIN_INPUTS` (5) distinct inputs (clip and prompt), and
    - ``s`` > 50 % for open answers (transcripts, translations, free text), or ``s`` > 90 % for a closed answer
      set (a fixed label or option list, where many equal answers are normal: a biased but working classifier
      stays below 90 %), and
    - ``s`` > the share of the most frequent gold answer + 10 points, so answers that repeat because the gold
      repeats (one text read by several speakers; a label that is most of the gold) never count.
    """
    answered = [r for r in records if r["answer_key"] is not None]
    if len({r["input_key"] for r in answered}) < IDENTICAL_MIN_INPUTS:
        return 0, None
    key, count = Counter(r["answer_key"] for r in answered).most_common(1)[0]
    share = count / len(answered)
    gold_share = Counter(r["gold_key"] for r in answered).most_common(1)[0][1] / len(answered)
    threshold = IDENTICAL_SHARE_CLOSED if answered[0]["closed_answer_set"] else IDENTICAL_SHARE_OPEN
    if share > threshold and share > gold_share + IDENTICAL_GOLD_MARGIN:
        return count, next(r for r in answered if r["answer_key"] == key)
    return 0, None


def agg_identical_answers(records: list[dict]) -> int:
    """Number of documents given one same answer across many distinct inputs (:func:`identical_answer_count`); warns."""
    count, example = identical_answer_count(records)
    if count:
        logger.warning(
            f"{_task(records)}: {_share(count, records)} give the same answer {example['preview']!r} across distinct inputs "
            "(was the audio dropped on the way to the model?)"
        )
    return count


def agg_invalid_text_replaced(records: list[dict]) -> int:
    """Number of code points replaced by :func:`valid_text` over the task's responses; warns when there are any."""
    count = sum(r["invalid_text_replaced"] for r in records)
    if count:
        documents = sum(1 for r in records if r["invalid_text_replaced"])
        logger.warning(f"{_task(records)}: {count} invalid code point(s) (lone surrogates) in {documents} response(s) replaced by U+FFFD before scoring and logging")
    return count


def agg_scoring_errors(records: list[dict]) -> int:
    """Number of documents whose scoring raised (:func:`scoring_guard`), excluded from the scored metrics; warns with the
    first reason."""
    count = sum(1 for r in records if r.get("scoring_error"))
    if count:
        first = _first(records, "scoring_error")
        logger.warning(f"{_task(records)}: {_share(count, records)} could not be scored and are excluded; first (document {first['id']}): {first['scoring_error']}")
    return count


def agg_long_answers(records: list[dict]) -> int:
    """Number of answers longer than :data:`SAMPLE_TEXT_MAX_CHARS` characters (scored in full; cut in the samples file);
    warns with the longest."""
    long = [r for r in records if r.get("chars", 0) > SAMPLE_TEXT_MAX_CHARS]
    if long:
        longest = max(long, key=lambda r: r["chars"])
        logger.warning(
            f"{_task(records)}: {_share(len(long), records)} are longer than {SAMPLE_TEXT_MAX_CHARS:,} characters (longest: document {longest['id']}, "
            f"{longest['chars']:,} characters); scored in full, cut to their first {SAMPLE_TEXT_MAX_CHARS:,} characters in the samples file"
        )
    return len(long)


#: The one metric that stands for the nine counts of :data:`DIAGNOSTIC_METRICS` in a task folder exported to lmms-eval
#: (:func:`agg_flagged_responses`); a task YAML may list the nine instead.
FLAGGED_METRIC = "flagged_responses"


def agg_flagged_responses(records: list[dict], check: bool = True) -> int:
    """Number of documents with at least one count of :data:`DIAGNOSTIC_METRICS` (:func:`document_counts`): the nine
    counts in one figure, each count's warning still written to the log by its ``agg_<metric>`` (so the log names
    each kind, its share and an example); raises :class:`FailedRunError` for a failed run unless ``check`` is false
    (as :func:`agg_failed_generations`). The form an exported task folder lists (:data:`FLAGGED_METRIC`)."""
    if check:
        check_failed_run(records)
    for counted in (agg_failed_generations, agg_empty_responses, agg_unfinished_reasoning):
        counted(records, check=False)
    for counted in (agg_echoed_prompts, agg_placeholder_copies, agg_identical_answers, agg_invalid_text_replaced, agg_scoring_errors, agg_long_answers):
        counted(records)
    return sum(1 for counts in document_counts(records) if any(counts.values()))


# ------------------------------------------------------------------------------------------- samples file
#: Key of a sample record (one line of ``*_samples_<task>.jsonl``) holding the document's diagnostics record once.
SAMPLES_DIAGNOSTICS_KEY = "diagnostics"


def document_counts(records: list[dict]) -> list[dict[str, int]]:
    """Per document, its count under each counter of :data:`DIAGNOSTIC_METRICS` (0/1, and code points for
    ``invalid_text_replaced``): summed over the documents, each equals the task's figure (``agg_<counter>``).
    ``identical_answers`` is 1 for the documents that gave the degenerate answer (:func:`identical_answer_count`,
    decided over all ``records``), else 0. ``records``: the task's diagnostics records, in document order."""
    _, example = identical_answer_count(records) if records else (0, None)
    degenerate = example["answer_key"] if example else None
    return [
        {
            "failed_generations": int(bool(r["failure"])),
            "empty_responses": int(bool(r["empty"])),
            "unfinished_reasoning": int(bool(r.get("unfinished_reasoning"))),
            "echoed_prompts": int(bool(r["echo"])),
            "placeholder_copies": int(bool(r["placeholder"])),
            "identical_answers": int(degenerate is not None and r["answer_key"] == degenerate),
            "invalid_text_replaced": int(r["invalid_text_replaced"]),
            "scoring_errors": int(bool(r.get("scoring_error"))),
            "long_answers": int(r.get("chars", 0) > SAMPLE_TEXT_MAX_CHARS),
        }
        for r in records
    ]


def samples_with_diagnostics_once(samples: list[dict]) -> list[dict]:
    """lmms-eval's sample records of one task as they are written: the diagnostics record once per document, under
    :data:`SAMPLES_DIAGNOSTICS_KEY`, and each counter of :data:`DIAGNOSTIC_METRICS` as that document's count
    (:func:`document_counts`) instead of a copy of the record (lmms-eval logs each metric's per-document value under
    the metric's name: the record was written nine times, 80 % of an MCGA multiple-choice sample).

    Records without the counters (other benchmarks' tasks) are returned as they are; the others are shallow copies
    (lmms-eval's objects are not changed). Every other key (the scored metrics' per-document values) is kept as is.
    """
    if not isinstance(samples, list):
        return samples
    mine = [i for i, s in enumerate(samples) if isinstance(s, dict) and all(isinstance(s.get(m), dict) for m in DIAGNOSTIC_METRICS)]
    if not mine:
        return samples
    out = list(samples)
    records = [samples[i][DIAGNOSTIC_METRICS[0]] for i in mine]
    for i, record, counts in zip(mine, records, document_counts(records)):
        sample = dict(samples[i])
        sample.update(counts)
        sample[SAMPLES_DIAGNOSTICS_KEY] = record
        out[i] = sample
    return out


def diagnostics_of(sample: dict) -> dict | None:
    """The diagnostics record of one written sample record, in either samples-file shape: ``sample["diagnostics"]``
    (current files), or the copy under each counter (earlier files); ``None`` when it has none."""
    record = sample.get(SAMPLES_DIAGNOSTICS_KEY)
    if isinstance(record, dict):
        return record
    record = sample.get(DIAGNOSTIC_METRICS[0])
    return record if isinstance(record, dict) else None


def yaml_metric_list(module: str = __name__) -> str:
    """The ``metric_list`` entries of :data:`DIAGNOSTIC_METRICS` as YAML lines (two-space indented), for task YAMLs."""
    return "".join(f"  - metric: {m}\n    aggregation: !function {module}.agg_{m}\n    higher_is_better: false\n" for m in DIAGNOSTIC_METRICS)
