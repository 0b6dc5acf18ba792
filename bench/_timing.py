"""Shared timing helpers of the bench scripts (not a test; CI does not run them).

Every figure is a ratio of two measurements taken in the same process, in alternating order, several times;
the medians are compared. Wall time is ``time.perf_counter``, CPU time ``time.process_time`` (all threads of
this process). Peak memory is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (KiB on Linux).
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Measured:
    """Medians (seconds) of one case over its repetitions."""

    name: str
    wall: list[float]
    cpu: list[float]

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


def alternate(cases: dict[str, Callable[[], object]], repeats: int, setup: Callable[[], None] | None = None) -> dict[str, Measured]:
    """Run every case ``repeats`` times, the cases in turn (order reversed on odd rounds, so neither side always
    runs first); ``setup`` (untimed) runs before every timed call, e.g. to empty caches for a cold measurement.

    Returns:
        ``{name: Measured}`` with one wall and one CPU time (seconds) per repetition.
    """
    results = {name: Measured(name, [], []) for name in cases}
    names = list(cases)
    for round_number in range(repeats):
        for name in names if round_number % 2 == 0 else reversed(names):
            if setup is not None:
                setup()
            wall, cpu = time.perf_counter(), time.process_time()
            cases[name]()
            results[name].wall.append(time.perf_counter() - wall)
            results[name].cpu.append(time.process_time() - cpu)
    return results


def machine() -> str:
    """One line describing this machine (CPU count, load at the time of measurement, Python)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} CPUs, 1-min load {load:.1f}, Python {platform.python_version()}, {platform.machine()}"


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def figure(name: str, value: float, goal: str, met: bool | None, detail: str = "") -> str:
    """One result line: ``FIGURE name: value (goal ...) [met|NOT MET|no goal] detail``; printed and returned."""
    verdict = "no goal" if met is None else ("met" if met else "NOT MET")
    line = f"FIGURE {name}: {value:.3g} (goal {goal}) [{verdict}]" + (f"  {detail}" if detail else "")
    print(line, flush=True)
    return line


def report(results: dict[str, Measured]) -> None:
    """Print each case's median wall and CPU time (ms) and its repetitions."""
    for m in results.values():
        print(f"  {m.name:<42} wall {1000 * m.wall_median:9.1f} ms   cpu {1000 * m.cpu_median:9.1f} ms   (n={len(m.wall)})", flush=True)


def header(title: str) -> None:
    print(f"== {title}  [{machine()}]", flush=True)


def skip(reason: str) -> None:
    """Say loudly that a comparison was skipped, and why."""
    print(f"SKIPPED: {reason}", file=sys.stderr, flush=True)
    print(f"SKIPPED: {reason}", flush=True)
