"""The printed-table pull request (lmms_eval_tasks/upstream_table.py): the edit applied to upstream main's
``make_table`` (../shared/upstream/lmms-eval-main-75571cfe.tar.gz) and to the installed wheel's, upstream's formatters
leaving it and its test unchanged, that test failing before the edit and passing after, the edit's refusals, and the
pull request description."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tarfile
from importlib.metadata import distribution

import pytest

from lmms_eval_tasks import upstream_series
from lmms_eval_tasks import upstream_table as table
from lmms_eval_tasks.upstream_export import ROOT, ExportError

UPSTREAM = ROOT.parent / "shared" / "upstream"
ARCHIVE = UPSTREAM / "lmms-eval-main-75571cfe.tar.gz"
TEMPLATE = ROOT / "lmms_eval_tasks" / "_upstream" / "test_make_table.py"
#: What the test run in the tree needs: the package, upstream's pytest settings and test/conftest.py.
NEEDED = ("lmms-eval/lmms_eval/", "lmms-eval/pyproject.toml", "lmms-eval/test/__init__.py", "lmms-eval/test/conftest.py", "lmms-eval/test/eval/__init__.py")
VALIDATION = "`python -m pytest test/eval/test_make_table.py` | sample size: `N=2 tests` | key metrics: `2 passed` | result: `pass`"


def _wheel_utils(tmp_path):
    """A copy of the installed lmms-eval's ``lmms_eval/utils.py`` under ``tmp_path``; returns the copy's text."""
    text = distribution("lmms_eval").locate_file("lmms_eval/utils.py").read_text(encoding="utf-8")
    (tmp_path / "lmms_eval").mkdir()
    (tmp_path / "lmms_eval/utils.py").write_text(text, encoding="utf-8")
    return text


def _run_upstream_test(tree):
    """The template test run in ``tree`` with the tree first on PYTHONPATH; (lmms_eval.__file__ as imported, pytest's summary line)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]), "HF_HUB_OFFLINE": "1"}
    code = "import sys, lmms_eval, pytest; print(lmms_eval.__file__); sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'test/eval/test_make_table.py']))"
    run = subprocess.run([sys.executable, "-c", code], check=False, cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr
    return lines[0], lines[-1]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"{UPSTREAM} is absent (upstream lmms-eval main is there in CI and the project's workplace, not in a clone)")
def test_on_upstream_main_the_edit_passes_upstreams_formatters_and_its_test(tmp_path):
    with tarfile.open(ARCHIVE) as archive:
        archive.extractall(tmp_path, members=[m for m in archive.getmembers() if m.name.startswith(NEEDED)], filter="data")
    tree = tmp_path / "lmms-eval"
    shutil.copy(TEMPLATE, tree / "test/eval/test_make_table.py")

    imported, summary = _run_upstream_test(tree)  # before the edit: numpy numbers are rows, the dict and text too
    assert imported == str(tree / "lmms_eval/__init__.py")
    assert re.fullmatch(r"1 failed, 1 passed in [\d.]+s", summary), summary

    before = (tree / "lmms_eval/utils.py").read_text(encoding="utf-8")
    assert table.patch_make_table(tree) is True
    after = (tree / "lmms_eval/utils.py").read_text(encoding="utf-8")
    assert table.patch_make_table(tree) is False  # already applied
    assert (tree / "lmms_eval/utils.py").read_text(encoding="utf-8") == after
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))[2:]
    assert sum(line.startswith("+") for line in diff) == 7 and sum(line.startswith("-") for line in diff) == 0

    files = ["lmms_eval/utils.py", "test/eval/test_make_table.py"]
    for tool in (["black", "--line-length=240", "--check"], ["isort", "--profile", "black", "--check-only"]):
        run = subprocess.run([sys.executable, "-m", *tool, *files], check=False, cwd=tree, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr

    imported, summary = _run_upstream_test(tree)
    assert imported == str(tree / "lmms_eval/__init__.py")
    assert re.fullmatch(r"2 passed in [\d.]+s", summary), summary


def test_on_the_wheels_make_table_the_edit_adds_seven_lines_and_keeps_numpy_numbers(tmp_path):
    import importlib.util

    import numpy as np

    before = _wheel_utils(tmp_path)
    assert table.patch_make_table(tmp_path) is True
    after = (tmp_path / "lmms_eval/utils.py").read_text(encoding="utf-8")
    added = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    assert len(added) == 7 and all(line.startswith("+ ") for line in added)
    spec = importlib.util.spec_from_file_location("patched_wheel_utils", tmp_path / "lmms_eval/utils.py")
    patched = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patched)
    values = {"acc,none": np.float32(0.75), "count,none": np.int64(12), "ok,none": np.bool_(True), "ci95,none": (0.1, 0.2), "n_by_genre,none": {"诗": 3}}
    printed = patched.make_table({"results": {"t": {"alias": "t", **values}}, "n-shot": {"t": 0}, "higher_is_better": {"t": {}}})
    rows = {cells[3].strip(): cells[5].strip() for cells in (line.strip("|").split("|") for line in printed.splitlines() if line.startswith("|t "))}
    assert rows == {"acc": "0.75", "count": "12", "ok": "1"}
    assert printed.splitlines()[-1] == "Not shown above (not numbers; in the results JSON): ci95 (t); n_by_genre (t)"


def test_the_edit_refuses_a_make_table_it_was_not_written_for(tmp_path):
    text = _wheel_utils(tmp_path)
    path = tmp_path / "lmms_eval/utils.py"
    path.write_text(text.replace("            # Save original numeric value for diff calculation\n", ""), encoding="utf-8")
    with pytest.raises(ExportError, match=re.escape(f"{path}: make_table differs from the one of lmms-eval main 75571cfe ('# Save original numeric value for diff calculation' found 0 times)")):
        table.patch_make_table(tmp_path)
    path.write_text(text.replace("    values = []\n", "    values = []\n    not_shown = {}\n", 1), encoding="utf-8")  # the earlier edit's first line
    with pytest.raises(ExportError, match=re.escape(f"{path}: make_table was changed by an earlier --patch-make-table")):
        table.patch_make_table(tmp_path)
    path.write_text(text.replace("import numpy as np", "import numpy", 1), encoding="utf-8")
    with pytest.raises(ExportError, match=re.escape(f"{path}: no `import numpy as np`")):
        table.patch_make_table(tmp_path)
    assert path.read_text(encoding="utf-8") == text.replace("import numpy as np", "import numpy", 1)  # nothing written
    path.write_text("def other():\n    pass\n", encoding="utf-8")
    with pytest.raises(ExportError, match=re.escape(f"{path}: no make_table function")):
        table.patch_make_table(tmp_path)


TABLE_PR = next(pr for pr in upstream_series.SERIES if pr.branch == "table-numbers")


def test_pr_description_fills_upstreams_template():
    text = upstream_series.describe(TABLE_PR, [VALIDATION])
    titles = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert titles == ["Summary", "In scope", "Out of scope", "Validation", "Risk / Compatibility", "Type of Change"]
    summary = text.split("## Summary\n")[1].split("\n## ")[0]
    assert len(re.findall(r"^- ", summary, re.MULTILINE)) == 3
    assert f"## Validation\n- {VALIDATION}\n" in text
    assert re.findall(r"^- \[x\] (.+)$", text, re.MULTILINE) == ["Bug fix (non-breaking change)"]
    assert len(re.findall(r"^- \[ \] ", text, re.MULTILINE)) == 6
    assert "7 added lines" in text


@pytest.mark.parametrize(
    "lines",
    [[], [VALIDATION] * 4, ["`pytest` | N=2 | pass"], [VALIDATION.replace("`pass`", "`ok`")]],
)
def test_pr_description_refuses_validation_lines_not_in_the_templates_form(lines):
    with pytest.raises(ValueError, match=re.escape("table-numbers: Validation must be 1-3 lines of the form")):
        upstream_series.describe(TABLE_PR, lines)
