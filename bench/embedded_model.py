"""The demo (``lmms-eval --tasks mcga --model faster_whisper``, the shipped sample) against the same Whisper model
over the same clips in a plain loop.

- ``floor``: a fresh interpreter loads the shipped Whisper-base (faster-whisper, CPU) and transcribes each distinct
  clip of the six MCGA sample tasks once, decoded by the same :func:`audio_bench_core.audio.load_audio_array`, with the
  same settings (language zh, beam 5, temperature 0, no conditioning, ``max_new_tokens`` 224);
- ``demo``: the ``make demo`` MCGA command in a fresh process (lmms-eval start-up, task loading, our hooks, the
  model wrapper with its transcript cache, scoring, writing).

Figures: demo / floor in CPU seconds and in wall seconds (children's ``getrusage``), and how many of the demo's
requests were decoded (from its log: one decode per clip, language and settings). No goal is set in the issue for
these ratios; the goal is that no clip is decoded twice.

Usage: ``python -m bench.embedded_model [--repeats N]`` (default 1: about a minute).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._timing import figure, header

_FLOOR = """
import sys
from faster_whisper import WhisperModel
from audio_bench_core.audio import load_audio_array
from lmms_eval_tasks.models.faster_whisper import shipped_whisper_base_dir
from mcga import data
clips = sorted({row["audio_path"] for task in ("asr", "s2tt", "sec", "sqa", "su", "sr") for row in data.load_task_rows(task, "test")})
model = WhisperModel(str(shipped_whisper_base_dir()), device="cpu", compute_type="default")
for clip in clips:
    segments, _ = model.transcribe(load_audio_array(clip)["array"], language="zh", task="transcribe", beam_size=5, temperature=0.0,
                                   condition_on_previous_text=False, max_new_tokens=224)
    "".join(s.text for s in segments)
print(len(clips))
"""


def _run(command: list[str], env: dict) -> tuple[float, float, str, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(f"{command[:3]} failed ({out.returncode}): {out.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout, out.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    header("embedded model: MCGA demo vs plain Whisper loop")
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("MCGA_DATA_DIR", None)  # the shipped sample
    cli = str(Path(sys.executable).parent / "lmms-eval")
    floor, demo, log = [], [], ""
    for repeat in range(args.repeats):
        runs = [("floor", [sys.executable, "-c", _FLOOR]), ("demo", [cli, "--tasks", "mcga", "--model", "faster_whisper", "--output_path", tempfile.mkdtemp(prefix="bench-demo-")])]
        for name, command in runs if repeat % 2 == 0 else reversed(runs):
            wall, cpu, stdout, stderr = _run(command, env)
            (floor if name == "floor" else demo).append((wall, cpu))
            if name == "demo":
                log = stdout + stderr
            else:
                clips = stdout.strip().splitlines()[-1]
    floor_wall, floor_cpu = statistics.median([w for w, _ in floor]), statistics.median([c for _, c in floor])
    demo_wall, demo_cpu = statistics.median([w for w, _ in demo]), statistics.median([c for _, c in demo])
    print(f"  floor: {clips} distinct clips, wall {floor_wall:.1f} s, cpu {floor_cpu:.1f} s;  demo: wall {demo_wall:.1f} s, cpu {demo_cpu:.1f} s")
    decoded = re.findall(r"faster_whisper: (\d+) requests: (\d+) clips decoded, (\d+) transcripts from the cache", log)
    requests, misses, hits = (int(x) for x in decoded[-1]) if decoded else (0, -1, 0)
    figure("demo_cpu_vs_plain_whisper_loop (demo / floor, CPU)", demo_cpu / floor_cpu, "no goal in the issue (it measured 1.18x)", None, "the demo includes lmms-eval start-up and task loading")
    figure("demo_wall_vs_plain_whisper_loop (demo / floor, wall)", demo_wall / floor_wall, "no goal in the issue (it measured 1.35x)", None)
    figure("demo_decodes_per_distinct_clip", misses / int(clips), "1.0 (one decode per clip per run)", misses == int(clips), f"{requests} requests, {misses} decoded, {hits} from the transcript cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
