"""The exported task folders in lmms-eval with this plugin absent (README, 'Contributing upstream').

One session fixture builds a second virtual environment holding lmms-eval installed by pip from its PyPI wheel and
no plugin: no ``lmms_eval.models`` entry point, none of ``lmms_eval_tasks``/``mcga``/``parsa``/``mmac`` importable.
Its other packages are this environment's own, linked read-only (same versions, so the same numbers; installing them
again would add minutes and gigabytes). ``lmms-eval-audio-export all`` writes the three benchmarks into that
lmms-eval. Then:

- the exported folders: no audio, the size goal, upstream's isort/black settings, no import of this project;
- the exported upstream-style unit tests (``test/eval/test_<benchmark>.py``) pass there;
- one CLI run there with lmms-eval's own ``from_log`` model replaying the answers of one plugin run (``replay``),
  on the shipped samples in the release layouts, the judged tasks against one local judge server, gives every figure
  the plugin's run gave (:func:`as_exported` says which differ and why), and every value is a number or null;
- a failed run of one exported task (every answer empty) beside another task writes both tasks' results: the failed
  one's counts, the other's scores.

A venv that cannot be built fails the test (pip's error shown); ``-m "not upstream"`` deselects it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from audio_bench_core.responses import DIAGNOSTIC_METRICS, FLAGGED_METRIC
from lmms_eval_tasks import upstream_export, upstream_numbers
from tests.chat_server import ChatServer
from tests.conftest import FIXTURES, ROOT
from tests.test_cli_end_to_end import lmms_eval, run_cli
from tests.test_judge_cli import judge_env
from tests.test_parsa_cli import MESSY, gold, write_predictions

pytestmark = [pytest.mark.cli, pytest.mark.upstream]
#: One task per benchmark, two where a second covers another kind (MCGA: CER and the judged S2TT).
TASKS = {"mcga_asr": "mcga", "mcga_s2tt": "mcga", "parsa_asr": "parsa", "parsa_intent": "parsa", "mmac_paralinguistic": "mmac"}
DATA = {"mcga": ROOT / "mcga/sample_data/data", "parsa": ROOT / "parsa/sample_data", "mmac": ROOT / "mmac/sample_data"}
#: lmms-eval's loading of MMAC's task file (not released: no hub layout), for the override YAML that replaces the
#: placeholder hub id by the local sample.
LOCAL_FILES = {"mmac_paralinguistic": ("json", DATA["mmac"] / "mmac.jsonl")}
PLUGIN_PACKAGES = ("lmms_eval_tasks", "mcga", "parsa", "mmac", "audio_bench_core", "audio_bench_report")


def _site_packages(venv: Path) -> Path:
    [found] = (venv / "lib").glob("python3*/site-packages")
    return found


def build_plugin_free_venv(venv: Path, lmms_eval_source: Path | None = None) -> Path:
    """``venv`` with lmms-eval (pip, PyPI wheel, this environment's version, ``--no-deps``; or, given
    ``lmms_eval_source``, that checkout on the path through a ``.pth`` line) and, through a ``.pth`` line, a folder of
    links to this environment's other installed packages, leaving out lmms-eval and every file of this plugin's
    distribution. Returns its site-packages.

    Raises:
        pytest.fail.Exception: venv or pip failed (the output is in the message).
    """
    from importlib.metadata import version

    base = getattr(sys, "_base_executable", sys.executable)
    steps = [[base, "-m", "venv", str(venv)] + ([] if lmms_eval_source is None else ["--without-pip"])]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=300)
        if done.returncode:
            pytest.fail(f"building the plugin-free venv failed: {' '.join(step)}\n{done.stdout}{done.stderr}")
    ours = Path(sysconfig.get_paths()["purelib"])
    shared = venv.parent / f"{venv.name}-shared-packages"
    shared.mkdir()
    for entry in ours.iterdir():
        name = entry.name
        if name == "lmms_eval" or name.startswith("lmms_eval-") or "lmms_eval_audio_plugin" in name or name.endswith(".pth") or name == "__pycache__":
            continue
        (shared / name).symlink_to(entry)
    site = _site_packages(venv)
    (site / "plugin_free_shared_packages.pth").write_text(f"{shared}\n", encoding="utf-8")
    if lmms_eval_source is not None:
        (site / "lmms_eval_checkout.pth").write_text(f"{lmms_eval_source}\n", encoding="utf-8")
        return site
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "--no-deps", f"lmms-eval=={version('lmms_eval')}"]
    done = subprocess.run(pip, capture_output=True, text=True, timeout=600)
    if done.returncode:
        pytest.fail(f"installing lmms-eval from its wheel into the plugin-free venv failed: {' '.join(pip)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return site


@pytest.fixture(scope="module")
def upstream_tree(tmp_path_factory):
    """``(venv, site-packages, tests folder)``: the plugin-free lmms-eval with the three benchmarks exported into it."""
    base = tmp_path_factory.mktemp("upstream")
    venv = base / "venv"
    site = build_plugin_free_venv(venv)
    probe = subprocess.run(
        [str(venv / "bin/python"), "-c", "import importlib.metadata as m, importlib.util as u, json, lmms_eval; "
         f"print(json.dumps([[str(e) for e in m.entry_points(group='lmms_eval.models')], [n for n in {PLUGIN_PACKAGES!r} if u.find_spec(n)], lmms_eval.__file__]))"],
        capture_output=True, text=True, cwd=base, timeout=120,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    entry_points, importable, location = json.loads(probe.stdout)
    assert entry_points == [] and importable == [] and location.startswith(str(site)), (entry_points, importable, location)
    tests = base / "test" / "eval"
    assert upstream_export.main(["all", str(site), "--tests-dir", str(tests), "--patch-make-table"]) == 0
    return venv, site, tests


def test_exported_folders_hold_no_audio_stay_small_and_pass_upstreams_formatters(upstream_tree):
    venv, site, tests = upstream_tree
    for name in ("mcga", "parsa", "mmac"):
        folder = site / "lmms_eval" / "tasks" / name
        files = [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        assert not [p for p in files if p.suffix.lower() in (".wav", ".flac", ".mp3", ".ogg", ".parquet", ".csv")], name
        code = sum(p.stat().st_size for p in files if p.suffix not in (".json", ".jsonl"))
        # The shared code is exported once, to lmms_eval/tasks/_task_utils/audio_bench/, not into each folder (issue 28);
        # measured 2026-12-03: MCGA 158 KiB, PARSA-Bench (every setting) 239, MMAC 84. The pull requests' line counts are
        # the README's ('Contributing upstream').
        assert code < 250 * 1024, (name, code)  # data files the task reads (prompts, labels, rubric) aside
        for path in folder.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not any(f"from {p}" in text or f"import {p}" in text for p in PLUGIN_PACKAGES), path
    py_files = [str(p) for p in site.joinpath("lmms_eval/tasks").glob("*/**/*.py") if p.parts[-2] in ("mcga", "parsa", "mmac", "shared")]
    py_files += [str(p) for p in tests.glob("*.py")] + [str(site / "lmms_eval/utils.py")]  # utils.py: make_table changed
    black = subprocess.run([sys.executable, "-m", "black", "--check", "--quiet", "--line-length=240", *py_files], capture_output=True, text=True)
    assert black.returncode == 0, black.stderr[-3000:]
    isort = subprocess.run([sys.executable, "-m", "isort", "--check-only", "--profile", "black", *py_files], capture_output=True, text=True, cwd=site)
    assert isort.returncode == 0, isort.stdout[-3000:] + isort.stderr[-3000:]


def test_exported_unit_tests_pass_without_the_plugin(upstream_tree, offline_env):
    venv, site, tests = upstream_tree
    # The three test_<benchmark>_tasks_are_registered tests each index all of lmms-eval's tasks (~17 s); one index
    # built here checks the same names, and the other 16 tests run as the contributor would run them.
    names = {"mcga", "mcga_asr", "mcga_s2tt", "mcga_sr_text", "parsa", "parsa_asr", "parsa_vazn_fewshot", "parsa_intent_text", "mmac", "mmac_content", "mmac_implication"}
    index = subprocess.run([str(venv / "bin/python"), "-c", "import json; from lmms_eval.tasks import TaskManager; print(json.dumps(sorted(TaskManager('ERROR').all_tasks)))"],
                           capture_output=True, text=True, env=offline_env, cwd=tests.parent.parent, timeout=600)  # fmt: skip
    assert index.returncode == 0, index.stderr[-3000:]
    assert names <= set(json.loads(index.stdout.splitlines()[-1]))
    done = subprocess.run([str(venv / "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not registered", str(tests)],
                          capture_output=True, text=True, env=offline_env, cwd=tests.parent.parent, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\b20 passed, 4 deselected\b", done.stdout), done.stdout[-500:]


def _judge_reply():
    """The scripted replies of the MCGA S2TT fixture and of the MMAC fixture (tests/fixtures/*/judge_replies.json)."""
    entries = [e for path in (FIXTURES / "official_runner_rows/judge_replies.json", FIXTURES / "mmac/judge_replies.json") for e in json.loads(path.read_text(encoding="utf-8"))["replies"]]

    def reply(messages):
        text = messages[-1]["content"]
        return next(e["reply"] for e in entries if all(marker in text for marker in e["all"]))

    return reply


def model_answer(sample: dict) -> str:
    """The model's answer in one row of lmms-eval's samples file: ``resps``, which lmms-eval writes only where it
    differs from ``filtered_resps`` (its ``--reasoning_tags`` strip changed the answer), else ``filtered_resps``."""
    answer = sample.get("resps", sample["filtered_resps"])
    return answer[0] if isinstance(answer, list) else answer


def _write_from_log(samples_dir: Path, logs: Path, tasks=TASKS) -> None:
    """lmms-eval's ``from_log`` input (``{"args", "logs": [{"doc_id", "resps": [[answer]]}], "model_configs": {"task"}}``,
    one file per task of ``tasks``), from the samples of the plugin's run: the same answer (:func:`model_answer`,
    as the model gave it) for the same document."""
    logs.mkdir()
    for task in tasks:
        [file] = samples_dir.rglob(f"*_samples_{task}.jsonl")
        rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
        log = {"args": {"model": "from_log", "model_args": "", "limit": None}, "time": "0101_0000", "model_configs": {"task": task}, "logs": [{"doc_id": r["doc_id"], "resps": [[model_answer(r)]]} for r in rows]}
        (logs / f"{task}.json").write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")


def as_exported(ours: dict) -> dict:
    """One task's results of the plugin's run as the export reports the same answers. The only differences: each
    metric that is not a number (:func:`lmms_eval_tasks.upstream_numbers.is_number_metric`: breakdowns, intervals,
    signatures, the judge's provenance, PARSA's data source) is left out, with its ``_stderr``; a figure the plugin
    writes ``"not computed: <reason>"`` is ``None`` (the reason is in the log). The judge's provenance held the run's
    own cache path and the plugin's judge-cost estimate, and the data source named the plugin's shipped sample: both
    are left out, so no other difference is expected. The nine response counts (``DIAGNOSTIC_METRICS``) are one,
    ``flagged_responses``, whose value the plugin's results do not hold (documents can have several kinds): it is
    ``None`` here, and :func:`assert_same_figures` bounds it by the nine."""
    out = {}
    for key, value in ours.items():
        metric = re.sub(r"_stderr(_clt|_clustered)?$", "", key.partition(",")[0])
        if key != "alias" and (not upstream_numbers.is_number_metric(metric) or metric in DIAGNOSTIC_METRICS):
            if metric == DIAGNOSTIC_METRICS[0]:
                out[key.replace(metric, FLAGGED_METRIC, 1)] = None
            continue
        out[key] = None if isinstance(value, str) and value.startswith("not computed: ") else value
    return out


def assert_numbers_or_null(results: dict) -> None:
    """Every value of every task's results is a number or null; lmms-eval's own entries aside: ``alias`` (the task's
    name) and ``"N/A"`` for a stderr it does not compute (every aggregation of ours: no bootstrap function)."""
    for task, values in results.items():
        bad = {k: v for k, v in values.items() if not (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)))
               and not (k == "alias" or ("_stderr" in k and v == "N/A"))}  # fmt: skip
        assert bad == {}, (task, bad)


#: The hub repository of each benchmark whose exported tasks read the hub layout (MMAC's, not released, read the release).
HUB_REPOS = {"mcga": "yxdu/MCGA", "parsa": "MohammadJRanjbar/PARSA-Bench"}


def _override_yamls(site: Path, folder: Path, tasks=TASKS) -> None:
    """One YAML per task in ``folder`` (lmms-eval's ``--tasks <folder>``), each the exported task; MMAC's with the shipped
    sample as the local file lmms-eval loads instead of the placeholder hub id (the exported README's recipe)."""
    folder.mkdir()
    for task in tasks:
        benchmark = TASKS[task]
        config = {"task": task, "include": str(site / "lmms_eval/tasks" / benchmark / f"{task}.yaml")}
        if benchmark not in HUB_REPOS:
            builder, path = LOCAL_FILES[task]
            config.update(dataset_path=builder, dataset_kwargs={"data_files": {"test": str(path)}})
        (folder / f"{task}.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML


def hub_copies(venv: Path, env: dict, folder: Path, tasks=TASKS) -> Path:
    """``folder``, holding the hub layout of each shipped sample the ``tasks`` read (``folder/<hub repository>``), made by
    the exported ``make_hub_dataset``: the working directory from which lmms-eval loads it offline (the exported
    README's recipe for a local copy)."""
    for benchmark in sorted({TASKS[task] for task in tasks} & set(HUB_REPOS)):
        made = subprocess.run([str(venv / "bin/python"), "-m", f"lmms_eval.tasks.{benchmark}.make_hub_dataset", str(DATA[benchmark]), str(folder / HUB_REPOS[benchmark])],
                              capture_output=True, text=True, env=env, cwd=folder.parent, timeout=300)  # fmt: skip
        assert made.returncode == 0, (benchmark, made.stdout[-2000:], made.stderr[-3000:])
    return folder


def plugin_replay_run(cli: str, env: dict, server: ChatServer, tmp_path: Path, tasks=TASKS, replace: dict | None = None) -> tuple[dict, Path]:
    """The plugin's run of ``tasks`` on the shipped samples (``env`` plus each benchmark's ``*_DATA_DIR``), the
    ``replay`` model answering: PARSA's gold answers with :data:`tests.test_parsa_cli.MESSY`'s, MCGA's official-runner
    rows, MMAC's captions, each answer named in ``replace`` (``{(task, PARSA id or MCGA audio): answer}``) swapped for
    that one; the judged tasks against ``server``. Returns ``(results JSON, output folder)``."""
    replace = dict(replace or {})
    answers = {"parsa_asr": gold("asr"), "parsa_intent": gold("intent")}
    for task in answers:
        answers[task].update(MESSY[task])
        answers[task].update({key: answer for (name, key), answer in replace.items() if name == task and key in answers[task]})
    predictions = tmp_path / "predictions.jsonl"
    write_predictions(predictions, answers)
    used = {(task, key) for task, by_id in answers.items() for key in by_id}
    with predictions.open("a", encoding="utf-8") as handle:
        for folder in ("asr", "s2tt"):
            for line in (FIXTURES / "official_runner_rows" / folder / "demo_audio.jsonl").read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                if (f"mcga_{folder}", row["audio"]) in replace:
                    line = json.dumps({**row, f"{folder}_r": replace[f"mcga_{folder}", row["audio"]]}, ensure_ascii=False)
                    used.add((f"mcga_{folder}", row["audio"]))
                handle.write("\n" + line)
        handle.write("\n" + (FIXTURES / "mmac/captions.jsonl").read_text(encoding="utf-8").strip())
    assert set(replace) <= used, sorted(set(replace) - used)  # each replaced answer names a document of the run
    env = {**env, **{f"{b.upper()}_DATA_DIR": str(p) for b, p in DATA.items()}}
    out = tmp_path / "plugin"
    results, _ = lmms_eval(cli, judge_env(env, server, tmp_path / "plugin.sqlite3"), out, ",".join(tasks), "replay", f"predictions={predictions}")
    return results, out


def assert_same_figures(plugin: dict, upstream: dict, tasks=TASKS) -> None:
    """Each task's results in ``upstream`` (a results JSON) are :func:`as_exported` of the plugin's: the same metric
    names, every value equal (``alias`` aside)."""
    for task in tasks:
        ours, theirs = as_exported(plugin["results"][task]), upstream["results"][task]
        assert sorted(theirs) == sorted(ours), task
        counts = [plugin["results"][task][f"{m},none"] for m in DIAGNOSTIC_METRICS if m != "invalid_text_replaced"]  # that one counts code points
        assert max(counts) <= theirs[f"{FLAGGED_METRIC},none"] <= sum(counts) + plugin["results"][task]["invalid_text_replaced,none"], (task, counts)
        assert {key: (ours[key], theirs[key]) for key in ours if key != "alias" and not key.startswith(FLAGGED_METRIC) and ours[key] != theirs[key]} == {}, task


def test_from_log_in_plain_lmms_eval_gives_the_plugins_figures(upstream_tree, lmms_eval_cli, offline_env, tmp_path):
    venv, site, _ = upstream_tree
    env = {**offline_env, "MMAC_DATA_DIR": str(DATA["mmac"]), "LMMS_EVAL_AUDIO_BENCH_CACHE": str(tmp_path / "cache")}
    hub = hub_copies(venv, env, tmp_path / "hub")
    with ChatServer(_judge_reply()) as server:
        plugin, plugin_out = plugin_replay_run(lmms_eval_cli, offline_env, server, tmp_path)
        _write_from_log(plugin_out, tmp_path / "logs")
        _override_yamls(site, tmp_path / "overrides")
        upstream_out = tmp_path / "upstream"
        command = [str(venv / "bin/lmms-eval"), "--tasks", str(tmp_path / "overrides"), "--model", "from_log", "--model_args", f"logs={tmp_path / 'logs'}",
                   "--output_path", str(upstream_out), "--log_samples", "--verbosity", "DEBUG"]  # fmt: skip
        code, log = run_cli(command, judge_env(env, server, tmp_path / "upstream.sqlite3"), cwd=hub)
    assert code == 0, log[-4000:]
    [results_file] = upstream_out.rglob("*_results.json")
    upstream = json.loads(results_file.read_text(encoding="utf-8"))
    assert_numbers_or_null(upstream["results"])
    assert_same_figures(plugin, upstream)
    assert "cer_official_by_genre,none" in plugin["results"]["mcga_asr"] and "judge,none" in plugin["results"]["mcga_s2tt"]  # the plugin's own keep them
    # lmms-eval's printed table: every row a number (or N/A), so nothing is left for --patch-make-table to name under it.
    table = log[re.search(r"^\|\s*Tasks\s*\|Filter", log, re.MULTILINE).start() :]
    rows = [line for line in table.splitlines() if line.startswith("|")]
    assert any("|cer_official " in row for row in rows) and not any("by_genre" in row or "signature" in row or "{" in row for row in rows)
    assert "Not shown above" not in table
    r = upstream["results"]
    assert r["mcga_s2tt"]["judge_failed,none"] == 0 and isinstance(r["mcga_s2tt"]["llm_b,none"], float)
    assert isinstance(r["mmac_paralinguistic"]["accuracy,none"], float) and r["parsa_intent"]["scored,none"] > 0


def test_a_failed_exported_task_beside_another_writes_both_results(upstream_tree, offline_env, tmp_path):
    """mcga_asr answered with empty text throughout (a failed run) beside parsa_intent answered with its gold JSON: on
    plain lmms-eval both tasks' results are written, mcga_asr's counts say what happened and a warning names it."""
    venv, site, _ = upstream_tree
    logs = tmp_path / "logs"
    logs.mkdir()
    intent = list(gold("intent").values())  # in the loader's document order, as lmms-eval's doc_id counts them
    answers = {"mcga_asr": [""] * 14, "parsa_intent": intent}
    for task, texts in answers.items():
        log = {"args": {"model": "from_log", "model_args": "", "limit": None}, "time": "0101_0000", "model_configs": {"task": task}, "logs": [{"doc_id": i, "resps": [[t]]} for i, t in enumerate(texts)]}
        (logs / f"{task}.json").write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")
    _override_yamls(site, tmp_path / "overrides", tasks=answers)
    out = tmp_path / "out"
    env = {**offline_env, "LMMS_EVAL_AUDIO_BENCH_CACHE": str(tmp_path / "cache")}
    hub = hub_copies(venv, env, tmp_path / "hub", answers)
    command = [str(venv / "bin/lmms-eval"), "--tasks", str(tmp_path / "overrides"), "--model", "from_log", "--model_args", f"logs={logs}",
               "--output_path", str(out), "--log_samples", "--verbosity", "DEBUG"]  # fmt: skip
    code, log = run_cli(command, env, cwd=hub)
    assert code == 0, log[-4000:]
    [results_file] = out.rglob("*_results.json")
    written = json.loads(results_file.read_text(encoding="utf-8"))
    r = written["results"]
    assert sorted(r) == ["mcga_asr", "parsa_intent"] and written["n-samples"]["mcga_asr"]["effective"] == 14
    assert_numbers_or_null(r)
    asr, other = r["mcga_asr"], r["parsa_intent"]
    assert asr["flagged_responses,none"] == 14 and "empty_responses,none" not in asr  # the nine counts in one (README)
    assert asr["cer_official,none"] == 100.0  # every character deleted; the warning says no score of a failed run means anything
    assert "mcga_asr flagged_responses: mcga_asr: failed run: 14 of 14 responses (100.0%) are failed generations (0) or empty (14)" in log
    assert "mcga_asr: 14 of 14 responses (100.0%) are empty" in log  # each kind's own warning
    assert (other["accuracy,none"], other["scored,none"], other["flagged_responses,none"]) == (1.0, len(intent), 0)
