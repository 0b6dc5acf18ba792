"""The ``audio_judge`` llm_judge provider exported into upstream lmms-eval main, tested there with the plugin absent
(issue 28: the provider as its own pull request; README, 'Contributing upstream').

The snapshot of upstream main (``../shared/upstream/lmms-eval-main-75571cfe.tar.gz``, described in that folder's README)
is unpacked into a temporary folder; :func:`lmms_eval_tasks.upstream_export.export_judge_provider` writes the provider,
the judge core and the upstream-style tests (template ``lmms_eval_tasks/_upstream/test_audio_judge_provider.py``)
into it; then those tests run in a venv that holds this environment's packages but neither lmms-eval nor any file of
this plugin (no ``lmms_eval.models`` entry point, no plugin package importable), with the unpacked tree first on
``PYTHONPATH``: they import upstream main's ``lmms_eval`` and the exported modules only. About 20-30 s on 2 cores, most
of it upstream's own ``import lmms_eval.llm_judge`` (~16 s: it imports ``lmms_eval.tasks`` and ``evaluate``).

Skipped, with the reason, where the snapshot is absent (a user's clone has no ``../shared``); ``-m "not upstream"``
deselects it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile

import pytest

from lmms_eval_tasks import upstream_export
from tests.conftest import ROOT
from tests.test_upstream_cli import PLUGIN_PACKAGES, build_plugin_free_venv

pytestmark = pytest.mark.upstream
SNAPSHOT = ROOT.parent / "shared" / "upstream" / "lmms-eval-main-75571cfe.tar.gz"
#: The template's tests: 6 functions, and the request-fields one for 5 judge models.
EXPORTED_TESTS = 11


@pytest.fixture(scope="module")
def upstream_main(tmp_path_factory):
    """``(plugin-free python, lmms-eval tree, written files)``: upstream main unpacked, the provider exported into it."""
    if not SNAPSHOT.is_file():
        pytest.skip(f"no upstream lmms-eval snapshot at {SNAPSHOT} (present in the project's shared folder and CI, not in a user's clone)")
    base = tmp_path_factory.mktemp("upstream-provider")
    with tarfile.open(SNAPSHOT) as archive:
        archive.extractall(base, filter="data")
    tree = base / "lmms-eval"
    assert (tree / "lmms_eval" / "llm_judge" / "__init__.py").is_file(), sorted(p.name for p in base.iterdir())
    build_plugin_free_venv(base / "venv", lmms_eval_source=tree)
    written = upstream_export.export_judge_provider(tree)
    return base / "venv" / "bin" / "python", tree, written


def _run(python, tree, *args, timeout=600):
    """``python args...`` in ``tree`` with only ``tree`` on PYTHONPATH, offline, no judge or plugin settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUDIO_JUDGE_", "LMMS_EVAL_AUDIO_", "PYTHON"))}
    env.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", PYTHONUNBUFFERED="1")
    return subprocess.run([str(python), *args], capture_output=True, text=True, cwd=tree, env=env, timeout=timeout)


def test_the_export_writes_the_provider_the_judge_core_and_the_tests_formatted_as_upstream_formats(upstream_main):
    _, tree, written = upstream_main
    relative = sorted(str(path.relative_to(tree)) for path in written)
    assert relative[0] == "lmms_eval/llm_judge/providers/audio_judge.py" and relative[-1] == "test/eval/test_audio_judge_provider.py"
    assert {"judge.py", "judge_client.py", "judge_config.py", "judge_transport.py", "judge_cache.py"} <= {p.name for p in written if p.parent.name == "audio_bench"}
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert not [p for p in PLUGIN_PACKAGES if re.search(rf"^\s*(from|import) {p}\b", text, re.MULTILINE)], path
    files = [str(path) for path in written]
    black = subprocess.run([sys.executable, "-m", "black", "--check", "--quiet", "--line-length=240", *files], capture_output=True, text=True)
    assert black.returncode == 0, black.stderr[-3000:]
    isort = subprocess.run([sys.executable, "-m", "isort", "--check-only", "--profile", "black", *files], capture_output=True, text=True, cwd=tree)
    assert isort.returncode == 0, isort.stdout[-3000:] + isort.stderr[-3000:]


def test_the_exported_provider_tests_pass_on_upstream_main_without_the_plugin(upstream_main):
    python, tree, _ = upstream_main
    probe = _run(python, tree, "-c", "import importlib.metadata as m, importlib.util as u, json, lmms_eval; "
                 f"print(json.dumps([lmms_eval.__file__, [str(e) for e in m.entry_points(group='lmms_eval.models')], [n for n in {PLUGIN_PACKAGES!r} if u.find_spec(n)]]))")  # fmt: skip
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert json.loads(probe.stdout) == [str(tree / "lmms_eval" / "__init__.py"), [], []]
    done = _run(python, tree, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test/eval/test_audio_judge_provider.py")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(rf"^{EXPORTED_TESTS} passed in ", done.stdout.splitlines()[-1]), done.stdout[-500:]
