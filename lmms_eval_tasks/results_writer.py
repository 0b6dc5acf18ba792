"""lmms-eval's results and samples writers made safe for any model output (the plugin installs this at registration).

Glue, not shared code: it wraps ``lmms_eval.loggers.evaluation_tracker.EvaluationTracker``. What a response is made
into (valid UTF-8, bounded length and nesting) is defined in :mod:`audio_bench_core.responses`.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Sequence

from loguru import logger

from audio_bench_core.responses import SAMPLE_MAX_DEPTH, SAMPLE_TEXT_MAX_CHARS, samples_with_diagnostics_once, valid_text


def _make_valid_in_place(value: object, counter: list[int]) -> object:
    """``value`` with :func:`valid_text` applied to every string in it; dicts and lists are changed in place (lmms-eval
    goes on using the objects it passed), tuples are rebuilt. ``counter[0]`` grows by the replacements."""
    if isinstance(value, str):
        text, replaced = valid_text(value)
        counter[0] += replaced
        return text
    if isinstance(value, list):
        value[:] = [_make_valid_in_place(v, counter) for v in value]
    elif isinstance(value, tuple):
        return tuple(_make_valid_in_place(v, counter) for v in value)
    elif isinstance(value, dict):
        items = [(_make_valid_in_place(k, counter), _make_valid_in_place(v, counter)) for k, v in value.items()]
        value.clear()
        value.update(items)
    return value


def write_results_as_valid_utf8() -> None:
    """Make lmms-eval's results and samples writers replace code points that UTF-8 cannot hold, and bound what the
    samples writer writes (:func:`bounded_for_samples`: texts over 10,000 characters cut with their length, nesting
    over 64 levels replaced by a note) (idempotent).

    lmms-eval 0.7 writes each sample with ``json.dumps(..., ensure_ascii=False)`` into a UTF-8 file inside a
    ``try`` that only logs "Could not save sample results": one response holding a lone surrogate leaves an empty
    samples file while the run exits 0. The logged ``resps``/``filtered_resps`` are the raw model output, which the
    hooks cannot change, so ``EvaluationTracker.save_results_samples`` and ``save_results_aggregated`` are wrapped
    to pass their data through :func:`valid_text` first (with a warning counting the replacements). The samples writer
    also writes each document's diagnostics record once (:func:`audio_bench_core.responses.samples_with_diagnostics_once`). Called by
    :func:`lmms_eval_tasks.plugin.register`; never raises (a missing writer is logged as an error).
    """
    try:
        from lmms_eval.loggers.evaluation_tracker import EvaluationTracker
    except ImportError as error:  # never stop registration over this; say it
        logger.error(f"lmms-eval-audio-plugin: cannot make the results writer UTF-8-safe ({error!r}); a response holding a lone surrogate may leave an empty samples file")
        return
    for name in ("save_results_samples", "save_results_aggregated"):
        original = getattr(EvaluationTracker, name, None)
        if original is None:
            logger.error(f"lmms-eval-audio-plugin: lmms-eval's EvaluationTracker has no {name}; its output is not made UTF-8-safe")
            continue
        if getattr(original, "_valid_utf8", False):
            continue
        wrapped = _valid_utf8_writer(original, name, _NOT_WRITTEN.get(name, ()))
        wrapped._valid_utf8 = True
        setattr(EvaluationTracker, name, wrapped)


#: Writer arguments lmms-eval 0.7 reads but does not write: ``save_results_aggregated`` gets every task's samples
#: only to hash their ``doc_hash`` (hex digests); ``save_results_samples`` writes them.
_NOT_WRITTEN = {"save_results_aggregated": ("samples",)}


def _all_text_is_valid_utf8(value: object) -> bool:
    """True when every string in ``value`` (as JSON serialises it) can be encoded as UTF-8: one C-speed
    ``json.dumps`` + ``encode`` instead of a Python walk of every logged sample (the walk cost 3.2 s of a 32 s
    full-scale replay, bench/replay_full.py). False, so that the walk decides, on anything ``json.dumps`` refuses."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
        return True
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        return False


def bounded_for_samples(value: object, depth: int = 0) -> object:
    """A copy of ``value`` fit for the samples file: every string longer than :data:`SAMPLE_TEXT_MAX_CHARS` cut to that
    many characters followed by ``" … [cut in the samples file: N characters in all]"``, and every list/object nested
    deeper than :data:`SAMPLE_MAX_DEPTH` replaced by ``"[nested deeper than 64 levels: not written]"``. Containers are
    rebuilt (lmms-eval's objects are not changed); other values are returned as they are."""
    if isinstance(value, str):
        if len(value) <= SAMPLE_TEXT_MAX_CHARS:
            return value
        return f"{value[:SAMPLE_TEXT_MAX_CHARS]} … [cut in the samples file: {len(value):,} characters in all]"
    if isinstance(value, (dict, list, tuple)) and depth >= SAMPLE_MAX_DEPTH:
        return f"[nested deeper than {SAMPLE_MAX_DEPTH} levels: not written]"
    if isinstance(value, dict):
        return {k: bounded_for_samples(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [bounded_for_samples(v, depth + 1) for v in value]
    return value


def _needs_bounding(value: object) -> bool:
    """True when ``value`` holds a string longer than :data:`SAMPLE_TEXT_MAX_CHARS` or nesting deeper than
    :data:`SAMPLE_MAX_DEPTH`. Iterative, and each container is visited once (the hooks put one record object under
    several metric keys), so a normal sample costs a few dozen checks."""
    stack, seen = [(value, 0)], set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if len(item) > SAMPLE_TEXT_MAX_CHARS:
                return True
        elif isinstance(item, (dict, list, tuple)):
            if depth >= SAMPLE_MAX_DEPTH:
                return True
            if id(item) in seen:
                continue
            seen.add(id(item))
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def _bounded_samples(samples: object) -> tuple[object, int]:
    """``(samples, n)``: lmms-eval's list of sample records with the ``n`` records that need it passed through
    :func:`bounded_for_samples` (the others unchanged, not copied)."""
    if not isinstance(samples, list):
        return samples, 0
    out, changed = [], 0
    for sample in samples:
        if _needs_bounding(sample):
            out.append(bounded_for_samples(sample))
            changed += 1
        else:
            out.append(sample)
    return out, changed


def _valid_utf8_writer(original, name: str, not_written: Sequence[str] = ()):
    signature = inspect.signature(original)
    skipped = {next(iter(signature.parameters)), *not_written}  # self, and what the writer does not write

    @functools.wraps(original)
    def writer(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)  # lmms-eval's own error for a wrong call
        if name == "save_results_samples" and "samples" in bound.arguments:  # bounded first: the UTF-8 check dumps it all
            bound.arguments["samples"] = samples_with_diagnostics_once(bound.arguments["samples"])  # the record once per document
            bound.arguments["samples"], cut = _bounded_samples(bound.arguments["samples"])
            if cut:
                logger.warning(
                    f"{cut} sample record(s) of {bound.arguments.get('task_name', 'this task')} hold texts longer than {SAMPLE_TEXT_MAX_CHARS:,} characters "
                    f"or nesting deeper than {SAMPLE_MAX_DEPTH} levels: written cut, each with its full length (scored in full)"
                )
        written = {k: v for k, v in bound.arguments.items() if k not in skipped}
        if not _all_text_is_valid_utf8(list(written.values())):
            counter = [0]
            for k, v in written.items():
                bound.arguments[k] = _make_valid_in_place(v, counter)
            if counter[0]:
                logger.warning(f"{counter[0]} invalid code point(s) (lone surrogates) replaced by U+FFFD in what {name} writes")
        return original(*bound.args, **bound.kwargs)

    return writer
