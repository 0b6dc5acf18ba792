"""Reasoning traces split from answers (audio_bench_core/reasoning.py). Inputs are written as the named models
write them when served without a reasoning parser (tags and their placement from the models' chat templates)."""

import pytest

from audio_bench_core.reasoning import split_reasoning


@pytest.mark.parametrize(
    "text, answer, unfinished",
    [
        # Qwen3 / DeepSeek-R1: a closed block, then the answer
        ('<think>\nThe speaker sounds angry... maybe sad?\n</think>\n\n{"emotion": "sad"}', '{"emotion": "sad"}', False),
        # Qwen3-Thinking-2507 templates pre-fill "<think>\n": only the closing tag is generated
        ('Okay, the options are 1-4. It is 2.\n</think>\n\n{"answer": 3}', '{"answer": 3}', False),
        # other spellings
        ("<thinking>draft: B</thinking>A", "A", False),
        ("<reasoning>B?</reasoning>\nA", "A", False),
        ("<analysis>draft</analysis>A", "A", False),  # in lmms-eval's default --reasoning_tags
        ("◁think▷用户问的是体裁…可能是词◁/think▷诗", "诗", False),
        ("[THINK]B or C[/THINK]C", "C", False),
        ("<seed:think>hmm</seed:think>answer", "answer", False),
        ("<|begin_of_thought|>x=1<|end_of_thought|><|begin_of_solution|>2<|end_of_solution|>", "2", False),
        ("<|channel|>analysis<|message|>draft 4<|end|><|start|>assistant<|channel|>final<|message|>5<|return|>", "5", False),
        # case and spaces inside tags
        ("<THINK >draft</ Think>final", "final", False),
        # never closed (generation hit the token limit): no answer, never the draft
        ('<think>The answer is {"answer": 2} because', "", True),
        ("◁think▷答案是B", "", True),
        ("<thinking>B", "", True),
        # a closed block then a second one left open: the text between them is all that is outside
        ("<think>a</think>A1<think>b", "A1", True),
        # several closed blocks: the text outside all of them
        ("<think>a</think>first<think>b</think>second", "first\nsecond", False),
    ],
)
def test_final_text_is_what_lies_outside_reasoning(text, answer, unfinished):
    split = split_reasoning(text)
    assert (split.answer, split.unfinished, split.has_reasoning) == (answer, unfinished, True)


@pytest.mark.parametrize(
    "text, answer",
    [
        # R1-style templates (R1-AQA, SARI, Omni-R1): the answer inside <answer> tags after the reasoning
        ("<think>B or C? C.</think>\n<answer>C</answer>", "C"),
        # Audio-Reasoner: tags nested inside its THINK block, the answer in RESPONSE
        ("<THINK><PLANNING>p</PLANNING><REASONING>maybe A</REASONING><SUMMARY>s</SUMMARY></THINK><RESPONSE>The answer is B.</RESPONSE>", "The answer is B."),
        # a preamble outside the wrapper is dropped; several wrappers are all kept, in order, for the answer rules
        ("Let me answer. <answer>床前明月光</answer> Done.", "床前明月光"),
        ("<answer>A</answer> Wait. <final_answer>B</final_answer>", "A\nB"),
        # stray tags: dropped, the text kept (an answer cut off inside its wrapper)
        ("<answer>the train leaves at", "the train leaves at"),
        ("B</answer>", "B"),
        ("< Answer >2</ANSWER >", "2"),
        # the wrapper inside reasoning is reasoning
        ("<think><answer>A</answer></think>B", "B"),
    ],
)
def test_final_answer_is_read_inside_answer_tags(text, answer):
    assert split_reasoning(text).answer == answer


def test_answer_tags_cost_linear_time():
    split = split_reasoning("<answer>" * 200_000 + "x" * 1_000_000)
    assert split.answer == "x" * 1_000_000


def test_every_spelling_is_read_in_each_placement():
    from audio_bench_core.reasoning import ANSWER_WRAPPERS, REASONING_SPELLINGS

    for opening, closing in REASONING_SPELLINGS:
        assert split_reasoning(f"{opening}draft 1{closing}Score: 4").answer == "Score: 4", opening
        if closing != "<|end|>":  # gpt-oss also ends its final channel with <|end|>: alone it is a marker, dropped
            assert split_reasoning(f"draft 1{closing}Score: 4").answer == "Score: 4", closing  # pre-filled opening
        assert split_reasoning(f"{opening}draft 1").unfinished, opening
        assert split_reasoning(f"{opening.upper()} x {closing.upper()} 4").answer == "4", opening
    for opening in ANSWER_WRAPPERS:
        closing = opening.replace("<", "</")
        assert split_reasoning(f"Sure. {opening}4{closing}").answer == "4", opening


def test_text_without_reasoning_is_returned_unchanged():
    for text in ("  B  ", '{"answer": "<b>"}', "think about it: A", "", None):
        split = split_reasoning(text)
        assert (split.answer, split.trace_chars, split.unfinished, split.has_reasoning) == (text or "", 0, False, False)


def test_trace_length_counts_every_removed_character():
    assert split_reasoning("<think>abc</think>X").trace_chars == len("<think>abc</think>")
    assert split_reasoning("abc</think>X").trace_chars == len("abc</think>")
    assert split_reasoning("X<think>abcd").trace_chars == len("<think>abcd")


def test_split_is_linear_in_length():
    # 200,000 unclosed tags and one long draft: one regex pass, no backtracking blow-up
    split = split_reasoning("<think>" * 200_000 + "x" * 1_000_000)
    assert split.unfinished and split.answer == ""


@pytest.mark.parametrize(
    "text",
    [
        "<think>draft B</think>A", "draft B</think>\n\nA", "<think>a</think>X<think>b", "<think>cut off", "◁think▷草稿◁/think▷诗",
        "<analysis>x</analysis>{\"answer\": 2}", "plain answer", "<think>one</think><think>two</think>final",
    ],
)
def test_split_after_lmms_evals_own_stripping_reads_what_it_reads_on_the_raw_text(text):
    # lmms-eval 0.7's CLI strips its default --reasoning_tags (lmms_eval/__main__.py) before the hooks see a
    # response: ours must then read what it reads on the raw text
    from lmms_eval.api.reasoning import parse_reasoning_tags_config, strip_reasoning_tags

    defaults = parse_reasoning_tags_config(cli_value='[["<think>", "</think>"], ["<analysis>", "</analysis>"]]')
    once, twice = split_reasoning(text), split_reasoning(strip_reasoning_tags(text, defaults))
    assert (twice.answer, twice.unfinished) == (once.answer, once.unfinished)
