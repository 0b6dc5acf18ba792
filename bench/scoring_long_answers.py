"""Scoring time per character of answer, from 1 KB to 10 MB answers, on every rule-scored path (issue 20 item 3).

One document per path, scored as a run scores it: the task's ``process_results`` (response checks, answer reading,
per-item metrics), then the task's rule-scored aggregations over that one record (the judge is not configured: judged
metrics return "not computed" at once), then :func:`lmms_eval_tasks.results_writer.bounded_for_samples` of what the
samples file would get. Paths: MCGA asr (official and strict CER), sqa, su (official and strict readers); PARSA asr
(WER, CER, WERfix, loop check), s2tt_fa_en (chrF++, BLEU), emotion (macro-F1), mcqa, ner; MMAC content.

Answer shapes (each made to the target size by repetition; the documents are the shipped samples'):

- ``prose``: words of the task's language with spaces (Persian, Chinese or English);
- ``loop``: a repetition loop of a 3-word phrase (WERfix collapses it; quadratic before: 697 s at 10 MB);
- ``hostile``: what made a path super-linear before: unclosed ``<think>`` tags, ``[``/``{``/``'`` runs, whitespace
  runs after an answer word (``答案`` + spaces), digits.

Figure: per path, time per character at 10 MB over time per character at 1 KB (goal <= 3: flat, allowing for the
fixed per-call cost at 1 KB and cache effects at 10 MB), printed side by side with the times at every size.

Usage: ``python -m bench.scoring_long_answers [--max-mb 10] [--paths mcga_asr,parsa_asr ...]`` (about 3-6 minutes at
10 MB on 2 cores; ``--max-mb 1`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import time

from bench._timing import figure, header

GOAL = 3.0
SIZES_KB = (1, 10, 100, 1000, 10000)
HOSTILE = ("<think>", "[", "{", "'", "答案" + " " * 40, "!" + " " * 40, "1" * 50, "(", "<")


def _mcga_doc(task: str) -> dict:
    from lmms_eval_tasks.mcga import hooks
    from mcga import data

    row = data.load_task_rows(task)[0]
    return {**row, hooks.TASK_FIELD: task, hooks.MODE_FIELD: "audio"}


def _parsa_doc(task: str) -> dict:
    from lmms_eval_tasks.parsa import hooks
    from parsa import data

    doc = data.load_task_docs(task)[0]
    return {**doc, hooks.TASK_FIELD: task, hooks.SETTING_FIELD: "audio", hooks.DEMOS_FIELD: "[]", hooks.SOURCE_FIELD: "sample"}


def _mmac_doc() -> dict:
    from mmac import data

    return data.load_category("content")[0]


def paths() -> dict[str, tuple]:
    """``{path: (process_results, doc, aggregations, prose word, wrapper)}``; ``wrapper`` puts an answer in the JSON the
    task asks for (``"{}"`` for bare answers)."""
    from lmms_eval_tasks.mcga import hooks as mcga
    from lmms_eval_tasks.mmac import hooks as mmac
    from lmms_eval_tasks.parsa import hooks as parsa
    from parsa import scoring

    def parsa_aggs(task):
        return {m: getattr(parsa, f"parsa_agg_{m}") for m in scoring.metric_names(task) if m not in ("comet", "signature")}

    return {
        "mcga_asr": (mcga.mcga_process_results, _mcga_doc("asr"), {"cer_official": mcga.mcga_agg_cer_official, "cer_strict": mcga.mcga_agg_cer_strict}, "床前明月光 ", "{}"),
        "mcga_sqa": (mcga.mcga_process_results, _mcga_doc("sqa"), {}, "玉 ", "{}"),
        "mcga_su": (mcga.mcga_process_results, _mcga_doc("su"), {}, "答案是 B 因为 ", "{}"),
        "parsa_asr": (parsa.parsa_process_results, _parsa_doc("asr"), parsa_aggs("asr"), "امروز هوا آفتابی ", '{{"transcription": "{}"}}'),
        "parsa_s2tt_fa_en": (parsa.parsa_process_results, _parsa_doc("s2tt_fa_en"), parsa_aggs("s2tt_fa_en"), "the weather is sunny ", '{{"translation": "{}"}}'),
        "parsa_emotion": (parsa.parsa_process_results, _parsa_doc("emotion"), parsa_aggs("emotion"), "happy maybe ", '{{"emotion": "{}"}}'),
        "parsa_mcqa": (parsa.parsa_process_results, _parsa_doc("mcqa"), parsa_aggs("mcqa"), "option 2 ", '{{"answer": "{}"}}'),
        "parsa_ner": (parsa.parsa_process_results, _parsa_doc("ner"), parsa_aggs("ner"), "تهران فردا ", '{{"entities": [{{"type": "city", "span": "{}"}}]}}'),
        "mmac_content": (mmac.mmac_process_results, _mmac_doc(), {"caption_length": mmac.mmac_agg_caption_length}, "a man speaks slowly ", "{}"),
    }


def answer(shape: str, word: str, wrapper: str, chars: int) -> str:
    if shape == "prose":
        body = (word * (chars // len(word) + 1))[:chars]
    elif shape == "loop":
        phrase = " ".join(word.split()[:3] or [word]) + " "
        body = (phrase * (chars // len(phrase) + 1))[:chars]
    else:
        unit = "".join(HOSTILE)
        body = (unit * (chars // len(unit) + 1))[:chars]
    return body if wrapper == "{}" else wrapper.format(body.replace('"', "'"))


def score_once(process_results, doc: dict, aggregations: dict, response: str) -> str | None:
    """Score one document; return the scoring error the guard caught (a path that raised is not timed honestly)."""
    from lmms_eval_tasks import results_writer

    result = process_results(doc, [response])
    for name, aggregate in aggregations.items():
        if name in result:
            aggregate([result[name]])
    results_writer.bounded_for_samples({"resps": [response], **result})
    return result["scoring_errors"].get("scoring_error")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mb", type=float, default=10.0)
    parser.add_argument("--paths", default="", help="comma-separated subset of the paths")
    parser.add_argument("--shapes", default="prose,loop,hostile")
    args = parser.parse_args(argv)
    header("scoring time per answer character, 1 KB to 10 MB")
    sizes = [kb for kb in SIZES_KB if kb <= args.max_mb * 1000]
    chosen = paths()
    if args.paths:
        chosen = {k: v for k, v in chosen.items() if k in args.paths.split(",")}
    print(f"  {'path':<18} {'shape':<8} " + " ".join(f"{f'{kb} KB ns/char':>16}" for kb in sizes) + f"  {'ratio':>6}", flush=True)
    lines, worst = [], 0.0
    for name, (process_results, doc, aggregations, word, wrapper) in chosen.items():
        score_once(process_results, doc, aggregations, answer("prose", word, wrapper, 1000))  # warm: imports, tables, caches
        for shape in args.shapes.split(","):
            per_char, errors = [], set()
            for kb in sizes:
                response = answer(shape, word, wrapper, kb * 1000)
                repeats = max(1, min(50, 200 // kb))
                start = time.perf_counter()
                for _ in range(repeats):
                    error = score_once(process_results, doc, aggregations, response)
                    if error:
                        errors.add(f"{kb} KB: {error[:80]}")
                per_char.append((time.perf_counter() - start) / repeats / len(response) * 1e9)
            ratio = per_char[-1] / per_char[0]
            worst = max(worst, ratio)
            lines.append({"path": name, "shape": shape, "ns_per_char": dict(zip(sizes, per_char)), "ratio": ratio, "scoring_errors": sorted(errors)})
            print(f"  {name:<18} {shape:<8} " + " ".join(f"{v:16.1f}" for v in per_char) + f"  {ratio:6.2f}" + (f"  SCORING RAISED {sorted(errors)}" if errors else ""), flush=True)
    raised = [f"{line['path']} {line['shape']}" for line in lines if line["scoring_errors"]]
    figure(f"time per character at {sizes[-1]} KB / at {sizes[0]} KB, worst path", worst, f"<= {GOAL}", worst <= GOAL and not raised,
           f"paths whose scoring raised (excluded, so not timed): {raised}" if raised else "no path raised")  # fmt: skip
    print(json.dumps(lines))
    return 0 if worst <= GOAL and not raised else 1


if __name__ == "__main__":
    raise SystemExit(main())
