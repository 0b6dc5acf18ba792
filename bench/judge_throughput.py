"""The judge (:class:`audio_bench_core.judge.Judge`) against a local chat-completions server with fixed latency.

The server is ``tests/chat_server.py`` (a real HTTP server, one thread per request, so unlimited parallelism)
started in a separate process on 127.0.0.1, replying after a fixed delay. Figures:

- efficiency at concurrency 8 and 32 with 0.2 s and 1 s latency: ideal time (calls x latency / concurrency)
  / measured wall time of ``Judge.complete_many`` (fresh cache, so every call goes over HTTP; goal >= 0.90), beside
  the efficiency of a floor making the same calls with plain ``urllib`` threads (what machine and server allow),
  the two alternating on the same server; and the judge's CPU per call;
- a cached re-score: a new ``Judge`` (a new pass, as a re-run makes) over 1,000 requests already in the cache
  (goal < 1 s; 0 API calls);
- the circuit breaker with a dead endpoint (connection refused) and with a hanging one (accepts, never
  answers; ``timeout_s`` 2 s here): wall time until 1,000 requests come back judge_failed (goal: seconds).

Quick default (:func:`default_calls`): 1,000 calls at 0.2 s / 32 (the issue's case), 250 at 0.2 s / 8, 8 waves
at 1 s (64 and 256 calls); 3 repetitions for 0.2 s and 1 for 1 s (about 2.5 minutes).
``--calls 1000 --repeats 3`` is the issue's size for every case (about 20 minutes).

Usage: ``python -m bench.judge_throughput [--calls N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._server import LatencyServer
from bench._timing import figure, header

EFFICIENCY_GOAL = 0.90
CACHED_GOAL_S = 1.0
KEY_VAR = "BENCH_JUDGE_KEY"

def _requests(n: int, tag: str):
    from audio_bench_core.judge import JudgeRequest

    return [JudgeRequest.of([{"role": "user", "content": f"{tag} item {i}: score 1-5"}], 10) for i in range(n)]


def _judge(url: str, concurrency: int, cache: Path, **overrides):
    from audio_bench_core.judge import Judge, JudgeConfig

    config = JudgeConfig(base_url=url, model="bench", api_key_var=KEY_VAR, concurrency=concurrency, cache_path=cache, **overrides)
    return Judge(config)


def efficiency(latency: float, concurrency: int, calls: int, repeats: int, folder: Path) -> dict[str, list[float]]:
    """Walls (s) of ``repeats`` judge passes (``Judge.complete_many``, fresh cache: every call goes over HTTP) and of
    as many floor passes (:func:`raw_http_floor`) of ``calls`` calls each, alternating on one server (order reversed
    on odd rounds, so neither side always runs first), and the judge passes' CPU seconds (this process, all threads)."""
    server = LatencyServer(latency, "3")
    out: dict[str, list[float]] = {"judge": [], "judge_cpu": [], "floor": []}

    def judge_pass(repeat: int) -> None:
        judge = _judge(server.url, concurrency, folder / f"eff-{latency}-{concurrency}-{repeat}.sqlite3")
        requests = _requests(calls, f"eff {latency} {concurrency} {repeat}")
        cpu, start = time.process_time(), time.perf_counter()
        replies = judge.complete_many(requests, description="bench")
        out["judge"].append(time.perf_counter() - start)
        out["judge_cpu"].append(time.process_time() - cpu)
        failed = sum(not r.ok for r in replies)
        if failed or judge.stats["api_calls"] != calls:
            raise RuntimeError(f"{failed} failed replies, {judge.stats['api_calls']} API calls for {calls} requests")

    def floor_pass(repeat: int) -> None:
        out["floor"].append(raw_http_floor(server.url, concurrency, calls))

    try:
        for repeat in range(repeats):
            for one in (judge_pass, floor_pass) if repeat % 2 == 0 else (floor_pass, judge_pass):
                one(repeat)
    finally:
        server.close()
    return out


def raw_http_floor(url: str, concurrency: int, calls: int) -> float:
    """Wall (s) of the same calls as plain ``urllib.request`` POSTs from a ``ThreadPoolExecutor`` of ``concurrency``
    threads (no openai client, no cache, no retries): what this machine and this server allow."""
    import json
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    def post(index: int) -> str:
        body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": f"raw {index}"}], "max_tokens": 10}).encode()
        request = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json", "Authorization": "Bearer k"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["choices"][0]["message"]["content"]

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        assert all(pool.map(post, range(calls)))
    return time.perf_counter() - start


def cached_rescore(folder: Path, calls: int = 1000) -> tuple[float, int]:
    """Seconds for a new pass over ``calls`` requests already cached, and the API calls it made."""
    server = LatencyServer(0.0, "3")
    cache = folder / "cached.sqlite3"
    requests = _requests(calls, "cached")
    try:
        _judge(server.url, 32, cache).complete_many(requests, description="bench fill")
        judge = _judge(server.url, 8, cache)
        start = time.perf_counter()
        replies = judge.complete_many(requests, description="bench cached")
        wall = time.perf_counter() - start
    finally:
        server.close()
    assert all(r.ok and r.cached for r in replies)
    return wall, judge.stats["api_calls"]


def _hanging_endpoint() -> tuple[str, socket.socket]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    held = []
    threading.Thread(target=lambda: [held.append(listener.accept()) for _ in iter(int, 1)], daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", listener


def breaker(folder: Path, calls: int = 1000) -> dict[str, tuple[float, int, int]]:
    """``{endpoint kind: (seconds, API calls made, judge_failed replies)}`` for ``calls`` requests at concurrency 8."""
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_url = f"http://127.0.0.1:{dead.getsockname()[1]}/v1"
    dead.close()  # nothing listens there: connection refused
    hanging_url, listener = _hanging_endpoint()
    out = {}
    for kind, url, overrides in (("dead (connection refused)", dead_url, {}), ("hanging (timeout_s=2)", hanging_url, {"timeout_s": 2.0})):
        judge = _judge(url, 8, folder / f"breaker-{len(out)}.sqlite3", **overrides)
        start = time.perf_counter()
        replies = judge.complete_many(_requests(calls, f"breaker {kind}"), description="bench breaker")
        out[kind] = (time.perf_counter() - start, judge.stats["api_calls"], sum(not r.ok for r in replies))
    listener.close()
    return out


def default_calls(latency: float, concurrency: int) -> int:
    """Quick size: 8 waves, or more so that a pass's ideal time is at least that of the issue's case (1,000 calls at
    0.2 s and concurrency 32: 6.25 s; the start of a pass, 32 threads opening their first connections, costs about
    0.1 s, which would weigh more in a shorter pass), at most 1,000 calls."""
    return max(8 * concurrency, min(1000, round(1000 * 0.2 / 32 * concurrency / latency)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=0, help="calls per efficiency case (default: default_calls(): 1,000 at 0.2 s / 32)")
    parser.add_argument("--repeats", type=int, default=0, help="repetitions per case (default 3 at 0.2 s, 1 at 1 s)")
    args = parser.parse_args(argv)
    os.environ[KEY_VAR] = "bench-local-key"
    os.environ.setdefault("TQDM_DISABLE", "1")
    header("judge throughput against a local server")
    folder = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    for latency in (0.2, 1.0):
        for concurrency in (8, 32):
            calls = args.calls or default_calls(latency, concurrency)
            repeats = args.repeats or (3 if latency < 1 else 1)
            walls = efficiency(latency, concurrency, calls, repeats, folder)
            ideal = calls * latency / concurrency
            value, floor = ideal / statistics.median(walls["judge"]), ideal / statistics.median(walls["floor"])
            cpu_ms = 1000 * statistics.median(walls["judge_cpu"]) / calls
            figure(f"judge_efficiency latency={latency}s concurrency={concurrency} ({calls} calls)", value, f">= {EFFICIENCY_GOAL}", value >= EFFICIENCY_GOAL,
                   f"ideal {ideal:.2f} s, walls {', '.join(f'{w:.2f}' for w in walls['judge'])} s, judge CPU {cpu_ms:.2f} ms per call; "
                   f"floor (plain urllib threads, alternating on the same server) reaches {floor:.3f}, judge/floor {value / floor:.3f}")  # fmt: skip
    wall, api_calls = cached_rescore(folder)
    figure("judge_cached_rescore_seconds (1000 cached items, new pass)", wall, f"< {CACHED_GOAL_S} s", wall < CACHED_GOAL_S and api_calls == 0, f"{api_calls} API calls")
    for kind, (seconds, api_calls, failed) in breaker(folder).items():
        figure(f"judge_breaker_seconds {kind}, 1000 items", seconds, "seconds, not hours", seconds < 60, f"{api_calls} API calls, {failed} judge_failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
