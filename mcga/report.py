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

from audio_bench_core.json_text import json_text
from audio_bench_core.samples import per_document_values, samples_file_of
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


def collect_mcga_results(files: list[Path], notes: list[str] | None = None, sources: dict | None = None) -> dict[str, dict]:
    """``{task: {metric: value}}`` for the ``mcga_*`` tasks in the files (filter suffix ``,none`` dropped).

    ``sources``, when given, receives ``{task: (results file, (documents scored, documents in the data))}`` (the
    counts from the results' ``n-samples``; ``None`` where absent).

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
            if sources is not None:
                n = (results.get("n-samples") or {}).get(task) or {}
                sources[task] = (file, (n.get("effective"), n.get("original")))
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


#: How a refusal for want of shared documents ends (said once after the pairs it names).
NO_SHARED_TAIL = ": CMC compares one set of documents in both modes"

#: The three ratios of CMC (paper eq. 1): (label, audio task, text task, official metric, strict metric).
CMC_PAIRS = (
    ("SQA/QA", "mcga_sqa", "mcga_sqa_text", "f1_official", "f1_official"),
    ("SU/LU", "mcga_su", "mcga_su_text", "acc_official", "acc_strict"),
    ("SR/LR", "mcga_sr", "mcga_sr_text", "acc_official", "acc_strict"),
)


def cmc_over_shared_documents(tasks: dict[str, dict], per_document: dict[str, dict | None], counts: dict[str, tuple]) -> dict:
    """CMC (paper eq. 1) over the documents both modes scored, official and strict, naming how many.

    Each ratio compares the audio task with its text twin over the same documents: the ones both sides scored, matched
    by document (the clip key) from the samples files. The official SQA F1 and the accuracies are means of
    per-document values, so the mean over the matched documents is the score those documents get.

    Args:
        tasks: ``{task: {metric: value}}`` (:func:`collect_mcga_results`).
        per_document: ``{task: {document: {metric: value}}}`` from the task's samples file
            (:func:`audio_bench_core.samples.per_document_values`), or ``None`` for a task without one.
        counts: ``{task: (documents scored, documents in the data)}`` from the results' ``n-samples`` (``None`` if unknown).

    Returns:
        ``{"cmc": percent | None, "cmc_strict": percent | None, "documents": {label: n | None}, "parts": [{label,
        audio, text, audio_strict, text_strict, n}], "matched_by": "document" | "full data" | "unchecked", "error": reason | None}``.
        With samples files on both sides, the documents are matched (``matched_by`` "document"). Without them, the
        results' scores are used only when both sides scored their whole data (same rows: "full data") or when no
        count is known ("unchecked", said in the note); otherwise CMC is refused (``error`` says why). Refused too when
        a pair shares no document, a text-mode score is 0, or a part's figure in the results is "not computed" (a task
        the run withheld, e.g. a failed run: its logged per-document values are not used).
    """
    out = {"cmc": None, "cmc_strict": None, "documents": {}, "parts": [], "matched_by": None, "error": None}
    if not all(t in tasks for t in CMC_TASKS):
        out["error"] = f"missing tasks {', '.join(t for t in CMC_TASKS if t not in tasks)} (run --tasks mcga_cmc)"
        return out
    withheld = [f"{task} {metric}: {tasks[task][metric]}" for _, audio_task, text_task, official, strict in CMC_PAIRS for task in (audio_task, text_task)
                for metric in dict.fromkeys((official, strict)) if isinstance(tasks[task].get(metric), str) and tasks[task][metric].startswith("not computed")]  # fmt: skip
    if withheld:  # a task whose figures the run withheld (a failed run): its per-document values mean nothing either
        out["error"] = f"a part is not computed ({'; '.join(withheld)})"
        return out
    matched_by = []
    for label, audio_task, text_task, official, strict in CMC_PAIRS:
        audio_docs, text_docs = per_document.get(audio_task), per_document.get(text_task)
        part = {"label": label}
        if audio_docs is not None and text_docs is not None:
            shared = sorted(set(audio_docs) & set(text_docs))
            for side, docs in (("audio", audio_docs), ("text", text_docs)):
                for name, metric in (("", official), ("_strict", strict)):
                    scored = [docs[d][metric] for d in shared if metric in docs[d] and all(metric in other[d] for other in (audio_docs, text_docs))]
                    part[f"{side}{name}"] = sum(scored) / len(scored) if scored else None
            part["n"] = sum(1 for d in shared if official in audio_docs[d] and official in text_docs[d])
            part["scored"] = {audio_task: len(audio_docs), text_task: len(text_docs)}
            matched_by.append("document")
            if not part["n"]:  # every pair without a shared document is named, not only the last
                reason = f"{audio_task} and {text_task} share no scored document ({len(audio_docs)} and {len(text_docs)} scored)"
                out["error"] = f"{out['error'].removesuffix(NO_SHARED_TAIL)}; {reason}{NO_SHARED_TAIL}" if out["error"] else f"{reason}{NO_SHARED_TAIL}"
        else:
            (audio_n, audio_all), (text_n, text_all) = counts.get(audio_task, (None, None)), counts.get(text_task, (None, None))
            for side, task in (("audio", audio_task), ("text", text_task)):
                part[side], part[f"{side}_strict"] = tasks[task].get(official), tasks[task].get(strict)
            if None in (audio_n, text_n):
                part["n"] = None
                matched_by.append("unchecked")
            elif audio_n == audio_all and text_n == text_all and audio_n == text_n:
                part["n"] = audio_n
                matched_by.append("full data")
            else:
                part["n"] = None
                out["error"] = out["error"] or (
                    f"{audio_task} scored {audio_n} of {audio_all} documents and {text_task} {text_n} of {text_all} (--limit?): CMC needs the same "
                    "documents in both modes; run both with --log_samples (the documents are then matched) or over the same full data"
                )
                matched_by.append("refused")
        out["parts"].append(part)
        out["documents"][label] = part["n"]
    out["matched_by"] = "document" if set(matched_by) == {"document"} else "unchecked" if "unchecked" in matched_by else "full data"
    if out["error"]:
        return out
    values = {p["label"]: p for p in out["parts"]}
    for key, suffix in (("cmc", ""), ("cmc_strict", "_strict")):
        numbers = [values[label].get(f"{side}{suffix}") for label, *_ in CMC_PAIRS for side in ("audio", "text")]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            continue
        try:
            out[key] = cross_modal_consistency(*numbers)
        except ValueError as error:  # a text-mode score of 0: the ratio is undefined
            out["error"] = str(error)
            out["cmc"] = out["cmc_strict"] = None
            break
    return out


def cmc_documents_line(cmc: dict) -> str:
    """One line naming the documents behind CMC: ``CMC over the documents both modes scored (matched by clip): SQA/QA 6,
    SU/LU 5, SR/LR 4``, or what was not checked."""
    counts = ", ".join(f"{label} {'?' if n is None else n}" for label, n in cmc["documents"].items())
    if cmc["matched_by"] == "document":
        return f"CMC over the documents both modes scored (matched by document, from the samples files): {counts}"
    if cmc["matched_by"] == "full data":
        return f"CMC over the full data of both modes (documents not matched one by one: no samples files): {counts}"
    return "CMC: documents not checked (no samples files and no document counts in the results); run with --log_samples to match them"


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


def cmc_table(tasks: dict[str, dict], cmc: dict | None = None) -> str | None:
    """CMC (paper eq. 1) with its three ratios, official and strict; ``None`` when a task is missing. ``cmc``: the
    result of :func:`cmc_over_shared_documents` (default: computed from ``tasks`` alone, documents unchecked)."""
    from audio_bench_report.render import text_table

    if not all(t in tasks for t in CMC_TASKS):
        return None
    cmc = cmc if cmc is not None else cmc_over_shared_documents(tasks, {}, {})

    def ratio(audio, text):
        return f"{audio / text:.3f}" if isinstance(audio, (int, float)) and isinstance(text, (int, float)) and text else "n/c"

    labels = {"SQA/QA": "SQA/QA (F1)", "SU/LU": "SU/LU (accuracy)", "SR/LR": "SR/LR (accuracy)"}
    rows = []
    for part in cmc["parts"]:
        rows.append([labels[part["label"]], _shown(part.get("audio")), _shown(part.get("text")), ratio(part.get("audio"), part.get("text")),
                     ratio(part.get("audio_strict"), part.get("text_strict"))])  # fmt: skip
    shown = (lambda value: "not computed" if cmc["error"] else _shown(value))
    rows.append(["CMC = mean ratio × 100", "", "", shown(cmc["cmc"]), shown(cmc["cmc_strict"])])
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
    sources: dict = {}
    try:
        tasks = collect_mcga_results(find_results_files(args.paths), notes, sources)
        per_document = {}
        for task in CMC_TASKS:
            path = samples_file_of(sources[task][0], task) if task in sources else None
            per_document[task] = per_document_values(path, ("f1_official", "acc_official", "acc_strict")) if path else None
    except (OSError, ValueError) as error:  # missing path, unreadable or ambiguous results: one line, exit 1
        print(f"mcga-report: {error}", file=sys.stderr)
        return 1
    for note in notes:
        print(note, file=sys.stderr if args.json else sys.stdout)
    if not tasks:
        print("no mcga_* task in these results", file=sys.stderr)
        return 1
    cmc = cmc_over_shared_documents(tasks, per_document, {task: counts for task, (_, counts) in sources.items()})
    missing = [t for t in CMC_TASKS if t not in tasks]
    report = {"tasks": tasks, "cmc": cmc["cmc"], "cmc_strict": cmc["cmc_strict"]}
    if not missing:
        report["cmc_documents"], report["cmc_matched_by"] = cmc["documents"], cmc["matched_by"]
        if cmc["error"]:
            report["cmc_error"] = cmc["error"]
    if args.json:
        print(json_text(report, indent=1))
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
    if missing:
        print(f"\nCMC: not computed, missing tasks {', '.join(missing)} (run --tasks mcga_cmc)")
        return 0
    print(f"\n{cmc_table(tasks, cmc)}")
    print(f"CMC: not computed, {cmc['error']}" if cmc["error"] else cmc_documents_line(cmc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
