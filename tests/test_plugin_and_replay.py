"""Discovery through the lmms_eval.models entry point, and the replay model's reading and accounting."""

import json
from importlib.metadata import entry_points
from types import SimpleNamespace

import pytest

from lmms_eval_tasks import TASKS_DIR, plugin
from lmms_eval_tasks.models import replay
from tests.conftest import FIXTURES


def test_entry_point_is_installed_and_returns_our_models():
    [ep] = [e for e in entry_points(group="lmms_eval.models") if e.name == "lmms_eval_audio_plugin"]
    manifests = ep.load()()
    assert {m.model_id: m.simple_class_path for m in manifests if m.chat_class_path is None} == plugin.MODEL_CLASSES
    both = {**plugin.REPLACED_MODELS, **plugin.UPSTREAM_MODELS}
    assert {m.model_id: (m.chat_class_path, m.simple_class_path) for m in manifests if m.chat_class_path} == both


def test_our_qwen_omni_classes_take_over_the_built_in_names_and_upstream_stays_reachable():
    from lmms_eval import models
    from lmms_eval.models import MODEL_REGISTRY_V2

    for name, (chat, simple) in plugin.REPLACED_MODELS.items():  # entry points load after the built-ins, with overwrite
        assert MODEL_REGISTRY_V2.resolve(name).class_path == chat
        assert MODEL_REGISTRY_V2.resolve(name, force_simple=True).class_path == simple
        assert MODEL_REGISTRY_V2.resolve(f"{name}_upstream").class_path != chat
    built_in = {m.model_id: (m.chat_class_path, m.simple_class_path) for m in models._build_builtin_manifests()}
    for name, paths in plugin.UPSTREAM_MODELS.items():
        assert built_in[name.removesuffix("_upstream")] == paths  # exactly lmms-eval's own classes
    assert models.get_model("qwen2_5_omni").__name__ == "Qwen2_5OmniThinkerChat"
    assert models.get_model("qwen2_5_omni", force_simple=True).__name__ == "Qwen2_5OmniThinkerSimple"


def test_task_manager_indexes_our_tasks_once_even_with_include_path():
    from lmms_eval.tasks import TaskManager

    plugin.add_tasks_dir_to_task_index()
    plugin.add_tasks_dir_to_task_index()  # idempotent
    manager = TaskManager("ERROR", include_path=str(TASKS_DIR), include_defaults=False)
    assert {"mcga_asr", "mcga_sqa", "mcga_su", "mcga_sr", "mcga_sqa_text", "mcga_su_text", "mcga_sr_text"} <= set(manager.all_subtasks)
    assert {"mcga", "mcga_cmc"} <= set(manager.all_groups)
    assert plugin._with_tasks_dir([str(TASKS_DIR)]) == [str(TASKS_DIR)]


def test_incompatible_lmms_eval_gives_a_clear_error(monkeypatch):
    from lmms_eval.tasks import TaskManager

    monkeypatch.setattr(TaskManager, "initialize_tasks", lambda self, paths=None: {})
    with pytest.raises(plugin.PluginCompatibilityError, match="--include_path"):
        plugin.add_tasks_dir_to_task_index()


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_read_predictions_accepts_our_format_and_official_runner_rows(tmp_path):
    write_jsonl(tmp_path / "ours.jsonl", [
        {"task": "mcga_su_text", "id": "su_01", "response": "B"},
        {"task": "mcga_su", "key": "upload/espeak-m/asr_qu_01.wav", "id": "su_01", "response": "C"},
        {"task": "mcga_asr", "audio": "upload/espeak-f/asr_qu_01.wav", "response": "枯藤"},
    ])  # fmt: skip
    predictions = replay.read_predictions(tmp_path)
    assert predictions == {("mcga_su_text", "id=su_01"): "B", ("mcga_su", "key=upload/espeak-m/asr_qu_01.wav"): "C",
                           ("mcga_asr", "key=upload/espeak-f/asr_qu_01.wav"): "枯藤"}  # fmt: skip
    official = replay.read_predictions(FIXTURES / "official_runner_rows")
    assert official[("mcga_su", "key=upload/espeak-m/asr_wen_02.wav")] == "ABCD"
    assert len(official) == 35  # 14 asr, 3 s2tt, 3 sec, 6 sqa, 5 su, 4 sr: official rows are keyed by audio, ids repeat


def test_read_predictions_rejects_duplicates_and_unknown_rows(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"task": "mcga_su", "id": 1, "response": "A"}, {"task": "mcga_su", "id": "1", "response": "B"}])
    with pytest.raises(ValueError, match=r"a.jsonl:2: second prediction for task mcga_su id=1 \(first at .*a.jsonl:1\)"):
        replay.read_predictions(tmp_path / "a.jsonl")
    write_jsonl(tmp_path / "b.jsonl", [{"id": 1, "answer": "A"}])
    with pytest.raises(ValueError, match="b.jsonl:1: expected"):
        replay.read_predictions(tmp_path / "b.jsonl")


def fake_request(task, doc_id):
    return SimpleNamespace(args=("ctx", {}, None, doc_id, task, "test"))


def make_replay(tmp_path, on_missing):
    write_jsonl(tmp_path / "p.jsonl", [{"task": "t", "id": "a", "response": "A"}, {"task": "t", "id": "zzz", "response": "C"}])
    model = replay.Replay(predictions=str(tmp_path / "p.jsonl"), on_missing=on_missing)
    model.task_dict = {"t": {"test": [{"id": "a"}, {"id": "b"}]}}
    return model


def make_repeated_id_replay(tmp_path, rows):
    write_jsonl(tmp_path / "p.jsonl", rows)
    model = replay.Replay(predictions=str(tmp_path / "p.jsonl"))
    model.task_dict = {"t": {"test": [{"id": "345-1", "doc_key": "upload/Yvqy/124.wav"}, {"id": "345-1", "doc_key": "upload/ON44/124.wav"},
                                      {"id": "9-1", "doc_key": "upload/Yvqy/9.wav"}]}}  # fmt: skip
    return model


def test_documents_sharing_an_id_are_answered_by_key_and_old_id_rows_work_where_unambiguous(tmp_path):
    model = make_repeated_id_replay(tmp_path, [
        {"task": "t", "key": "upload/ON44/124.wav", "response": "second speaker"},
        {"task": "t", "key": "upload/Yvqy/124.wav", "id": "345-1", "response": "first speaker"},
        {"task": "t", "id": "9-1", "response": "old format, one document with this id"},
    ])  # fmt: skip
    assert model.generate_until([fake_request("t", 0), fake_request("t", 1), fake_request("t", 2)]) == [
        "first speaker", "second speaker", "old format, one document with this id"]  # fmt: skip


def test_an_old_id_row_for_an_id_several_documents_share_is_an_error(tmp_path):
    model = make_repeated_id_replay(tmp_path, [{"task": "t", "id": "345-1", "response": "which clip?"}, {"task": "t", "id": "9-1", "response": "x"}])
    with pytest.raises(ValueError, match=r"p.jsonl:1: the prediction for t id 345-1 is ambiguous: 2 documents share this id "
                                         r"\(keys upload/Yvqy/124.wav, upload/ON44/124.wav\); give each answer the document's key"):  # fmt: skip
        model.generate_until([fake_request("t", 0)])


def test_missing_predictions_are_an_error_naming_the_ids(tmp_path):
    model = make_replay(tmp_path, "error")
    with pytest.raises(ValueError, match=r"no prediction for 1 document\(s\) of t: b"):
        model.generate_until([fake_request("t", 0), fake_request("t", 1)])


def test_missing_predictions_can_be_scored_empty_with_a_warning(tmp_path):
    from loguru import logger

    messages = []
    handler = logger.add(messages.append, level="WARNING")
    try:
        assert make_replay(tmp_path, "empty").generate_until([fake_request("t", 0), fake_request("t", 1)]) == ["A", ""]
    finally:
        logger.remove(handler)
    text = "".join(map(str, messages))
    assert "1 prediction(s) for t match no document of its dataset: id=zzz" in text
    assert "no prediction for 1 document(s) of t: b; scored as empty answers" in text


def test_read_predictions_takes_lmms_eval_samples_by_doc_id_from_the_file_name(tmp_path):
    write_jsonl(tmp_path / "20261129_101010_samples_mcga_sqa.jsonl", [
        {"doc_id": 0, "target": "李白", "filtered_resps": "李白", "doc_hash": "x", "input": "prompt 0"},
        {"doc_id": 1, "target": "元", "filtered_resps": ["元朝"], "doc_hash": "x", "input": "prompt 1"},
    ])
    assert replay.read_predictions(tmp_path) == {("mcga_sqa", "doc_id=0"): "李白", ("mcga_sqa", "doc_id=1"): "元朝"}
    write_jsonl(tmp_path / "20261129_101011_samples_mcga_su.jsonl", [
        {"doc_id": 0, "doc": {"id": "su_01", "doc_key": "upload/espeak-m/asr_qu_01.wav"}, "filtered_resps": ["B"], "input": "p"}])  # fmt: skip
    assert replay.read_predictions(tmp_path)[("mcga_su", "key=upload/espeak-m/asr_qu_01.wav")] == "B"  # logged doc_key beats the index
    (tmp_path / "20261129_101011_samples_mcga_su.jsonl").unlink()
    model = replay.Replay(predictions=str(tmp_path))
    model.task_dict = {"mcga_sqa": {"test": [{"id": "sqa_01"}, {"id": "sqa_02"}]}}
    request = SimpleNamespace(args=("prompt 0", {}, None, 0, "mcga_sqa", "test"))
    assert model.generate_until([request]) == ["李白"]
    with pytest.raises(ValueError, match="logged sample for mcga_sqa doc_id 1 was made with another prompt"):
        model.generate_until([SimpleNamespace(args=("another prompt", {}, None, 1, "mcga_sqa", "test"))])


def test_progress_bars_written_to_a_log_file_end_each_update_with_a_line_break(monkeypatch, tmp_path):
    import io
    import sys
    import types

    import os

    import tqdm.std

    # tqdm's own printer, also when an earlier test of this process already registered the plugin (and patched it)
    patched = getattr(tqdm.std.tqdm.__dict__["status_printer"].__func__, "__wrapped__", None)
    if patched is not None:
        monkeypatch.setattr(tqdm.std.tqdm, "status_printer", staticmethod(patched))
    original = tqdm.std.tqdm.__dict__["status_printer"]  # the staticmethod object, to put back as it was
    log = io.StringIO()  # not a terminal, like `lmms-eval ... 2> run.log`
    monkeypatch.setitem(sys.modules, "lmms_eval.__main__", sys.modules.get("lmms_eval.__main__") or types.ModuleType("lmms_eval.__main__"))
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.delenv("TQDM_MININTERVAL", raising=False)
    try:
        plugin.progress_bars_as_lines_in_logs()
        plugin.progress_bars_as_lines_in_logs()  # idempotent
        assert tqdm.std.tqdm.__dict__["status_printer"] is not original
        assert os.environ["TQDM_MININTERVAL"] == "30"
        for _ in tqdm.std.tqdm(range(300), desc="faster_whisper", mininterval=0, file=log):
            pass
        lines = log.getvalue().splitlines()
        assert "\r" not in log.getvalue() and len(lines) >= 300 and max(map(len, lines)) < 100
        assert lines[0].startswith("faster_whisper:   0%|") and lines[-2].startswith("faster_whisper: 100%|")
        terminal = io.StringIO()
        terminal.isatty = lambda: True
        tqdm.std.tqdm.status_printer(terminal)("bar")
        assert terminal.getvalue() == "\rbar"  # a terminal still gets tqdm's own redraw
    finally:
        tqdm.std.tqdm.status_printer = original
        os.environ.pop("TQDM_MININTERVAL", None)


def test_hub_failure_line_blames_the_hub_only_for_hub_calls(monkeypatch):
    from lmms_eval_tasks import hub_access

    monkeypatch.setattr(hub_access, "hub_unreachable_reason", lambda: "HF_HUB_OFFLINE=1")
    monkeypatch.setattr(hub_access, "cache_location", lambda: "/hf/hub")

    def load(repo_id):  # how transformers names what it could not load
        raise OSError(f"Can't load image processor for '{repo_id}'. If you were trying to load it from 'https://huggingface.co/models' ...")

    with pytest.raises(OSError) as error:
        load("Qwen/Qwen2.5-Omni-7B")
    assert hub_access.hub_failure_line(error.value) == (
        "model files Qwen/Qwen2.5-Omni-7B is not in the local Hugging Face cache (/hf/hub) and the hub cannot be reached (HF_HUB_OFFLINE=1): "
        "point pretrained= at a local copy (a folder holding its files) or set HF_HOME to the folder whose hub/ cache holds it")

    class ConnectError(Exception):  # httpx's name, raised by a client of a local model server
        pass

    assert hub_access.hub_failure_line(ConnectError("[Errno 111] Connection refused")) is None  # not a hub call: not the hub's fault
    monkeypatch.setattr(hub_access, "hub_unreachable_reason", lambda: None)
    with pytest.raises(OSError) as error:
        load("Qwen/Qwen2.5-Omni-7B")
    assert hub_access.hub_failure_line(error.value) is None  # the hub answers: the cause is something else


def test_weights_check_passes_local_folders_and_cached_ids_and_names_the_rest(monkeypatch, tmp_path):
    from lmms_eval_tasks import hub_access

    monkeypatch.setattr(hub_access, "hub_unreachable_reason", lambda: "ConnectError: refused")
    monkeypatch.setattr(hub_access, "cache_location", lambda: "/hf/hub")
    monkeypatch.setattr(hub_access, "is_cached", lambda repo_id, repo_type="model": repo_id == "org/cached")
    assert hub_access.weights_problem(f"pretrained={tmp_path}") is None  # a local folder
    assert hub_access.weights_problem("pretrained=org/cached,device=cuda") is None
    assert hub_access.weights_problem("pretrained=large-v3") is None  # a faster-whisper size name, not a hub id
    assert hub_access.weights_problem("language=zh") is None
    assert hub_access.weights_problem("model_name_or_path=org/missing").startswith("model weights org/missing is not in the local Hugging Face cache (/hf/hub)")
    assert "point model_name_or_path= at a local copy" in hub_access.weights_problem("model_name_or_path=org/missing")
    # a path that does not exist: said as such (transformers and faster-whisper call it a malformed repo id)
    missing = tmp_path / "whisper" / "ct2"
    assert hub_access.weights_problem(f"pretrained={missing}") == (
        f"pretrained={missing}: no such file or folder ({missing}; the deepest folder of it that exists: {tmp_path}); "
        "point pretrained= at the folder holding the weights, or give a hub id (org/name)"
    )
    assert hub_access.weights_problem("pretrained=~/no-such-folder-here").startswith("pretrained=~/no-such-folder-here: no such file or folder (")
