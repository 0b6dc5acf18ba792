"""The pull-request series on upstream main (README, 'Contributing upstream'; issue 28).

One module fixture unpacks upstream lmms-eval main (``../shared/upstream/lmms-eval-main-75571cfe.tar.gz``) into a
git checkout, builds a plugin-free venv whose ``lmms_eval`` is that checkout (this environment's other packages
linked, as tests/test_upstream_cli.py does), and runs ``lmms-eval-audio-export series CHECKOUT --validate VENV_PYTHON``,
which runs each branch's own tests there. Then, per branch: it is built on the branch it names, its description is
upstream's template with a passing Validation line, upstream's pre-commit hooks (black ``--line-length=240``, isort
``--profile black``: the tools the hooks run, with their arguments; pre-commit itself cannot fetch its hook
environments offline) leave it unchanged, and nothing in it names the plugin. Without ``../shared/upstream/`` (a
user's clone) the module skips, saying so.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from lmms_eval_tasks import upstream_export, upstream_series
from tests.conftest import ROOT
from tests.test_upstream_cli import build_plugin_free_venv

pytestmark = [pytest.mark.cli, pytest.mark.upstream]
TARBALL = ROOT.parent / "shared" / "upstream" / "lmms-eval-main-75571cfe.tar.gz"
PREFIX = "audio-bench/"
#: What names the plugin: its packages, commands, documents and variables (issue 28: none may be exported).
PLUGIN_MARKERS = re.compile(r"lmms_eval_tasks|audio_bench_core|lmms[-_]eval[-_]audio[-_]plugin|LMMS_EVAL_AUDIO_PLUGIN|\bplugin\b|mcga-report|mcga-data|parsa-data|mmac-data|audio-bench-(report|compare|judge)|docs/(judge|running|report)\.md|python -m (mcga|parsa|mmac)\.")


def git(root: Path, *args: str) -> str:
    return upstream_series.git(root, *args)


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    """``(checkout, venv python, {branch: BranchResult})`` after the series was written into upstream main."""
    if not TARBALL.is_file():
        pytest.skip(f"{TARBALL} is absent (only the project's CI and workplace have ../shared/upstream/)")
    base = tmp_path_factory.mktemp("series")
    with tarfile.open(TARBALL) as archive:
        archive.extractall(base, filter="data")
    checkout = base / "lmms-eval"
    git(checkout, "init", "-q")
    git(checkout, "add", "-A")
    git(checkout, "-c", "user.name=upstream", "-c", "user.email=upstream@example.org", "commit", "-q", "-m", "lmms-eval main 75571cfe")
    git(checkout, "config", "user.name", "contributor")
    git(checkout, "config", "user.email", "contributor@example.org")
    site = build_plugin_free_venv(base / "venv", lmms_eval_source=checkout)
    python = str(base / "venv" / "bin" / "python")
    probe = subprocess.run([python, "-c", "import importlib.util as u, lmms_eval; print(lmms_eval.__file__, [n for n in ('lmms_eval_tasks', 'audio_bench_core', 'mcga') if u.find_spec(n)])"], capture_output=True, text=True, cwd=base)
    assert probe.returncode == 0 and probe.stdout.split()[0].startswith(str(checkout)) and probe.stdout.rstrip().endswith("[]"), (probe.stdout, probe.stderr, site)
    results = upstream_series.write_series(checkout, PREFIX, python)
    return checkout, python, {r.branch.removeprefix(PREFIX): r for r in results}


def test_each_branch_is_built_on_its_base_and_described_in_upstreams_template(series):
    checkout, _, results = series
    head = git(checkout, "rev-parse", "master").strip()
    assert list(results) == [pr.branch for pr in upstream_series.SERIES] and "mmac" not in results  # MMAC is held
    for pr in upstream_series.SERIES:
        base = head if pr.base is None else git(checkout, "rev-parse", PREFIX + pr.base).strip()
        assert git(checkout, "rev-parse", f"{PREFIX}{pr.branch}~1").strip() == base, pr.branch  # one commit on its base
        message = git(checkout, "log", "-1", "--format=%B", PREFIX + pr.branch)
        sections = re.findall(r"^## (.+)$", message, flags=re.M)
        assert sections == ["Summary", "In scope", "Out of scope", "Validation", "Risk / Compatibility", "Type of Change"], pr.branch
        validation = message.split("## Validation\n")[1].split("\n\n")[0].splitlines()
        assert validation and all(re.fullmatch(r"- `[^`]+` \| sample size: `N=\d+ (tests|items)` \| key metrics: `[^`]+` \| result: `pass`", line) for line in validation), (pr.branch, validation)
        assert results[pr.branch].passed is True and results[pr.branch].added > 0
    sizes = {folder: lines for result in results.values() for folder, lines in result.sizes.items()}
    assert set(sizes) == {folder for _, folder in upstream_series.SIZE_GOALS}
    # Issue 28's line goals (SIZE_GOALS) are not met yet (README, 'Contributing upstream'); these ceilings, the sizes
    # measured on 2026-12-03, keep the folders from growing until they are.
    ceilings = {"lmms_eval/tasks/mcga": 3150, "lmms_eval/tasks/parsa": 4500, "lmms_eval/tasks/_task_utils/audio_bench": 4800}
    assert {folder: lines for folder, lines in sizes.items() if lines > ceilings[folder]} == {}, sizes


def test_upstreams_pre_commit_hooks_leave_every_branch_unchanged(series):
    checkout, _, results = series
    for name, result in results.items():
        git(checkout, "checkout", "-q", result.branch)
        changed = [str(checkout / p) for p in git(checkout, "diff", "--name-only", "--diff-filter=AM", result.base, "HEAD").split() if p.endswith(".py")]
        assert changed or name == "table-numbers" or name == "parsa-settings", name
        for tool in (["black", "--check", "--quiet", "--line-length=240"], ["isort", "--check-only", "--profile", "black"]):
            done = subprocess.run([sys.executable, "-m", *tool, *changed], capture_output=True, text=True, cwd=checkout) if changed else None
            assert done is None or done.returncode == 0, (name, tool[0], done.stdout[-2000:], done.stderr[-2000:])
    git(checkout, "checkout", "-q", "master")


def test_the_branches_merge_together_and_share_code_once(series):
    checkout, python, results = series
    git(checkout, "checkout", "-q", "-b", "all-merged", results["mcga"].branch)
    try:
        for name in ("parsa-settings", "table-numbers"):
            git(checkout, "merge", "-q", "--no-edit", results[name].branch)  # raises on a conflict
        tasks = checkout / "lmms_eval" / "tasks"
        files = {p: p.read_bytes() for name in ("mcga", "parsa") for p in (tasks / name).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        by_content: dict[bytes, list[Path]] = {}
        for path, content in files.items():
            by_content.setdefault(content, []).append(path)
        assert not [paths for paths in by_content.values() if len({p.relative_to(tasks).parts[0] for p in paths}) > 1]  # nothing copied per folder
        assert (tasks / "_task_utils" / "audio_bench" / "responses.py").is_file() and not (tasks / "mcga" / "shared").exists()
        exported = [*files, *(tasks / "_task_utils" / "audio_bench").rglob("*.py"), checkout / "lmms_eval/llm_judge/providers/audio_judge.py", *(checkout / "test/eval" / name for name in ("test_mcga.py", "test_parsa.py", upstream_export.PROVIDER_TEST, "test_make_table.py"))]
        references = [f"{p.relative_to(checkout)}:{n}: {line.strip()[:120]}" for p in exported if p.suffix != ".json" for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1) if PLUGIN_MARKERS.search(line)]
        assert not references, f"{len(references)} references to the plugin:\n" + "\n".join(references)
    finally:
        git(checkout, "reset", "-q", "--hard")
        git(checkout, "checkout", "-q", "master")
