"""``lmms-eval-audio-export``: write a benchmark as an lmms-eval task folder in upstream's conventions.

``lmms-eval-audio-export series CHECKOUT`` writes the whole contribution as one git branch per pull request
(:mod:`lmms_eval_tasks.upstream_series`). ``lmms-eval-audio-export mcga ROOT`` (or ``parsa``, ``mmac``, ``all``) writes
one benchmark into any lmms-eval tree (a checkout, or an installed lmms-eval's ``site-packages`` folder):

- ``lmms_eval/tasks/<benchmark>/``: every task, group and template YAML of ``lmms_eval_tasks/<benchmark>/``, with
  ``!function utils.<name>`` references; ``utils.py`` (the benchmark's hooks); the benchmark package's modules that
  the hooks use, with the JSON data they read; ``make_hub_dataset.py`` (:data:`HUB_DATASET_MODULE`); a ``README.md``
  (tasks, data, judge, results, dependencies);
- ``lmms_eval/tasks/_task_utils/audio_bench/``: the framework-free shared modules those modules use, once
  (:data:`TASK_UTILS`), and, for a judged benchmark, ``lmms_eval/llm_judge/providers/audio_judge.py`` with the judge
  core it wraps in ``lmms_eval/llm_judge/audio_judge/`` (:data:`JUDGE_CORE`; :func:`export_judge_provider` writes
  them with their tests);
- ``test/eval/test_<benchmark>.py``: unit tests in upstream's style (``--tests-dir`` puts them elsewhere).

Every project import becomes an absolute ``lmms_eval...`` name (lmms-eval executes ``utils.py`` as a file without a
package), and docstrings name the exported modules (:func:`rewrite_prose`).

What changes on the way (:func:`export_benchmark` checks each and stops with the file and the reason otherwise):

- data: ``dataset_path`` becomes the hub dataset (:data:`BENCHMARKS`; ``token: True`` for a gated one) instead of the
  plugin's shipped sample, and each task YAML names its config in the hub audio layout (``dataset_name``,
  :func:`hub_configs`), which ``process_docs`` checks and converts; where what lmms-eval loaded is not that layout (a
  local override YAML), the hooks read the release layout from ``$<BENCHMARK>_DATA_DIR``; the sample (audio) is not
  exported;
- YAML blocks keyed by models only this plugin provides (``faster_whisper``, ``replay``) are dropped;
- each module keeps only the top-level definitions the contribution reaches from its task YAML, tests, judge provider
  and ``make_hub_dataset.py`` (:func:`pruned`, :mod:`lmms_eval_tasks.upstream_prune`): the plugin's commands
  (``mcga-data``, ``parsa-data`` and every ``__main__`` block but ``make_hub_dataset.py``'s), reports and glue-only
  helpers stay behind;
- the plugin's messages that name a plugin command or page say something else (:data:`EXPORT_TEXT`), and its failure
  placeholder is neutral (:data:`EXPORT_CONSTANTS`);
- a task's nine response counts are one metric, ``flagged_responses`` (:func:`flag_responses_once`);
- the Python files are formatted as upstream's pre-commit does (isort ``--profile black``, black
  ``--line-length=240``), with lmms-eval's folder as isort's first-party source.

Nothing of the plugin's lmms-eval integration is exported (``lmms_eval_tasks/plugin.py``: exit status 1 on a
failed run, the printed-table filter, the UTF-8 results writer). The dependencies the exported code imports
beyond lmms-eval's own are listed in the README (:func:`extra_dependencies`).
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import re
import shutil
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

import yaml

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.listing import read_description
from lmms_eval_tasks.upstream_prune import WHOLE, prune_module, reachable_names
from lmms_eval_tasks.upstream_table import patch_make_table

ROOT = TASKS_DIR.parent
TEMPLATES = TASKS_DIR / "_upstream"
#: The framework-free shared code (``shared/`` in the export: only the modules a benchmark uses) and the benchmark
#: packages (the task folder's top). Exported code may import only these; anything else of this project is an error.
SHARED_PACKAGES = ("audio_bench_core",)
BENCHMARK_PACKAGES = ("mcga", "parsa", "mmac")
PROJECT_PACKAGES = (*SHARED_PACKAGES, *BENCHMARK_PACKAGES, "lmms_eval_tasks", "audio_bench_report")
#: Task-folder files that are plugin tools, not part of a task.
NOT_EXPORTED = ("__init__.py", "README.md", "make_yaml.py")
#: Where the shared code goes in lmms-eval: once, beside upstream's own task helpers (``_task_utils``), never per folder.
TASK_UTILS = "lmms_eval.tasks._task_utils.audio_bench"
#: The ``audio_judge`` llm_judge provider (cache, typed retries, deadline, breaker), the one glue module of
#: ``lmms_eval_tasks`` that exported code may import: it goes among upstream's providers (its own pull request).
JUDGE_PROVIDER = "lmms_eval_tasks.judge_provider"
EXPORTED_GLUE = {JUDGE_PROVIDER: "lmms_eval.llm_judge.providers.audio_judge"}
#: The judge core the provider wraps (client, cache, request fields, reply reading, budget, audit) and the judge pass
#: judged tasks run through it: shared modules that go beside lmms-eval's ``llm_judge``, in the provider's own pull
#: request, not among the task helpers (:data:`TASK_UTILS`).
JUDGE_CORE = "lmms_eval.llm_judge.audio_judge"
JUDGE_CORE_MODULES = ("judge", "judge_budget", "judge_cache", "judge_client", "judge_config", "judge_identity", "judge_reply", "judge_request", "judge_transport", "judged_task", "run_status")
JUDGE_CORE_INIT = '"""The judge core of the ``audio_judge`` provider (``lmms_eval/llm_judge/providers/audio_judge.py``)."""\n'
#: The runtime half of "numbers only" (:mod:`lmms_eval_tasks.upstream_numbers`): exported with every benchmark.
NUMBERS_MODULE = "audio_bench_core.numbers"
#: isort and black settings of upstream's ``.pre-commit-config.yaml`` (black 25.1.0, isort 6.0.1 there).
BLACK_LINE_LENGTH = 240
#: The shared cache root in the export (the plugin's ``audio_bench_core.CACHE_ENV`` / ``CACHE_NAME`` name the plugin).
EXPORTED_CACHE_ENV = "LMMS_EVAL_AUDIO_BENCH_CACHE"
EXPORTED_CACHE_NAME = "lmms_eval_audio_bench"
EXPORT_EXTRA = "pip install 'lmms-eval-audio-plugin[export]'"


@dataclass(frozen=True)
class Benchmark:
    """What the export needs to know about one benchmark beyond its files."""

    name: str
    title: str
    #: Hub dataset lmms-eval loads (``dataset_path``); a placeholder where the data is not released.
    dataset_path: str
    gated: bool
    released: bool
    data_env: str
    #: Two tasks run by the README's example command.
    example_tasks: tuple[str, ...]
    judged: bool
    #: ``UNSET_DATA_DIR`` of the benchmark's ``data`` module in the export, for a benchmark whose tasks read the release
    #: layout from ``data_env`` (the plugin's is ``"sample"``, which the export does not carry): ``"required"`` makes
    #: ``data_env`` mandatory. ``None``: the tasks read the hub layout only (no data variable).
    unset_data: str | None


BENCHMARKS = {
    "mcga": Benchmark("mcga", "MCGA (classical Chinese literature read aloud, arXiv 2601.09270)", "yxdu/MCGA", False, True, "MCGA_DATA_DIR", ("mcga_asr", "mcga_s2tt"), True, None),
    "parsa": Benchmark("parsa", "PARSA-Bench (Persian speech, arXiv 2603.14456)", "MohammadJRanjbar/PARSA-Bench", True, True, "PARSA_DATA_DIR", ("parsa_asr", "parsa_intent"), False, None),
    # MMAC's data is not released (arXiv 2607.27109): the id is a placeholder to replace when it is (README).
    "mmac": Benchmark("mmac", "MMAC (free-form audio captioning judged per dimension, arXiv 2607.27109)", "MMAC-release-pending/MMAC", False, False, "MMAC_DATA_DIR", ("mmac_content",), True, "required"),
}


class ExportError(RuntimeError):
    """The export cannot be written as asked; the message names the file and the reason."""


# ----------------------------------------------------------------------------------------- the module closure
@dataclass
class Module:
    """One Python module of the export: where it comes from and where it goes."""

    name: str  # dotted name in this project, e.g. ``mcga.data``
    path: Path
    target: str  # dotted name in the export, e.g. ``lmms_eval.tasks.mcga.data``
    is_package: bool = False
    imports: list[str] = field(default_factory=list)  # project modules it imports (dotted, this project)


def _module_file(name: str) -> tuple[Path, bool] | None:
    """``(file, is_package)`` of a dotted module of this project, or ``None`` if it is not a file here."""
    base = ROOT.joinpath(*name.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py"), False
    return None


def _is_project(name: str) -> bool:
    return name.split(".")[0] in PROJECT_PACKAGES


def project_imports(source: str, filename: str) -> list[tuple[ast.stmt, str, list[str]]]:
    """Every import statement of ``source`` (top level and inside functions) that names a module of this project:
    ``(node, module, imported names)``; ``import x.y`` forms are refused (the export rewrites ``from`` imports only).

    Raises:
        ExportError: a relative import, or ``import <project module>``.
    """
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_project(alias.name):
                    raise ExportError(f"{filename}:{node.lineno}: `import {alias.name}`: write `from {alias.name.rpartition('.')[0] or alias.name} import ...` (the export rewrites from-imports)")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise ExportError(f"{filename}:{node.lineno}: relative import in project code; use an absolute one (the export rewrites it)")
            if node.module and _is_project(node.module):
                found.append((node, node.module, [alias.name for alias in node.names]))
    return found


#: The benchmark module that writes the hub layout from the release (``python -m <benchmark>.hub_dataset``), exported
#: as the task folder's ``make_hub_dataset.py``.
HUB_DATASET_MODULE = "hub_dataset"


def _target(name: str, benchmark: str | None, hooks: str | None) -> str:
    """Dotted name in the export of the project module ``name`` (``benchmark``: whose code is exported; ``None`` for
    the judge provider alone)."""
    if name == hooks:
        return f"lmms_eval.tasks.{benchmark}.utils"
    if name in EXPORTED_GLUE:
        return EXPORTED_GLUE[name]
    top, _, rest = name.partition(".")
    if benchmark and top == benchmark:
        if rest == HUB_DATASET_MODULE:  # the contributor's command: make_hub_dataset.py RELEASE_DIR OUT_DIR
            return f"lmms_eval.tasks.{benchmark}.make_hub_dataset"
        return f"lmms_eval.tasks.{benchmark}.{rest}" if rest else f"lmms_eval.tasks.{benchmark}"
    if top in SHARED_PACKAGES:
        if rest in JUDGE_CORE_MODULES:
            return f"{JUDGE_CORE}.{rest}"
        return f"{TASK_UTILS}.{rest}" if rest else TASK_UTILS
    raise ExportError(f"{name}: a module of {top!r}, which {benchmark or 'the judge provider'}'s exported code may not import (only {benchmark or 'shared'} and the shared code)")


def module_closure(benchmark: str | None) -> dict[str, Module]:
    """The hooks of ``benchmark`` (``None``: the judge provider) and every project module they import, transitively
    (imports inside functions included), keyed by dotted name.

    Raises:
        ExportError: a module that may not be exported (another benchmark's, a glue module of ``lmms_eval_tasks``
            other than the hooks and the judge provider), or two modules that would land on the same file.
    """
    hooks = f"lmms_eval_tasks.{benchmark}.hooks" if benchmark else None
    modules: dict[str, Module] = {}
    pending = [hooks, NUMBERS_MODULE] if hooks else [JUDGE_PROVIDER]  # utils.py wraps its aggregations with numbers_only
    if benchmark and _module_file(f"{benchmark}.{HUB_DATASET_MODULE}"):
        pending.append(f"{benchmark}.{HUB_DATASET_MODULE}")
    while pending:
        name = pending.pop()
        if name in modules:
            continue
        located = _module_file(name)
        if located is None:
            raise ExportError(f"{name}: no such module in {ROOT}")
        path, is_package = located
        if name != hooks and name not in EXPORTED_GLUE and name.split(".")[0] == "lmms_eval_tasks":
            raise ExportError(f"{name}: a module of the lmms-eval glue ({path.relative_to(ROOT)}) imported by {benchmark}'s exported code; shared code belongs in {SHARED_PACKAGES[0]}")
        module = Module(name, path, _target(name, benchmark, hooks), is_package)
        modules[name] = module
        if benchmark and name.split(".")[0] == benchmark and name != benchmark and benchmark not in modules:
            pending.append(benchmark)  # the benchmark package's __init__ becomes the folder's __init__.py
        for _, imported, names in project_imports(exported_source(name, path), str(path)):
            module.imports.append(imported)
            pending.append(imported)
            for alias in names:  # `from mcga import data`: a submodule
                if _module_file(f"{imported}.{alias}") is not None:
                    pending.append(f"{imported}.{alias}")
    seen: dict[str, str] = {}
    for module in modules.values():
        if module.target in seen:
            raise ExportError(f"{module.name} and {seen[module.target]} would both be exported as {module.target}")
        seen[module.target] = module.name
    return modules


def rewrite_imports(source: str, module: Module, modules: dict[str, Module]) -> str:
    """``source`` with every project import rewritten to the exported, absolute names (lmms-eval executes
    ``utils.py`` as a file without a package, and upstream's task code imports ``lmms_eval.tasks...`` absolutely)."""
    by_name = {m.name: m for m in modules.values()}
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    edits = []
    for node, imported, _ in project_imports(source, str(module.path)):
        clauses: dict[str, list[str]] = {}  # a submodule's package: the judge core's modules leave the shared package
        for alias in node.names:
            submodule = by_name.get(f"{imported}.{alias.name}")
            clause = submodule.target.rpartition(".")[0] if submodule else by_name[imported].target
            clauses.setdefault(clause, []).append(alias.name + (f" as {alias.asname}" if alias.asname else ""))
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        statements = [f"from {clause} import {', '.join(names)}" for clause, names in clauses.items()]
        edits.append((start, end, ("\n" + " " * node.col_offset).join(statements).encode("utf-8")))
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    return data.decode("utf-8")


#: Third-party imports the export points at what lmms-eval already has, each proven to give the same numbers on the
#: MCGA rows, the PARSA sample and hostile strings (tests/test_upstream_equivalents.py): ``{our module: (upstream's
#: module, {our name: upstream's name})}``; a name not listed is an error. Not swapped (they differ; first differing
#: input in the tests): OpenCC ``t2s`` -> zhconv (:data:`WHY`); our reasoning split -> ``strip_reasoning_tags``
#: (the real reply ``" B "`` becomes ``"B"``; an unclosed ``<think>`` draft passes through as the answer).
UPSTREAM_EQUIVALENTS = {
    "whisper_normalizer.basic": ("lmms_eval.tasks.librispeech.whisper_normalizer.basic", {"BasicTextNormalizer": "BasicTextNormalizer"}),
    "rapidfuzz.distance.Levenshtein": ("editdistance", {"distance": "eval"}),
}
#: Module constants naming the distribution a result signature carries, set to the one the export uses instead.
EQUIVALENT_CONSTANTS = {"mcga.normalize": {"WHISPER_BASIC_DISTRIBUTION": "lmms_eval"}, "mcga.metrics": {"CER_LIBRARY": "editdistance"}}


def use_upstream_equivalents(source: str, filename: str) -> str:
    """``source`` with every ``from <module> import <name> [as <alias>]`` of a :data:`UPSTREAM_EQUIVALENTS` module
    (anywhere in the file) importing upstream's module and name instead, under the name the code uses.

    Raises:
        ExportError: ``import <module>`` of such a module, or a name the table does not map.
    """
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode("utf-8")))  # ast offsets count UTF-8 bytes
    edits = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import) and any(alias.name in UPSTREAM_EQUIVALENTS for alias in node.names):
            raise ExportError(f"{filename}:{node.lineno}: `import` of a module the export replaces by upstream's; write `from <module> import <name>`")
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in UPSTREAM_EQUIVALENTS:
            target, names = UPSTREAM_EQUIVALENTS[node.module]
            unknown = [alias.name for alias in node.names if alias.name not in names]
            if unknown:
                raise ExportError(f"{filename}:{node.lineno}: {node.module}.{unknown[0]} has no proven upstream equivalent (UPSTREAM_EQUIVALENTS)")
            clause = ", ".join(names[a.name] + (f" as {a.asname or a.name}" if (a.asname or a.name) != names[a.name] else "") for a in node.names)
            edits.append((starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset, f"from {target} import {clause}".encode()))
    data = source.encode("utf-8")
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    return data.decode("utf-8")


def set_constant(source: str, name: str, value: str | None, filename: str) -> str:
    """``source`` with the module-level assignment ``name = ...`` set to ``value`` (a string literal, or ``None``),
    written in place of the value it had. ``None`` in place of a function removes a reference, and so (with
    :func:`pruned`) what only that function used.

    Raises:
        ExportError: no such module-level assignment; a string to set where the value is not a string literal.
    """
    for node in ast.parse(source, filename).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            if isinstance(value, str) and not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                break
            lines = source.splitlines(keepends=True)
            first, last = node.value.lineno - 1, node.value.end_lineno - 1
            lines[first : last + 1] = [lines[first][: node.value.col_offset] + repr(value).replace("'", '"') + lines[last][node.value.end_col_offset :]]
            return "".join(lines)
    raise ExportError(f"{filename}: no module-level `{name} = ...` (a string literal, to set a string) to set to {value!r}")


#: Module constants the export sets to a value of its own: ``{module: {name: value}}`` (:func:`set_constant`).
EXPORT_CONSTANTS = {
    # The plugin's models emit the plugin's placeholder; upstream's models emit none (nothing exported depends on it).
    "audio_bench_core.responses": {"GENERATION_FAILED_PREFIX": "[GENERATION_FAILED]"},
    # The exported tasks read what lmms-eval loaded, in the hub layout, and nothing in its place (issue: data through
    # lmms-eval's own loader): the plugin's route to a local release folder and its own hub download leave with it.
    "lmms_eval_tasks.mcga.hooks": {"RELEASE_LAYOUT_DOCS": None},
    "lmms_eval_tasks.parsa.hooks": {"RELEASE_LAYOUT_DOCS": None},
}
#: What the plugin's messages tell its users that the export says otherwise (a plugin command, a page of the plugin's
#: docs): ``{module: ((plugin text, exported text), ...)}``, replaced in the module's source before its imports and
#: prose are rewritten (:func:`export_text`). Wording true in both places belongs in the source, not here.
EXPORT_TEXT = {
    "mcga.data": (
        ("(then run: mcga-data check DIR/data)", "(then set MCGA_DATA_DIR=DIR/data)"),
        (" (mcga-data download DEST writes DEST/data).", "."),
    ),
    "parsa.data": (
        ("Give the folder written by `parsa-data download DEST` (it holds task folders such as ASR/ASR.csv), or {DATA_DIR_ENV}=hub.", "Give the PARSA-Bench data folder (it holds task folders such as ASR/ASR.csv)."),
    ),
    "parsa.metrics": (("; score the logged samples in a COMET venv with `python -m parsa.comet_offline` (lmms_eval_tasks/parsa/README.md, 'COMET')", " (`pip install unbabel-comet`)"),),
    "audio_bench_core.audio": ((" (mcga-data / parsa-data / mmac-data check)", ""),),
    "audio_bench_core.judge_config": (("; see docs/judge.md)", "; see the task folder's README.md, 'Judge')"),),
    "audio_bench_core.judge_client": (("(docs/judge.md, section Judge families)", "(JudgeConfig.request_fields)"),),
}


def export_text(source: str, module: str, filename: str) -> str:
    """``source`` with each plugin text of :data:`EXPORT_TEXT` for ``module`` replaced by its exported text.

    Raises:
        ExportError: a plugin text that does not occur in ``source`` (the table is out of date), naming module and text.
    """
    for plugin, exported in EXPORT_TEXT.get(module, ()):
        if plugin not in source:
            raise ExportError(f"{filename}: EXPORT_TEXT[{module!r}]: the text {plugin!r} is not in the module (reworded? update the table)")
        source = source.replace(plugin, exported)
    return source


def exported_source(module: str, path: Path) -> str:
    """The source of ``module`` as the export starts from it: :data:`EXPORT_TEXT` applied. (Its command-line functions
    and ``__main__`` block leave at the end, with everything else the tasks do not reach: :func:`pruned`.)"""
    return export_text(path.read_text(encoding="utf-8"), module, str(path))


def data_files_used(module: Module, source: str) -> list[Path]:
    """Data files beside a module (JSON, JSONL, TXT) whose names occur in its source: the data it reads."""
    folder = module.path.parent
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl", ".txt") and p.name in source)


# ----------------------------------------------------------------------------------------------------- YAML
class FunctionRef(str):
    """A ``!function <dotted name>`` value of a task YAML."""


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    """Block style with list items indented under their key, as lmms-eval's own task YAML is written."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


_Loader.add_constructor("!function", lambda loader, node: FunctionRef(loader.construct_scalar(node)))
_Dumper.add_representer(FunctionRef, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def read_yaml_text(text: str) -> dict:
    """Task YAML text with its ``!function`` values as :class:`FunctionRef`."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


def read_yaml(path: Path) -> dict:
    """A task YAML file with its ``!function`` values as :class:`FunctionRef`."""
    return read_yaml_text(path.read_text(encoding="utf-8"))


def dump_yaml(config: dict) -> str:
    """``config`` as block YAML in its key order; ``!function`` values unquoted (``!function utils.fn``)."""
    text = yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return re.sub(r"!function '([\w.]+)'", r"!function \1", text)


def plugin_model_ids() -> tuple[str, ...]:
    """Model names only this plugin registers (``lmms_eval_tasks.plugin.MODEL_CLASSES``): YAML blocks keyed by them
    are dropped from the export."""
    from lmms_eval_tasks.plugin import MODEL_CLASSES

    return tuple(MODEL_CLASSES)


_PER_MODEL_KEYS = ("lmms_eval_specific_kwargs", "model_specific_generation_kwargs", "model_specific_target_kwargs")
_LOCAL_BUILDERS = ("json", "csv", "parquet")


def hub_configs(benchmark: str) -> dict[str, str]:
    """``{lmms-eval task: hub config}`` of a benchmark's hub layout, ``<benchmark>.hub_dataset.HUB_CONFIGS`` (``{}`` for a
    benchmark without one: MMAC, unreleased)."""
    try:
        module = importlib.import_module(f"{benchmark}.hub_dataset")
    except ModuleNotFoundError as error:
        if error.name != f"{benchmark}.hub_dataset":
            raise
        return {}
    return dict(module.HUB_CONFIGS)


RESPONSES_MODULE = "audio_bench_core.responses"


def flag_responses_once(config: dict, path: Path) -> dict:
    """``config`` (a task YAML as read) with the nine response counts of its ``metric_list``
    (``audio_bench_core.responses.DIAGNOSTIC_METRICS``) replaced, where the first of them stood, by the one count the
    export lists, ``flagged_responses`` (``agg_flagged_responses``: the documents with any of them; the log still names
    each kind). A YAML without them is returned as it is.

    Raises:
        ExportError: a ``metric_list`` with some of the nine but not all (the export would drop a count).
    """
    from audio_bench_core.responses import DIAGNOSTIC_METRICS, FLAGGED_METRIC

    entries = config.get("metric_list") or []
    names = [entry.get("metric") for entry in entries if isinstance(entry, dict)]
    found = [name for name in names if name in DIAGNOSTIC_METRICS]
    if not found:
        return config
    if sorted(found) != sorted(DIAGNOSTIC_METRICS):
        raise ExportError(f"{path}: metric_list has {len(found)} of the {len(DIAGNOSTIC_METRICS)} response counts ({', '.join(sorted(set(DIAGNOSTIC_METRICS) - set(found)))} missing); list all or none")
    flagged = {"metric": FLAGGED_METRIC, "aggregation": FunctionRef(f"{RESPONSES_MODULE}.agg_{FLAGGED_METRIC}"), "higher_is_better": False}
    first = names.index(found[0])
    kept = [entry for entry in entries if not (isinstance(entry, dict) and entry.get("metric") in DIAGNOSTIC_METRICS)]
    return {**config, "metric_list": kept[:first] + [flagged] + kept[first:]}


def export_yaml(config: dict, path: Path, spec: Benchmark, hooks: str, modules: dict[str, Module], reexports: dict[str, str]) -> dict:
    """The exported form of one task YAML (see the module docstring); ``reexports`` collects the shared functions
    ``utils.py`` must name (``{function: exported module}``).

    Raises:
        ExportError: a ``!function`` naming a module outside the export, or a shared function whose name the
            hooks already use for something else.
    """
    by_name = {m.name: m for m in modules.values()}

    def convert(value):
        if isinstance(value, FunctionRef):
            module, _, function = value.rpartition(".")
            if module == hooks:
                return FunctionRef(f"utils.{function}")
            if module not in by_name:
                raise ExportError(f"{path}: !function {value}: the module {module} is not part of the export")
            if reexports.get(function, by_name[module].target) != by_name[module].target:
                raise ExportError(f"{path}: !function {value}: another exported module also defines {function}")
            reexports[function] = by_name[module].target
            return FunctionRef(f"utils.{function}")
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [convert(v) for v in value]
        return value

    out = convert(flag_responses_once(config, path))
    plugin_models = plugin_model_ids()
    for key in _PER_MODEL_KEYS:
        if isinstance(out.get(key), dict):
            out[key] = {model: block for model, block in out[key].items() if model not in plugin_models}
            if not out[key]:
                del out[key]
    kwargs = dict(out.get("dataset_kwargs") or {})
    kwargs.pop("data_files", None)
    if "dataset_path" in out:
        if out["dataset_path"] not in _LOCAL_BUILDERS:
            raise ExportError(f"{path}: dataset_path {out['dataset_path']!r}: expected a local builder ({', '.join(_LOCAL_BUILDERS)}) to replace by the hub dataset")
        out["dataset_path"] = spec.dataset_path
        if spec.gated:
            kwargs["token"] = True
    if kwargs:
        out["dataset_kwargs"] = kwargs
    else:
        out.pop("dataset_kwargs", None)
    hub_config = hub_configs(spec.name).get(out["task"]) if isinstance(out.get("task"), str) else None  # a group's task is a list
    if hub_config is not None:  # the task's config of the hub layout, before process_docs, which reads it
        keys = list(out)
        at = keys.index("process_docs") if "process_docs" in keys else len(keys)
        out = {**{k: out[k] for k in keys[:at]}, "dataset_name": hub_config, **{k: out[k] for k in keys[at:]}}
    if "dataset_path" in out:  # keep lmms-eval's usual key order: data first
        out = {"dataset_path": out.pop("dataset_path"), **({"dataset_kwargs": out.pop("dataset_kwargs")} if "dataset_kwargs" in out else {}), **out}
    return out


def _yaml_header(path: Path, config: dict, spec: Benchmark) -> str:
    lines = []
    description = read_description(path.read_text(encoding="utf-8"))
    if description:
        lines.append(f"# description: {description}")  # the exported README's task table reads it (read_description)
    if "dataset_path" in config:
        if spec.released:
            lines.append(f"# Data: the hub dataset below, in the hub audio layout (each task's config: dataset_name); a local copy in the release layout: README.md.")
        else:
            lines.append(f"# Data: {spec.name.upper()} is not released yet: dataset_path is a placeholder and ${spec.data_env} names the data (README.md).")
    return "".join(f"{line}\n" for line in lines)


# ------------------------------------------------------------------------------------------------- formatting
def format_python(source: str, path: Path, first_party_root: Path) -> str:
    """``source`` as upstream's pre-commit leaves it: isort ``--profile black`` then black ``--line-length=240``.

    Raises:
        ExportError: isort or black is not installed (``pip install 'lmms-eval-audio-plugin[export]'``).
    """
    try:
        import black
        import isort
    except ImportError as error:
        raise ExportError(f"formatting the export needs black and isort ({error.name} is missing): {EXPORT_EXTRA}") from None
    config = isort.Config(profile="black", src_paths=(str(first_party_root),))
    mode = black.Mode(line_length=BLACK_LINE_LENGTH)
    for _ in range(3):  # each tool leaves the other's output alone after at most a round or two
        formatted = black.format_str(isort.code(source, config=config), mode=mode)
        if formatted == source:
            return formatted
        source = formatted
    raise ExportError(f"{path}: isort and black do not agree on a layout")


# --------------------------------------------------------------------------------------------- dependencies
#: Import name -> distribution name, where they differ.
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "json_repair": "json-repair", "yaml": "pyyaml", "comet": "unbabel-comet", "huggingface_hub": "huggingface-hub", "PIL": "pillow"}


#: Imports the code reaches only after checking the package is installed (not with try/except), so optional.
GUARDED_IMPORTS = {"comet": "parsa.metrics.comet_unavailable_reason"}


def _is_optional(node: ast.AST, parents: dict) -> bool:
    """True when an import sits in a ``try`` whose handlers catch ``ImportError`` and go on (the code runs without
    it); a handler that raises (a clearer message naming the package) leaves the import required."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                caught = {n.strip("()") for n in ast.unparse(handler.type).split(", ")} if handler.type is not None else set()
                if {"ImportError", "ModuleNotFoundError"} & caught and not isinstance(handler.body[-1], ast.Raise):
                    return True
    return False


def third_party_imports(source: str) -> dict[str, bool]:
    """``{top-level module: optional}`` of the non-stdlib, non-project imports of ``source`` (anywhere in it)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module.split(".")[0]]
        else:
            continue
        for name in names:
            if name in sys.stdlib_module_names or name in ("__future__", "lmms_eval") or _is_project(name):
                continue
            found[name] = found.get(name, True) and (_is_optional(node, parents) or name in GUARDED_IMPORTS)
    return found


def _requirement_name(spec: str) -> str:
    return re.split(r"[ ;<>=!~\[(]", spec, maxsplit=1)[0].lower().replace("_", "-")


def _installed_by_lmms_eval() -> tuple[set[str], set[str]]:
    """``(declared, transitive)``: distributions lmms-eval declares (by default or in its ``audio`` extra), and the
    ones installed only as their dependencies (as found in this environment)."""
    try:
        specs = requires("lmms_eval") or []
    except PackageNotFoundError:
        return set(), set()
    declared = {_requirement_name(s) for s in specs if ";" not in s or 'extra == "audio"' in s.partition(";")[2]}
    seen, pending = set(declared), list(declared)
    while pending:
        try:
            children = requires(pending.pop()) or []
        except PackageNotFoundError:
            continue
        for child in children:
            name = _requirement_name(child)
            if "extra ==" not in child.partition(";")[2] and name not in seen:
                seen.add(name)
                pending.append(name)
    return declared, seen - declared


def extra_dependencies(sources: list[str]) -> list[tuple[str, str]]:
    """``(requirement, status)`` for each distribution the exported code imports that lmms-eval does not declare
    (default + ``audio`` extra): status ``"missing"`` (upstream must add it), ``"transitive"`` (installed today only as
    another package's dependency) or ``"optional"`` (imported inside ``try/except ImportError``). Requirements carry
    the version range this plugin declares."""
    imported: dict[str, bool] = {}
    for source in sources:
        for name, optional in third_party_imports(source).items():
            imported[name] = imported.get(name, True) and optional
    declared, transitive = _installed_by_lmms_eval()
    ours = {_requirement_name(s): s.partition(";")[0].strip() for s in (requires("lmms-eval-audio-plugin") or [])}
    out = []
    for name in sorted(imported, key=str.lower):
        dist = _DISTRIBUTIONS.get(name, name).lower().replace("_", "-")
        if dist in declared:
            continue
        status = "optional" if imported[name] else "transitive" if dist in transitive else "missing"
        out.append((ours.get(dist, dist), status))
    return out


#: Why the exported code needs a distribution lmms-eval does not declare (README, 'Dependencies').
WHY = {
    "opencc": "the official MCGA scorer converts traditional to simplified characters with OpenCC `t2s` (imported lazily: the error names the package); zhconv (in lmms-eval's `audio` extra) agrees on every MCGA sample row but uses other tables: 512 characters of U+4E00-U+9FFF differ (the first U+4E23 丣, zhconv 卯) and phrases such as 傢俱 (OpenCC 家具, zhconv 家俱: an official CER of 0 becomes 50%), so it is not swapped; the strict CER also needs OpenCC's variant tables (`jp2t`, `tw2t`, `hk2t`), which zhconv lacks",
    "json-repair": "PARSA answers are JSON that models often write nearly right (unescaped inner quotes, truncation, comments): a maintained repairer reads them, and each repair is counted (`repaired_json`); lmms-eval has no JSON repairer to use instead (no task imports one)",
    "soxr": "16 kHz resampling bit-identical to `librosa.resample`'s default without importing librosa (2 s, 200 MB); librosa, in the `audio` extra, depends on it",
    "scipy": "binomial tests, ranks and Friedman/Kendall statistics (confidence intervals, judge agreement); installed with scikit-learn",
    "pandas": "reading parquet releases (PARSA-Bench's hub layout)",
    "pyarrow": "reading parquet releases (PARSA-Bench's hub layout)",
    "unbabel-comet": "COMET for PARSA-Bench translation; optional: without it COMET reads \"not computed\" and chrF++/BLEU are still reported",
    "huggingface-hub": "downloading the release from the hub (archive or snapshot) when no local copy is named; installed with datasets",
    "tqdm": "the judge's progress bar; installed with datasets",
    "httpx2": "the judge's per-call time bound wraps the `openai` client's transport; installed with openai",
    "httpcore2": "the judge's per-call time bound wraps the `openai` client's transport; installed with openai",
}


def dependency_lines(dependencies: list[tuple[str, str]]) -> str:
    """The README's dependency list: one line per distribution, with its status and why it is needed."""
    lines = []
    for requirement, status in dependencies:
        name = _requirement_name(requirement)
        note = {"missing": "add to the `audio` extra", "transitive": "installed today as another package's dependency; declare it if imported directly", "optional": "optional"}[status]
        lines.append(f"- `{requirement}` ({note}): {WHY.get(name, 'imported by the exported code')}.")
    return "\n".join(lines) or "- none: everything the exported code imports is installed by `lmms_eval[audio]`."


# ------------------------------------------------------------------------------------------------- the export
def target_file(root: Path, module: Module) -> Path:
    """Where ``module`` is written below the lmms-eval tree ``root``."""
    parts = module.target.split(".")
    return root.joinpath(*parts, "__init__.py") if module.is_package else root.joinpath(*parts[:-1], parts[-1] + ".py")


def rewrite_prose(text: str) -> str:
    """``text`` with every dotted name of this project's exportable modules (in docstrings, comments and messages)
    replaced by its exported name, the same whichever benchmark is exported (so a shared module is byte-identical in
    every export): ``audio_bench_core[.x]`` (the judge core's modules: :data:`JUDGE_CORE`), the judge provider,
    ``lmms_eval_tasks.<benchmark>.hooks`` and ``<benchmark>.<module>``."""
    for name, target in EXPORTED_GLUE.items():
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", target, text)
    text = re.sub(r"(?<![\w.])lmms_eval_tasks\.(mcga|parsa|mmac)\.hooks(?!\w)", r"lmms_eval.tasks.\1.utils", text)
    core = "|".join(JUDGE_CORE_MODULES)
    text = re.sub(rf"(?<![\w.]){SHARED_PACKAGES[0]}\.({core})(?!\w)", rf"{JUDGE_CORE}.\1", text)
    text = re.sub(rf"(?<![\w.]){SHARED_PACKAGES[0]}(?!\w)", TASK_UTILS, text)
    text = text.replace("LMMS_EVAL_AUDIO_PLUGIN_CACHE", EXPORTED_CACHE_ENV).replace(".cache/lmms_eval_audio_plugin", f".cache/{EXPORTED_CACHE_NAME}")
    return re.sub(r"(?<![\w./-])(mcga|parsa|mmac)\.(\w+)", lambda m: _target(m[0], m[1], None) if _module_file(m[0]) else m[0], text)


def module_files(modules: dict[str, Module], root: Path, files: dict[Path, str | bytes], hooks: str | None = None, spec: Benchmark | None = None, reexports: dict[str, str] | None = None) -> list[str]:
    """Add each module of ``modules`` (rewritten: imports, prose, the benchmark's settings) and the data files it reads
    to ``files``; returns the sources before the rewriting (:func:`exported_source`; for the dependency list)."""
    sources = []
    for module in modules.values():
        source = use_upstream_equivalents(exported_source(module.name, module.path), str(module.path))
        rewritten = rewrite_prose(rewrite_imports(source, module, modules))
        for name, value in {**EQUIVALENT_CONSTANTS.get(module.name, {}), **EXPORT_CONSTANTS.get(module.name, {})}.items():
            rewritten = set_constant(rewritten, name, value, str(module.path))
        if spec and spec.unset_data and module.name == f"{spec.name}.data":  # no sample in the export: an unset data variable is an error
            rewritten = set_constant(rewritten, "UNSET_DATA_DIR", spec.unset_data, str(module.path))
        if module.name == SHARED_PACKAGES[0]:
            rewritten = set_constant(set_constant(rewritten, "CACHE_ENV", EXPORTED_CACHE_ENV, str(module.path)), "CACHE_NAME", EXPORTED_CACHE_NAME, str(module.path))
        if module.name == hooks and reexports:
            rewritten += "\n\n# Shared aggregations the task YAML names as `!function utils.<name>`.\n"
            for target in sorted(set(reexports.values())):
                rewritten += f"from {target} import {', '.join(sorted(n for n, t in reexports.items() if t == target))}\n"
        out = target_file(root, module)
        files[out] = rewritten
        sources.append(source)
        for data_file in data_files_used(module, source):
            files[out.parent / data_file.name] = data_file.read_bytes()
        if module.target.startswith(JUDGE_CORE + "."):  # a regular package: upstream's setuptools finds only those
            files[root.joinpath(*JUDGE_CORE.split("."), "__init__.py")] = JUDGE_CORE_INIT
    return sources


@dataclass
class ExportResult:
    """What :func:`export_benchmark` wrote."""

    task_dir: Path
    test_file: Path
    files: list[Path]
    dependencies: list[tuple[str, str]]

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.files if p.is_relative_to(self.task_dir))


def _lmms_eval_tasks_dir(root: Path) -> Path:
    tasks = root / "lmms_eval" / "tasks"
    if not (tasks / "__init__.py").is_file():
        raise ExportError(f"{root}: not an lmms-eval checkout (no lmms_eval/tasks/__init__.py below it); give the folder that holds lmms_eval/")
    return tasks


def write_files(files: dict[Path, str | bytes], root: Path) -> list[Path]:
    """Write ``files`` (Python formatted as upstream's pre-commit does); returns the paths written, sorted."""
    written = []
    for path, content in sorted(files.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".py":
            content = format_python(content, path, root)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


#: Task-name endings of PARSA-Bench's other settings (paper section 5: few-shot, chain of thought, text input, audio
#: reference); the main setting is zero-shot audio (Table 2), its own pull request.
OTHER_SETTINGS = ("_fewshot", "_cot", "_text", "_audio_ref")


def is_main_setting(yaml_name: str) -> bool:
    """True for a task or template file of the paper's main setting (no :data:`OTHER_SETTINGS` ending)."""
    return not yaml_name.removesuffix(".yaml").endswith(OTHER_SETTINGS)


def benchmark_files(benchmark: str, root: Path, tests_dir: Path, main_setting_only: bool = False, extra: dict[str, str] | None = None) -> tuple[dict[Path, str | bytes], list[str], str]:
    """``({path: content}, task YAML names, the README's Results section)``: what :func:`export_benchmark` writes for
    ``benchmark`` below ``root``, in memory, before pruning (:func:`pruned`) and without the README (it lists the
    pruned code's dependencies).

    Raises:
        ExportError: the code cannot be exported as it stands (:func:`module_closure`, :func:`export_yaml`).
    """
    spec = BENCHMARKS[benchmark]
    task_dir = root / "lmms_eval" / "tasks" / benchmark
    hooks = f"lmms_eval_tasks.{benchmark}.hooks"
    modules = module_closure(benchmark)

    # YAML first: it decides which shared functions utils.py re-exports, and which aggregations it wraps.
    from lmms_eval_tasks import upstream_numbers

    reexports: dict[str, str] = {}
    numbers = upstream_numbers.Collected()
    files: dict[Path, str | bytes] = {}
    for path in sorted((TASKS_DIR / benchmark).iterdir()):
        if main_setting_only and not is_main_setting(path.name):
            continue
        if path.name.endswith(".yaml") or (path.name.startswith("_") and path.name.endswith("_yaml")):
            config = export_yaml(read_yaml(path), path, spec, hooks, modules, reexports)
            try:  # numbers only: metrics that are not numbers leave metric_list, every aggregation is wrapped
                config = upstream_numbers.numbers_only_yaml(config, path, numbers)
            except ValueError as error:
                raise ExportError(str(error)) from None
            files[task_dir / path.name] = _yaml_header(path, config, spec) + dump_yaml(config)
        elif path.is_file() and path.name not in NOT_EXPORTED and path.suffix != ".py" and path.name != "__pycache__":
            raise ExportError(f"{path}: a file of the task folder the export does not know what to do with")
    yamls = [path.name for path in files]
    module_files(modules, root, files, hooks, spec, reexports)
    files[target_file(root, modules[hooks])] += upstream_numbers.wrapper_lines(numbers, modules[NUMBERS_MODULE].target)
    for name, text in (extra or {}).items():
        files[task_dir / name] = text
    test_template = TEMPLATES / f"test_{benchmark}.py"
    if not test_template.is_file():
        raise ExportError(f"{test_template}: no upstream-style test template for {benchmark}")
    test_file = tests_dir / f"test_{benchmark}.py"
    files[test_file] = test_template.read_text(encoding="utf-8")
    settings_tests = TEMPLATES / f"test_{benchmark}_settings.py"
    if settings_tests.is_file() and not main_setting_only:  # the other settings' tests, after the main setting's
        files[test_file] += "\n\n" + settings_tests.read_text(encoding="utf-8").split('"""', 2)[2].lstrip("\n")
    return files, yamls, upstream_numbers.readme_section(numbers.dropped)


def export_benchmark(benchmark: str, root: str | Path, tests_dir: str | Path | None = None, force: bool = False, main_setting_only: bool = False, extra: dict[str, str] | None = None) -> ExportResult:
    """Write ``benchmark`` into the lmms-eval tree at ``root`` (see the module docstring), pruned to what its tasks
    reach (:func:`pruned`).

    Args:
        benchmark: ``mcga``, ``parsa`` or ``mmac``.
        root: the folder holding ``lmms_eval/tasks/`` (a checkout, or an installed lmms-eval's site-packages).
        tests_dir: where ``test_<benchmark>.py`` goes (default ``root/test/eval``).
        force: replace an existing ``lmms_eval/tasks/<benchmark>/`` (else it is an error).
        main_setting_only: leave out the task files of the other settings (:func:`is_main_setting`).
        extra: more files of the task folder, ``{name: text}`` (the series' ``RESULTS.md``; the README names it).

    Raises:
        ExportError: unknown benchmark, ``root`` is not an lmms-eval tree, the folder exists without ``force``, or
            the code cannot be exported as it stands (:func:`module_closure`, :func:`export_yaml`).
    """
    if benchmark not in BENCHMARKS:
        raise ExportError(f"unknown benchmark {benchmark!r}; one of {', '.join(BENCHMARKS)}")
    spec = BENCHMARKS[benchmark]
    root = Path(root).resolve()
    task_dir = _lmms_eval_tasks_dir(root) / benchmark
    tests_dir = Path(tests_dir) if tests_dir is not None else root / "test" / "eval"
    if task_dir.exists():
        if not force:
            raise ExportError(f"{task_dir} exists; pass --force to replace it")
        shutil.rmtree(task_dir)
    files, yamls, results = benchmark_files(benchmark, root, tests_dir, main_setting_only, extra)
    files = pruned(files, root)
    dependencies = extra_dependencies([text for path, text in files.items() if path.suffix == ".py" and path.is_relative_to(root / "lmms_eval")])
    files[task_dir / "README.md"] = render_readme(spec, {name: files[task_dir / name] for name in yamls}, dependencies, results, "RESULTS.md" in (extra or {}))
    test_file = tests_dir / f"test_{benchmark}.py"
    return ExportResult(task_dir, test_file, write_files(files, root), dependencies)


#: The judge provider's upstream-style tests (``test/eval/`` of lmms-eval).
PROVIDER_TEST = "test_audio_judge_provider.py"


def export_judge_provider(root: str | Path, tests_dir: str | Path | None = None) -> list[Path]:
    """Write the ``audio_judge`` llm_judge provider into the lmms-eval tree at ``root``: the provider
    (``lmms_eval/llm_judge/providers/audio_judge.py``), the judge core it wraps (``lmms_eval/llm_judge/audio_judge/``,
    with the shared helpers it uses in ``lmms_eval/tasks/_task_utils/audio_bench/``) and its tests (``test/eval/test_audio_judge_provider.py``, or in ``tests_dir``). Returns the paths.

    Raises:
        ExportError: ``root`` is not an lmms-eval tree, or the provider's code cannot be exported as it stands.
    """
    root = Path(root).resolve()
    _lmms_eval_tasks_dir(root)
    return write_files(pruned(provider_files(root, Path(tests_dir) if tests_dir is not None else root / "test" / "eval"), root), root)


def provider_files(root: Path, tests_dir: Path) -> dict[Path, str | bytes]:
    """What :func:`export_judge_provider` writes below ``root``, in memory, before pruning (:func:`pruned`).

    Raises:
        ExportError: the provider's code cannot be exported as it stands.
    """
    files: dict[Path, str | bytes] = {}
    module_files(module_closure(None), root, files)
    if not (TEMPLATES / PROVIDER_TEST).is_file():
        raise ExportError(f"{TEMPLATES / PROVIDER_TEST}: no upstream-style test for the judge provider")
    files[tests_dir / PROVIDER_TEST] = (TEMPLATES / PROVIDER_TEST).read_text(encoding="utf-8")
    return files


# ------------------------------------------------------------------------------------------------- pruning
def _module_name(path: Path, root: Path) -> str:
    """Dotted name of an exported Python file below ``root`` (a package as ``<name>.__init__``)."""
    return ".".join(path.relative_to(root).with_suffix("").parts)


@functools.cache
def reachable() -> dict[str, set[str]]:
    """``{exported module: names kept}`` over the whole contribution at once (the judge provider and every benchmark
    with all its settings, :func:`lmms_eval_tasks.upstream_prune.reachable_names`), so a shared module is pruned the
    same whichever branch writes it. Roots: each task YAML's ``!function utils.<name>``; the tests, the provider and
    ``make_hub_dataset.py`` whole.

    Raises:
        ExportError: as :func:`benchmark_files`.
    """
    root = Path("/lmms-eval")  # in memory only: nothing is written there
    files = provider_files(root, root / "test")
    for benchmark in BENCHMARKS:
        files.update(benchmark_files(benchmark, root, root / "test")[0])
    sources = {_module_name(path, root): text for path, text in files.items() if path.suffix == ".py"}
    roots: dict[str, set[str]] = {name: {WHOLE} for name in sources if name.startswith("test.") or name in (*EXPORTED_GLUE.values(), *(f"lmms_eval.tasks.{b}.make_hub_dataset" for b in BENCHMARKS))}
    for path, text in files.items():
        if path.suffix == ".yaml" or path.name.endswith("_yaml"):
            roots.setdefault(_module_name(path.parent / "utils.py", root), set()).update(re.findall(r"!function utils\.(\w+)", text))
    return reachable_names(sources, roots)


def pruned(files: dict[Path, str | bytes], root: Path) -> dict[Path, str | bytes]:
    """``files`` with each exported module below ``root/lmms_eval`` pruned to what the contribution reaches
    (:func:`reachable`, :func:`lmms_eval_tasks.upstream_prune.prune_module`); tests and data unchanged."""
    keep = reachable()
    out = {}
    for path, content in files.items():
        name = _module_name(path, root) if path.suffix == ".py" and path.is_relative_to(root / "lmms_eval") else None
        out[path] = prune_module(content, keep[name], str(path)) if name in keep else content
    return out


#: How each benchmark is scored, the exported README's first lines.
SCORED_AS = {
    "mcga": "The `*_official` figures follow the official scorer, `eval/eval_model.py` of github.com/yxduir/MCGA.",
    "parsa": "Answers are read and scored as the paper's protocol reads them.",
    "mmac": "Each caption is judged per dimension with the paper's rubric.",
}
#: The exported README's line for a ``RESULTS.md`` in the task folder (``export_benchmark(extra=...)``).
RESULTS_EVIDENCE = "\n`RESULTS.md` sets the official scorer's figures beside these tasks' on the same outputs."


def render_readme(spec: Benchmark, yamls: dict[str, str], dependencies: list[tuple[str, str]], results: str = "", has_results_file: bool = False) -> str:
    """The exported README: the template ``_upstream/README.template.md`` filled in for ``spec``; ``results``: its
    Results section (:func:`lmms_eval_tasks.upstream_numbers.readme_section`); ``has_results_file``: the folder holds
    a ``RESULTS.md`` (:data:`RESULTS_EVIDENCE`)."""
    tasks = []
    for name, text in sorted(yamls.items()):
        config = read_yaml_text(text)
        description = read_description(text)
        if name.endswith(".yaml") and isinstance(config, dict):
            kind = "group" if isinstance(config.get("task"), list) else "task"
            label = config.get("group") or config.get("task")
            tasks.append(f"| `{label}` | {kind} | {description} |")
    template = (TEMPLATES / "README.template.md").read_text(encoding="utf-8")
    layout = "hub_layout" if hub_configs(spec.name) else "release_layout"
    fields = {
        "name": spec.name,
        "title": spec.title,
        "dataset_path": spec.dataset_path,
        "data_env": spec.data_env,
        "token": "yes (gated: accept the terms on the hub page, then `export HF_TOKEN=...`)" if spec.gated else "no",
        "released": "" if spec.released else f"**{spec.name.upper()} is not released yet.** `dataset_path` is a placeholder; until the release, run with `{spec.data_env}` set and a local override YAML (below). Replace `dataset_path` with the release's hub id when it is out.\n\n",
        "tasks": "\n".join(tasks),
        "example_tasks": ",".join(spec.example_tasks),
        "dependencies": dependency_lines(dependencies),
        "scored_as": SCORED_AS[spec.name],
        "evidence": RESULTS_EVIDENCE if has_results_file else "",
        "judge": JUDGE_SECTION if spec.judged else "This benchmark is not judged: every score is computed locally.\n",
        "local": LOCAL_TEXT[layout].format(name=spec.name, dataset_path=spec.dataset_path, data_env=spec.data_env, example_tasks=",".join(spec.example_tasks)),
        "loading": LOADING_TEXT[layout].format(dataset_path=spec.dataset_path),
        "results": results,
    }
    return template.format(**fields)


LOADING_TEXT = {
    "hub_layout": "Each task's `dataset_name` is its config in the hub's audio layout (parquet, split `test`, the column `audio` an "
    "`Audio` feature holding each clip's file bytes): lmms-eval loads it, and the tasks' `process_docs` check every row and clip of "
    "what it loaded (missing fields, duplicate clips, unreadable or truncated audio: the error names the config, row and field) "
    "and convert it. Offline, lmms-eval reads a copy of that layout in `./{dataset_path}/` (a folder named like the repository, "
    "in the working directory).",
    "release_layout": "lmms-eval loads it before the tasks' `process_docs`, which then read the documents in the benchmark's "
    "release layout and check every row and clip (missing fields, duplicate clips, unreadable or truncated audio: the error "
    "names the file, row and field).",
}
#: The README's paragraph on a local copy: by the hub layout made with ``make_hub_dataset.py`` (a released benchmark
#: whose tasks read the hub layout), or by the release layout named by the data variable (MMAC until its release).
LOCAL_TEXT = {
    "hub_layout": """Local copy (the release unpacked somewhere, or no hub access): `make_hub_dataset.py` checks every row and clip of the
release and writes the hub layout into a folder named like the repository; lmms-eval reads it offline from the working
directory that holds it:

```bash
python -m lmms_eval.tasks.{name}.make_hub_dataset RELEASE_DIR {dataset_path}
HF_DATASETS_OFFLINE=1 lmms-eval --model <model> --tasks {example_tasks} --output_path out --log_samples
```""",
    "release_layout": """`{data_env}` is required until the release: there is no default data.

Local copy (the release unpacked somewhere): set `{data_env}` to its folder. `process_docs` reads rows and audio from
there. Without hub access, also point lmms-eval's own loading at the local file with an override YAML in a folder of
its own, and pass that folder as `--tasks`:

```yaml
# overrides/{name}_task.yaml: same task name, local files instead of the hub
task: <task name>
include: <path to this folder>/<task name>.yaml
dataset_path: json   # csv for a CSV task file
dataset_kwargs:
  data_files:
    test: <the local task file>
```

```bash
export {data_env}=/data/{name}
lmms-eval --model <model> --tasks overrides/ --output_path out --log_samples
```""",
}

JUDGE_SECTION = """The judged metrics call an OpenAI-compatible chat-completions server through the `audio_judge` provider of
`lmms_eval.llm_judge` (`lmms_eval/llm_judge/providers/audio_judge.py`, added by its own pull request: a persistent reply
cache, retries by error kind, a time bound on each whole call, a circuit breaker). It is configured by `AUDIO_JUDGE_*`
environment variables (`AUDIO_JUDGE_BASE_URL`, `AUDIO_JUDGE_MODEL`, `AUDIO_JUDGE_API_KEY_VAR` naming the variable that
holds the key, ...; the full list is the docstring of `JudgeConfig` in `lmms_eval/llm_judge/audio_judge/judge_config.py`).
With no judge configured the judged metrics are `null` (a warning in the log says why) and every other metric is still
reported. A reply without a valid score is counted (`judge_failed`) and left out of the mean, never scored as 0; a
reasoning judge's `<think>...</think>` draft is read past.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lmms-eval-audio-export", description="Write a benchmark as an lmms-eval task folder in upstream's conventions (README: 'Contributing upstream').")
    parser.add_argument("benchmark", choices=sorted(BENCHMARKS) + ["all", "series"], help="a benchmark's task folder, all three, or `series`: one git branch per pull request (lmms_eval_tasks/upstream_series.py)")
    parser.add_argument("lmms_eval_root", help="folder holding lmms_eval/tasks/ (an lmms-eval checkout)")
    parser.add_argument("--tests-dir", help="where test_<benchmark>.py goes (default: <root>/test/eval)")
    parser.add_argument("--force", action="store_true", help="replace an existing lmms_eval/tasks/<benchmark>/")
    parser.add_argument("--patch-make-table", action="store_true", help="also change lmms_eval/utils.py:make_table to print numbers only (README.md of the export)")
    parser.add_argument("--prefix", default="audio-bench/", help="series: prefix of the branch names (default audio-bench/)")
    parser.add_argument("--validate", metavar="PYTHON", help="series: run each branch's tests with this Python and write the result into its description")
    args = parser.parse_args(argv)
    if args.benchmark == "series":
        return _main_series(args.lmms_eval_root, args.prefix, args.validate)
    names = sorted(BENCHMARKS) if args.benchmark == "all" else [args.benchmark]
    try:
        for name in names:
            result = export_benchmark(name, args.lmms_eval_root, args.tests_dir, args.force)
            print(f"{name}: {result.task_dir} ({len([p for p in result.files if p.is_relative_to(result.task_dir)])} files, {result.size_bytes() / 1024:.0f} KB); tests: {result.test_file}")
            missing = [f"{name} ({status})" for name, status in result.dependencies]
            print(f"  imports beyond lmms-eval[audio]: {', '.join(missing) or 'none'} (README.md, 'Dependencies')")
        if args.patch_make_table:
            changed = patch_make_table(args.lmms_eval_root)
            print(f"lmms_eval/utils.py: make_table {'now prints numbers only' if changed else 'already prints numbers only'}")
    except ExportError as error:
        print(f"lmms-eval-audio-export: {error}", file=sys.stderr)
        return 2
    return 0


def _main_series(root: str, prefix: str, python: str | None) -> int:
    from lmms_eval_tasks import upstream_series

    try:
        results = upstream_series.write_series(root, prefix, python)
    except ExportError as error:
        print(f"lmms-eval-audio-export: {error}", file=sys.stderr)
        return 2
    for result in results:
        tests = {None: "tests not run", True: "tests pass", False: "TESTS FAIL"}[result.passed]
        base = result.base if result.base.startswith(prefix) else result.base[:12]  # a branch of the series, or a commit
        print(f"{result.branch}: on {base}, {result.files} files, +{result.added} -{result.removed} lines, {tests}")
        for folder, lines in result.sizes.items():
            goal = upstream_series.SIZE_GOALS[(result.branch.removeprefix(prefix), folder)]
            print(f"  {folder}: {lines} lines ({'within' if lines <= goal else 'over'} the goal of {goal})")
    for name, why in upstream_series.HELD.items():
        print(f"{name}: no branch. {why}")
    return 1 if any(result.passed is False for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
