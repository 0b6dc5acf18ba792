"""What a model's response is before it is scored: a generated answer, or a failed generation.

Shared by every benchmark's hooks (MCGA, PARSA-Bench, MMAC). A failed generation is never scored as an
answer: it is counted (``failed_generations``) and the run fails loudly when most of a task's responses
are failures.

Failure placeholders recognised:

- lmms-eval's own API models (``openai``, ``gemini``, ...) return
  ``"[LMMS_EVAL_REQUEST_FAILED after N retries] <error>"`` when a request fails;
- this plugin's models return ``GENERATION_FAILED_PREFIX + " <error>"`` when generation raised for a
  document (lmms-eval's own local wrappers return ``""`` instead, which is counted as empty).
"""

from __future__ import annotations

#: Prefix of the placeholder our models return for a document whose generation raised.
GENERATION_FAILED_PREFIX = "[LMMS_EVAL_AUDIO_PLUGIN_GENERATION_FAILED]"
#: Prefix of lmms-eval's request-failure placeholder (lmms_eval/models/*/openai.py, gemini.py, 0.7.x).
LMMS_EVAL_REQUEST_FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"


def generation_failure(response: str) -> str | None:
    """The error carried by a failure placeholder (``"request failed: ..."``), or ``None`` for a real answer.

    An empty response is not a failure here (a model may answer nothing); it is counted separately.
    """
    text = response.lstrip()
    for prefix, kind in ((GENERATION_FAILED_PREFIX, "generation raised"), (LMMS_EVAL_REQUEST_FAILED_PREFIX, "request failed")):
        if text.startswith(prefix):
            return f"{kind}: {text[len(prefix):].strip(' ]')}"
    return None
