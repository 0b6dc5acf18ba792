"""The local chat-completions server the bench scripts measure against: ``tests/chat_server.py`` in a child process
with a fixed latency, unlimited parallelism (a thread per request) and a listen backlog of 1,024."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_SERVER = """
import json, resource, sys
from http.server import ThreadingHTTPServer
ThreadingHTTPServer.request_queue_size = 1024  # listen backlog (socketserver's default 5 drops bursts of connections: 1 s SYN retries)
from tests.chat_server import ChatServer
server = ChatServer(lambda messages: sys.argv[2], delay_s=float(sys.argv[1]), record_bodies=False)
server.__enter__()
print(server.url, flush=True)
for line in sys.stdin:  # each line asks for the (arrival, reply) times served since the last one
    served, server.served = server.served, []
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"served": served, "max_in_flight": server.max_in_flight, "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)
    server.max_in_flight = 0
"""


class LatencyServer:
    """``tests/chat_server.py`` in a child process: fixed ``latency_s``, always replying ``reply``, no bodies kept."""

    def __init__(self, latency_s: float, reply: str) -> None:
        root = str(Path(__file__).resolve().parents[1])
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, str(latency_s), reply], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env={**os.environ, "PYTHONPATH": root})  # fmt: skip
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.close()
            raise RuntimeError(f"local chat server did not start (got {self.url!r})")
        self._cpu = 0.0
        self.take_served()  # start counting the server's CPU from here

    def take_served(self) -> tuple[list[tuple[float, float]], int, float]:
        """``([(arrival, reply sent), ...], most requests in flight at once, server CPU seconds)`` since the last call."""
        self.process.stdin.write("stats\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        cpu, self._cpu = answer["cpu_s"] - self._cpu, answer["cpu_s"]
        return [tuple(pair) for pair in answer["served"]], answer["max_in_flight"], cpu

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
