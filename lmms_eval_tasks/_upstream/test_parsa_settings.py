"""Appended to test_parsa.py by the export of PARSA-Bench's other settings (few-shot, chain of thought, text input,
audio reference): the same fixtures, the settings' tasks."""


def test_parsa_setting_tasks_are_registered():
    expected = {"parsa_intent_text", "parsa_vazn_fewshot", "parsa_vazn_cot", "parsa_intent_audio_ref"}
    assert not expected.difference(TaskManager("ERROR").all_tasks)


def test_text_setting_gives_the_transcript_in_the_prompt_and_no_audio(release_folder):
    doc = list(parsa_utils.parsa_intent_text_docs(_hub(release_folder, "intent")))[0]
    assert parsa_utils.parsa_doc_to_visual(doc, None) == []
    assert "Persian request: فردا ساعت شش صبح بیدارم کن\n" in parsa_utils.parsa_doc_to_text(doc)
