"""Figure glitches seen on the demo report, pinned on the figures' own matplotlib objects (captured before saving):
one document is never counted twice in the health figure, its legend stays off the bars, an axis with nothing
scored says so instead of spanning ±0.04, and the HTML's notes and run table stay readable."""

from __future__ import annotations

from pathlib import Path

import pytest

from audio_bench_report import health, render
from audio_bench_report.runs import Run, TaskResult
from audio_bench_report.tables import Cell, Column, Context, Row, Table


def _run(tasks: dict[str, dict], n: int = 6) -> Run:
    results = {t: TaskResult(t, metrics, n, n, Path("x_results.json")) for t, metrics in tasks.items()}
    return Run("whisper", "faster_whisper", "pretrained=" + "/very/long/path/" * 12, Path("out"), None, results)


@pytest.fixture
def figures(monkeypatch):
    captured = []
    for module in ("audio_bench_report.health", "parsa.report_layout", "mcga.report_layout"):
        monkeypatch.setattr(f"{module}.save", lambda fig, stem: captured.append(fig) or [])
    return captured


def test_an_empty_answer_that_was_also_excluded_is_not_stacked_twice(figures):
    # parsa_music: 6 documents, 1 empty answer, which PARSA also counts as excluded, and 2 other exclusions
    run = _run({"parsa_music": {"excluded": 3, "refused": 0, "empty_responses": 1, "scored": 3}})
    health.build([run], Context()).plots[0].draw(Path("unused"))
    [fig] = figures
    ax = fig.axes[0]
    bars = [(p.get_x(), p.get_width(), p.get_height()) for p in ax.patches]
    assert (0.0, 3.0, 0.8) in bars  # excluded: 3 documents from 0
    assert (0.0, 1.0, 0.3) in bars  # the empty answer: a thin bar from 0, inside the exclusions, not after them
    assert max(x + w for x, w, _ in bars) == 3.0
    assert [t.get_text() for t in ax.texts] == ["of 6"]
    legend = ax.get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1  # beside the axes


def test_a_figure_with_nothing_scored_says_so(figures):
    from parsa.report_layout import build

    run = _run({"parsa_vazn": {"accuracy": "not computed: no scored items", "majority_baseline": 0.25, "scored": 0, "excluded": 6}})
    section = build([run], Context())
    [plot] = [p for p in section.plots if p.key == "parsa_normalised_score"]
    plot.draw(Path("unused"))
    ax = figures[-1].axes[0]
    assert ax.get_ylim() == (0.0, 1.0)
    assert any("no task with a baseline was scored" in t.get_text() for t in ax.texts)


def test_the_why_note_names_each_reason_once_with_its_rows():
    note = "parsa_vazn: the data held 6 documents, the full test set has 1000"
    rows = [Row(label, "run", {c: Cell(value=1.0, marks=["S"], notes=[note]) for c in ("a", "b")}) for label in ("A", "B", "A")]
    table = Table("t", "t", [Column("a", "a"), Column("b", "b")], rows)
    assert render._mark_details(table) == [f"A, B: {note}"]


def test_long_model_arguments_wrap_inside_the_run_table():
    assert "td.detail{" in render._CSS and "overflow-wrap:anywhere" in render._CSS.split("td.detail{")[1].split("}")[0]
