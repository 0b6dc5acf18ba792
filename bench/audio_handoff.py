"""Per-document audio hand-off against its decode floor, and memory of dataset preparation.

Clips (written once to a temp folder, deterministic noise + tone, PCM 16-bit): 10-20 s; 60 % 16 kHz mono,
20 % 44.1 kHz stereo, 10 % 22.05 kHz mono, 10 % 35 s 16 kHz mono (longer than the 30 s cut).

Cases, each over every clip (page cache warm for all; the ``path`` form's cut copies are written before timing):

- ``floor``: ``soundfile.read`` of the frames kept, channel mean where stereo, ``soxr.resample`` (``soxr_hq``)
  where not 16 kHz: the least work that yields the array a model needs;
- ``array``, ``path``, ``data_uri``: :func:`audio_bench_core.audio.audio_for_model` in that form;
- ``former``: the hand-off before issue 13 (whole 2-D decode, channel mean, cut, ``librosa.resample``), shown only.

Figures: each form's median time / the floor's (goal <= 1.10). Memory: ``mcga.data.load_task_rows`` (which checks
every clip by decoding it) over the clips in a fresh interpreter: peak RSS above the interpreter after imports
(goal < 200 MB for 1,000 clips).

Usage: ``python -m bench.audio_handoff [--clips N] [--repeats N]`` (default 200 clips; the issue's size: 1000).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench._timing import alternate, figure, header, report

GOAL = 1.10
MEMORY_GOAL_MB = 200.0


def make_clips(folder: Path, n: int) -> list[str]:
    import soundfile

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(n):
        kind = index % 10
        rate, channels, seconds = (16000, 1, rng.uniform(10, 20))
        if kind in (1, 6):
            rate, channels = 44100, 2
        elif kind == 3:
            rate = 22050
        elif kind == 9:
            seconds = 35.0
        frames = int(seconds * rate)
        t = np.arange(frames) / rate
        signal = 0.2 * np.sin(2 * np.pi * 220 * t)[:, None] + rng.normal(0, 0.02, (frames, channels))
        path = folder / f"clip_{index:04d}.wav"
        soundfile.write(path, signal.astype(np.float32), rate, subtype="PCM_16")
        paths.append(str(path))
    return paths


def floor_array(path: str, max_seconds: float = 30.0) -> np.ndarray:
    import soundfile
    import soxr

    with soundfile.SoundFile(path) as handle:
        rate = handle.samplerate
        samples = handle.read(min(handle.frames, int(max_seconds * rate)), dtype="float32")
    if samples.ndim == 2:
        samples = samples.mean(axis=1, dtype=np.float32)
    return samples if rate == 16000 else soxr.resample(samples, rate, 16000, quality="soxr_hq")


def former_array(path: str, max_seconds: float = 30.0) -> np.ndarray:
    """The hand-off before issue 13 (for comparison only): whole file decoded 2-D, channel mean, cut, librosa."""
    import librosa
    import soundfile

    samples, rate = soundfile.read(path, dtype="float32", always_2d=True)
    samples = samples.mean(axis=1, dtype=np.float32)[: int(max_seconds * rate)]
    return samples if rate == 16000 else librosa.resample(samples, orig_sr=rate, target_sr=16000).astype(np.float32)


_MEMORY_CHILD = """
import json, sys
def status_kib(field):  # VmHWM (peak) and VmRSS of this process image (getrusage's maxrss survives exec: the parent's)
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field + ":"))
from mcga import data
import soundfile, numpy
from audio_bench_core import audio
base = status_kib("VmRSS")
rows = data.load_task_rows("asr", "test", sys.argv[1])
print(json.dumps({"rows": len(rows), "peak_above_imports_mb": (status_kib("VmHWM") - base) / 1024}))
"""


def memory_of_preparation(folder: Path, paths: list[str]) -> dict:
    """Write an MCGA ASR file whose rows point at ``paths`` (in ``folder/data/clips``) and load it in a fresh interpreter."""
    from tests.release_shaped_mcga import release_rows

    rows = release_rows()["asr"]
    data_dir = folder / "data"
    lines = []
    for index, path in enumerate(paths):
        row = {k: v for k, v in rows[index % len(rows)].items() if k != "asr_r"}
        row["audio"] = f"clips/{Path(path).name}"
        row["id"] = f"{row['id']}-{index}"
        lines.append(json.dumps(row, ensure_ascii=False))
    (data_dir / "MCGA_asr_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(data_dir)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    header(f"audio hand-off, {args.clips} clips")
    folder = Path(tempfile.mkdtemp(prefix="bench-audio-"))
    os.environ["LMMS_EVAL_AUDIO_PLUGIN_CACHE"] = str(folder / "cache")
    import logging

    from audio_bench_core import audio

    logging.getLogger("audio_bench_core.audio").setLevel(logging.ERROR)  # the cut warning, once per long clip and call
    paths = make_clips(folder / "data" / "clips", args.clips)
    for path in paths:  # correctness first; and the path form's cut copies exist before timing
        ours, floor = audio.audio_for_model(path, "array")["array"], floor_array(path)
        common = min(len(ours), len(floor))  # ours is librosa's fix_length: at most one sample longer
        assert abs(len(ours) - len(floor)) <= 1 and np.array_equal(ours[:common], floor[:common]), path
        audio.audio_for_model(path, "path")
    cases = {"floor: soundfile + soxr": lambda: [floor_array(p) for p in paths], "former (2-D decode, mean, librosa)": lambda: [former_array(p) for p in paths]}
    for form in audio.AUDIO_FORMS:
        cases[f"audio_for_model({form})"] = lambda form=form: [audio.audio_for_model(p, form) for p in paths]
    results = alternate(cases, args.repeats)
    report(results)
    floor = results["floor: soundfile + soxr"].wall_median
    print(f"  floor per clip: {1000 * floor / len(paths):.2f} ms; former hand-off / floor: {results['former (2-D decode, mean, librosa)'].wall_median / floor:.2f}x")
    for form in audio.AUDIO_FORMS:
        ratio = results[f"audio_for_model({form})"].wall_median / floor
        figure(f"audio_handoff_{form} (per-document / decode floor)", ratio, f"<= {GOAL}x", ratio <= GOAL, f"{1000 * results[f'audio_for_model({form})'].wall_median / len(paths):.2f} ms per clip")
    memory = memory_of_preparation(folder, paths)
    figure(f"dataset_preparation_memory_mb ({memory['rows']} clips, peak RSS above imports)", memory["peak_above_imports_mb"], f"< {MEMORY_GOAL_MB:.0f} MB", memory["peak_above_imports_mb"] < MEMORY_GOAL_MB)
    return 0


if __name__ == "__main__":
    sys.exit(main())
