"""lmms-eval-audio-export's pieces: import rewriting, YAML conversion, the module closure, dependency notes, errors.
The whole export run in a plugin-free lmms-eval is tests/test_upstream_cli.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lmms_eval_tasks import upstream_export as ex
from lmms_eval_tasks.upstream_prune import WHOLE, prune_module, reachable_names


def _module(name, target, is_package=False):
    return ex.Module(name, ex.ROOT / "x.py", target, is_package)


def test_imports_are_rewritten_in_place_keeping_aliases_comments_and_nesting():
    modules = {
        "mcga": _module("mcga", "lmms_eval.tasks.mcga", True),
        "mcga.normalize": _module("mcga.normalize", "lmms_eval.tasks.mcga.normalize"),
        "audio_bench_core.audio": _module("audio_bench_core.audio", "lmms_eval.tasks._task_utils.audio_bench.audio"),
    }
    source = textwrap.dedent('''\
        """Doc naming audio_bench_core.audio, rewritten."""
        from __future__ import annotations

        import json
        from mcga import normalize
        from mcga.normalize import (
            nfkc as fold,
            normalize_for_cer,
        )


        def f():
            from audio_bench_core.audio import first_not_utf8  # shared cell checks
            return json, fold, first_not_utf8
        ''')
    module = _module("mcga.data", "lmms_eval.tasks.mcga.data")
    rewritten = ex.rewrite_imports(source, module, modules)
    assert "from lmms_eval.tasks.mcga import normalize\n" in rewritten
    assert "from lmms_eval.tasks.mcga.normalize import nfkc as fold, normalize_for_cer\n" in rewritten
    assert "    from lmms_eval.tasks._task_utils.audio_bench.audio import first_not_utf8  # shared cell checks\n" in rewritten
    assert rewritten.startswith('"""Doc naming audio_bench_core.audio, rewritten."""') and "import json\n" in rewritten
    assert ex.rewrite_prose(rewritten).startswith('"""Doc naming lmms_eval.tasks._task_utils.audio_bench.audio, rewritten."""')


@pytest.mark.parametrize(
    ("source", "message"),
    [("import mcga.data\n", "`import mcga.data`"), ("from .data import x\n", "relative import in project code")],
)
def test_import_forms_the_export_cannot_rewrite_are_refused_with_the_line(source, message):
    with pytest.raises(ex.ExportError, match=message) as error:
        ex.project_imports(source, "mcga/x.py")
    assert "mcga/x.py:1" in str(error.value)


def test_closure_holds_what_the_hooks_use_and_nothing_else():
    closure = ex.module_closure("mcga")
    assert {"lmms_eval_tasks.mcga.hooks", "mcga", "mcga.data", "mcga.judging", "mcga.metrics", "mcga.normalize", "mcga.prompts"} <= set(closure)
    assert "mcga.report" not in closure and "mcga.report_layout" not in closure  # report tools are not part of a task
    assert closure["lmms_eval_tasks.mcga.hooks"].target == "lmms_eval.tasks.mcga.utils"
    assert not [m for m in closure if m.startswith(("parsa", "mmac", "lmms_eval_tasks.models", "lmms_eval_tasks.plugin"))]


@pytest.mark.parametrize("module", ["audio_bench_report.tables", "mcga.normalize", "lmms_eval_tasks.plugin"])
def test_a_module_of_another_package_benchmark_or_the_glue_is_refused(module):
    with pytest.raises(ex.ExportError, match="may not import"):
        ex._target(module, "parsa", "lmms_eval_tasks.parsa.hooks")


def test_shared_code_goes_once_into_task_utils_and_the_judge_provider_among_upstreams_providers():
    targets = {}
    for benchmark in ex.BENCHMARKS:
        for name, module in ex.module_closure(benchmark).items():
            if not name.startswith((benchmark, f"lmms_eval_tasks.{benchmark}")):
                assert targets.setdefault(name, module.target) == module.target  # one place, whoever exports it
    assert targets["audio_bench_core.responses"] == "lmms_eval.tasks._task_utils.audio_bench.responses"
    assert targets["audio_bench_core"] == "lmms_eval.tasks._task_utils.audio_bench"
    # the judged benchmarks reach their judge through llm_judge's provider; PARSA judges nothing
    assert targets["lmms_eval_tasks.judge_provider"] == "lmms_eval.llm_judge.providers.audio_judge"
    assert "lmms_eval_tasks.judge_provider" not in ex.module_closure("parsa")
    provider = ex.module_closure(None)
    assert provider["lmms_eval_tasks.judge_provider"].target == targets["lmms_eval_tasks.judge_provider"] and "audio_bench_core.judge_cache" in provider
    assert not [name for name in provider if name.startswith(ex.BENCHMARK_PACKAGES)]


def test_task_yaml_gets_utils_references_the_hub_dataset_and_no_plugin_model_blocks():
    closure = ex.module_closure("parsa")
    responses = next(m.name for m in closure.values() if m.target.endswith(".audio_bench.responses"))
    config = ex.read_yaml_text(
        textwrap.dedent(f"""\
            dataset_path: csv
            dataset_kwargs:
              data_files: {{test: ../../parsa/sample_data/ASR/ASR.csv}}
              num_proc: 1
            process_docs: !function lmms_eval_tasks.parsa.hooks.parsa_asr_docs
            metric_list:
              - metric: wer
                aggregation: !function {responses}.agg_empty_responses
            model_specific_generation_kwargs:
              faster_whisper: {{language: fa}}
            lmms_eval_specific_kwargs:
              default: {{simple_audio: array}}
              faster_whisper: {{simple_audio: path}}
            """)
    )
    reexports = {}
    out = ex.export_yaml(config, ex.TASKS_DIR / "parsa/x.yaml", ex.BENCHMARKS["parsa"], "lmms_eval_tasks.parsa.hooks", closure, reexports)
    assert list(out)[:2] == ["dataset_path", "dataset_kwargs"]
    assert out["dataset_path"] == "MohammadJRanjbar/PARSA-Bench" and out["dataset_kwargs"] == {"num_proc": 1, "token": True}
    assert out["process_docs"] == "utils.parsa_asr_docs" and out["metric_list"][0]["aggregation"] == "utils.agg_empty_responses"
    assert reexports == {"agg_empty_responses": "lmms_eval.tasks._task_utils.audio_bench.responses"}
    assert "model_specific_generation_kwargs" not in out and out["lmms_eval_specific_kwargs"] == {"default": {"simple_audio": "array"}}
    text = ex.dump_yaml(out)
    assert "process_docs: !function utils.parsa_asr_docs\n" in text and "  - metric: wer\n" in text


def test_a_function_outside_the_export_is_an_error_naming_the_yaml():
    config = ex.read_yaml_text("process_results: !function lmms_eval_tasks.plugin.register\n")
    with pytest.raises(ex.ExportError, match="x.yaml: !function lmms_eval_tasks.plugin.register"):
        ex.export_yaml(config, ex.TASKS_DIR / "mcga/x.yaml", ex.BENCHMARKS["mcga"], "lmms_eval_tasks.mcga.hooks", ex.module_closure("mcga"), {})


def test_dependencies_beyond_lmms_eval_are_named_with_status_and_our_range():
    source = textwrap.dedent("""\
        import numpy
        import opencc
        from sklearn.metrics import f1_score
        try:
            from comet import load_from_checkpoint
        except ImportError:
            load_from_checkpoint = None
        from mcga import data
        """)
    found = dict(ex.extra_dependencies([source]))
    assert found == {"opencc<2,>=1.4.2": "missing", "unbabel-comet": "optional"}  # numpy, scikit-learn: lmms-eval's own
    assert "opencc" in ex.dependency_lines(list(found.items()))


def test_the_target_must_be_an_lmms_eval_tree_and_a_folder_is_replaced_only_with_force(tmp_path, capsys):
    assert ex.main(["mcga", str(tmp_path)]) == 2
    assert f"{tmp_path}: not an lmms-eval checkout" in capsys.readouterr().err
    (tmp_path / "lmms_eval/tasks/mcga").mkdir(parents=True)
    (tmp_path / "lmms_eval/tasks/__init__.py").write_text("")
    assert ex.main(["mcga", str(tmp_path)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err


def test_make_table_patch_prints_numbers_and_names_the_rest(tmp_path):
    import importlib.util
    from importlib.metadata import distribution

    installed = distribution("lmms_eval").locate_file("lmms_eval/utils.py")
    (tmp_path / "lmms_eval").mkdir()
    (tmp_path / "lmms_eval/utils.py").write_text(installed.read_text(encoding="utf-8"), encoding="utf-8")
    assert ex.patch_make_table(tmp_path) is True
    assert ex.patch_make_table(tmp_path) is False  # already applied
    spec = importlib.util.spec_from_file_location("patched_lmms_eval_utils", tmp_path / "lmms_eval/utils.py")
    patched = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patched)
    values = {"cer,none": 12.5, "cer_stderr,none": "N/A", "by_genre,none": {"诗": 10.0}, "signature,none": "norm:t2s", "ci95,none": [0.1, 0.2], "llm_b,none": "not computed: no judge"}
    table = patched.make_table({"results": {"mcga_asr": {"alias": "mcga_asr", **values}}, "n-shot": {"mcga_asr": 0}, "higher_is_better": {"mcga_asr": {}}})
    rows = [line for line in table.splitlines() if line.startswith("|mcga_asr")]
    assert len(rows) == 1 and "|cer   |" in rows[0] and "12.5" in rows[0]
    assert table.splitlines()[-1] == "Not shown above (not numbers; in the results JSON): by_genre (mcga_asr); ci95 (mcga_asr); llm_b (mcga_asr); signature (mcga_asr)"


def test_set_constant_rewrites_one_module_level_value_in_place():
    source = (ex.ROOT / "mmac/data.py").read_text(encoding="utf-8")
    assert '\nUNSET_DATA_DIR = "sample"\n' in source
    exported = ex.set_constant(source, "UNSET_DATA_DIR", "required", "mmac/data.py")
    assert '\nUNSET_DATA_DIR = "required"\n' in exported and exported.replace('\nUNSET_DATA_DIR = "required"\n', '\nUNSET_DATA_DIR = "sample"\n') == source
    with pytest.raises(ex.ExportError, match="no module-level `NO_SUCH"):
        ex.set_constant(source, "NO_SUCH", "hub", "mmac/data.py")
    # None in place of a value of several lines (a reference to a function: pruning then drops what only it used)
    assert ex.set_constant("A = 1\nLOADER = partial(\n    load, 2)  # kept\nB = 3\n", "LOADER", None, "m.py") == "A = 1\nLOADER = None  # kept\nB = 3\n"
    with pytest.raises(ex.ExportError, match="a string literal"):
        ex.set_constant("LOADER = load\n", "LOADER", "text", "m.py")


LEAVE_OUT_SOURCE = '''"""A module."""

import argparse
import sys
from pathlib import Path


def load(path):
    """Read ``path``."""
    return Path(path).read_text()


# --------------------------------------------------------- CLI
def main(argv=None):
    """The command."""
    parser = argparse.ArgumentParser()
    return check(parser.parse_args(argv))


def check(args):
    print(args, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def test_pruning_removes_a_command_its_comment_the_main_block_and_imports_only_they_used():
    # the plugin's command-line functions leave the export as everything nothing exported reaches (upstream_prune)
    kept = prune_module(LEAVE_OUT_SOURCE, reachable_names({"m": LEAVE_OUT_SOURCE}, {"m": {"load"}})["m"], "m.py")
    assert kept == '"""A module."""\n\nfrom pathlib import Path\n\n\ndef load(path):\n    """Read ``path``."""\n    return Path(path).read_text()\n'
    compile(kept, "m.py", "exec")
    used = LEAVE_OUT_SOURCE.replace("return Path(path).read_text()", "return check(Path(path).read_text())")
    assert "def check(" in prune_module(used, reachable_names({"m": used}, {"m": {"load"}})["m"], "m.py")  # what is kept still uses it
    cited = LEAVE_OUT_SOURCE.replace('"""Read ``path``."""', '"""Read ``path`` (as :func:`main` does)."""')
    assert "def main(" in prune_module(cited, reachable_names({"m": cited}, {"m": {"load"}})["m"], "m.py")  # a docstring cites it
    assert prune_module(LEAVE_OUT_SOURCE, reachable_names({"m": LEAVE_OUT_SOURCE}, {"m": {WHOLE}})["m"], "m.py") == LEAVE_OUT_SOURCE  # a command kept whole


def test_the_exported_data_modules_read_the_release_and_the_hub_layout_with_no_command_or_download():
    files = ex.pruned(ex.benchmark_files("parsa", Path("/lmms-eval"), Path("/lmms-eval/test"))[0], Path("/lmms-eval"))
    files.update(ex.pruned(ex.benchmark_files("mcga", Path("/lmms-eval"), Path("/lmms-eval/test"))[0], Path("/lmms-eval")))
    for name in ("mcga", "parsa"):
        source = files[Path(f"/lmms-eval/lmms_eval/tasks/{name}/data.py")]
        assert "def main(" not in source and "def _main(" not in source and "__main__" not in source and "argparse" not in source
        assert "def read_task_rows(" in source or "def read_task_docs(" in source  # the release, for make_hub_dataset
        assert "def rows_from_hub(" in source  # the hub layout, for process_docs
        # the plugin's own routes (a data folder variable, its own hub download) leave with RELEASE_LAYOUT_DOCS = None
        assert "def load_task_rows(" not in source and "def load_task_docs(" not in source and "download" not in source.lower()
        compile(source, name, "exec")
    assert "def check_command(" not in files[Path("/lmms-eval/lmms_eval/tasks/parsa/data.py")]


def test_export_text_replaces_the_plugins_wording_and_refuses_a_text_the_module_lacks(monkeypatch):
    source = (ex.ROOT / "audio_bench_core/judge_config.py").read_text(encoding="utf-8")
    exported = ex.export_text(source, "audio_bench_core.judge_config", "judge_config.py")
    assert "see docs/judge.md" in source and "docs/judge.md" not in exported and "; see the task folder's README.md, 'Judge')" in exported
    monkeypatch.setitem(ex.EXPORT_TEXT, "audio_bench_core.judge_config", (("no such wording", "x"),))
    with pytest.raises(ex.ExportError, match=r"judge_config.py: EXPORT_TEXT\['audio_bench_core.judge_config'\]: the text 'no such wording' is not in the module"):
        ex.export_text(source, "audio_bench_core.judge_config", "judge_config.py")
