"""Figure glitches seen on the demo report, pinned on the figures' own matplotlib objects (captured before saving):
one document is never counted twice in the health figure, its legend stays off the bars, an axis with nothing
scored says so instead of spanning ±0.04, and the HTML's notes and run table stay readable."""

from __future__ import annotations

from pathlib import Path

import pytest

from audio_bench_report import health, render
from audio_bench_report.runs import Run, TaskResult
from audio_bench_report.tables import Cell, Column, Context, Row, Table, load_published


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


# --- issue 27 item 5: what a new user tripped on in the report ------------------------------------------------


def test_a_sentence_repeated_for_many_tasks_is_stated_once_with_each_tasks_numbers():
    notes = [f"mmac_{c}: the data held {n} documents, the full test set has {full}" for c, n, full in (("content", 2, 1000), ("background", 2, 981), ("dynamic", 4, 615))]
    judged = [f"mcga_s2tt {m}: not computed: no judge configured (set DEEPSEEK_API_KEY)" for m in ("llm_b", "llm_bf", "llm_bm")]
    rows = [Row("M", "run", {f"c{i}": Cell(value=1.0, notes=[note]) for i, note in enumerate([*notes, *judged, "CMC needs mcga_sqa"])}),
            Row("B", "run", {"c0": Cell(value=1.0, notes=[notes[0]])})]  # fmt: skip
    table = Table("t", "t", [Column(f"c{i}", "c") for i in range(7)], rows)
    assert render._mark_details(table) == [
        "M, B: mmac_content: the data held 2 documents, the full test set has 1000",  # another set of rows: its own note
        "M: mmac_background: the data held 2 documents, the full test set has 981; likewise mmac_dynamic (4, 615)",
        "M: mcga_s2tt llm_b: not computed: no judge configured (set DEEPSEEK_API_KEY); likewise mcga_s2tt llm_bf, mcga_s2tt llm_bm",
        "M: CMC needs mcga_sqa",
    ]


def _parsa_run(**tasks) -> Run:
    return _run({f"parsa_{t}": m for t, m in tasks.items()})


def test_health_scored_is_the_n_of_the_main_table_and_docs_run_is_beside_it():
    from parsa.report_layout import main_table

    run = _parsa_run(intent={"macro_f1": 0.5, "scored": 4, "excluded": 2, "refused": 0, "macro_f1_ci95": [0.2, 0.8]})  # 6 documents run
    mcga = _run({"mcga_su": {"acc_official": 80.0, "acc_strict": 60.0}}, n=5)
    cell = main_table([run], load_published("parsa"), Context()).rows[0].cells["intent"]
    [health_table] = health.build([run, mcga], Context()).tables
    by_task = {row.detail: row.cells for row in health_table.rows}
    assert cell.n == 4 and by_task["parsa_intent"]["docs"].value == 4 and by_task["parsa_intent"]["run"].value == 6
    assert by_task["mcga_su"]["docs"].value == 5 == by_task["mcga_su"]["run"].value  # no 'scored' metric: the documents run
    assert [c.header for c in health_table.columns][:2] == ["docs run", "scored (n)"]


def test_mcga_main_cells_carry_their_n():
    from mcga.report_layout import main_table

    run = _run({"mcga_su": {"acc_official": 80.0, "acc_strict": 60.0}, "mcga_asr": {"cer_official": 12.5, "cer_strict": 14.0}}, n=5)
    table = main_table([run], load_published("mcga"), Context())
    markdown = render.markdown(table)
    assert "80.0 (n=5)" in markdown and "12.5<sup>S</sup> (n=5)" in markdown
    # CMC's n is the documents both modes scored per ratio (tests/test_combined_figures.py); without the six tasks: no n
    assert all(c.show_n for c in table.columns if c.key.startswith("cmc"))
    assert table.rows[0].cells["cmc"].text == "–" and table.rows[0].cells["cmc"].n is None


def test_parsa_strict_score_over_0_scored_items_is_not_computed():
    from parsa.report_layout import detail_table

    run = _parsa_run(vazn={"accuracy": "not computed: no scored items", "accuracy_strict": 0.0, "scored": 0, "excluded": 6, "refused": 0},
                     intent={"macro_f1": 0.5, "macro_f1_strict": 0.25, "scored": 4, "excluded": 2, "refused": 0})  # fmt: skip
    rows = {row.detail.split(" / ")[1].split(" ")[0]: row.cells for row in detail_table([run], load_published("parsa"), Context()).rows}
    assert (rows["Metre"]["strict"].value, rows["Metre"]["strict"].text) == (None, "n/c")
    assert "N" in rows["Metre"]["strict"].marks and rows["Intent"]["strict"].value == 0.25


def test_mmac_main_table_fits_a_page_and_the_scatter_says_which_run_it_leaves_out():
    from mmac.report_layout import build

    full = {f"mmac_{c}": {"accuracy": 50.0, "precision": 60.0, "coverage": 70.0} for c in ("content", "background", "persona", "paralinguistic", "dynamic", "implication")}
    part = {"mmac_content": {"accuracy": 40.0, "precision": 50.0, "coverage": 80.0}}
    runs = [_run(full), _run(part)]
    runs[1].label = "half"
    section = build(runs, Context())
    main, categories = section.tables[0], section.tables[1]
    assert [c.key for c in main.columns] == ["accuracy", "precision", "coverage"]
    assert (categories.key, [c.key for c in categories.columns]) == ("mmac_categories", ["accuracy", "precision", "coverage"])
    assert [(r.label, r.detail, r.cells["accuracy"].value) for r in categories.rows][5:] == [("whisper", "implication", 50.0), ("half", "content", 40.0)]
    [scatter] = [p for p in section.plots if p.key == "mmac_coverage_precision"]
    assert scatter.caption.endswith("Not drawn: half: no category-macro coverage or precision (category-macro needs all six categories; missing or not computed: "
                                    "mmac_background, mmac_persona, mmac_paralinguistic, mmac_dynamic, mmac_implication).")  # fmt: skip
    assert "Not drawn" not in build(runs[:1], Context()).plots[0].caption
