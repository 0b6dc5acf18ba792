"""``mcga-report``: MCGA scores and CMC from lmms-eval results files.

lmms-eval groups can only average their subtasks' metrics, so CMC (a ratio of audio to text scores of
three tasks, paper eq. 1) is computed here, from the results JSON of a run that included
``mcga_sqa, mcga_su, mcga_sr`` and their ``_text`` twins (e.g. ``--tasks mcga_cmc``)::

    mcga-report OUTPUT_PATH            # a results file, or a folder searched for *_results.json
    mcga-report OUTPUT_PATH --json     # machine-readable

A folder that holds several runs of one task (e.g. ``make demo`` run twice into the same ``--output_path``)
is read per task from the newest run (the results file's ``date``, lmms-eval's run timestamp); the older
files are named in a printed note, never mixed in.

CMC uses the official metrics (``f1_official`` for SQA/QA, ``acc_official`` for SU/LU and SR/LR); the same
ratio over the strict accuracies is printed beside it as ``cmc_strict``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcga.metrics import cross_modal_consistency

CMC_TASKS = ("mcga_sqa", "mcga_su", "mcga_sr", "mcga_sqa_text", "mcga_su_text", "mcga_sr_text")


def find_results_files(paths: list[str | Path]) -> list[Path]:
    """``*_results.json`` files named or found below the given paths, sorted.

    Raises:
        FileNotFoundError: a path does not exist or a folder holds no results file.
    """
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = sorted(path.rglob("*_results.json"))
            if not found:
                raise FileNotFoundError(f"no *_results.json below {path}")
            files += found
        else:
            raise FileNotFoundError(f"{path} does not exist")
    return files


def run_time(results: dict, file: Path) -> str:
    """Sortable start time of the run behind a results file: its ``date`` (``YYYYMMDD_HHMMSS``, lmms-eval),
    else the file name's prefix."""
    return str(results.get("date") or file.name.split("_results.json")[0])


def collect_mcga_results(files: list[Path], notes: list[str] | None = None) -> dict[str, dict]:
    """``{task: {metric: value}}`` for the ``mcga_*`` tasks in the files (filter suffix ``,none`` dropped).

    A task found in several files is taken from the newest run (:func:`run_time`); each such choice is
    appended to ``notes`` as one line naming the file used and the files left out.

    Raises:
        ValueError: the same task appears in two files of the same run time (pass the one you mean).
    """
    tasks: dict[str, dict] = {}
    origin: dict[str, tuple[str, Path]] = {}
    older: dict[str, list[Path]] = {}
    model_of: dict[Path, str] = {}
    for file in files:
        results = json.loads(file.read_text(encoding="utf-8"))
        when = run_time(results, file)
        config = results.get("config") or {}
        model_of[file] = f"{config.get('model')} ({config.get('model_args') or ''})"
        for task, values in results.get("results", {}).items():
            if not task.startswith("mcga_"):
                continue
            if task in tasks:
                if when == origin[task][0]:
                    raise ValueError(f"task {task} is in both {origin[task][1]} and {file}, runs of the same time {when}; pass only one of them")
                if when < origin[task][0]:
                    older.setdefault(task, []).append(file)
                    continue
                older.setdefault(task, []).append(origin[task][1])
            tasks[task] = {key.split(",")[0]: value for key, value in values.items() if "_stderr" not in key and key != "alias"}
            origin[task] = (when, file)
    if notes is not None:
        choices: dict[tuple, list[str]] = {}
        for task in sorted(older):
            choices.setdefault((origin[task][1], tuple(sorted(older[task]))), []).append(task)
        for (used, left_out), names in choices.items():
            notes.append(f"note: {', '.join(names)} found in {len(left_out) + 1} runs; using the newest, {used}; left out: {', '.join(map(str, left_out))}")
        models = sorted({model_of[file] for _, file in origin.values()})
        if len(models) > 1:
            notes.append(f"note: these scores come from runs of different models: {'; '.join(models)}")
    return tasks


def cmc_from_results(tasks: dict[str, dict], strict: bool = False) -> float | None:
    """CMC in percent from collected results, or ``None`` if one of the six tasks is missing."""
    if not all(t in tasks for t in CMC_TASKS):
        return None
    accuracy = "acc_strict" if strict else "acc_official"
    return cross_modal_consistency(
        sqa=tasks["mcga_sqa"]["f1_official"], qa=tasks["mcga_sqa_text"]["f1_official"],
        su=tasks["mcga_su"][accuracy], lu=tasks["mcga_su_text"][accuracy],
        sr=tasks["mcga_sr"][accuracy], lr=tasks["mcga_sr_text"][accuracy],
    )  # fmt: skip


def breakdown_line(values: dict, group: str) -> str | None:
    """``"诗 12.3 (n=200) · 词 8.1 (n=200) …"`` from ``cer_official_by_<group>`` and ``n_by_<group>``, or ``None``."""
    cers, sizes = values.get(f"cer_official_by_{group}"), values.get(f"n_by_{group}")
    if not isinstance(cers, dict) or not isinstance(sizes, dict):
        return None
    return " · ".join(f"{name} {cer:.1f} (n={sizes.get(name, '?')})" if isinstance(cer, (int, float)) else f"{name} {cer}" for name, cer in cers.items())


def _shown(value) -> str:
    """A number with two decimals, ``not computed`` for a "not computed: ..." string, ``–`` for none."""
    if isinstance(value, bool) or value is None:
        return "–"
    if isinstance(value, (int, float)):
        return f"{value:.2f}"
    return "not computed" if str(value).startswith("not computed") else str(value)[:30]


#: The first note under the scores table: MCGA reports percent, where PARSA-Bench's tables report fractions.
SCALE_NOTE = "scale: CER, F1, accuracy and CMC in percent (0-100), LLM-B/LLM-C 0-100 (judge), chrF++/BLEU sacrebleu's 0-100"


def scores_table(tasks: dict[str, dict]) -> tuple[str, list[str]]:
    """Per task its headline metrics (official, strict beside it) and the counts that are not 0; the scale
    (:data:`SCALE_NOTE`) and the "not computed" reasons as notes."""
    from audio_bench_report.render import text_table
    from mcga.report_layout import HEADLINE_METRICS, headline_metrics

    rows, notes = [], [SCALE_NOTE]
    order = [*HEADLINE_METRICS, *(f"{t}_text" for t in ("mcga_sqa", "mcga_su", "mcga_sr"))]
    for task, values in sorted(tasks.items(), key=lambda item: (order.index(item[0]) if item[0] in order else len(order), item[0])):
        counts = ", ".join(f"{k} {v}" for k, v in sorted(values.items()) if isinstance(v, int) and not isinstance(v, bool) and v)
        for index, metric in enumerate(m for m in headline_metrics(task) if m in values):
            twin = next((t for t in (f"{metric}_strict", metric.replace("_official", "_strict")) if t != metric and t in values), None)
            rows.append([task if index == 0 else "", metric, _shown(values[metric]), _shown(values[twin]) if twin else "", counts if index == 0 else ""])
            if isinstance(values[metric], str) and values[metric].startswith("not computed") and values[metric] not in notes:
                notes.append(values[metric])
    return text_table(["task", "metric", "official", "strict", "also counted (not 0)"], rows), notes


def cmc_table(tasks: dict[str, dict]) -> str | None:
    """CMC (paper eq. 1) with its three ratios, official and strict; ``None`` when a task is missing."""
    from audio_bench_report.render import text_table

    if not all(t in tasks for t in CMC_TASKS):
        return None

    def ratio(audio, text):
        return f"{audio / text:.3f}" if isinstance(audio, (int, float)) and isinstance(text, (int, float)) and text else "n/c"

    rows = []
    for label, audio_task, text_task, official, strict in (("SQA/QA (F1)", "mcga_sqa", "mcga_sqa_text", "f1_official", "f1_official"),
                                                           ("SU/LU (accuracy)", "mcga_su", "mcga_su_text", "acc_official", "acc_strict"),
                                                           ("SR/LR (accuracy)", "mcga_sr", "mcga_sr_text", "acc_official", "acc_strict")):  # fmt: skip
        audio, text = tasks[audio_task], tasks[text_task]
        rows.append([label, _shown(audio.get(official)), _shown(text.get(official)), ratio(audio.get(official), text.get(official)),
                     ratio(audio.get(strict), text.get(strict))])  # fmt: skip
    cmc, strict = cmc_from_results(tasks), cmc_from_results(tasks, strict=True)
    rows.append(["CMC = mean ratio × 100", "", "", _shown(cmc), _shown(strict)])
    return text_table(["CMC (paper eq. 1)", "audio", "text", "ratio", "ratio, strict accuracies"], rows)


def breakdown_table(values: dict, group: str) -> str | None:
    """Official CER per genre or dynasty with n (documents), in the paper's order; ``None`` without a breakdown."""
    from audio_bench_report.render import text_table
    from mcga.report_layout import DYNASTY_ENGLISH, GENRE_ENGLISH

    cers, sizes = values.get(f"cer_official_by_{group}"), values.get(f"n_by_{group}") or {}
    if not isinstance(cers, dict):
        return None
    english = GENRE_ENGLISH if group == "genre" else DYNASTY_ENGLISH
    rows = [[f"{name} {english.get(name, '')}".strip(), str(sizes.get(name, "?")), _shown(cer)] for name, cer in cers.items()]
    return text_table([group, "n", "official CER ↓"], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcga-report", description="MCGA scores and CMC from lmms-eval results files.")
    parser.add_argument("paths", nargs="+", help="results JSON files or folders (searched for *_results.json)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    notes: list[str] = []
    try:
        tasks = collect_mcga_results(find_results_files(args.paths), notes)
    except (OSError, ValueError) as error:  # missing path, unreadable or ambiguous results: one line, exit 1
        print(f"mcga-report: {error}", file=sys.stderr)
        return 1
    for note in notes:
        print(note, file=sys.stderr if args.json else sys.stdout)
    if not tasks:
        print("no mcga_* task in these results", file=sys.stderr)
        return 1
    try:
        report = {"tasks": tasks, "cmc": cmc_from_results(tasks), "cmc_strict": cmc_from_results(tasks, strict=True)}
    except ValueError as error:  # a text-mode score of 0: the ratio is undefined
        report = {"tasks": tasks, "cmc": None, "cmc_strict": None, "cmc_error": str(error)}
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    table, reasons = scores_table(tasks)
    print(table)
    for reason in reasons:
        print(f"  {reason}")
    asr = tasks.get("mcga_asr") or {}
    for group in ("genre", "dynasty"):
        breakdown = breakdown_table(asr, group)
        if breakdown:
            print(f"\nmcga_asr: official CER by {group} (n = documents)\n{breakdown}")
    try:
        cmc = cmc_table(tasks)
    except ValueError as error:
        cmc = None
        report["cmc_error"] = str(error)
    if cmc is not None:
        print(f"\n{cmc}")
    elif report.get("cmc_error"):
        print(f"\nCMC: not computed, {report['cmc_error']}")
    else:
        missing = [t for t in CMC_TASKS if t not in tasks]
        print(f"\nCMC: not computed, missing tasks {', '.join(missing)} (run --tasks mcga_cmc)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
