"""Install torch for ``make setup`` and say which build was installed.

    python scripts/install_torch.py [--version 2.13.0] [--index-url URL | --index-url ""]

1. ``pip install torch==VERSION --index-url URL`` (default: the PyTorch CPU index, so pip does not pull the
   multi-GB CUDA build that PyPI's Linux torch is);
2. if that fails (index unreachable, e.g. behind a firewall), ``pip install torch==VERSION`` from pip's own
   configured index, saying so;
3. imports the installed torch and prints one line: ``torch X: CPU-only build`` or
   ``torch X: CUDA Y build``. A CUDA build where a CPU build was asked for is printed as a warning box (the
   install still works, on CPU too; it is only larger).

Run with the interpreter of the target environment (``.venv/bin/python``). Exit status: pip's, if both
installs failed; 0 otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PROBE = "import torch; print(torch.__version__); print(torch.version.cuda or '')"


def pip_install_commands(python: str, version: str, index_url: str) -> list[list[str]]:
    """The pip commands to try in order: from ``index_url`` (if given), then from pip's configured index."""
    plain = [python, "-m", "pip", "install", "--quiet", f"torch=={version}"]
    return ([plain + ["--index-url", index_url, "--retries", "1", "--timeout", "30"]] if index_url else []) + [plain]


def describe_build(version: str, cuda: str) -> str:
    """One line naming the installed build: ``torch 2.13.0: CPU-only build`` or ``... CUDA 12.8 build``."""
    return f"torch {version}: CUDA {cuda} build (runs on CPU too; the CUDA libraries take several GB)" if cuda else f"torch {version}: CPU-only build"


def install(python: str, version: str, index_url: str, run=subprocess.run, say=print) -> int:
    """Install torch (see the module docstring); returns an exit status. ``run``/``say`` are injectable for tests."""
    commands = pip_install_commands(python, version, index_url)
    for number, command in enumerate(commands):
        if run(command).returncode == 0:
            break
        if number + 1 < len(commands):
            say(f"install_torch: torch=={version} from {index_url} failed (index unreachable?); falling back to pip's configured index "
                "(on Linux, PyPI's torch is the CUDA build)")  # fmt: skip
    else:
        say(f"install_torch: pip could not install torch=={version}")
        return 1
    probe = run([python, "-c", PROBE], capture_output=True, text=True)
    if probe.returncode != 0:
        say(f"install_torch: torch was installed but does not import: {probe.stderr.strip().splitlines()[-1:]}")
        return 1
    installed, cuda = (probe.stdout.splitlines() + ["", ""])[:2]
    line = describe_build(installed.strip(), cuda.strip())
    if cuda.strip() and index_url == CPU_INDEX:
        bar = "!" * 78
        say(f"{bar}\n! install_torch: a CPU-only torch was asked for, but this is installed:\n! {line}\n"
            f"! To get the CPU build: {python} -m pip install --force-reinstall torch=={version} --index-url {CPU_INDEX}\n{bar}")  # fmt: skip
    else:
        say(f"install_torch: {line}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="2.13.0")
    parser.add_argument("--index-url", default=CPU_INDEX, help=f"tried first; empty = only pip's configured index (default {CPU_INDEX})")
    args = parser.parse_args(argv)
    return install(sys.executable, args.version, args.index_url)


if __name__ == "__main__":
    sys.exit(main())
