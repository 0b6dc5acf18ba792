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

import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from lmms_eval_tasks import upstream_export, upstream_series
from tests.chat_server import ChatServer
from tests.conftest import ROOT
from tests.test_cli_end_to_end import run_cli, samples
from tests.test_judge_cli import judge_env
from tests.test_upstream_cli import (
    _judge_reply,
    _write_from_log,
    assert_numbers_or_null,
    assert_same_figures,
    build_plugin_free_venv,
    model_answer,
    plugin_replay_run,
)

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
    # measured on 2026-12-06 (2,462, 3,749 and 2,023 lines), keep the folders from growing until they are.
    ceilings = {"lmms_eval/tasks/mcga": 2480, "lmms_eval/tasks/parsa": 3760, "lmms_eval/tasks/_task_utils/audio_bench": 2040}
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


#: The tasks of one CLI run on the merged branches (MMAC is held: no branch) and the benchmark each is in.
CLI_TASKS = {"mcga_asr": "mcga", "mcga_s2tt": "mcga", "parsa_asr": "parsa", "parsa_intent": "parsa"}
#: The hub copies the exported YAML reads (``dataset_path``), each made from the shipped sample by the export's own command.
HUB_COPIES = {"mcga": ("yxdu/MCGA", ROOT / "mcga/sample_data/data"), "parsa": ("MohammadJRanjbar/PARSA-Bench", ROOT / "parsa/sample_data")}
_COUPLET = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
#: Answers that lmms-eval's default ``--reasoning_tags`` strip (lmms_eval/api/reasoning.py, the same in 0.7.3 and in
#: upstream main: closed ``<think>``/``<analysis>`` blocks removed, then the whole text ``.strip()``-ped) changes
#: before ``process_results``, in place of the run's own answers for these documents. The first puts 4 blanks before a
#: 120-character loop, where MCGA's official ASR window (the first 100 characters) would see them.
STRIPPED = {
    ("mcga_asr", "upload/espeak-m/asr_shi_01.wav"): "\n\n  " + 5 * _COUPLET,
    ("mcga_asr", "upload/espeak-f/asr_shi_01.wav"): "<think>先听一遍:\n床前</think>床前明月光，疑是地上霜。",
    ("parsa_asr", "asr_01"): '<analysis>one Persian sentence</analysis>\n{"transcription": "امروز هوا آفتابی و گرم است."}',
    ("parsa_intent", "intent_01"): ' {"intent": "alarm_set"}\n',
}
#: The upstream runs: lmms-eval's reasoning strip on (its default) and off. Both give the plugin's figures: the exported
#: hooks read closed reasoning blocks themselves (``_task_utils/audio_bench/reasoning.py``), and lmms-eval's
#: ``Task.process_results`` strips blanks off every ``generate_until`` answer whatever ``--reasoning_tags`` says.
REASONING_TAGS = {"default": [], "none": ["--reasoning_tags", "none"]}


def test_one_cli_run_on_the_merged_branches_from_the_hub_copies_gives_the_plugins_figures(series, lmms_eval_cli, offline_env, tmp_path):
    """mcga + parsa-settings + table-numbers merged; ``python -m lmms_eval`` in the plugin-free venv, lmms-eval's own
    ``from_log`` replaying the answers of one plugin run (tests/test_upstream_cli.py's, with :data:`STRIPPED`), the data
    the hub copies that the exported ``make_hub_dataset`` commands make from the shipped samples, the exported YAML
    unchanged, mcga_s2tt judged by one local judge server through the ``audio_judge`` provider. Every figure is the
    plugin's as the export reports it (:func:`as_exported`), with lmms-eval's reasoning strip on (every document then
    got the very answer the plugin's hooks got) and off (:data:`REASONING_TAGS`)."""
    checkout, python, results = series
    env = {k: v for k, v in offline_env.items() if k != "PYTHONPATH"}
    hub = tmp_path / "hub"  # cwd of the upstream commands: load_dataset("yxdu/MCGA") reads hub/yxdu/MCGA
    runs = {}
    git(checkout, "checkout", "-q", "-b", "cli-check", results["mcga"].branch)
    try:
        for name in ("parsa-settings", "table-numbers"):
            git(checkout, "merge", "-q", "--no-edit", results[name].branch)
        for benchmark, (repo, release) in HUB_COPIES.items():
            made = subprocess.run([python, "-m", f"lmms_eval.tasks.{benchmark}.make_hub_dataset", str(release), str(hub / repo)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
            assert made.returncode == 0, (benchmark, made.stdout[-2000:], made.stderr[-3000:])
        with ChatServer(_judge_reply()) as server:
            plugin, plugin_out = plugin_replay_run(lmms_eval_cli, offline_env, server, tmp_path, CLI_TASKS, STRIPPED)
            _write_from_log(plugin_out, tmp_path / "logs", CLI_TASKS)
            judged = len(server.requests)
            for run, extra in REASONING_TAGS.items():  # each with its own judge cache and datasets cache
                out = tmp_path / f"upstream-{run}"
                run_env = {**judge_env(env, server, tmp_path / f"{run}.sqlite3"), "HF_DATASETS_CACHE": str(tmp_path / f"hf-{run}"), "LMMS_EVAL_AUDIO_BENCH_CACHE": str(tmp_path / f"cache-{run}")}
                command = [python, "-m", "lmms_eval", "--tasks", ",".join(CLI_TASKS), "--model", "from_log", "--model_args", f"logs={tmp_path / 'logs'}",
                           "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG", *extra]  # fmt: skip
                runs[run] = (*run_cli(command, run_env, cwd=hub), out)
    finally:
        git(checkout, "reset", "-q", "--hard")
        git(checkout, "checkout", "-q", "master")
        git(checkout, "branch", "-q", "-D", "cli-check")
    for run, (code, log, out) in runs.items():
        assert code == 0, (run, log[-4000:])
        [results_file] = out.rglob("*_results.json")  # lmms-eval exits 0 on a failed task without DEBUG: the file says it ran
        upstream = json.loads(results_file.read_text(encoding="utf-8"))
        assert sorted(upstream["results"]) == sorted(CLI_TASKS) and upstream["n-samples"] == {t: plugin["n-samples"][t] for t in CLI_TASKS}, run
        assert_numbers_or_null(upstream["results"])
        assert_same_figures(plugin, upstream, CLI_TASKS)
        r = upstream["results"]
        assert r["mcga_s2tt"]["judge_failed,none"] == 0 and isinstance(r["mcga_s2tt"]["llm_b,none"], float)
        assert r["mcga_asr"]["cer_official,none"] > 0 and r["parsa_intent"]["scored,none"] > 0 and r["parsa_asr"]["scored,none"] > 0
    stripped = []  # document by document: the model's answer (resps, logged where the strip changed it), what process_results got
    for task in CLI_TASKS:
        ours, on, off = (samples(out, task) for out in (plugin_out, runs["default"][2], runs["none"][2]))
        assert [(s["doc_id"], s.get("resps"), s["filtered_resps"]) for s in on] == [(s["doc_id"], s.get("resps"), s["filtered_resps"]) for s in ours], task
        assert [(s["doc_id"], s.get("resps"), s["filtered_resps"]) for s in off] == [(s["doc_id"], None, model_answer(s)) for s in ours], task
        stripped += [(task, s["resps"]) for s in ours if "resps" in s]
    assert sorted(stripped) == sorted((task, answer) for (task, _), answer in STRIPPED.items())  # the strip acted on these only
    # Strip off, the blanks still reach the task stripped (lmms_eval/api/task.py, Task.process_results, 0.7.3 and main alike):
    # the official window is cut from the loop itself.
    key = "upload/espeak-m/asr_shi_01.wav"
    [loop] = [s for s in samples(runs["none"][2], "mcga_asr") if s["cer_official"]["key"] == key]
    assert loop["filtered_resps"] == STRIPPED["mcga_asr", key] and loop["cer_official"]["output"] == 5 * _COUPLET
    # The judge asked through the audio_judge provider (a fresh cache each run) the very questions the plugin's judge asked.
    asked = sorted(json.dumps(body["messages"], ensure_ascii=False) for body in server.requests)
    assert judged > 0 and asked == sorted((1 + len(runs)) * [json.dumps(body["messages"], ensure_ascii=False) for body in server.requests[:judged]])
