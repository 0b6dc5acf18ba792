"""``lmms-eval-audio-tasks`` (or ``python -m lmms_eval_tasks.listing``): our task and group names, grouped by
benchmark, each with its one-line description.

lmms-eval 0.7.3 lists names only (``lmms-eval --tasks list``; ``lmms-eval tasks list`` shows ours only with
``--include-path``) and has no description field (the YAML key ``description`` is a prompt prefix), so each of
our YAML files carries its description as a ``# description: ...`` comment line in its header. Benchmarks
are discovered: every folder of :data:`lmms_eval_tasks.TASKS_DIR` holding ``*.yaml`` files is one.

    lmms-eval-audio-tasks              # every benchmark
    lmms-eval-audio-tasks parsa        # one benchmark (folder name)

Does not import lmms-eval.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from lmms_eval_tasks import TASKS_DIR

DESCRIPTION_PREFIX = "# description:"


@dataclass(frozen=True)
class TaskEntry:
    """One name from a task or group YAML: ``kind`` is ``"task"`` or ``"group"``; ``description`` may be ``""``."""

    name: str
    kind: str
    description: str
    path: Path


class _IgnoreTags(yaml.SafeLoader):
    """SafeLoader that reads ``!function x.y`` (and any other tag) as its plain value."""


_IgnoreTags.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else None)


def read_description(text: str) -> str:
    """The text after ``# description:`` in the header comments of a YAML file, or ``""``."""
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(DESCRIPTION_PREFIX):
            return line[len(DESCRIPTION_PREFIX) :].strip()
    return ""


def read_entry(path: Path) -> TaskEntry | None:
    """The task or group a YAML file defines (``task:`` a string, or a list with ``group:``), else ``None``.

    Raises:
        ValueError: the file is not valid YAML (names the file).
    """
    text = path.read_text(encoding="utf-8")
    try:
        config = yaml.load(text, Loader=_IgnoreTags) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from error
    if isinstance(config.get("task"), list) and isinstance(config.get("group"), str):
        return TaskEntry(config["group"], "group", read_description(text), path)
    if isinstance(config.get("task"), str):
        return TaskEntry(config["task"], "task", read_description(text), path)
    return None


def benchmarks(tasks_dir: Path = TASKS_DIR) -> dict[str, list[TaskEntry]]:
    """``{benchmark folder name: entries sorted by (groups first, name)}`` for every folder with ``*.yaml``."""
    found = {}
    for folder in sorted(p for p in tasks_dir.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        entries = [e for e in (read_entry(p) for p in sorted(folder.glob("*.yaml"))) if e is not None]
        if entries:
            found[folder.name] = sorted(entries, key=lambda e: (e.kind != "group", e.name))
    return found


def format_listing(found: dict[str, list[TaskEntry]]) -> str:
    """Text listing: one block per benchmark, one line per name (``(no description)`` where missing)."""
    lines = []
    for benchmark, entries in found.items():
        groups = sum(e.kind == "group" for e in entries)
        lines.append(f"{benchmark.upper()}  ({len(entries) - groups} tasks, {groups} group{'' if groups == 1 else 's'}; lmms_eval_tasks/{benchmark}/)")
        width = max(len(e.name) for e in entries) + 2
        for entry in entries:
            label = f"{entry.name} [group]" if entry.kind == "group" else entry.name
            lines.append(f"  {label:<{width + 8}}{entry.description or '(no description)'}")
        lines.append("")
    lines.append("Run: lmms-eval --tasks NAME[,NAME...] --model MODEL  (groups and tasks mix; see README.md)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lmms-eval-audio-tasks", description="Our lmms-eval tasks and groups, by benchmark, with descriptions.")
    parser.add_argument("benchmark", nargs="*", help="benchmark folder name(s), e.g. mcga parsa (default: all)")
    args = parser.parse_args(argv)
    found = benchmarks()
    unknown = [b for b in args.benchmark if b not in found]
    if unknown:
        print(f"lmms-eval-audio-tasks: unknown benchmark {', '.join(unknown)}; known: {', '.join(found)}", file=sys.stderr)
        return 2
    print(format_listing({b: e for b, e in found.items() if not args.benchmark or b in args.benchmark}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
