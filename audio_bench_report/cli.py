"""``audio-bench-report RUN_FOLDER [RUN_FOLDER ...] --out REPORT_FOLDER``.

Writes into ``REPORT_FOLDER``: ``report.md`` and ``report.html`` (every table and figure; the HTML embeds the
figures), ``tables/<table>.md|.csv|.tex``, ``figures/<figure>.png|.svg`` and ``runs.csv`` (what was read from
where). Exit status 0 when a report was written, 2 for bad input (message names the folder or file).
"""

from __future__ import annotations

import argparse
import csv
import html
import importlib
import importlib.util
import io
import sys
from pathlib import Path

from audio_bench_report import compare, health, render
from audio_bench_report.runs import ReportInputError, Run, read_runs
from audio_bench_report.tables import ALL_MARKS, Context, Section, load_published

TITLE = "Audio benchmark report"


def layout_modules(runs: list[Run]) -> tuple[list, list[str]]:
    """The ``<package>.report_layout`` modules the runs' tasks call for, and the tasks no layout covers."""
    modules, uncovered = {}, []
    for run in runs:
        for task in run.tasks:
            package = task.split("_", 1)[0]
            if package in modules:
                continue
            name = f"{package}.report_layout"
            try:  # find the package without importing it: only a package that ships report_layout.py is imported
                spec = importlib.util.find_spec(package)
            except (ImportError, ValueError):
                spec = None
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            if any((Path(location) / "report_layout.py").is_file() for location in locations):
                modules[package] = importlib.import_module(name)
            elif task not in uncovered:
                uncovered.append(task)
    return [modules[p] for p in sorted(modules)], uncovered


def run_warnings(runs: list[Run], sections: list[Section]) -> list[str]:
    """Loud, run-level warnings: failed tasks, --limit runs, subsets, differing scoring signatures."""
    warnings = []
    letters = {}
    for section in sections:
        for table in section.tables:
            for row in table.rows:
                if row.kind == "run":
                    for cell in row.cells.values():
                        letters.setdefault(row.label, set()).update(cell.marks)
    for run in runs:
        marks = letters.get(run.label, set())
        recorded = {kind: [t for t, r in sorted(run.tasks.items()) if (r.status or {}).get("status") == kind] for kind in ("failed", "incomplete")}
        if recorded["failed"]:  # the run's own task_status names them, also tasks no benchmark table shows
            warnings.append(f"{run.label}: FAILED tasks (mark F), marked failed by the run: {', '.join(recorded['failed'])} (reasons: health table). Do not report these numbers.")
        elif "F" in marks:
            warnings.append(f"{run.label}: FAILED tasks (mark F): most outputs empty or failed. Do not report these numbers.")
        if recorded["incomplete"]:
            warnings.append(f"{run.label}: INCOMPLETE tasks (mark I), stopped early by the run: {', '.join(recorded['incomplete'])} (reasons: health table).")
        if "L" in marks or run.limit:
            how = f"run with --limit {run.limit}" if run.limit else "some tasks were run with --limit"  # a task's limit, not the run's
            warnings.append(f"{run.label}: {how}: partial results, not comparable with full test-set numbers (mark L).")
        if "S" in marks:
            warnings.append(f"{run.label}: some tasks ran on fewer documents than the full test set, e.g. the shipped sample (mark S).")
        if run.notes:
            warnings.append(f"{run.label}: several results files hold the same tasks; the newest was used for each ({len(run.notes)} passed over, see runs.csv).")
    tasks = sorted({t for run in runs for t in run.tasks})
    for task in tasks:
        signatures = {run.label: run.tasks[task].metrics.get("signature") for run in runs if task in run.tasks}
        distinct = {s for s in signatures.values() if isinstance(s, str)}
        if len(distinct) > 1:
            warnings.append(f"{task}: runs were scored under different signatures ({', '.join(sorted(signatures))}); compare with care.")
    return warnings


def runs_csv(runs: list[Run]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["label", "model", "model_args", "folder", "date", "lmms_eval_version", "limit", "tasks", "results_files", "notes"])
    for run in runs:
        files = sorted({str(r.file) for r in run.tasks.values()})
        writer.writerow([run.label, run.model, run.model_args, run.folder, run.date, run.lmms_eval_version, "" if run.limit is None else run.limit,
                         " ".join(sorted(run.tasks)), " ".join(files), " | ".join(run.notes)])  # fmt: skip
    return out.getvalue()


def runs_markdown(runs: list[Run]) -> str:
    lines = ["| run | model | model_args | limit | tasks | results files |", "|---|---|---|---|---|---|"]
    for run in runs:
        files = ", ".join(sorted({r.file.name for r in run.tasks.values()}))
        lines.append(f"| **{run.label}** | {run.model} | `{run.model_args}` | {run.limit if run.limit is not None else 'none'} | {len(run.tasks)} | {files} |")
    notes = [f"- {run.label}: {note}" for run in runs for note in run.notes]
    return "\n".join(lines + [""] + notes) + "\n"


def write_report(folders: list[str | Path], out: str | Path, names: list[str] | None = None, context: Context | None = None) -> dict:
    """Read the runs, build every benchmark's section, write all files into ``out``.

    Returns:
        ``{"runs": [Run], "sections": [Section], "files": [Path], "warnings": [str], "uncovered_tasks": [str]}``.

    Raises:
        ReportInputError: a folder holds no readable results file, or names and folders differ in number.
    """
    context = context or Context()
    names = names or []
    if names and len(names) != len(folders):
        raise ReportInputError(f"--name given {len(names)} time(s) for {len(folders)} folder(s): give one name per folder, in order")
    runs: list[Run] = []
    for index, folder in enumerate(folders):
        runs += read_runs(folder, names[index] if names else None)
    seen: dict[str, int] = {}
    for run in runs:  # labels identify rows: make them unique
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} #{seen[run.label]}"
    unknown = [label for label in context.same_model if label not in {r.label for r in runs}]
    if unknown:
        raise ReportInputError(f"--same-model names run(s) {unknown} that are not among the runs: {[r.label for r in runs]}")
    modules, uncovered = layout_modules(runs)
    known = set()
    for module in modules:
        try:
            known |= set(load_published(module.__name__.rsplit(".", 1)[0]).get("models") or {})
        except FileNotFoundError:
            pass
    wrong = sorted(model for model in context.same_model.values() if model not in known)
    if wrong:
        raise ReportInputError(f"--same-model names {wrong}, not a model of these benchmarks' papers; known: {', '.join(sorted(known))}")
    sections = [s for s in (module.build(runs, context) for module in modules) if s is not None]
    comparison = compare.report_section(runs)  # paired B - A tables and plot (two or more runs)
    if comparison is not None:
        sections.append(comparison)
    sections.append(health.build(runs, context))

    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    plot_files: list[dict[str, list[Path]]] = []
    for section in sections:
        for table in section.tables:
            for suffix, text in ((".md", render.markdown(table)), (".csv", render.csv_text(table))) + (((".tex", render.latex(table)),) if table.latex else ()):
                path = out / "tables" / f"{table.key}{suffix}"
                path.write_text(text, encoding="utf-8")
                files.append(path)
        written = {}
        for plot in section.plots:
            written[plot.key] = plot.draw(out / "figures" / plot.key)
            files += written[plot.key]
        plot_files.append(written)
    warnings = run_warnings(runs, sections)
    if uncovered:
        warnings.append(f"tasks with no report layout (in the results files, not in these tables): {', '.join(uncovered)}")

    (out / "runs.csv").write_text(runs_csv(runs), encoding="utf-8")
    md = [f"# {TITLE}", "", runs_markdown(runs)]
    md += ["**Read before using these numbers:**", ""] + [f"- {w}" for w in warnings] + [""] if warnings else []
    for section, written in zip(sections, plot_files):
        md += [f"## {section.title}", ""] + [f"{n}\n" for n in section.notes]
        md += [render.markdown(t) for t in section.tables]
        for plot in section.plots:
            md.append(f"![{plot.caption}](figures/{plot.key}.png)\n\n*{plot.caption}* ([SVG](figures/{plot.key}.svg))\n")
    md += ["## Marks", ""] + [f"- **{m}** {t}" for m, t in ALL_MARKS.items()]
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    page, uncovered = render.html_page(TITLE, _runs_html(runs), list(zip(sections, plot_files)), warnings, context.system_fonts)
    if uncovered:  # named by code point only, so the warning itself needs no missing glyph
        warnings.append(f"report.html: no embedded font has {len(uncovered)} character(s), shown only where the reader has a font for them: "
                        + " ".join(f"U+{ord(ch):04X}" for ch in uncovered[:20]) + (" ..." if len(uncovered) > 20 else ""))  # fmt: skip
        page, _ = render.html_page(TITLE, _runs_html(runs), list(zip(sections, plot_files)), warnings, context.system_fonts)
    (out / "report.html").write_text(page, encoding="utf-8")
    files += [out / "runs.csv", out / "report.md", out / "report.html"]
    return {"runs": runs, "sections": sections, "files": files, "warnings": warnings, "uncovered_tasks": uncovered}


def _runs_html(runs: list[Run]) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(r.label)}</th><td>{html.escape(r.model)}</td><td class='detail'>{html.escape(r.model_args)}</td>"
        f"<td>{html.escape(str(r.limit)) if r.limit is not None else 'none'}</td><td>{len(r.tasks)}</td>"
        f"<td class='detail'>{html.escape(', '.join(sorted({t.file.name for t in r.tasks.values()})))}</td><td class='detail'>{html.escape(' | '.join(r.notes))}</td></tr>"
        for r in runs
    )
    return ("<h2>Runs</h2><table><thead><tr><th>run</th><th>model</th><th>model_args</th><th>limit</th><th>tasks</th><th>results files</th><th>notes</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")  # fmt: skip


def _same_model(values: list[str]) -> dict[str, str]:
    pairs = {}
    for value in values:
        label, sep, model = value.partition("=")
        if not sep or not label or not model:
            raise ReportInputError(f"--same-model {value!r}: expected RUN_LABEL=PUBLISHED_MODEL, e.g. 'qwen=Qwen2.5-Omni-7B'")
        pairs[label] = model
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="audio-bench-report", description="Paper-style tables, figures and an HTML page from lmms-eval output folders (MCGA, PARSA-Bench, MMAC).")
    parser.add_argument("folders", nargs="+", help="lmms-eval output folders (one per model run) or *_results.json files")
    parser.add_argument("--out", required=True, help="folder to write the report into (created)")
    parser.add_argument("--name", action="append", default=[], help="row label for each folder, in order (default: model and its pretrained= argument)")
    parser.add_argument("--same-model", action="append", default=[], metavar="RUN=MODEL",
                        help="compare run RUN with the paper's MODEL (default: found from the model arguments)")  # fmt: skip
    parser.add_argument("--exclusion-threshold", type=float, default=0.05, help="mark X when excluded + refused items exceed this share (default 0.05)")
    args = parser.parse_args(argv)
    try:
        context = Context(exclusion_threshold=args.exclusion_threshold, same_model=_same_model(args.same_model))
        report = write_report(args.folders, args.out, args.name, context)
    except ReportInputError as error:
        print(f"audio-bench-report: {error}", file=sys.stderr)
        return 2
    for warning in report["warnings"]:
        print(f"WARNING: {warning}", file=sys.stderr)
    tables = sum(len(s.tables) for s in report["sections"])
    figures = sum(len(s.plots) for s in report["sections"])
    print(f"{len(report['runs'])} run(s), {tables} tables, {figures} figures -> {Path(args.out) / 'report.html'} (and report.md, tables/, figures/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
