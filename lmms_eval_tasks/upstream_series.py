"""``lmms-eval-audio-export series``: the contribution as upstream reviews it, one git branch per pull request.

``lmms-eval-audio-export series PATH/TO/lmms-eval`` (a clean git checkout of lmms-eval) writes, each as one commit
whose message is the pull request's description in upstream's template (``.github/pull_request_template.md``):

====================  ==================  ==================================================================
branch                built on            what
====================  ==================  ==================================================================
judge-provider        the checkout HEAD   the ``audio_judge`` llm_judge provider and the judge core, tests
table-numbers         the checkout HEAD   ``make_table`` prints numbers only (numpy numbers kept), tests
mcga                  judge-provider      the MCGA tasks, tests, ``RESULTS.md`` (official-scorer equality)
parsa                 the checkout HEAD   PARSA-Bench's 16 tasks in the paper's main setting, tests
parsa-settings        parsa               PARSA-Bench's other settings (few-shot, CoT, text, audio reference)
====================  ==================  ==================================================================

MMAC has no branch: :data:`HELD` says why. Branch names get ``--prefix`` (default ``audio-bench/``). Code shared by
two benchmarks is written once, under ``lmms_eval/tasks/_task_utils/audio_bench/``, byte-identical whichever branch
writes it, so branches that both add a shared file merge without conflict. ``--validate PYTHON`` runs each branch's
tests with that interpreter (the checkout first on its path) and writes the measured line into the description's
Validation section; without it the section says the tests were not run.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lmms_eval_tasks import upstream_export as ex

#: Benchmarks without a pull request yet, and why.
HELD = {"mmac": "MMAC's data is not released (arXiv 2607.27109): its pull request waits for the release, whose hub id replaces the placeholder `dataset_path`."}
#: The official scorer's figures on the official-runner rows (tests/fixtures/official_runner_rows/README.md says how they were made).
OFFICIAL_ROWS = ex.ROOT / "tests" / "fixtures" / "official_runner_rows"
CURRENT_TASKS = Path("docs/advanced/current_tasks.md")
#: Lines added to upstream's task list (its "Audio Understanding & QA" section, in its order): ``(the line it goes
#: before, the line)``; each benchmark at its own place, so the branches merge without conflict.
TASK_LIST_LINES = {
    "mcga": ("- [MuchoMusic]", "- [MCGA](https://github.com/yxduir/MCGA) (mcga): classical Chinese literature read aloud: ASR, speech translation, emotion captioning, spoken QA, understanding, reasoning, text-mode twins"),
    "parsa": ("- [Step2 Audio Paralinguistic]", "- [PARSA-Bench](https://huggingface.co/datasets/MohammadJRanjbar/PARSA-Bench) (parsa): Persian speech, paralinguistics and culture, 16 tasks"),
}


#: Issue 28's size goals, in lines (JSON data the tasks read not counted), per folder, measured on the branch that
#: adds it: ``(branch, folder): goal``.
SIZE_GOALS = {
    ("mcga", "lmms_eval/tasks/mcga"): 2000,
    ("parsa", "lmms_eval/tasks/parsa"): 3000,
    ("mcga", "lmms_eval/tasks/_task_utils/audio_bench"): 1500,
}


def folder_lines(folder: Path) -> int:
    """Lines of the files below ``folder``, JSON/JSONL data and ``__pycache__`` left out."""
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix not in (".json", ".jsonl") and "__pycache__" not in p.parts]
    return sum(len(p.read_bytes().splitlines()) for p in files)


class SeriesError(ex.ExportError):
    """The series cannot be written into this checkout; the message says why."""


@dataclass(frozen=True)
class PullRequest:
    """One branch of the series and the description upstream's template asks for."""

    branch: str
    base: str | None  # the branch it builds on; None: the checkout's HEAD
    title: str
    summary: tuple[str, ...]  # at most three bullets
    in_scope: tuple[str, ...]
    out_of_scope: tuple[str, ...]
    risk: tuple[str, ...]
    change_type: str  # one of the template's "Type of Change" boxes
    tests: tuple[str, ...]  # test files the Validation line runs, relative to the checkout
    write: Callable[[Path], object]


#: One Validation line of upstream's template; :data:`NOT_RUN` stands in when the tests were not run.
VALIDATION_LINE = re.compile(r"`[^`]+` \| sample size: `N=[^`]+` \| key metrics: `[^`]+` \| result: `(pass|fail)`")
NOT_RUN = "Tests not run (`lmms-eval-audio-export series --validate PYTHON` runs them)."
CHANGE_TYPES = ("Bug fix (non-breaking change)", "New feature", "New benchmark/task", "New model integration", "Breaking change", "Documentation update", "Refactoring (no functional changes)")


def describe(pr: PullRequest, validation: list[str]) -> str:
    """The commit message of ``pr``: its title, then upstream's pull-request template filled in (Summary at most three
    bullets; Validation 1-3 lines of :data:`VALIDATION_LINE`'s form, or :data:`NOT_RUN`).

    Raises:
        ValueError: a part that does not fit the template (named).
    """
    if pr.change_type not in CHANGE_TYPES or not 1 <= len(pr.summary) <= 3:
        raise ValueError(f"{pr.branch}: change type {pr.change_type!r} or {len(pr.summary)} summary bullets do not fit upstream's template")
    if not 1 <= len(validation) <= 3 or not all(line == NOT_RUN or VALIDATION_LINE.fullmatch(line) for line in validation):
        raise ValueError(f"{pr.branch}: Validation must be 1-3 lines of the form `<command>` | sample size: `N=<...>` | key metrics: `<...>` | result: `pass/fail`: {validation}")
    bullets = lambda lines: "\n".join(f"- {line}" for line in lines)  # noqa: E731
    boxes = "\n".join(f"- [{'x' if kind == pr.change_type else ' '}] {kind}" for kind in CHANGE_TYPES)
    return (
        f"{pr.title}\n\n## Summary\n{bullets(pr.summary)}\n\n## In scope\n{bullets(pr.in_scope)}\n\n## Out of scope\n{bullets(pr.out_of_scope)}\n\n"
        f"## Validation\n{bullets(validation)}\n\n## Risk / Compatibility\n{bullets(pr.risk)}\n\n## Type of Change\n{boxes}\n"
    )


# --------------------------------------------------------------------------------------------- what each branch writes
def add_task_list_line(root: Path, benchmark: str) -> None:
    """Add ``benchmark``'s line to upstream's ``docs/advanced/current_tasks.md`` (:data:`TASK_LIST_LINES`).

    Raises:
        SeriesError: the line it goes before is not in the file (upstream's list changed: add the line by hand).
    """
    path = root / CURRENT_TASKS
    before, line = TASK_LIST_LINES[benchmark]
    text = path.read_text(encoding="utf-8")
    if line in text:
        return
    if f"\n{before}" not in text:
        raise SeriesError(f"{path}: no line starting {before!r} to list {benchmark} before; add the line by hand: {line}")
    path.write_text(text.replace(f"\n{before}", f"\n{line}\n{before}", 1), encoding="utf-8")


def _official_rows(task: str) -> list[dict]:
    path = OFFICIAL_ROWS / task / "demo_audio.jsonl"
    if not path.is_file():
        raise SeriesError(f"{path}: the official-runner rows RESULTS.md is computed from are missing (a source checkout of the plugin has them)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def mcga_results_rows() -> list[tuple[str, int, float, float]]:
    """``(figure, N, official, ours)`` for the rule-scored MCGA figures on the official-runner rows: the official
    scorer's values (``expected_official.json``, computed by the unmodified ``eval/eval_model.py``) and this task's
    scoring functions' values on the same outputs (percent, 0-100)."""
    from mcga import metrics

    official = json.loads((OFFICIAL_ROWS / "expected_official.json").read_text(encoding="utf-8"))
    asr, sqa = _official_rows("asr"), _official_rows("sqa")
    rows = [
        ("ASR CER (%)", len(asr), official["asr_cer_total"], metrics.official_cer_percent([r["asr"] for r in asr], [r["asr_r"] for r in asr])),
        ("SQA F1 (%)", len(sqa), official["sqa_f1"], 100 * sum(metrics.official_sqa_f1(r["sqa_a"], r["sqa_a_r"]) for r in sqa) / len(sqa)),
    ]
    for task in ("su", "sr"):
        items = _official_rows(task)
        rows.append((f"{task.upper()} accuracy (%)", len(items), official[f"{task}_acc"], 100 * sum(metrics.official_mcq_correct(r[f"{task}_a"], r[f"{task}_r"]) for r in items) / len(items)))
    return rows


def mcga_results_markdown() -> str:
    """``RESULTS.md`` of the MCGA branch: the official scorer's figures beside this task's on the same outputs."""
    table = "\n".join(f"| {name} | {n} | {official:.4f} | {ours:.4f} | {'equal' if abs(official - ours) < 1e-9 else 'DIFFERENT'} |" for name, n, official, ours in mcga_results_rows())
    return f"""# MCGA: the official scorer's figures and this task's, on the same outputs

Outputs: model answers written to cover the awkward cases (traditional characters, preambles, refusals, repetition
loops, option text instead of a letter) for the rows of the test-format sample, in the official runner's layout.
Official: `eval/eval_model.py` of github.com/yxduir/MCGA (commit 2672f947c0b8ec5d1359ea33fedf2e5be4818445), run
unmodified (openai-whisper 20250625, jiwer 4.0.0, OpenCC 1.4.2). Ours: this folder's scoring functions on the same
outputs, computed when this file was written.

| figure | N | official | ours | |
|---|---|---|---|---|
{table}

The judged figures (S2TT LLM-B, SEC LLM-C) depend on the judge's replies: with the same scripted replies, the
official `run_s2tt_beauty_eval` / `run_sec_eval` give S2TT LLM-B 66.6667 and SEC LLM-C 46.6667, and a run of
`mcga_s2tt` / `mcga_sec` through the `audio_judge` provider against a local server answering with those replies
gives the same (checked by the contributing project's CI on this branch).
"""


def write_mcga(root: Path) -> None:
    ex.export_benchmark("mcga", root, force=True, extra={"RESULTS.md": mcga_results_markdown()})
    add_task_list_line(root, "mcga")


def write_parsa_main(root: Path) -> None:
    ex.export_benchmark("parsa", root, force=True, main_setting_only=True)
    add_task_list_line(root, "parsa")


def write_parsa_settings(root: Path) -> None:
    ex.export_benchmark("parsa", root, force=True)


def write_table_numbers(root: Path) -> None:
    from lmms_eval_tasks import upstream_table

    upstream_table.write_table_change(root)


SERIES = (
    PullRequest(
        "judge-provider", None, "[LLM judge] audio_judge provider: reply cache, typed retries, per-call deadline, circuit breaker",
        ("Adds `audio_judge`, an `llm_judge` provider for OpenAI-compatible judges: a persistent reply cache, retries by error kind (429 with Retry-After, 5xx, timeouts), a time bound on each whole call and a circuit breaker.",
         "Reads a reply by its whole shape (content as parts, refusals, truncation at the token limit, errors inside a 200) and sends the request fields each judge family takes (`max_completion_tokens` for gpt-5 / o-series).",
         "Used by the MCGA and MMAC judged tasks (later pull requests); any task can name it with `get_server(\"audio_judge\", ServerConfig(...))`."),
        ("`lmms_eval/llm_judge/providers/audio_judge.py` (registers itself on import)", "`lmms_eval/llm_judge/audio_judge/`: the judge core (client, cache, request fields, reply reading, budget, audit of cached verdicts) and the judge pass judged tasks run", "`lmms_eval/tasks/_task_utils/audio_bench/`: reading a reasoning draft past (shared with the tasks' answer reading) and the cache root", "`test/eval/test_audio_judge_provider.py`"),
        ("No existing provider or task changes; the `openai` provider is untouched.",),
        ("Additive: nothing imports the provider until a task does. Configured by `AUDIO_JUDGE_*` variables; the cache lives under `$LMMS_EVAL_AUDIO_BENCH_CACHE` (default `~/.cache/lmms_eval_audio_bench`).",),
        "New feature", ("test/eval/test_audio_judge_provider.py",), lambda root: ex.export_judge_provider(root),
    ),
    PullRequest(
        "table-numbers", None, "[Core] make_table: rows for numbers only (numpy numbers included), other values named under the table",
        ("`make_table` gives rows to numbers only: Python and numpy scalars (`np.float32`, `np.int64`, ...), and `None`/`N/A` as before.",
         "Other values of `results[task]` (breakdown dicts, lists, signature strings) are named in one line under the table instead of printed as rows.",
         "A test, `test/eval/test_make_table.py`, covers both and pins the unchanged table of a number-only result."),
        ("`lmms_eval/utils.py`: `make_table` (7 added lines, none removed).", "`test/eval/test_make_table.py` (new)."),
        ("The results JSON and `--output_path` files: unchanged, every value stays there.",
         "How numbers are formatted (floats `%.4f`, ints and numpy scalars as the table writer prints them), the stderr, stability and baseline columns."),
        ("A result of numbers prints byte for byte as before; a task whose table showed dict or text rows now shows their names under the table (the values are in the results JSON).",),
        "Bug fix (non-breaking change)", ("test/eval/test_make_table.py",), write_table_numbers,
    ),
    PullRequest(
        "mcga", "judge-provider", "[Task] MCGA: classical Chinese literature read aloud (arXiv 2601.09270)",
        ("Adds the MCGA tasks (ASR, S2TT, SEC, SQA, SU, SR and the text-mode twins; groups `mcga`, `mcga_cmc`) scored as the official `eval/eval_model.py` scores them.",
         "The judged tasks (S2TT, SEC) use the official judge prompts through the `audio_judge` provider.",
         "`RESULTS.md`: the official scorer's figures beside this task's on the same outputs."),
        ("`lmms_eval/tasks/mcga/` (YAML, `utils.py`, the scoring modules and the official prompts)", "shared helpers in `lmms_eval/tasks/_task_utils/audio_bench/`", "`test/eval/test_mcga.py`", "a line in `docs/advanced/current_tasks.md`"),
        ("The data upload to the hub (`make_hub_dataset.py` writes the layout).", "The judge provider itself (its own pull request, which this one builds on)."),
        ("One new dependency, for the official CER: `opencc` (lazy import, the error names the package; zhconv gives other numbers). Edit distances use `editdistance` and the Whisper normaliser is lmms-eval's vendored copy, both checked equal on the MCGA rows; see the folder's README.",),
        "New benchmark/task", ("test/eval/test_mcga.py",), write_mcga,
    ),
    PullRequest(
        "parsa", None, "[Task] PARSA-Bench: Persian speech, paralinguistics and culture, 16 tasks (arXiv 2603.14456)",
        ("Adds PARSA-Bench's 16 tasks in the paper's main setting (zero-shot audio, Table 2) and its groups.",
         "Answers are read as the paper's protocol reads them; unparseable and refused answers are counted in the results."),
        ("`lmms_eval/tasks/parsa/` (YAML, `utils.py`, prompts, labels)", "shared helpers in `lmms_eval/tasks/_task_utils/audio_bench/`", "`test/eval/test_parsa.py`", "a line in `docs/advanced/current_tasks.md`"),
        ("The few-shot, chain-of-thought, text-input and audio-reference settings (a follow-up pull request).", "COMET (optional: an offline scoring step)."),
        ("The dataset is gated on the hub (`token: True`). One new dependency: `json-repair`, which reads the near-JSON answers models write (each repair counted); lmms-eval has no JSON repairer.",),
        "New benchmark/task", ("test/eval/test_parsa.py",), write_parsa_main,
    ),
    PullRequest(
        "parsa-settings", "parsa", "[Task] PARSA-Bench: the few-shot, chain-of-thought, text-input and audio-reference settings",
        ("Adds the task variants of the paper's other settings beside the main-setting tasks.",),
        ("`lmms_eval/tasks/parsa/parsa_*_{fewshot,cot,text,audio_ref}.yaml`",),
        ("The main-setting tasks (unchanged).",),
        ("Additive: new task names only.",),
        "New benchmark/task", ("test/eval/test_parsa.py",), write_parsa_settings,
    ),
)  # fmt: skip


# ------------------------------------------------------------------------------------------------------ git and tests
def git(root: Path, *args: str) -> str:
    """``git <args>`` in ``root``; its stdout.

    Raises:
        SeriesError: git failed (its message quoted).
    """
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if done.returncode:
        raise SeriesError(f"git {' '.join(args)} in {root}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def run_tests(root: Path, python: str, tests: tuple[str, ...]) -> tuple[bool, str]:
    """Run ``tests`` with ``python -m pytest`` in ``root`` (its lmms_eval first on the path): ``(passed, Validation line)``."""
    import os

    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, cwd=root, env=env)
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    counts = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed|errors?|skipped)", tail))
    ok = done.returncode == 0 and counts.get("passed", 0) > 0
    line = f"`python -m pytest {' '.join(tests)}` | sample size: `N={sum(counts.values())} tests` | key metrics: `{tail.strip('= ')}` | result: `{'pass' if ok else 'fail'}`"
    return ok, line


@dataclass
class BranchResult:
    """One written branch: its name, base commit, size and the measured validation."""

    branch: str
    base: str
    files: int
    added: int
    removed: int
    validation: list[str] = field(default_factory=list)
    passed: bool | None = None  # None: tests not run
    sizes: dict[str, int] = field(default_factory=dict)  # folder: lines (:data:`SIZE_GOALS`' folders on this branch)


def write_series(root: str | Path, prefix: str = "audio-bench/", python: str | None = None) -> list[BranchResult]:
    """Write :data:`SERIES` into the clean git checkout ``root`` (see the module docstring); the checkout is left
    where it was. Returns one :class:`BranchResult` per branch.

    Raises:
        SeriesError: ``root`` is not a clean git checkout of lmms-eval, or a branch changes nothing.
        ExportError: a branch's code cannot be exported as it stands.
    """
    root = Path(root).resolve()
    ex._lmms_eval_tasks_dir(root)
    if git(root, "status", "--porcelain").strip():
        raise SeriesError(f"{root}: the checkout has uncommitted changes; commit or stash them first")
    head = git(root, "rev-parse", "HEAD").strip()
    start = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    results = []
    try:
        for pr in SERIES:
            base = prefix + pr.base if pr.base else head
            git(root, "checkout", "-q", "-B", prefix + pr.branch, base)
            pr.write(root)
            git(root, "add", "-A")
            if not git(root, "diff", "--cached", "--name-only").strip():
                raise SeriesError(f"{prefix + pr.branch}: changes nothing on {base}")
            validation = [NOT_RUN]
            passed = None
            if python:
                passed, line = run_tests(root, python, pr.tests)
                validation = [line]
            if pr.branch == "mcga":
                rows = mcga_results_rows()
                equal = all(abs(official - ours) < 1e-9 for _, _, official, ours in rows)
                validation.append(f"`RESULTS.md: the official eval/eval_model.py beside this task on the same outputs` | sample size: `N={sum(n for _, n, _, _ in rows)} items` | key metrics: `{'; '.join(f'{name} {ours:.2f}' for name, _, _, ours in rows)}` | result: `{'pass' if equal else 'fail'}`")
            git(root, "commit", "-q", "-m", describe(pr, validation))
            stats = [line.split("\t") for line in git(root, "diff", "--numstat", base, "HEAD").splitlines()]
            sizes = {folder: folder_lines(root / folder) for branch, folder in SIZE_GOALS if branch == pr.branch}
            results.append(BranchResult(prefix + pr.branch, base, len(stats), sum(int(a) for a, _, _ in stats if a != "-"), sum(int(r) for _, r, _ in stats if r != "-"), validation, passed, sizes))
    finally:  # the tree was clean: what a failed branch left uncommitted is ours to remove
        git(root, "reset", "-q", "--hard")
        git(root, "clean", "-q", "-fd")
        git(root, "checkout", "-q", start if start != "HEAD" else head)
    return results
