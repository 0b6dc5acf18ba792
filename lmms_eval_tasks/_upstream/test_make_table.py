"""Tests for make_table: numbers (Python or numpy) get rows, other values of a task's results are named under the table."""

import numpy as np

from lmms_eval.utils import make_table


def _results(values):
    return {"results": {"toy_task": {"alias": "toy_task", **values}}, "n-shot": {"toy_task": 0}, "higher_is_better": {"toy_task": {"acc": True}}}


def _rows(table):
    """Metric -> printed value of each row of the Markdown table."""
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("|toy_task|")]
    return {row[3]: row[5] for row in rows}


def test_numbers_get_rows_and_other_values_are_named_under_the_table():
    values = {
        "acc,none": 0.5,
        "acc_stderr,none": 0.1,
        "wer,none": np.float32(0.25),
        "count,none": np.int64(120),
        "bleu,none": None,
        "by_genre,none": {"poem": 0.5, "prose": 0.25},
        "signature,none": "norm:t2s|v1",
    }
    table = make_table(_results(values))

    assert _rows(table) == {"acc": "0.5", "wer": "0.25", "count": "120", "bleu": "N/A"}
    assert table.splitlines()[-1] == "Not shown above (not numbers; in the results JSON): by_genre (toy_task); signature (toy_task)"


def test_a_table_of_numbers_prints_as_before():
    values = {"acc,none": 0.5, "acc_stderr,none": 0.1, "wer,none": np.float32(0.25), "count,none": np.int64(120), "exact,none": 3}
    table = make_table(_results(values))

    assert table == (
        "| Tasks  |Filter|n-shot|Metric|   |Value|   |Stderr|\n"
        "|--------|------|-----:|------|---|-----|---|------|\n"
        "|toy_task|none  |     0|acc   |↑  |  0.5|±  |   0.1|\n"
        "|toy_task|none  |     0|count |   |120  |±  |N/A   |\n"
        "|toy_task|none  |     0|exact |   |    3|±  |N/A   |\n"
        "|toy_task|none  |     0|wer   |   |0.25 |±  |N/A   |\n"
    )
