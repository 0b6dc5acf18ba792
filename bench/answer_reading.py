"""Reading answers (issue 17): the per-document scoring of today's reading against the reading before issue 17, on the
same answers in one process, and the new reading's time per character from short to very long answers.

"Before" is the code at commit :data:`BEFORE` (the branch point of issue 17), loaded from git into private modules
(``parsa.parsing``, ``parsa.scoring``, ``audio_bench_core.responses``, ``mcga.metrics`` of that commit; the modules
they import that issue 17 did not change are shared). Without git or that commit the comparison is skipped, loudly.

Answers (deterministic, ``random.Random(SEED)``), written as audio LLMs write them: mostly a plain JSON answer or a
bare letter; about a quarter behind a closed ``<think>`` block (some Kimi ``◁think▷``, some with only ``</think>``),
a few cut off inside the block, a few near-JSON (inner quotes, no closing brace), a few with two answers and a
retraction, code fences, prose around the JSON.

Cases (cold: the normalisation and bootstrap memos are emptied before every repetition):

- PARSA (ASR, emotion, MCQA; 1,000 documents each): per document, the response check then
  ``parsa.scoring.score_response`` (before: the former check, which did not remove reasoning, and the former
  ``score_response``, whose parser removed ``<think>`` blocks itself);
- MCGA SU (1,000 documents): per document, the response check then the strict letter reader (before:
  ``strict_mcq_letter``; now: ``strict_mcq_reading``) and the official rule.

Figures: new / before per-document time (goal <= 1.2), each benchmark; and the new reading's time per character of a
1 MB answer over that of a 1 kB answer (goal <= 2: linear; a quadratic step would give about 1,000).

Usage: ``python -m bench.answer_reading [--items N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import types
from pathlib import Path

from bench._timing import alternate, figure, header, report, skip

GOAL, LINEAR_GOAL = 1.2, 2.0
SEED = 17
#: The commit before issue 17 (its branch point): the reading it replaced.
BEFORE = "fdf0d0b"
#: ``{module name today: its file at BEFORE}`` (issue 19 later moved the response checks to ``audio_bench_core``).
CHANGED_MODULES = {
    "parsa.parsing": "parsa/parsing.py",
    "parsa.scoring": "parsa/scoring.py",
    "audio_bench_core.responses": "lmms_eval_tasks/responses.py",
    "mcga.metrics": "mcga/metrics.py",
}
ROOT = Path(__file__).resolve().parent.parent


def load_before(commit: str = BEFORE) -> dict[str, types.ModuleType] | str:
    """``{module name: module}`` of :data:`CHANGED_MODULES` at ``commit``, each importing the others at that commit;
    or the reason they cannot be loaded. ``sys.modules`` is restored afterwards."""
    saved = {name: sys.modules.get(name) for name in CHANGED_MODULES}
    loaded = {}
    try:
        for name, path in CHANGED_MODULES.items():
            source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout
            module = types.ModuleType(name)
            module.__file__ = f"{commit}:{path}"
            sys.modules[name] = module
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            loaded[name] = module
    except (OSError, subprocess.CalledProcessError) as error:
        return f"the code at commit {commit} cannot be read from git ({error}); run from a clone that holds it"
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return loaded


def _wrap(rng: random.Random, answer: str) -> str:
    """``answer`` as a model may write it: behind reasoning, cut off, fenced, in prose, or plain."""
    kind = rng.random()
    if kind < 0.15:
        return f"<think>\nLet me listen again. The speaker {'sounds tense' if rng.random() < 0.5 else 'reads slowly'}; option 2 is unlikely.\n</think>\n\n{answer}"
    if kind < 0.20:
        return f"◁think▷先分析一下音频内容。◁/think▷{answer}"
    if kind < 0.25:
        return f"The question asks about the passage.\n</think>\n\n{answer}"
    if kind < 0.28:
        return "<think>\nThe answer is probably " + answer[: len(answer) // 2]
    if kind < 0.33:
        return f"```json\n{answer}\n```"
    if kind < 0.37:
        return f"Sure! Here is my answer: {answer} Let me know if you need more."
    return answer


def parsa_items(task: str, n: int, seed: int = SEED) -> list[tuple[dict, str]]:
    """``[(doc, response), ...]`` of ``n`` PARSA documents of ``task`` (asr, emotion or mcqa)."""
    from bench.scoring_parsa import SENTENCES

    rng = random.Random(f"{seed}-{task}")
    words = [w for s in SENTENCES for w in s.split()]
    labels = ("anger", "fear", "happiness", "sadness", "surprise", "neutral")
    items = []
    for index in range(n):
        if task == "asr":
            reference = " ".join(rng.choice(words) for _ in range(rng.randint(4, 14)))
            value, doc = reference, {"id": f"asr_{index}", "reference": reference}
            answer = json.dumps({"transcription": value}, ensure_ascii=False)
            if rng.random() < 0.04:
                answer = '{"transcription": "' + value.replace(" ", ' "', 1) + '"}'  # an unescaped inner quote
            elif rng.random() < 0.04:
                answer = '{"transcription": "' + value  # no closing brace
        elif task == "emotion":
            gold = rng.choice(labels)
            doc, answer = {"id": f"emotion_{index}", "reference": gold}, json.dumps({"emotion": rng.choice([gold, gold, rng.choice(labels)])})
        else:
            gold = rng.randint(1, 4)
            doc = {"id": f"mcqa_{index}", "reference": str(gold), "options": ["اصفهان", "تهران", "شیراز", "تبریز"]}
            answer = json.dumps({"answer": rng.choice([gold, gold, rng.randint(1, 4)])})
            if rng.random() < 0.04:
                answer = f'{{"answer": {rng.randint(1, 4)}}}\nWait, that is wrong.\n{{"answer": {gold}}}'
        items.append((doc, _wrap(rng, answer)))
    return items


def mcga_su_items(n: int, seed: int = SEED) -> list[tuple[dict, str]]:
    """``[(doc, response), ...]``: ``n`` SU questions and answers (letters, declarations, traditional script)."""
    rng = random.Random(f"{seed}-su")
    question = "问题：这首小令主要抒发了怎样的情感？\nA. 边塞将士建功立业的豪情\nB. 漂泊天涯的游子的思乡愁苦\nC. 归隐田园的闲适与快乐\nD. 久别重逢的喜悦\n答案："
    forms = ("{}", "答案是{}", "答案：{}。", "我選擇 {}", "The answer is {}.", "{}. 漂泊天涯的游子的思乡愁苦", "答案是A。不对，答案是{}", "答案是{}吗？")
    items = []
    for index in range(n):
        gold = rng.choice("ABCD")
        items.append(({"id": f"su_{index}", "su": question, "su_a": gold}, _wrap(rng, rng.choice(forms).format(rng.choice([gold, gold, rng.choice("ABCD")])))))
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    header(f"Answer reading, {args.items} documents per task")
    from audio_bench_core import responses
    from mcga import metrics as mcga_metrics
    from parsa import metrics as parsa_metrics
    from parsa import scoring
    from parsa.normalize import clear_normalisation_cache

    def cold():
        clear_normalisation_cache()
        parsa_metrics.clear_bootstrap_cache()

    def check(module, response, doc):
        return module.check_response(response, task="t", doc_id=doc["id"], clip=None, gold=doc.get("reference", ""))

    before = load_before()
    parsa = {task: parsa_items(task, args.items) for task in ("asr", "emotion", "mcqa")}
    su = mcga_su_items(args.items)

    def parsa_new():
        for task, items in parsa.items():
            for doc, response in items:
                checked = check(responses, response, doc)
                scoring.score_response(task, doc, checked.answer, unfinished_reasoning=checked.record["unfinished_reasoning"])

    def su_new():
        for doc, response in su:
            answer = check(responses, response, doc).answer
            mcga_metrics.strict_mcq_reading(answer, options=mcga_metrics.parse_mcq_options(doc["su"]))
            mcga_metrics.official_mcq_correct(doc["su_a"], answer)

    if isinstance(before, str):
        skip(before)
        results = alternate({"PARSA now": parsa_new, "MCGA SU now": su_new}, args.repeats, setup=cold)
        report(results)
    else:
        old_responses, old_scoring, old_metrics = before["audio_bench_core.responses"], before["parsa.scoring"], before["mcga.metrics"]

        def parsa_before():
            for task, items in parsa.items():
                for doc, response in items:
                    old_scoring.score_response(task, doc, check(old_responses, response, doc).answer)

        def su_before():
            for doc, response in su:
                answer = check(old_responses, response, doc).answer
                old_metrics.strict_mcq_letter(answer, options=old_metrics.parse_mcq_options(doc["su"]))
                old_metrics.official_mcq_correct(doc["su_a"], answer)

        results = alternate({"PARSA before": parsa_before, "PARSA now": parsa_new, "MCGA SU before": su_before, "MCGA SU now": su_new}, args.repeats, setup=cold)
        report(results)
        for name in ("PARSA", "MCGA SU"):
            ratio = results[f"{name} now"].wall_median / results[f"{name} before"].wall_median
            figure(f"answer_reading_{name.lower().replace(' ', '_')} (now / before, per document)", ratio, f"<= {GOAL}x", ratio <= GOAL,
                   f"{3 * args.items if name == 'PARSA' else args.items} documents: response check + reading + per-item scores")  # fmt: skip

    # linearity: the whole new reading of one answer, 1 kB against 1 MB (prose, JSON, reasoning, a retraction)
    unit = '<think>draft {"answer": 1}</think>Here it is: {"answer": 2} Wait, no. {"answer": 3} "q" ' + "سلام " * 20

    def per_char(size: int) -> float:
        text = (unit * (size // len(unit) + 1))[:size] + "<think>cut"
        doc = {"id": "m", "reference": "3", "options": ["a", "b", "c", "d"]}
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            checked = check(responses, text, doc)
            scoring.score_response("mcqa", doc, checked.answer)
            scoring.score_response("mcqa", doc, text)  # the parser on the whole text, reasoning tags included
            mcga_metrics.strict_mcq_reading(text)
            best = min(best, time.perf_counter() - start)
        return best / size

    small, large = per_char(1_000), per_char(1_000_000)
    print(f"  new reading: {1e6 * small:.3f} us/char at 1 kB, {1e6 * large:.3f} us/char at 1 MB", flush=True)
    figure("answer_reading_time_per_char (1 MB / 1 kB)", large / small, f"<= {LINEAR_GOAL}", large / small <= LINEAR_GOAL, "linear in answer length")
    return 0


if __name__ == "__main__":
    sys.exit(main())
