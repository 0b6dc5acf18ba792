"""A non-editable install carries every data file the packages read.

`make setup` installs the checkout in editable mode, so a file missing from `[tool.setuptools.package-data]`
would only show for users of `pip install .` or a wheel: the shipped samples, task YAML or report fonts would
be absent there. This builds the wheel from a copy of the tracked files (no build isolation: setuptools from
`.venv`, no network; a copy, so setuptools' `build/` folder neither lands in the checkout nor feeds the wheel
stale files) and compares its contents with the files git tracks in the package folders.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("audio_bench_core", "audio_bench_report", "lmms_eval_tasks", "mcga", "parsa", "mmac")


def _tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know which files are tracked")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True).stdout
    return [path for path in listed.split("\n") if path and (ROOT / path).is_file()]


def test_wheel_holds_every_tracked_package_file(tmp_path):
    tracked = _tracked_files()
    source = tmp_path / "source"
    for path in tracked:
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, source / path)
    package_files = {path for path in tracked if path.split("/")[0] in PACKAGES}
    assert any(p.endswith(".wav") for p in package_files) and any(p.endswith(".yaml") for p in package_files)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(package_files - in_wheel)
    assert not missing, f"{len(missing)} tracked package files are not in the wheel (package-data in pyproject.toml): {missing[:10]}"
