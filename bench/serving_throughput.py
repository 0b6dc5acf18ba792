"""Serving throughput: real ``lmms-eval`` runs of ``mcga_asr`` with lmms-eval's concurrent OpenAI-compatible chat models
(``--model async_openai`` and ``--model openai``) against a local chat-completions server with a fixed latency.

What runs:

- **Data**: a release-shaped MCGA ASR set written to a temporary folder (``MCGA_DATA_DIR``): the rows of
  ``tests/release_shaped_mcga.release_rows()`` (1,000 clips, 915 distinct ids, release fields) with one wav per row,
  10-20 s long (uniform, seeded), 16 kHz mono PCM-16. The signal is **synthetic** (cut at random offsets from 16
  harmonic tones whose pitch and loudness move at syllable rate, plus low noise): the server ignores the content, so
  only the size of what is read, encoded and sent matters, and that is the size of real MCGA clips (the paper: 3.5-30
  s, mean 19.5 s).
- **Server**: ``tests/chat_server.py`` (one thread per request: unlimited parallelism) in a child process, listen
  backlog raised to 1,024 (as ``bench/judge_throughput.py`` does), replying a fixed short Chinese transcript after
  ``--latency`` seconds (default 0.5), keeping no request bodies. It records each request's arrival and reply times.
- **Client**: ``lmms-eval --model M --model_args model=...,base_url=...,api_key=...,<concurrency>=C --tasks mcga_asr
  --log_samples`` as a subprocess, for lmms-eval 0.7.3's two concurrent OpenAI-compatible chat models:
  ``async_openai`` (one asyncio event loop; concurrency is its ``num_cpus`` argument, default ``cpu_count() // 2``)
  and ``openai`` (a thread pool; ``num_concurrent``, default 32). Every other model argument stays at its default
  (e.g. ``max_retries`` 5, ``prefix_aware_queue`` on, ``adaptive_concurrency`` off). A run counts only if it exits 0,
  writes its results, reports ``failed_generations`` 0 and the server saw exactly one request per document. Our task
  sends each clip as a ``data:audio/wav;base64,...`` URI (``chat_audio: data_uri``), built per request by
  ``mcga_doc_to_messages`` when the model dispatches the request.

Figures, at concurrency 16 and 64 (``--docs`` documents; 1,000 is the issue's size):

- **efficiency** (each model) = documents/s of the generation phase / ideal (concurrency / latency), i.e.
  ``docs x latency / concurrency / generation wall``; goal >= 0.80. The generation wall is taken **from the server's
  own clock** (``time.time()`` in the server process): first request's arrival to the last reply sent, so lmms-eval's
  start-up (imports, task index, data check of every clip) and its scoring and writing afterwards are excluded.
  Two floors on the same server in the same run, with the same concurrency (``asyncio.Semaphore``), reading and
  base64-encoding each clip per request, without lmms-eval or our task code: a plain ``openai.AsyncOpenAI`` client
  (the library ``async_openai`` uses) and a light ``aiohttp`` client posting ``json.dumps`` bodies (what the machine
  and the server allow). The four cases alternate (order reversed on every other repetition); medians over
  ``--repeats``. Also printed per run: the client's CPU per document while generating (lmms-eval: from
  ``/proc/PID/stat`` samples; floors: ``process_time``), the server's CPU per document (``getrusage`` in the server).
- **memory**: the lmms-eval process's peak RSS (``ru_maxrss`` of the child, from ``os.wait4``) and whether it grows
  with the number of documents: for each model, a run over a quarter of the documents (``--limit``) at concurrency
  64 against the full runs (goal, ours since the issue says "flat": peak growth < 5 % of the peak), and RSS sampled
  every 50 ms from ``/proc/PID/status`` (highest before / during / after the generation phase; at the first request
  and at the last reply).

``--profile FILE`` also runs lmms-eval ``async_openai`` once under ``cProfile`` (highest concurrency) and prints the
cumulative time of the per-request work: lmms-eval's wrapper, our ``mcga_doc_to_messages`` (data URI) and the openai
client.

Usage: ``python -m bench.serving_throughput [--docs N] [--latency S] [--repeats N] [--concurrency C ...] [--profile FILE]``;
the quick default is 400 documents, 2 repetitions (about 5 minutes); ``--docs 1000 --profile /tmp/serving.prof`` is
the issue's size (about 12 minutes on 2 cores). Disk: ~0.46 MiB per document in a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import glob
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench._server import LatencyServer
from bench._timing import figure, header

EFFICIENCY_GOAL = 0.80
RSS_GROWTH_GOAL = 0.05  # peak RSS growth from a quarter of the documents to all, as a fraction of the peak
CONCURRENCIES = (16, 64)
REPLY = "床前明月光，疑是地上霜。"
API_KEY = "bench-local-key"
RATE = 16000

# ------------------------------------------------------------------------------------------------ data
def _synthetic_voices(rng: random.Random, count: int = 16, seconds: float = 30.0) -> list:
    """``count`` signals of ``seconds`` at 16 kHz (float32), voice-like: harmonics of a pitch gliding 110-260 Hz,
    loudness moving at 3-6 syllables/s, noise at -40 dB. Clips are cut from them at random offsets. The content
    is irrelevant to the bench (the server ignores it); the size of each clip is what matters."""
    import numpy as np

    n = int(seconds * RATE)
    t = np.arange(n, dtype=np.float64) / RATE
    voices = []
    for _ in range(count):
        f0 = rng.uniform(110, 180) + rng.uniform(20, 80) * np.sin(2 * np.pi * rng.uniform(0.1, 0.4) * t)
        phase = 2 * np.pi * np.cumsum(f0) / RATE
        voice = sum(np.sin(k * phase) / k for k in range(1, 6))
        envelope = 0.5 * (1 + np.sin(2 * np.pi * rng.uniform(3, 6) * t)) ** 2
        noise = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(n) * 0.01
        voices.append((0.2 * voice * envelope + noise).astype(np.float32))
    return voices


def write_asr_set(folder: Path, docs: int, seed: int = 13) -> Path:
    """``folder/data`` with ``MCGA_asr_test.jsonl`` (the first ``docs`` release-shaped ASR rows, without the model
    output field) and one 10-20 s, 16 kHz wav per row. Returns the data folder (for ``MCGA_DATA_DIR``)."""
    import soundfile

    from tests.release_shaped_mcga import OUTPUT_FIELD, release_rows

    rows = release_rows()["asr"]
    if not 1 <= docs <= len(rows):
        raise SystemExit(f"--docs must be 1..{len(rows)} (the release's ASR size), got {docs}")
    data_dir = folder / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    voices = _synthetic_voices(rng)
    lines = []
    for row in rows[:docs]:
        row = {k: v for k, v in row.items() if k != OUTPUT_FIELD["asr"]}
        seconds = round(rng.uniform(10.0, 20.0), 2)
        row["time"] = seconds
        path = data_dir / row["audio"]
        path.parent.mkdir(parents=True, exist_ok=True)
        voice, frames = rng.choice(voices), int(seconds * RATE)
        offset = rng.randrange(len(voice) - frames)
        soundfile.write(path, voice[offset : offset + frames], RATE, subtype="PCM_16")
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    (data_dir / "MCGA_asr_test.jsonl").write_text("".join(lines), encoding="utf-8")
    return data_dir


# ------------------------------------------------------------------------------------------------ runs
@dataclass
class Run:
    """One pass over ``docs`` documents: server-side generation wall, and (lmms-eval runs) the process's memory."""

    docs: int
    concurrency: int
    served: list[tuple[float, float]]
    max_in_flight: int
    total_wall: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mib: float = 0.0
    samples: list[tuple[float, float, float]] = field(default_factory=list)  # (time.time(), RSS MiB, CPU s so far)
    started_at: float = 0.0  # time.time() when the process (or the floor) started
    server_cpu_s: float = 0.0  # CPU seconds the server process spent on this run

    @property
    def startup(self) -> float:
        """Seconds from the start to the first request's arrival (lmms-eval: imports, task index, data check)."""
        return min(start for start, _ in self.served) - self.started_at

    @property
    def generation_wall(self) -> float:
        return max(end for _, end in self.served) - min(start for start, _ in self.served)

    def efficiency(self, latency: float) -> float:
        return self.docs * latency / self.concurrency / self.generation_wall

    def _generation_samples(self) -> list[tuple[float, float, float]]:
        start, end = min(s for s, _ in self.served), max(e for _, e in self.served)
        return [sample for sample in self.samples if start <= sample[0] <= end] or [
            min(self.samples, key=lambda s: abs(s[0] - end))
        ]

    def rss_during_generation(self) -> tuple[float, float, float]:
        """RSS (MiB) sampled when the first request arrived, the highest during generation, and at the last reply."""
        inside = self._generation_samples()
        return inside[0][1], max(rss for _, rss, _ in inside), inside[-1][1]

    def rss_phases(self) -> str:
        """Highest sampled RSS (MiB) before, during and after the generation phase, e.g. ``"612 / 640 / 655 MiB"``."""
        start, end = min(s for s, _ in self.served), max(e for _, e in self.served)
        phases = (
            [r for t, r, _ in self.samples if t < start],
            [r for t, r, _ in self.samples if start <= t <= end],
            [r for t, r, _ in self.samples if t > end],
        )
        return " / ".join(f"{max(p):.0f}" if p else "-" for p in phases) + " MiB"

    def generation_cpu_ms_per_doc(self) -> float:
        """The lmms-eval process's CPU (ms) per document between the first and the last sample of the generation phase,
        scaled to the whole phase (samples every 50 ms; 10 ms clock ticks)."""
        inside = self._generation_samples()
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return float("nan")
        cpu_rate = (inside[-1][2] - inside[0][2]) / (inside[-1][0] - inside[0][0])
        return 1000 * cpu_rate * self.generation_wall / self.docs


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _sample_process(pid: int, samples: list[tuple[float, float, float]], stop: threading.Event) -> None:
    """Append ``(time.time(), RSS MiB, CPU seconds so far)`` of process ``pid`` every 50 ms (``/proc/PID/status``
    VmRSS, ``/proc/PID/stat`` utime + stime) until ``stop`` is set or the process is gone."""
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as status:
                rss = next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            samples.append((time.time(), rss, (int(fields[11]) + int(fields[12])) / _TICKS))
        except (OSError, StopIteration, IndexError, ValueError):
            return
        stop.wait(0.05)


#: lmms-eval 0.7.3's concurrent OpenAI-compatible chat models and the model argument that sets their concurrency.
CONCURRENCY_ARG = {"async_openai": "num_cpus", "openai": "num_concurrent"}


def lmms_eval_command(url: str, concurrency: int, docs: int, output: Path, model: str = "async_openai") -> list[str]:
    """The ``lmms-eval`` command line of one run: ``model`` (``async_openai``: one asyncio loop; ``openai``: a thread
    pool) with ``concurrency`` requests in flight (:data:`CONCURRENCY_ARG`), its other model arguments at their
    defaults."""
    lmms_eval = shutil.which("lmms-eval") or str(Path(sys.executable).with_name("lmms-eval"))
    model_args = f"model=bench-served-model,base_url={url},api_key={API_KEY},{CONCURRENCY_ARG[model]}={concurrency}"
    return [lmms_eval, "--model", model, "--model_args", model_args, "--tasks", "mcga_asr", "--batch_size", "1",
            "--limit", str(docs), "--log_samples", "--output_path", str(output)]  # fmt: skip


def run_lmms_eval(
    server: LatencyServer,
    data_dir: Path,
    concurrency: int,
    docs: int,
    work: Path,
    profile: Path | None = None,
    model: str = "async_openai",
) -> Run:
    """One real CLI run; checks that it scored ``docs`` documents with no failed generation."""
    output = Path(tempfile.mkdtemp(prefix="out-", dir=work))
    command = lmms_eval_command(server.url, concurrency, docs, output, model)
    if profile is not None:
        command = [sys.executable, "-m", "cProfile", "-o", str(profile), *command]
    env = {**os.environ, "MCGA_DATA_DIR": str(data_dir), "HF_DATASETS_CACHE": str(work / "hf_datasets"), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TQDM_DISABLE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # fmt: skip
    log = output / "lmms_eval.log"
    started_at, start = time.time(), time.perf_counter()
    with open(log, "w") as log_file:
        process = subprocess.Popen(command, env=env, stdout=log_file, stderr=subprocess.STDOUT, cwd=work)
        samples: list[tuple[float, float, float]] = []
        stop = threading.Event()
        sampler = threading.Thread(target=_sample_process, args=(process.pid, samples, stop), daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        sampler.join()
    total = time.perf_counter() - start
    served, in_flight, server_cpu = server.take_served()
    results = sorted(glob.glob(str(output / "**" / "*_results.json"), recursive=True))
    tail = log.read_text(errors="replace")[-3000:]
    if process.returncode != 0 or not results:
        raise RuntimeError(f"lmms-eval failed (exit {process.returncode}, results {results}); log tail:\n{tail}")
    metrics = json.loads(Path(results[-1]).read_text())["results"]["mcga_asr"]
    failed = metrics.get("failed_generations,none")
    if failed != 0 or len(served) != docs:
        raise RuntimeError(
            f"{failed} failed generations, {len(served)} requests served for {docs} documents; log tail:\n{tail}"
        )
    shutil.rmtree(output, ignore_errors=True)
    return Run(
        docs,
        concurrency,
        served,
        in_flight,
        total,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        samples,
        started_at,
        server_cpu,
    )


def _floor_messages(data_dir: Path, row: dict) -> list[dict]:
    """The request of one row as a plain client builds it: the clip read and base64-encoded into a data URI, in the
    system + user [audio, text] shape our task sends (short texts: their size is negligible beside the audio)."""
    uri = "data:audio/wav;base64," + base64.b64encode((data_dir / row["audio"]).read_bytes()).decode("ascii")
    return [{"role": "system", "content": [{"type": "text", "text": "system"}]},
            {"role": "user", "content": [{"type": "audio_url", "audio_url": {"url": uri}}, {"type": "text", "text": "transcribe"}]}]  # fmt: skip


def _floor_run(server: LatencyServer, data_dir: Path, concurrency: int, docs: int, client: str) -> Run:
    """The same ``docs`` requests without lmms-eval or our task code, at most ``concurrency`` in flight
    (``asyncio.Semaphore``), each clip read and encoded per request:

    - ``client="openai"``: ``openai.AsyncOpenAI().chat.completions.create`` (the client ``async_openai`` uses);
    - ``client="aiohttp"``: the JSON body made by ``json.dumps`` and POSTed with ``aiohttp`` (what the machine and
      the server allow with a light client).
    """
    rows = [json.loads(line) for line in (data_dir / "MCGA_asr_test.jsonl").read_text(encoding="utf-8").splitlines()][
        :docs
    ]

    async def with_openai() -> list[str]:
        from openai import AsyncOpenAI

        api = AsyncOpenAI(api_key=API_KEY, base_url=server.url, timeout=600)
        semaphore = asyncio.Semaphore(concurrency)

        async def one(row: dict) -> str:
            async with semaphore:
                reply = await api.chat.completions.create(
                    model="floor", messages=_floor_messages(data_dir, row), max_tokens=2048, temperature=0
                )
                return reply.choices[0].message.content

        try:
            return await asyncio.gather(*(one(row) for row in rows))
        finally:
            await api.close()

    async def with_aiohttp() -> list[str]:
        import aiohttp

        semaphore = asyncio.Semaphore(concurrency)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"}
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=concurrency), timeout=aiohttp.ClientTimeout(total=600)
        ) as session:

            async def one(row: dict) -> str:
                async with semaphore:
                    body = json.dumps(
                        {
                            "model": "floor",
                            "messages": _floor_messages(data_dir, row),
                            "max_tokens": 2048,
                            "temperature": 0,
                        }
                    ).encode()
                    async with session.post(f"{server.url}/chat/completions", data=body, headers=headers) as response:
                        return (await response.json())["choices"][0]["message"]["content"]

            return await asyncio.gather(*(one(row) for row in rows))

    started_at, start, cpu = time.time(), time.perf_counter(), time.process_time()
    replies = asyncio.run(with_openai() if client == "openai" else with_aiohttp())
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    served, in_flight, server_cpu = server.take_served()
    if replies != [REPLY] * docs or len(served) != docs:
        raise RuntimeError(
            f"{client} floor: {sum(r != REPLY for r in replies)} wrong replies, {len(served)} requests served for {docs}"
        )
    return Run(docs, concurrency, served, in_flight, total, cpu, started_at=started_at, server_cpu_s=server_cpu)


# ------------------------------------------------------------------------------------------------ profile
#: (label, file name ending, function name) of the profile lines printed by :func:`print_profile`.
PROFILE_LINES = (
    ("event loop waiting for sockets (idle)", "selectors.py", "select"),
    ("async_openai.maybe_forward_with_tool (per request, CPU)", "chat/async_openai.py", "maybe_forward_with_tool"),
    ("  ours: mcga_doc_to_messages", "mcga/hooks.py", "mcga_doc_to_messages"),
    ("    ours: audio_data_uri", "audio_bench_core/audio.py", "audio_data_uri"),
    ("      base64.b64encode", "base64.py", "b64encode"),
    ("  lmms-eval ChatMessages.to_openai_messages", "lmms_eval/protocol.py", "to_openai_messages"),
    ("  openai AsyncCompletions.create", "completions/completions.py", "create"),
    ("    openai _async_transform_recursive (params)", "_utils/_transform.py", "_async_transform_recursive"),
    ("    json iterencode (request body)", "json/encoder.py", "iterencode"),
    ("    httpx AsyncClient.send", "_client.py", "send"),
    ("ours: load_task_rows (start-up data check)", "mcga/data.py", "load_task_rows"),
)


def print_profile(path: Path) -> None:
    """Cumulative time (s, under cProfile) of the functions in :data:`PROFILE_LINES`: what the generation phase
    spends per request in lmms-eval's wrapper, our hooks and the openai client. A coroutine's time counts only while
    it runs (each resume is one "call"), so waiting for replies shows under ``select``."""
    import pstats

    stats = pstats.Stats(str(path)).stats
    print(f"  profile ({path}), cumulative seconds under cProfile:")
    for label, file_end, function in PROFILE_LINES:
        found = [
            (cum, calls)
            for (filename, _, name), (_, calls, _, cum, _) in stats.items()
            if name == function and filename.endswith(file_end)
        ]
        if found:
            cum, calls = max(found)
            print(f"    {cum:7.2f} s  {calls:6d} calls  {label}")


# ------------------------------------------------------------------------------------------------ main
MAIN = "lmms-eval async_openai"
CASES = (MAIN, "lmms-eval openai", "openai floor", "aiohttp floor")


def _one_case(case: str, server: LatencyServer, data_dir: Path, concurrency: int, docs: int, work: Path) -> Run:
    if case.startswith("lmms-eval"):
        return run_lmms_eval(server, data_dir, concurrency, docs, work, model=case.split()[1])
    return _floor_run(server, data_dir, concurrency, docs, case.split()[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=400, help="documents per run (issue size: 1000)")
    parser.add_argument("--latency", type=float, default=0.5, help="server latency per request, seconds")
    parser.add_argument("--repeats", type=int, default=2, help="alternating repetitions per concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=list(CONCURRENCIES))
    parser.add_argument(
        "--profile",
        type=Path,
        help="also run lmms-eval once under cProfile (highest concurrency) and write the profile here",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary data folder")
    args = parser.parse_args(argv)
    header(
        f"serving throughput: lmms-eval async_openai and openai, mcga_asr, {args.docs} documents, latency {args.latency} s"
    )
    work = Path(tempfile.mkdtemp(prefix="bench-serving-"))
    try:
        start = time.perf_counter()
        data_dir = write_asr_set(work, args.docs)
        size = sum(p.stat().st_size for p in data_dir.rglob("*.wav"))
        print(
            f"  data: {args.docs} synthetic 10-20 s clips, 16 kHz mono PCM-16, {size / 2**20:.0f} MiB, written in {time.perf_counter() - start:.1f} s ({data_dir})"
        )
        server = LatencyServer(args.latency, REPLY)
        big = max(args.concurrency)
        try:
            runs: dict[int, dict[str, list[Run]]] = {}
            for concurrency in args.concurrency:
                runs[concurrency] = {case: [] for case in CASES}
                for repeat in range(args.repeats):
                    for case in CASES if repeat % 2 == 0 else reversed(CASES):
                        run = _one_case(case, server, data_dir, concurrency, args.docs, work)
                        runs[concurrency][case].append(run)
                        is_cli = case.startswith("lmms-eval")
                        per_doc = run.generation_cpu_ms_per_doc() if is_cli else 1000 * run.cpu_s / run.docs
                        print(f"  c={concurrency:<3} {case:<22} generation {run.generation_wall:6.2f} s (efficiency {run.efficiency(args.latency):.3f}), "
                              f"client CPU {per_doc:4.1f} ms/doc while generating, server CPU {1000 * run.server_cpu_s / run.docs:3.1f} ms/doc, "
                              f"most in flight {run.max_in_flight}"
                              + (f"; whole run {run.total_wall:.1f} s, start-up {run.startup:.1f} s, peak RSS {run.peak_rss_mib:.0f} MiB "
                                 f"(sampled before / during / after generation: {run.rss_phases()})" if is_cli else ""), flush=True)  # fmt: skip
            quarters = {}
            for case in CASES[:2]:
                quarter = quarters[case] = run_lmms_eval(
                    server, data_dir, big, max(1, args.docs // 4), work, model=case.split()[1]
                )
                print(f"  c={big:<3} {case:<22} {quarter.docs} docs: generation {quarter.generation_wall:.2f} s, peak RSS {quarter.peak_rss_mib:.0f} MiB "
                      f"(before / during / after generation: {quarter.rss_phases()})", flush=True)  # fmt: skip
            profiled = (
                run_lmms_eval(server, data_dir, big, args.docs, work, profile=args.profile)
                if args.profile is not None
                else None
            )
        finally:
            server.close()
        for concurrency, cases in runs.items():
            value = {case: statistics.median(r.efficiency(args.latency) for r in cases[case]) for case in CASES}
            for case in CASES[:2]:
                docs_per_s = statistics.median(r.docs / r.generation_wall for r in cases[case])
                cpu_per_doc = statistics.median(r.generation_cpu_ms_per_doc() for r in cases[case])
                figure(f"serving_efficiency {case.split()[1]} concurrency={concurrency} latency={args.latency}s ({args.docs} docs)", value[case],
                       f">= {EFFICIENCY_GOAL}", value[case] >= EFFICIENCY_GOAL,
                       f"{docs_per_s:.1f} docs/s of ideal {concurrency / args.latency:.0f}, client CPU {cpu_per_doc:.1f} ms/doc; "
                       f"floors: plain AsyncOpenAI {value['openai floor']:.3f} (lmms-eval/it {value[case] / value['openai floor']:.3f}), "
                       f"aiohttp {value['aiohttp floor']:.3f}; generation walls {', '.join(f'{r.generation_wall:.2f}' for r in cases[case])} s")  # fmt: skip
        for case, quarter in quarters.items():
            full = runs[big][case]
            peak = statistics.median(r.peak_rss_mib for r in full)
            first, highest, last = full[-1].rss_during_generation()
            growth = (peak - quarter.peak_rss_mib) / peak
            figure(f"serving_peak_rss_growth {case.split()[1]} ({quarter.docs} -> {args.docs} docs, concurrency {big}, fraction of peak)", growth,
                   f"< {RSS_GROWTH_GOAL}", growth < RSS_GROWTH_GOAL,
                   f"peak RSS {quarter.peak_rss_mib:.0f} MiB -> {peak:.0f} MiB ({peak - quarter.peak_rss_mib:+.0f} MiB); during generation ({args.docs} docs): "
                   f"{first:.0f} MiB at the first request, {highest:.0f} MiB highest, {last:.0f} MiB at the last reply")  # fmt: skip
        if profiled is not None:
            print(
                f"  profiled run: generation {profiled.generation_wall:.2f} s (efficiency {profiled.efficiency(args.latency):.3f}, slowed by cProfile)"
            )
            print_profile(args.profile)
    finally:
        if args.keep:
            print(f"  kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
