"""The printed-table change to lmms-eval, as its own pull request (``lmms-eval-audio-export ... --patch-make-table``).

lmms-eval's ``make_table`` (``lmms_eval/utils.py``; upstream main 75571cfe and the 0.7 wheels) prints every value of
``results[task]`` as a row: breakdown dicts, interval lists and signature strings become long text, and no task setting
keeps a value out. :data:`MAKE_TABLE_EDITS` changes that: numbers (Python ``int``/``float``/``bool`` and numpy scalars,
``np.number`` and ``np.bool_``) and the "no value" markers (``None``, ``""``, ``"N/A"``, printed as ``N/A``) keep their
rows exactly as before; every other value (dicts, lists, tuples, arrays, other text) is named in one line under the table,
and stays in the results JSON. Seven added lines, none removed (:func:`patch_make_table`).

The upstream-style test of it is ``lmms_eval_tasks/_upstream/test_make_table.py`` (for ``test/eval/``);
:func:`write_table_change` writes the pull request (the edit and its test); its description is in :mod:`lmms_eval_tasks.upstream_series`.
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


#: Where the upstream-style test goes in lmms-eval (from ``_upstream/test_make_table.py``).
TABLE_TEST = Path("test") / "eval" / "test_make_table.py"


def write_table_change(root: str | Path) -> list[Path]:
    """The table pull request in the lmms-eval tree ``root``: :func:`patch_make_table` and its test
    (:data:`TABLE_TEST`). Returns the paths changed.

    Raises:
        ExportError: as :func:`patch_make_table`.
    """
    from lmms_eval_tasks.upstream_export import TEMPLATES

    root = Path(root)
    patch_make_table(root)
    test = root / TABLE_TEST
    test.write_text((TEMPLATES / TABLE_TEST.name).read_text(encoding="utf-8"), encoding="utf-8")
    return [root / "lmms_eval" / "utils.py", test]
