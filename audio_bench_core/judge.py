"""The LLM judge shared by every judged task (MCGA S2TT and SEC now, MMAC later).

One OpenAI-compatible chat-completions client, configured in one place (:class:`JudgeConfig`, read from
the ``AUDIO_JUDGE_*`` environment variables listed there), with

- judge reasoning read past: every reply is split by :func:`audio_bench_core.reasoning.split_reasoning` (a
  reasoning judge served without a reasoning parser writes its draft inside ``<think>...</think>`` and the
  like); the task's score function sees only the final text, and a reply whose reasoning never closed has
  no verdict (counted, never mined for one);
- a persistent cache of replies (:class:`JudgeCache`, SQLite) keyed by everything that determines a
  reply: endpoint (credentials in it left out), judge model, the full messages and the sampling parameters.
  Re-scoring the same outputs makes no API call. Only replies that yield a valid score (checked by the
  task's score function) are cached; failures never are. A damaged cache file is moved aside and replaced;
  a cache that cannot be opened (full disk, no permission) is done without, and the uncached replies counted;
- bounded concurrency (``concurrency`` daemon worker threads) and a progress bar; Ctrl-C stops the pass
  at once (workers blocked in HTTP calls are abandoned; finished replies are already cached);
- a time bound on the whole of each call (connect, send, wait, read: a reply that trickles in byte by
  byte is cut at ``timeout_s`` like one that never starts);
- retries with exponential backoff on timeouts, connection errors, HTTP 429 and HTTP 5xx (tenacity), and
  of replies without a valid score, within the same attempt budget; a ``Retry-After`` header (seconds or an
  HTTP date) sets the wait before the next attempt;
- a circuit breaker: after ``max_consecutive_failures`` failed API calls in a row the pass stops calling
  and the remaining items are judge_failed with the reason;
- failure accounting: a call that still fails comes back as a :class:`JudgeReply` with ``error`` set,
  never as a score. The benchmark code turns that into ``judge_failed``;
- provenance (:meth:`Judge.provenance`): judge model ids as the server reported them, sampling
  parameters, cache hits and misses, retries, failures. The API key is read from the environment
  variable named by ``AUDIO_JUDGE_API_KEY_VAR`` when the client is made and is stored nowhere else;
  credentials written into the base URL (``user:password@``, query values) are masked in everything
  written or logged (:func:`redact_url`).

Why the ``openai`` client and not lmms-eval's ``llm_judge``: ``llm_judge`` has no cache, retries every
error the same way with a fixed sleep and then raises, shares its environment variables with legacy
tasks that read ``OPENAI_API_URL`` differently, and does not return the model id the server reports.
The ``openai`` client gives typed errors (timeout, 429, 5xx) and ``response.model``; tenacity does the
backoff. Importing this module does not import lmms-eval.

The code is split by concern; this module gathers its public names (``from audio_bench_core.judge import X``):

- :mod:`audio_bench_core.judge_config`: :class:`JudgeConfig` (``AUDIO_JUDGE_*``), credential masking;
- :mod:`audio_bench_core.judge_reply`: :class:`JudgeRequest`, :class:`JudgeReply`, failure kinds;
- :mod:`audio_bench_core.judge_cache`: :class:`JudgeCache`;
- :mod:`audio_bench_core.judge_transport`: the whole-call time bound, ``Retry-After``, the failed-attempt types;
- :mod:`audio_bench_core.judge_client`: :class:`Judge` (concurrency, retries, breaker, accounting);
- :mod:`audio_bench_core.judged_task`: :func:`judge_task` and :class:`JudgedTask` (one task's pass, per dimension).
- :mod:`audio_bench_core.judge_identity`: which judge made the verdicts: the audit of cached verdicts
  (``AUDIO_JUDGE_AUDIT``), re-judging (``AUDIO_JUDGE_REFRESH``), two judges in one figure.

The modules are flat (not a subpackage): the shared code is one folder wherever it is installed.
"""

from audio_bench_core.judge_cache import JudgeCache, JudgeCacheError
from audio_bench_core.judge_client import Judge
from audio_bench_core.judge_config import ENV_PREFIX, JudgeConfig, redact_url, scrub
from audio_bench_core.judge_reply import (
    NO_VALID_SCORE,
    NOT_JUDGED,
    UNFINISHED_REASONING,
    JudgeReply,
    JudgeRequest,
    Validator,
)
from audio_bench_core.judge_transport import MAX_WAIT_S
from audio_bench_core.judged_task import (
    _PASSES,
    JudgedDimension,
    JudgedTask,
    ScoreFunction,
    ScoreResult,
    item_label,
    judge_task,
    read_score,
    validator,
)

__all__ = [
    "ENV_PREFIX", "MAX_WAIT_S", "NOT_JUDGED", "NO_VALID_SCORE", "UNFINISHED_REASONING", "Judge", "JudgeCache", "JudgeCacheError",
    "JudgeConfig", "JudgeReply", "JudgeRequest", "JudgedDimension", "JudgedTask", "ScoreFunction", "ScoreResult", "Validator",
    "item_label", "judge_task", "read_score", "redact_url", "scrub", "validator", "_PASSES",
]
