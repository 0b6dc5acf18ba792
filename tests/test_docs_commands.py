"""Every shell command shown in the README and docs still works, so the docs cannot drift from the product.

Commands are read from the ```bash blocks of README.md, docs/*.md, the task folders' READMEs, bench/README.md and
the sample-data READMEs (continuation lines joined, comments dropped). Each is checked by what it is:

- ``lmms-eval ...``: parsed by lmms-eval's own argument parser; every ``--tasks`` name is in the task index
  (ours and lmms-eval's); ``--model`` is registered; ``--model_args`` keys are accepted by our models' classes;
- this project's console scripts (``[project.scripts]`` of pyproject.toml): run in-process with the arguments
  shown (paths that do not exist make a data error, fine; a usage error or an exception is drift), except the
  ``download`` subcommands, which need the network;
- ``make X``: ``X`` is a Makefile target; ``python -m M``/``python scripts/x.py``: the module or file exists and
  every ``--flag`` shown appears in it; other repository paths exist;
- the rest (pip, apt-get, espeak-ng, sox, vllm, shell built-ins) install or call outside tools: listed in
  :data:`OUTSIDE` and not run.

Placeholders (``...``, ``<model>``, ``[--flag N]``) are left out of the check. Numbers in prose (test counts,
timings) are not pinned here: the integrator measures them; the README's test count is only required to be
within 15% of the suite's size.
"""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "lmms_eval_tasks").glob("*/README.md")), ROOT / "bench" / "README.md",
        *sorted(ROOT.glob("*/sample_data/README.md"))]  # fmt: skip
#: Programs outside this project (installers, audio tools, servers, shell built-ins): shown, not run here.
OUTSIDE = {"pip": "installs from the network", "apt-get": "installs from the network", "vllm": "a GPU server", "espeak-ng": "makes sample audio",
           "sox": "makes sample audio", "cd": "shell built-in", "source": "shell built-in", "export": "shell built-in"}  # fmt: skip
TASKS_DIR_EXPRESSION = "$(python -c 'import lmms_eval_tasks; print(lmms_eval_tasks.TASKS_DIR)')"
PLACEHOLDER = re.compile(r"^(\.\.\.|<[^>]+>|\[.*\]|\[?[A-Z_]+=[^ ]*\]?)$")


def shell_commands() -> list[tuple[str, str]]:
    """``[(where, command)]`` for every command line of every ```bash block (``\\`` continuations joined)."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for block in re.finditer(r"```bash\n(.*?)```", text, re.S):
            joined = block.group(1).replace("\\\n", " ")
            heredoc = False
            for line in joined.splitlines():
                if heredoc:
                    heredoc = line.strip() != "PY"
                    continue
                heredoc = "<<'PY'" in line
                command = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
                for part in filter(None, (p.strip() for p in command.split(" && "))):
                    found.append((f"{path.relative_to(ROOT)}: {line.strip()[:80]}", part))
    return found


COMMANDS = shell_commands()


def _words(command: str) -> list[str]:
    command = command.replace(TASKS_DIR_EXPRESSION, str(ROOT / "lmms_eval_tasks"))
    words = shlex.split(command.split("<<")[0])
    while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value before the program
        words = words[1:]
    if words and words[0].startswith(".venv/bin/"):
        words[0] = words[0][len(".venv/bin/") :]
    kept, depth = [], 0
    for word in words:  # "[--flag VALUE]" spans (optional parts) are left out; so is "..." standing alone
        opening = word.startswith("[")
        depth += opening
        if depth:
            depth -= word.endswith("]")
            continue
        after_option = bool(kept) and kept[-1].startswith("--") and "=" not in kept[-1]
        if PLACEHOLDER.match(word) and not after_option:
            continue
        kept.append(word)
    return kept


def is_placeholder(value) -> bool:
    return isinstance(value, str) and bool(PLACEHOLDER.match(value))


@pytest.fixture(scope="module")
def task_index():
    from lmms_eval.tasks import TaskManager

    import lmms_eval.models  # noqa: F401 - loads the plugin's entry point, which adds our task folder

    return set(TaskManager().all_tasks)


def _scripts() -> dict[str, str]:
    """``[project.scripts]`` of pyproject.toml (read by hand: tomllib needs Python 3.11, the project supports 3.10)."""
    section = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^([\w-]+) = "([\w.:]+)"', section, re.M))


def check_lmms_eval(words: list[str], task_index: set[str]) -> None:
    from lmms_eval import __main__ as lmms_main
    from lmms_eval.models import list_available_models

    if words[1:2] == ["tasks"]:  # lmms-eval's own subcommand `lmms-eval tasks list`
        return
    saved = sys.argv
    sys.argv = ["lmms-eval", *words[1:]]
    try:
        _, args = lmms_main.parse_eval_args()
    finally:
        sys.argv = saved
    for task in (args.tasks or "").split(","):
        assert is_placeholder(task) or task in task_index, f"--tasks {task}: no such task or group"
    if is_placeholder(args.model) or "--model" not in words:  # "--tasks mcga_asr ...": the rest of the command elided
        return
    assert args.model in list_available_models(include_aliases=True), f"--model {args.model}: not registered"
    from lmms_eval_tasks.plugin import MODEL_CLASSES, REPLACED_MODELS

    ours = {**MODEL_CLASSES, **{name: chat for name, (chat, _) in REPLACED_MODELS.items()}}
    if args.model in ours and args.model_args:
        module, _, name = ours[args.model].rpartition(".")
        accepted = set(inspect.signature(getattr(importlib.import_module(module), name).__init__).parameters)
        for pair in args.model_args.split(","):
            key = pair.partition("=")[0]
            assert is_placeholder(pair) or key in accepted, f"--model_args {key}: not an argument of {args.model} ({sorted(accepted - {'self', 'kwargs'})})"


def check_console_script(words: list[str], tmp_path: Path, capsys) -> None:
    if "download" in words[1:2]:
        return  # needs the network
    module, _, function = _scripts()[words[0]].partition(":")
    main = getattr(importlib.import_module(module), function)
    try:
        status = main(words[1:])
    except SystemExit as exit_:  # argparse
        status = exit_.code
    captured = capsys.readouterr()
    assert "usage:" not in captured.err, captured.err  # a documented option or subcommand that no longer exists
    assert status in (0, 1, 2, None), status


def check_python(words: list[str]) -> None:
    if words[1:2] == ["-c"] or words[1:2] == ["-"]:
        return  # inline code: checked by running it below where it matters
    target = ROOT / words[2].replace(".", "/") if words[1] == "-m" else ROOT / words[1]
    source = next((p for p in (target.with_suffix(".py"), target / "__main__.py", target) if p.is_file()), None)
    if source is None and words[1] == "-m":
        assert importlib.util.find_spec(words[2]) is not None, f"no module {words[2]}"
        return
    assert source is not None, f"{target} does not exist"
    text = source.read_text(encoding="utf-8")
    for flag in (w for w in words if w.startswith("--")):
        assert flag.split("=")[0] in text, f"{source.relative_to(ROOT)} has no option {flag}"


@pytest.mark.parametrize("where, command", COMMANDS, ids=[f"{i:03d}" for i in range(len(COMMANDS))])
def test_documented_command_still_works(where, command, task_index, tmp_path, monkeypatch, capsys):
    words = _words(command)
    if not words:
        return
    program = Path(words[0]).name
    monkeypatch.chdir(tmp_path)  # output paths in the docs land in a scratch folder
    if program in OUTSIDE:
        return
    if program == "lmms-eval":
        check_lmms_eval(words, task_index)
    elif program in _scripts():
        check_console_script(words, tmp_path, capsys)
    elif program == "make":
        targets = set(re.findall(r"^([a-z][\w.-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
        assert set(words[1:]) <= targets, f"no Makefile target {set(words[1:]) - targets}"
    elif program in ("python", "python3"):
        check_python(words)
    else:
        assert (ROOT / words[0]).exists(), f"{where}: {words[0]} is neither a known program nor a file of the repository"


def test_every_console_script_is_documented_and_the_docs_show_commands():
    shown = {Path(_words(c)[0]).name for _, c in COMMANDS if _words(c)}
    assert len(COMMANDS) > 40
    assert {"lmms-eval", "make", "audio-bench-report", "mcga-report", "mcga-data", "parsa-data", "lmms-eval-audio-tasks"} <= shown


def test_readme_test_count_is_within_15_percent_of_the_suite(request):
    """Checked against the tests this session collected, when it collected the whole suite (``make test``, CI)."""
    collected = len(request.session.items)
    if collected < 800:
        pytest.skip(f"only {collected} tests collected: the README's count is compared when the whole suite runs")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [claimed] = re.findall(r"~([\d,]+) tests", readme)
    assert abs(int(claimed.replace(",", "")) - collected) <= 0.15 * collected, (claimed, collected)


def test_report_doc_names_the_command_make_demo_runs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    [report_line] = [line.strip() for line in makefile.splitlines() if "audio-bench-report" in line]
    command = report_line.replace("$(BIN)/", "")
    assert f"`{command}`" in (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
