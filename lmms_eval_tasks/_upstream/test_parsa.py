"""Unit tests of the PARSA-Bench tasks (lmms_eval/tasks/parsa): a small folder in the release's CSV + audio layout,
turned into the hub layout by make_hub_dataset as lmms-eval loads it, then the hooks, with paper-rule values worked
out by hand. No model, no download."""

import csv
import json

import numpy as np
import pytest
import soundfile
from datasets import Audio, Dataset

from lmms_eval.tasks import TaskManager
from lmms_eval.tasks.parsa import make_hub_dataset
from lmms_eval.tasks.parsa import utils as parsa_utils

ASR = [("asr_01", "امروز هوا آفتابی و گرم است."), ("asr_02", "کتابخانه‌ی شهر ساعت هشت صبح باز می‌شود.")]
INTENT = [("intent_01", "فردا ساعت شش صبح بیدارم کن", "alarm_set"), ("intent_02", "هوای فردا در شیراز چطور است", "weather_query"),
          ("intent_03", "یک آهنگ شاد پخش کن", "play_music"), ("intent_04", "ساعت چند است", "datetime_query")]  # fmt: skip


def _write_task(root, folder, header, rows):
    (root / folder / "Audios").mkdir(parents=True)
    with (root / folder / f"{folder}.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row[0], f"{row[0]}.wav", *row[1:]])
            soundfile.write(root / folder / "Audios" / f"{row[0]}.wav", 0.1 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000), 16000)


@pytest.fixture
def release_folder(tmp_path, monkeypatch):
    """ASR and intent detection in the CSV + ``Audios/`` layout; clips read from the hub layout are written below the
    task cache, here in ``tmp_path``."""
    _write_task(tmp_path, "ASR", ["id", "audio", "transcript"], ASR)
    _write_task(tmp_path, "Intent-Classification", ["id", "audio", "transcript", "label"], INTENT)
    monkeypatch.setenv("LMMS_EVAL_AUDIO_BENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _hub(folder, task):
    """The config ``task`` of ``folder`` in the hub layout, as lmms-eval loads it (an ``Audio`` column)."""
    return Dataset.from_list(make_hub_dataset.hub_rows(folder, task)).cast_column("audio", Audio())


def _score(docs, answers, metric, aggregation):
    return aggregation([parsa_utils.parsa_process_results(doc, [answer])[metric] for doc, answer in zip(docs, answers)])


def test_parsa_tasks_are_registered():
    expected = {"parsa", "parsa_asr", "parsa_intent", "parsa_vazn", "parsa_music", "parsa_paralinguistic"}
    assert not expected.difference(TaskManager("ERROR").all_tasks)


def test_docs_carry_the_canonical_fields_and_the_gold_label(release_folder):
    docs = list(parsa_utils.parsa_intent_docs(_hub(release_folder, "intent")))
    assert [d["reference"] for d in docs] == ["alarm_set", "weather_query", "play_music", "datetime_query"]
    assert open(docs[0]["audio_path"], "rb").read() == (release_folder / "Intent-Classification" / "Audios" / "intent_01.wav").read_bytes()


def test_a_gold_label_outside_the_task_is_an_error_naming_the_row(release_folder):
    rows = make_hub_dataset.hub_rows(release_folder, "intent")
    rows[2]["label"] = "order_pizza"
    with pytest.raises(ValueError, match="row 3"):
        parsa_utils.parsa_intent_docs(Dataset.from_list(rows).cast_column("audio", Audio()))


def test_intent_macro_f1_is_over_the_labels_seen(release_folder):
    # play_music answered as play_radio: per-label F1 alarm_set 1, weather_query 1, play_music 0, datetime_query 1,
    # play_radio 0 (a valid label the model invented); macro-F1 over those five = 3 / 5.
    docs = list(parsa_utils.parsa_intent_docs(_hub(release_folder, "intent")))
    answers = [json.dumps({"intent": label}) for label in ("alarm_set", "weather_query", "play_radio", "datetime_query")]
    assert _score(docs, answers, "macro_f1", parsa_utils.parsa_agg_macro_f1) == pytest.approx(3 / 5)
    assert _score(docs, answers, "accuracy", parsa_utils.parsa_agg_accuracy) == pytest.approx(3 / 4)


def test_unreadable_answer_is_excluded_and_counted(release_folder):
    docs = list(parsa_utils.parsa_intent_docs(_hub(release_folder, "intent")))
    answers = ['{"intent": "alarm_set"}', "I cannot help with that.", '{"intent": "play_music"}', '{"intent": "datetime_query"}']
    assert _score(docs, answers, "refused", parsa_utils.parsa_agg_refused) == 1
    assert _score(docs, answers, "scored", parsa_utils.parsa_agg_scored) == 3


def test_asr_wer_after_persian_normalisation(release_folder):
    # asr_02: one word of seven wrong (هشت -> نه); the normaliser joins می‌شود and drops the ezafe of کتابخانه‌ی.
    docs = list(parsa_utils.parsa_asr_docs(_hub(release_folder, "asr")))
    answers = [json.dumps({"transcription": ASR[0][1]}, ensure_ascii=False), json.dumps({"transcription": "کتابخانه شهر ساعت نه صبح باز میشود"}, ensure_ascii=False)]
    assert _score(docs, answers, "wer_mean", parsa_utils.parsa_agg_wer_mean) == pytest.approx((0 + 1 / 7) / 2)
    assert _score(docs, answers, "wer_median", parsa_utils.parsa_agg_wer_median) == pytest.approx(1 / 14)


def test_prompt_asks_for_json(release_folder):
    doc = list(parsa_utils.parsa_intent_docs(_hub(release_folder, "intent")))[0]
    assert '"intent"' in parsa_utils.parsa_doc_to_text(doc)


