"""Framework-free code shared by the benchmarks (the bottom layer): imports neither lmms-eval, nor the code that adapts
the benchmarks to it, nor a benchmark package, so every benchmark package uses it without lmms-eval.

- :mod:`audio_bench_core.audio`: decoding, checks and the forms audio is handed to models in;
- :mod:`audio_bench_core.judge`: the LLM judge client (cache, retries, accounting);
- :mod:`audio_bench_core.responses`: what a model's response is before it is scored (diagnostics, failed runs);
- :mod:`audio_bench_core.reasoning`: reasoning traces read past;
- :mod:`audio_bench_core.data_identity`: which data a task loaded (lmms-eval's response-cache key);
- :mod:`audio_bench_core.text`: text helpers shared by normalisers;
- :mod:`audio_bench_core.data_folders`: the data folder a user meant (the data checks' hints);
- :func:`cache_dir`: the one cache root.
"""

import os
from pathlib import Path

CACHE_ENV = "LMMS_EVAL_AUDIO_PLUGIN_CACHE"
CACHE_NAME = "lmms_eval_audio_plugin"


def cache_dir(name: str) -> Path:
    """``$<CACHE_ENV>/<name>`` (default ``~/.cache/<CACHE_NAME>/<name>``); not created."""
    root = os.environ.get(CACHE_ENV, "").strip()
    return (Path(root).expanduser() if root else Path.home() / ".cache" / CACHE_NAME) / name
