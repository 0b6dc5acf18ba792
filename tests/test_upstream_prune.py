"""The export keeps only what the exported tasks reach (lmms_eval_tasks/upstream_prune.py; issue 28, item 5).

The small modules below are written by hand; what each must keep is read off them. The last tests prune the real
contribution and check with pyflakes that the pruning leaves no name undefined and no import unused that was not so
before (a removed function still used would be an undefined name; an import only it used, an unused one).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from lmms_eval_tasks import upstream_export as ex
from lmms_eval_tasks.upstream_prune import IMPORTED, WHOLE, prune_module, reachable_names

SHARED = textwrap.dedent(
    '''
    """Shared helpers."""
    import re

    from lmms_eval.tasks.shared.other import unused_here, used_by_cer

    #: Spaces, for the CER.
    SPACES = re.compile(r"\\s+")
    CACHE = {}


    def cer(reference, hypothesis):
        return used_by_cer(SPACES.sub("", reference), hypothesis)


    # A plugin command: nothing exported calls it.
    def plugin_command(argv):
        return re.match("x", argv[0])


    class Report:
        def render(self):
            return cer("a", "b")
    '''
)
OTHER = textwrap.dedent(
    """
    def used_by_cer(a, b):
        return a == b


    def unused_here():
        return 1


    def never():
        return 2
    """
)
UTILS = textwrap.dedent(
    """
    from lmms_eval.tasks.shared import helpers

    print("registered")  # runs on import: kept, with what it reads


    def process_results(doc, results):
        return {"cer": helpers.cer(doc["text"], results[0])}


    def agg_cer(items):
        return sum(items)


    def debug_dump(items):
        return helpers.Report().render()
    """
)
SOURCES = {"lmms_eval.tasks.shared.helpers": SHARED, "lmms_eval.tasks.shared.other": OTHER, "lmms_eval.tasks.bench.utils": UTILS}


def test_the_names_reached_from_the_yaml_through_imports_and_module_attributes():
    kept = reachable_names(SOURCES, {"lmms_eval.tasks.bench.utils": {"process_results", "agg_cer"}})
    assert kept["lmms_eval.tasks.bench.utils"] == {"process_results", "agg_cer", "helpers."}  # helpers.cer: not all of helpers
    # cer and what it reads; `unused_here` is imported but used by nothing in helpers, so its import stays, and so does it
    assert kept["lmms_eval.tasks.shared.helpers"] == {IMPORTED, "cer", "SPACES", "used_by_cer", "unused_here."}
    assert kept["lmms_eval.tasks.shared.other"] == {"used_by_cer", "unused_here"}


def test_a_module_used_bare_or_reading_globals_is_kept_whole():
    bare = UTILS.replace('helpers.cer(doc["text"], results[0])', "len(vars(helpers))")
    kept = reachable_names({**SOURCES, "lmms_eval.tasks.bench.utils": bare}, {"lmms_eval.tasks.bench.utils": {"process_results"}})
    assert WHOLE in kept["lmms_eval.tasks.shared.helpers"] and {"used_by_cer", "unused_here"} <= kept["lmms_eval.tasks.shared.other"]
    dynamic = OTHER + "\n\nREGISTRY = {k: v for k, v in globals().items() if k.startswith('used')}\n"
    kept = reachable_names({**SOURCES, "lmms_eval.tasks.shared.other": dynamic}, {"lmms_eval.tasks.bench.utils": {"agg_cer"}})
    assert kept["lmms_eval.tasks.shared.other"] >= {WHOLE} and kept["lmms_eval.tasks.shared.helpers"] == set()  # nothing reaches helpers
    kept = reachable_names(SOURCES, {"lmms_eval.tasks.shared.other": {IMPORTED}})
    assert kept["lmms_eval.tasks.shared.other"] == {IMPORTED}  # imported, no name used: only its top-level statements


def test_binding_names_through_globals_does_not_keep_the_module_whole():
    # `globals()[name] = ...` (hooks made in a loop) reads no name by string: the loop runs on import and keeps what it
    # references (agg_cer), and debug_dump, which nothing reaches, still goes
    made = UTILS + "\n\nfor _name in ('a', 'b'):\n    globals()[f'agg_{_name}'] = agg_cer\n"
    kept = reachable_names({**SOURCES, "lmms_eval.tasks.bench.utils": made}, {"lmms_eval.tasks.bench.utils": {"process_results"}})
    assert WHOLE not in kept["lmms_eval.tasks.bench.utils"] and kept["lmms_eval.tasks.bench.utils"] == {"process_results", "agg_cer", "helpers."}
    read = made + "\nHOOKS = [v for k, v in globals().items() if k.startswith('agg_')]\n"
    assert WHOLE in reachable_names({**SOURCES, "lmms_eval.tasks.bench.utils": read}, {"lmms_eval.tasks.bench.utils": {"process_results"}})["lmms_eval.tasks.bench.utils"]


def test_pruning_drops_unreached_definitions_their_comments_and_the_imports_only_they_used():
    kept = reachable_names(SOURCES, {"lmms_eval.tasks.bench.utils": {"process_results", "agg_cer"}})
    helpers = prune_module(SHARED, kept["lmms_eval.tasks.shared.helpers"], "helpers.py")
    assert "plugin_command" not in helpers and "A plugin command" not in helpers and "class Report" not in helpers and "CACHE" not in helpers
    assert "import re\n" in helpers and "#: Spaces, for the CER.\nSPACES" in helpers  # still used by what is kept
    assert "from lmms_eval.tasks.shared.other import unused_here, used_by_cer\n" in helpers  # unused before: kept as written
    assert prune_module(OTHER, kept["lmms_eval.tasks.shared.other"], "other.py").split() == OTHER.replace("\n\n\ndef never():\n    return 2\n", "\n").split()
    utils = prune_module(UTILS, kept["lmms_eval.tasks.bench.utils"], "utils.py")
    assert "debug_dump" not in utils and 'print("registered")' in utils and "from lmms_eval.tasks.shared import helpers\n" in utils
    assert prune_module(SHARED, {WHOLE}, "helpers.py") == SHARED
    compile(helpers, "helpers.py", "exec")


def test_an_import_of_several_names_keeps_the_ones_still_used():
    source = "from os.path import basename, join\n\n\ndef a():\n    return join('x', 'y')\n\n\ndef b():\n    return basename('x')\n"
    assert prune_module(source, {"a"}, "m.py") == "from os.path import join\n\n\ndef a():\n    return join('x', 'y')\n"


def _pyflakes_messages(files: dict[Path, str | bytes], root: Path) -> set[str]:
    """pyflakes' messages on every exported module, without line numbers (pruning moves lines)."""
    from pyflakes.api import check
    from pyflakes.reporter import Reporter

    class Collect(Reporter):
        def __init__(self):
            self.messages = []

        def flake(self, message):
            self.messages.append(f"{message.filename}: {message.message % message.message_args}")

        def syntaxError(self, filename, msg, lineno, offset, text):
            self.messages.append(f"{filename}: syntax error {msg}")

    reporter = Collect()
    for path, text in files.items():
        if path.suffix == ".py" and path.is_relative_to(root / "lmms_eval"):
            check(text, str(path.relative_to(root)), reporter)
    return set(reporter.messages)


def _unresolved_imports(files: dict[Path, str | bytes], root: Path) -> list[str]:
    """``from <exported module> import <name>`` anywhere in the exported modules (inside functions too) whose name the
    module no longer binds at its top level (nor is a submodule): what pyflakes cannot see across files."""
    modules = {ex._module_name(p, root).removesuffix(".__init__"): ast.parse(t) for p, t in files.items() if p.suffix == ".py" and p.is_relative_to(root / "lmms_eval")}
    bound = {}
    for name, tree in modules.items():
        bound[name] = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        bound[name] |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign)) for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        bound[name] |= {a.asname or a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and n.col_offset == 0 for a in n.names}
    return [f"{name}: from {n.module} import {a.name}" for name, tree in modules.items() for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module in modules for a in n.names if a.name not in bound[n.module] and f"{n.module}.{a.name}" not in modules]


@pytest.mark.parametrize("benchmark", [None, *ex.BENCHMARKS])
def test_the_pruned_export_leaves_no_name_undefined(benchmark):
    root = Path("/lmms-eval")
    files = ex.provider_files(root, root / "test") if benchmark is None else ex.benchmark_files(benchmark, root, root / "test")[0]
    after = ex.pruned(files, root)
    before_lines = sum(len(t.splitlines()) for p, t in files.items() if p.suffix == ".py" and p.is_relative_to(root / "lmms_eval"))
    after_lines = sum(len(t.splitlines()) for p, t in after.items() if p.suffix == ".py" and p.is_relative_to(root / "lmms_eval"))
    assert after_lines < before_lines, benchmark  # something is pruned in each
    assert _pyflakes_messages(after, root) - _pyflakes_messages(files, root) == set(), benchmark
    assert _unresolved_imports(files, root) == [] and _unresolved_imports(after, root) == [], benchmark


def test_a_shared_module_is_pruned_the_same_in_every_export():
    root = Path("/lmms-eval")
    seen: dict[Path, str] = {}
    for benchmark in ex.BENCHMARKS:
        for path, text in ex.pruned(ex.benchmark_files(benchmark, root, root / "test")[0], root).items():
            if ex.TASK_UTILS.replace(".", "/") in str(path) or ex.JUDGE_CORE.replace(".", "/") in str(path):
                assert seen.setdefault(path, text) == text, (benchmark, path)
    assert len(seen) > 10
