"""The printed-table change to lmms-eval, as its own pull request (``lmms-eval-audio-export ... --patch-make-table``).

lmms-eval's ``make_table`` (``lmms_eval/utils.py``; upstream main 75571cfe and the 0.7 wheels) prints every value of
``results[task]`` as a row: breakdown dicts, interval lists and signature strings become long text, and no task setting
keeps a value out. :data:`MAKE_TABLE_EDITS` changes that: numbers (Python ``int``/``float``/``bool`` and numpy scalars,
``np.number`` and ``np.bool_``) and the "no value" markers (``None``, ``""``, ``"N/A"``, printed as ``N/A``) keep their
rows exactly as before; every other value (dicts, lists, tuples, arrays, other text) is named in one line under the table,
and stays in the results JSON. Seven added lines, none removed (:func:`patch_make_table`).

The upstream-style test of it is ``lmms_eval_tasks/_upstream/test_make_table.py`` (for ``test/eval/``);
:func:`pr_description` writes the pull request's description in upstream's template.
"""

from __future__ import annotations

import re
from pathlib import Path

#: ``(anchor, replacement)`` pairs, each anchor found exactly once in ``make_table``. The number test runs before
#: ``make_table`` formats floats as text, on the value as the task returned it.
MAKE_TABLE_EDITS = (
    ("    values = []\n", "    values = []\n    not_shown = {}  # metric: tasks whose value is not a number (kept in the results JSON)\n"),
    (
        "            # Save original numeric value for diff calculation\n",
        (
            "            # The table shows numbers (Python or numpy) and N/A; dicts, lists and text (breakdowns, signatures) are named under it.\n"
            '            if not isinstance(v, (int, float, np.number, np.bool_, type(None))) and not (isinstance(v, str) and v in ("", "N/A")):\n'
            "                not_shown.setdefault(m, []).append(k)\n"
            "                continue\n"
            "            # Save original numeric value for diff calculation\n"
        ),
    ),
    (
        '    return "\\n\\n".join(output_tables)\n',
        (
            "    if not_shown:\n"
            '        output_tables.append("Not shown above (not numbers; in the results JSON): " + "; ".join(f"{m} ({\', \'.join(tasks)})" for m, tasks in sorted(not_shown.items())))\n'
            '    return "\\n\\n".join(output_tables)\n'
        ),
    ),
)
#: A line only this version of the edits writes: its presence means "already applied".
TABLE_PATCH_MARK = "isinstance(v, (int, float, np.number, np.bool_, type(None)))"


def patch_make_table(root: str | Path) -> bool:
    """Apply :data:`MAKE_TABLE_EDITS` to ``make_table`` in ``root/lmms_eval/utils.py``; False if already applied.

    Raises:
        ExportError (of :mod:`lmms_eval_tasks.upstream_export`), naming the file: no ``make_table``, or not the one the
        edits were written for (an anchor missing or repeated, ``np`` not imported), or one changed by an earlier
        version of these edits (which hid numpy numbers).
    """
    from lmms_eval_tasks.upstream_export import ExportError  # here: upstream_export imports this module

    path = Path(root) / "lmms_eval" / "utils.py"
    text = path.read_text(encoding="utf-8")
    start = text.find("\ndef make_table(")
    end = text.find("\ndef ", start + 1)
    if start < 0 or end < 0:
        raise ExportError(f"{path}: no make_table function; change the printed table by hand")
    body = text[start:end]
    if TABLE_PATCH_MARK in body:
        return False
    if "not_shown" in body:
        raise ExportError(f"{path}: make_table was changed by an earlier --patch-make-table (it hid numpy numbers); restore it (git checkout lmms_eval/utils.py) and run again")
    if not re.search(r"^import numpy as np\b", text, re.MULTILINE):
        raise ExportError(f"{path}: no `import numpy as np` at module level, which the changed make_table uses; change it by hand")
    for anchor, replacement in MAKE_TABLE_EDITS:
        if body.count(anchor) != 1:
            raise ExportError(f"{path}: make_table differs from the one of lmms-eval main 75571cfe ({anchor.strip()!r} found {body.count(anchor)} times); change it by hand")
        body = body.replace(anchor, replacement)
    path.write_text(text[:start] + body + text[end:], encoding="utf-8")
    return True


#: One Validation line of upstream's pull request template.
VALIDATION_LINE = re.compile(r"`[^`]+` \| sample size: `N=[^`]+` \| key metrics: `[^`]+` \| result: `(pass|fail)`")


def pr_description(validation: list[str]) -> str:
    """This change's pull request description, in the sections of upstream's ``.github/pull_request_template.md``.

    Args:
        validation: 1-3 lines ``\\`<command>\\` | sample size: \\`N=<...>\\` | key metrics: \\`<...>\\` | result: \\`pass\\```
            (or ``fail``), as measured by whoever ran them.

    Raises:
        ValueError: no line, more than three, or a line not of that form (the line is named).
    """
    if not 1 <= len(validation) <= 3:
        raise ValueError(f"the template allows 1-3 Validation lines, got {len(validation)}")
    for line in validation:
        if not VALIDATION_LINE.fullmatch(line):
            raise ValueError(f"Validation line not of the form `<command>` | sample size: `N=<...>` | key metrics: `<...>` | result: `pass/fail`: {line!r}")
    sections = {
        "Summary": [
            "`make_table` gives rows to numbers only: Python and numpy scalars (`np.float32`, `np.int64`, ...), and `None`/`N/A` as before.",
            "Other values of `results[task]` (breakdown dicts, lists, signature strings) are named in one line under the table instead of printed as rows.",
            "A test, `test/eval/test_make_table.py`, covers both and pins the unchanged table of a number-only result.",
        ],
        "In scope": ["`lmms_eval/utils.py`: `make_table` (7 added lines, none removed).", "`test/eval/test_make_table.py` (new)."],
        "Out of scope": [
            "The results JSON and `--output_path` files: unchanged, every value stays there.",
            "How numbers are formatted (floats `%.4f`, ints and numpy scalars as the table writer prints them), the stderr, stability and baseline columns, the throughput table.",
        ],
        "Validation": validation,
        "Risk / Compatibility": [
            "A result of numbers prints byte for byte as before; a task whose table showed dict or text rows now shows their names under the table (the values are in the results JSON).",
        ],
    }
    kinds = ["Bug fix (non-breaking change)", "New feature", "New benchmark/task", "New model integration", "Breaking change", "Documentation update", "Refactoring (no functional changes)"]
    parts = [f"## {title}\n" + "".join(f"- {line}\n" for line in lines) for title, lines in sections.items()]
    parts.append("## Type of Change\n" + "".join(f"- [{'x' if kind == 'Bug fix (non-breaking change)' else ' '}] {kind}\n" for kind in kinds))
    return "\n".join(parts)
