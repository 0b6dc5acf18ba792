"""parsa.comet_offline reads the logged translation records and scores the scored items with COMET.
``unbabel-comet`` cannot be installed beside lmms-eval, so a stand-in ``comet`` module records what it is given."""

from __future__ import annotations

import json
import sys
import types

import pytest

from parsa import comet_offline


def record(status, source, prediction, gold):
    return {"comet": {"task": "s2tt_fa_en", "status": status, "source": source, "prediction": prediction, "gold": gold}}


def test_scores_only_scored_items_and_counts_the_rest(tmp_path, monkeypatch, capsys):
    run = tmp_path / "out" / "model"
    run.mkdir(parents=True)
    rows = [record("scored", "سلام", "Hello", "Hi"), record("refused", "خوبی؟", None, "How are you?"), record("scored", "ممنون", "Thanks", "Thank you")]
    (run / "20261129_000000_samples_parsa_s2tt_fa_en.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (run / "20261129_000000_samples_parsa_vazn.jsonl").write_text("{}\n", encoding="utf-8")  # not a translation task: ignored
    seen = {}

    class Model:
        def predict(self, data, batch_size, gpus, progress_bar):
            seen.update(data=data, gpus=gpus)
            return types.SimpleNamespace(system_score=0.75)

    fake = types.ModuleType("comet")
    fake.load_from_checkpoint = lambda path: seen.setdefault("checkpoint", path) and Model()
    monkeypatch.setitem(sys.modules, "comet", fake)
    assert comet_offline.main(["--model", "/ckpt/model.ckpt", "--gpus", "0", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert seen["data"] == [{"src": "سلام", "mt": "Hello", "ref": "Hi"}, {"src": "ممنون", "mt": "Thanks", "ref": "Thank you"}]
    assert seen["checkpoint"] == "/ckpt/model.ckpt" and seen["gpus"] == 0
    entry = report["parsa_s2tt_fa_en"]
    assert (entry["comet"], entry["scored"], entry["excluded_or_refused"]) == (0.75, 2, 1) and list(report) == ["parsa_s2tt_fa_en"]


def test_samples_without_records_are_an_error_naming_the_line(tmp_path):
    file = tmp_path / "x_samples_parsa_s2tt_en_fa.jsonl"
    file.write_text(json.dumps({"doc_id": 0, "filtered_resps": "سلام"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x_samples_parsa_s2tt_en_fa.jsonl:1: no 'comet' record"):
        comet_offline.translation_triples(file)
    with pytest.raises(ValueError, match="no \\*_samples_parsa_s2tt_\\*.jsonl"):
        comet_offline.find_samples_files([str(tmp_path / "empty")])
