"""One-way layers: ``audio_bench_core`` (framework-free shared code) <- ``mcga``, ``parsa``, ``mmac`` (benchmarks)
<- ``lmms_eval_tasks`` (lmms-eval glue). Checked in the source (every import, inside functions too) and at run time."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

GLUE = ("lmms_eval", "lmms_eval_tasks")
#: What each lower-layer package may import of this project (besides itself). The benchmarks' report layouts use the
#: report package, which reads results files and imports neither layer above.
MAY_IMPORT = {
    "audio_bench_core": set(),
    "mcga": {"audio_bench_core", "audio_bench_report"},
    "parsa": {"audio_bench_core", "audio_bench_report"},
    "mmac": {"audio_bench_core", "audio_bench_report"},
}
PROJECT = {*MAY_IMPORT, "lmms_eval_tasks", "audio_bench_report"}


def imported_packages(source: str) -> set[str]:
    """Top-level names of every absolute import in ``source``, wherever it sits."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_lower_layers_import_neither_the_glue_nor_lmms_eval_nor_a_layer_above(package):
    wrong = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        found = imported_packages(path.read_text(encoding="utf-8"))
        bad = sorted(name for name in found if name in GLUE or (name in PROJECT and name != package and name not in MAY_IMPORT[package]))
        if bad:
            wrong[str(path.relative_to(ROOT))] = bad
    assert wrong == {}


def test_importing_every_lower_layer_module_loads_no_glue():
    modules = sorted(
        f"{package}.{info.name}" if info.name else package
        for package in MAY_IMPORT
        for info in [*pkgutil.iter_modules([str(ROOT / package)]), pkgutil.ModuleInfo(None, "", True)]
    )
    code = f"import importlib, json, sys\nfor m in {modules!r}: importlib.import_module(m.rstrip('.'))\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(GLUE)!r})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert len(modules) > 30  # every module of the four packages was imported
