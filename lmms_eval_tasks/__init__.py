"""lmms-eval glue for the benchmarks of this project: task YAML, thin hooks and two helper models.

- ``lmms_eval_tasks/<benchmark>/``: task and group YAML plus ``hooks.py`` (prompts, parsers and metrics
  live in the benchmark packages ``mcga``, ``parsa``, ``mmac``);
- :mod:`lmms_eval_tasks.plugin`: the ``lmms_eval.models`` entry point that makes lmms-eval find our tasks
  and models without ``--include_path``;
- :mod:`lmms_eval_tasks.results_writer`: lmms-eval's results and samples writers made safe for any output;
- :mod:`lmms_eval_tasks.upstream_export`: ``lmms-eval-audio-export``, a benchmark as an lmms-eval task folder;
- :mod:`lmms_eval_tasks.models`: ``faster_whisper`` (the embedded default model) and ``replay``;
- :mod:`lmms_eval_tasks.printed_table` (the short results table the CLI prints) and
  :mod:`lmms_eval_tasks.hub_access` (one line when the Hugging Face hub is needed and cannot be reached).

The framework-free code the hooks share with the benchmark packages (audio hand-off, LLM judge, response checks,
reasoning traces, data identity, the cache folder) is the package :mod:`audio_bench_core`, below this layer and
the benchmarks: it imports neither (tests/test_layers.py). Importing this package does not import lmms-eval.
"""

from pathlib import Path

#: The folder lmms-eval indexes for our task and group YAML files.
TASKS_DIR = Path(__file__).resolve().parent
