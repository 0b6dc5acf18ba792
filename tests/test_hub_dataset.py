"""The hub audio layout (:mod:`audio_bench_core.hub_layout`): made from the shipped samples by each benchmark's
``hub_dataset`` command, read back offline by ``datasets.load_dataset`` from a folder named like the hub repository (the
mixing test's way), and turned by ``process_docs`` into the very documents the release layout gives."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from audio_bench_core.audio import audio_for_model
from mcga import data as mcga_data
from mcga import hub_dataset as mcga_hub
from parsa import data as parsa_data
from tests.conftest import ROOT

datasets = pytest.importorskip("datasets")


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """cwd = tmp_path (where ``load_dataset("owner/name")`` finds ``tmp_path/owner/name``), no hub, caches under tmp_path.

    ``datasets`` reads ``HF_DATASETS_CACHE`` once, when imported, and keys a local folder's cache by the folder's name, not
    its content: without its own cache a test would read an earlier test's copy of ``yxdu/MCGA``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")
    for name, value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("HF_DATASETS_CACHE", str(tmp_path / "hf")), ("LMMS_EVAL_AUDIO_PLUGIN_CACHE", str(tmp_path / "cache"))):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MCGA_DATA_DIR", raising=False)
    return tmp_path


@pytest.fixture
def mcga_copy(offline):
    """``tmp_path/yxdu/MCGA`` made from the shipped sample by ``python -m mcga.hub_dataset``."""
    assert mcga_hub.main([str(mcga_data.SAMPLE_DATA_DIR), str(offline / "yxdu" / "MCGA")]) == 0
    return offline / "yxdu" / "MCGA"


def _same_docs(hub_docs, release_docs):
    """Every field equal but ``audio_path`` (a cache file there, the release's file here), and the clips the model gets
    equal: the 16 kHz arrays, and the data URI (the same file bytes)."""
    assert len(hub_docs) == len(release_docs) > 0
    for hub, release in zip(hub_docs, release_docs):
        assert {k: v for k, v in hub.items() if k != "audio_path"} == {k: v for k, v in release.items() if k != "audio_path"}
        ours, theirs = audio_for_model(hub["audio_path"], "array"), audio_for_model(release["audio_path"], "array")
        assert ours["sampling_rate"] == theirs["sampling_rate"] == 16000
        np.testing.assert_allclose(ours["array"], theirs["array"], atol=1e-7)
        assert audio_for_model(hub["audio_path"], "data_uri") == audio_for_model(release["audio_path"], "data_uri")


def test_mcga_layout_configs_and_columns(mcga_copy):
    card = (mcga_copy / "README.md").read_text(encoding="utf-8")
    assert [line.split(": ")[1] for line in card.splitlines() if line.startswith("- config_name")] == ["asr", "s2tt", "sec", "sqa", "su", "sr"]
    asr = datasets.load_dataset("yxdu/MCGA", "asr", split="test")
    assert asr.num_rows == 14 and isinstance(asr.features["audio"], datasets.Audio) and asr.features["audio"].sampling_rate is None
    assert asr.column_names == ["id", "asr", "audio", "source", "time", "prompt", "check_score", "split", "dynasty", "genre", "sex"]
    first = asr[0]
    assert first["audio"]["path"] == "upload/espeak-f/asr_ci_01.wav" and first["audio"]["sampling_rate"] == 16000
    samples = audio_for_model(str(mcga_data.SAMPLE_DATA_DIR / "upload/espeak-f/asr_ci_01.wav"), "array", None)["array"]
    np.testing.assert_allclose(first["audio"]["array"], samples, atol=1e-7)  # datasets decodes the stored wav bytes as they are
    assert set(mcga_hub.HUB_CONFIGS.values()) == set(mcga_hub.CONFIGS) and mcga_hub.HUB_CONFIGS["mcga_su_text"] == "su"


@pytest.mark.parametrize("task,mode", [("asr", "audio"), ("s2tt", "audio"), ("sec", "audio"), ("sqa", "audio"), ("su", "text"), ("sr", "audio")])
def test_mcga_process_docs_hub_equals_release(mcga_copy, task, mode):
    from lmms_eval_tasks.mcga import hooks

    loaded = datasets.load_dataset("yxdu/MCGA", task, split="test")
    hub_docs = list(hooks._load_docs(task, mode, loaded))
    plugin_yaml = datasets.load_dataset("json", data_files={"test": str(mcga_data.task_file(mcga_data.SAMPLE_DATA_DIR, task))}, split="test")
    release_docs = list(hooks._load_docs(task, mode, plugin_yaml))  # the plugin's way: $MCGA_DATA_DIR unset, the shipped sample
    _same_docs(hub_docs, release_docs)
    assert [d["doc_key"] for d in hub_docs] == [json.loads(line)["audio"] for line in mcga_data.task_file(mcga_data.SAMPLE_DATA_DIR, task).read_text(encoding="utf-8").splitlines() if line.strip()]
    chat = {"chat_audio": "data_uri", "max_audio_seconds": 30}  # the request a server gets: same text, same wav bytes
    assert hooks.mcga_doc_to_messages(hub_docs[0], chat) == hooks.mcga_doc_to_messages(release_docs[0], chat)
    assert hooks.mcga_doc_to_text(hub_docs[0]) == hooks.mcga_doc_to_text(release_docs[0])


def test_mcga_hub_dataset_refuses_a_bad_row(offline, capsys):
    release = offline / "release"
    shutil.copytree(mcga_data.SAMPLE_DATA_DIR, release)
    path = mcga_data.task_file(release, "su")
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    lines[1] = json.dumps({**row, "su_a": "E"}, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert mcga_hub.main([str(release), str(offline / "out")]) == 1
    error = capsys.readouterr().err
    assert f"MCGA_su_test.jsonl:2 (id {row['id']!r}, audio {row['audio']!r}): field 'su_a' must be one option letter A/B/C/D, got 'E'" in error
    assert not (offline / "out").exists()  # checked before anything is written
    (offline / "full").mkdir()
    (offline / "full" / "x").write_text("x")
    assert mcga_hub.main([str(mcga_data.SAMPLE_DATA_DIR), str(offline / "full")]) == 1
    assert "exists and is not an empty folder" in capsys.readouterr().err


def test_mcga_rows_from_hub_refuses_bad_hub_rows(mcga_copy):
    loaded = datasets.load_dataset("yxdu/MCGA", "sr", split="test", features=None)
    stored = loaded.cast_column("audio", datasets.Audio(decode=False)).to_list()
    bad_audio = [dict(r) for r in stored]
    bad_audio[2]["audio"] = {"bytes": b"RIFF not a wav", "path": stored[2]["audio"]["path"]}
    with pytest.raises(mcga_data.MCGADataError, match=rf"hub dataset yxdu/MCGA config 'sr' row 3 \(id '{stored[2]['id']}', audio '{stored[2]['audio']['path']}'\): field 'audio': the audio bytes \(14\) are not readable audio"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list(bad_audio, features=loaded.features), "sr")
    duplicate = [dict(r) for r in stored]
    duplicate[1]["audio"] = stored[0]["audio"]
    with pytest.raises(mcga_data.MCGADataError, match=r"row 2 .*field 'audio': duplicate audio path, first seen on row 1"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list(duplicate, features=loaded.features), "sr")
    no_gold = [{**r, "sr_a": " "} if n == 3 else r for n, r in enumerate(stored)]
    with pytest.raises(mcga_data.MCGADataError, match=r"row 4 .*missing or empty field\(s\) \['sr_a'\]"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list(no_gold, features=loaded.features), "sr")
    with pytest.raises(mcga_data.MCGADataError, match=r"no Audio column 'audio'"):
        mcga_data.rows_from_hub(datasets.Dataset.from_list([{"id": "1", "audio": "a.wav"}]), "sr")


# ------------------------------------------------------------------------------------------------------ PARSA-Bench
@pytest.fixture
def parsa_copy(offline):
    """``tmp_path/MohammadJRanjbar/PARSA-Bench`` made from the shipped sample by ``python -m parsa.hub_dataset``."""
    from parsa import hub_dataset as parsa_hub

    folder = offline / "MohammadJRanjbar" / "PARSA-Bench"
    assert parsa_hub.main([str(parsa_data.SAMPLE_DATA_DIR), str(folder)]) == 0
    return folder


def _parsa_release_dataset(task):
    """What the plugin's YAML has lmms-eval load: the sample's CSV through the csv builder."""
    folder = parsa_data.column_map()[task]["folder"]
    return datasets.load_dataset("csv", data_files={"test": str(parsa_data.SAMPLE_DATA_DIR / folder / f"{folder}.csv")}, split="test")


def test_parsa_layout_configs_and_columns(parsa_copy):
    from parsa import hub_dataset as parsa_hub
    from parsa.tasks import TASKS

    card = (parsa_copy / "README.md").read_text(encoding="utf-8")
    assert [line.split(": ")[1] for line in card.splitlines() if line.startswith("- config_name")] == list(TASKS) and len(TASKS) == 16
    sabk = datasets.load_dataset("MohammadJRanjbar/PARSA-Bench", "sabk", split="test", token=True)  # the exported YAML's token: True
    assert sabk.column_names == ["id", "audio", "transcript", "answer", "question", "options", "source"] and isinstance(sabk.features["audio"], datasets.Audio)
    assert sabk[0]["audio"]["path"] == "Poetry-Vazn/Audios/vazn_01.wav"  # the sample's ../Poetry-Vazn/Audios/vazn_01.wav, relative to the release root
    groups = ("parsa_speech_understanding", "parsa_paralinguistic", "parsa_cultural")
    yaml_tasks = sorted(p.stem for p in (ROOT / "lmms_eval_tasks/parsa").glob("parsa_*.yaml") if p.stem not in groups)
    assert sorted(parsa_hub.HUB_CONFIGS) == yaml_tasks and parsa_hub.HUB_CONFIGS["parsa_rc_tiny_fewshot"] == "rc_tiny"


@pytest.mark.parametrize("task,setting", [("asr", "audio"), ("ner", "text"), ("mcqa", "fewshot"), ("sabk", "audio_ref"), ("music", "cot"), ("intent", "audio")])
def test_parsa_process_docs_hub_equals_release(parsa_copy, task, setting):
    from lmms_eval_tasks.parsa import hooks

    hub_docs = list(hooks._load_docs(task, setting, datasets.load_dataset("MohammadJRanjbar/PARSA-Bench", task, split="test", token=True)))
    release_docs = list(hooks._load_docs(task, setting, _parsa_release_dataset(task)))
    assert {d[hooks.SOURCE_FIELD] for d in hub_docs} == {parsa_data.HUB_LAYOUT_SOURCE}
    assert {d[hooks.SOURCE_FIELD] for d in release_docs} == {parsa_data.data_source()}

    def plain(doc):
        demos = [{k: v for k, v in demo.items() if k != "audio_path"} for demo in json.loads(doc[hooks.DEMOS_FIELD])]
        return {**{k: v for k, v in doc.items() if k not in ("audio_path", hooks.SOURCE_FIELD, hooks.DEMOS_FIELD)}, "demos": demos}

    assert [plain(d) for d in hub_docs] == [plain(d) for d in release_docs]
    assert [d["id"] for d in hub_docs] == [str(i) for i in _parsa_release_dataset(task)["id"]]
    for hub, release in zip(hub_docs, release_docs):
        ours, theirs = audio_for_model(hub["audio_path"], "array", None), audio_for_model(release["audio_path"], "array", None)
        assert ours["sampling_rate"] == theirs["sampling_rate"] == 16000
        np.testing.assert_allclose(ours["array"], theirs["array"], atol=1e-7)
        chat = {"chat_audio": "data_uri", "max_audio_seconds": None}
        assert hooks.parsa_doc_to_messages(hub, chat) == hooks.parsa_doc_to_messages(release, chat)


def test_parsa_hub_dataset_refuses_a_bad_row(offline, capsys):
    from parsa import hub_dataset as parsa_hub

    release = offline / "release"
    shutil.copytree(parsa_data.SAMPLE_DATA_DIR, release)
    path = release / "Intent-Classification" / "Intent-Classification.csv"
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[1]
    path.write_text(text.replace(first, first.rsplit(",", 1)[0] + ",no_such_intent"), encoding="utf-8")
    assert parsa_hub.main([str(release), str(offline / "out")]) == 1
    error = capsys.readouterr().err
    assert f"Intent-Classification.csv row 1 (id {first.split(',')[0]!r}): gold label 'no_such_intent' is not one of the task's labels" in error
    assert not (offline / "out").exists()


def test_parsa_rows_from_hub_refuses_bad_hub_rows(parsa_copy):
    loaded = datasets.load_dataset("MohammadJRanjbar/PARSA-Bench", "vazn", split="test", token=True)
    stored = loaded.cast_column("audio", datasets.Audio(decode=False)).to_list()
    bad = [dict(r) for r in stored]
    bad[1]["audio"] = {"bytes": b"RIFF not a wav", "path": "x.wav"}
    with pytest.raises(parsa_data.PARSADataError, match=rf"hub dataset MohammadJRanjbar/PARSA-Bench config 'vazn' row 2 \(id '{stored[1]['id']}'\): embedded audio bytes in column 'audio' \(14 bytes, file name 'x.wav'\) are not readable audio"):
        parsa_data.rows_from_hub(datasets.Dataset.from_list(bad, features=loaded.features), "vazn")
    out_of_range = [{**r, "answer": "11"} if n == 2 else r for n, r in enumerate(stored)]
    with pytest.raises(parsa_data.PARSADataError, match=r"row 3 .*gold option '11' is out of range: the row has 10 options"):
        parsa_data.rows_from_hub(datasets.Dataset.from_list(out_of_range, features=loaded.features), "vazn")
    duplicate = [{**r, "id": stored[0]["id"]} if n == 4 else r for n, r in enumerate(stored)]
    with pytest.raises(parsa_data.PARSADataError, match=rf"row 5 .*duplicate id '{stored[0]['id']}', first seen at hub dataset MohammadJRanjbar/PARSA-Bench config 'vazn' row 1"):
        parsa_data.rows_from_hub(datasets.Dataset.from_list(duplicate, features=loaded.features), "vazn")


# ------------------------------------------------------------------------------------------------------ the exporter
@pytest.mark.parametrize("benchmark", ["mcga", "parsa"])
def test_exported_task_yaml_names_its_hub_config(benchmark):
    from lmms_eval_tasks import upstream_export as ex

    closure, configs = ex.module_closure(benchmark), ex.hub_configs(benchmark)
    seen = set()
    for path in sorted((ex.TASKS_DIR / benchmark).glob(f"{benchmark}_*.yaml")):
        config = ex.read_yaml(path)
        out = ex.export_yaml(config, path, ex.BENCHMARKS[benchmark], f"lmms_eval_tasks.{benchmark}.hooks", closure, {})
        if isinstance(config["task"], list):  # a group: no data of its own
            assert "dataset_name" not in out, path
            continue
        assert out["dataset_name"] == configs[config["task"]] and "data_files" not in (out.get("dataset_kwargs") or {}), path
        assert list(out).index("dataset_name") == list(out).index("process_docs") - 1
        seen.add(config["task"])
    assert seen == set(configs) and ex.hub_configs("mmac") == {}


#: Run in a subprocess (its own lmms-eval task registry), cwd = the folder holding the hub copies: the exported task
#: folders found as ``lmms_eval.tasks.<benchmark>`` (argv[1] put first on that package's path, as if written into the
#: checkout), loaded by lmms-eval's TaskManager from their YAML as exported; prints each task's documents and a clip.
LMMS_EVAL_LOADS = """
import json, sys
import numpy as np
import lmms_eval.llm_judge, lmms_eval.llm_judge.providers, lmms_eval.tasks
lmms_eval.tasks.__path__.insert(0, sys.argv[1])
lmms_eval.llm_judge.__path__.insert(0, sys.argv[1].replace("/tasks", "/llm_judge"))  # the judge core the provider wraps
lmms_eval.llm_judge.providers.__path__.insert(0, sys.argv[1].replace("/tasks", "/llm_judge/providers"))
from lmms_eval.tasks import TaskManager, get_task_dict
manager = TaskManager(include_path=[f"{sys.argv[1]}/mcga", f"{sys.argv[1]}/parsa"], include_defaults=False)
out = {}
for name, task in get_task_dict(["mcga_asr", "parsa_vazn"], manager).items():
    docs = list(task.test_docs())
    [clip] = task.doc_to_visual(docs[0])
    out[name] = {"loader": type(task.config.process_docs).__module__, "path": task.config.dataset_path, "config": task.config.dataset_name,
                 "docs": [{k: v for k, v in d.items() if k != "audio_path"} for d in docs],
                 "clip": [int(clip["sampling_rate"]), len(clip["array"]), float(np.asarray(clip["array"], dtype=np.float64).sum())]}
print("RESULT " + json.dumps(out, ensure_ascii=False))
"""


def test_lmms_eval_loads_the_exported_tasks_from_the_hub_copies(offline):
    """``mcga_asr`` and ``parsa_vazn`` exported, their YAML unchanged, loaded by lmms-eval offline from the hub copies:
    the documents are the plugin's on the release layout, the first clip the same samples."""
    import os
    import subprocess
    import sys

    from lmms_eval_tasks import upstream_export as ex
    from lmms_eval_tasks.mcga import hooks as mcga_hooks
    from lmms_eval_tasks.parsa import hooks as parsa_hooks
    from parsa import hub_dataset as parsa_hub

    (offline / "checkout/lmms_eval/tasks").mkdir(parents=True)
    (offline / "checkout/lmms_eval/tasks/__init__.py").write_text("")
    ex.export_judge_provider(offline / "checkout", tests_dir=offline / "checkout/test")  # the judged MCGA tasks import it
    for benchmark in ("mcga", "parsa"):
        ex.export_benchmark(benchmark, offline / "checkout", tests_dir=offline / "checkout/test")
    assert mcga_hub.main([str(mcga_data.SAMPLE_DATA_DIR), "yxdu/MCGA"]) == 0
    assert parsa_hub.main([str(parsa_data.SAMPLE_DATA_DIR), "MohammadJRanjbar/PARSA-Bench"]) == 0
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MCGA_DATA_DIR", "PARSA_DATA_DIR")}
    env["HF_DATASETS_CACHE"] = str(offline / "hf_subprocess")
    run = subprocess.run([sys.executable, "-c", LMMS_EVAL_LOADS, str(offline / "checkout/lmms_eval/tasks")], cwd=offline, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(next(line for line in run.stdout.splitlines() if line.startswith("RESULT "))[len("RESULT "):])
    mcga, parsa = result["mcga_asr"], result["parsa_vazn"]
    assert (mcga["loader"], mcga["path"], mcga["config"]) == ("lmms_eval.tasks._task_utils.audio_bench.data_identity", "yxdu/MCGA", "asr")
    assert (parsa["loader"], parsa["path"], parsa["config"]) == ("lmms_eval.tasks._task_utils.audio_bench.data_identity", "MohammadJRanjbar/PARSA-Bench", "vazn")
    plugin_yaml = datasets.load_dataset("json", data_files={"test": str(mcga_data.task_file(mcga_data.SAMPLE_DATA_DIR, "asr"))}, split="test")
    release = list(mcga_hooks._load_docs("asr", "audio", plugin_yaml))
    assert mcga["docs"] == [{k: v for k, v in d.items() if k != "audio_path"} for d in release]
    theirs = audio_for_model(release[0]["audio_path"], "array", 30)["array"]
    assert mcga["clip"][:2] == [16000, len(theirs)] and mcga["clip"][2] == pytest.approx(float(theirs.astype(np.float64).sum()), abs=1e-6)
    release = list(parsa_hooks._load_docs("vazn", "audio", _parsa_release_dataset("vazn")))
    drop = ("audio_path", parsa_hooks.SOURCE_FIELD)
    assert [{k: v for k, v in d.items() if k not in drop} for d in parsa["docs"]] == [{k: v for k, v in d.items() if k not in drop} for d in release]
    assert {d[parsa_hooks.SOURCE_FIELD] for d in parsa["docs"]} == {parsa_data.HUB_LAYOUT_SOURCE}
    theirs = audio_for_model(release[0]["audio_path"], "array", None)["array"]
    assert parsa["clip"][:2] == [16000, len(theirs)] and parsa["clip"][2] == pytest.approx(float(theirs.astype(np.float64).sum()), abs=1e-6)
