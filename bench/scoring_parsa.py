"""PARSA ASR scoring of 1,000 items: ours (every ASR metric, bootstrap intervals included) against its floor,
jiwer's per-item WER with the same normaliser.

Items (deterministic, ``random.Random(SEED)``): references are 4-14 words drawn from Persian sentences (the shipped
sample's and a few more); responses are noisy the way audio LLMs answer: JSON ``{"transcription": ...}`` or raw
text, dropped and substituted words, ZWNJ/space spelling variants, Arabic yeh/kaf, repetition loops of 20 copies,
English refusals (no Persian script: refused), empty answers.

Cases (cold: the normalisation memo is emptied before every repetition):

- ``floor: jiwer.wer per item``: ``jiwer.wer(normalize_persian(ref), normalize_persian(response))`` for every item,
  then the median;
- ``ours: score_response + aggregations``: :func:`parsa.scoring.score_response` (JSON parsing, refusal rule, WER,
  CER, WERfix, loop check) per item, then every ASR metric of :func:`parsa.scoring.metric_names` (median, mean,
  strict, Rep.%, Ref.%, two bootstrap 95 % intervals of 1,000 resamples).

Figure: ours / floor (goal <= 1.5).

Usage: ``python -m bench.scoring_parsa [--items N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys

from bench._timing import alternate, figure, header, report

GOAL = 1.5
SEED = 13
SENTENCES = (
    "امروز هوا آفتابی و گرم است",
    "کتابخانه‌ی شهر ساعت هشت صبح باز می‌شود",
    "لطفاً پنجره را ببندید چون باد سردی می‌وزد",
    "تهران پایتخت ایران است",
    "بچه‌ها در حیاط مدرسه بازی می‌کنند",
    "قطار ساعت نه از ایستگاه حرکت خواهد کرد",
    "بندر‌ها در تابستان شلوغ‌تر می‌شوند",
    "مادرم هر روز صبح نان تازه می‌خرد",
)


def make_items(n: int, seed: int = SEED) -> list[tuple[dict, str]]:
    """``[(doc, response), ...]``: ``n`` PARSA ASR documents and noisy model responses (see the module docstring)."""
    rng = random.Random(seed)
    words = [w for s in SENTENCES for w in s.split()]
    items = []
    for index in range(n):
        reference = " ".join(rng.choice(words) for _ in range(rng.randint(4, 14)))
        hyp = reference.split()
        kind = rng.random()
        if kind < 0.05:
            response = "I'm sorry, I cannot transcribe this audio."
        elif kind < 0.08:
            response = ""
        else:
            for _ in range(rng.randint(0, 3)):
                position = rng.randrange(len(hyp))
                if rng.random() < 0.5:
                    del hyp[position]
                else:
                    hyp[position] = rng.choice(words)
                if not hyp:
                    hyp = [rng.choice(words)]
            text = " ".join(hyp).replace("\u200c", " " if rng.random() < 0.5 else "\u200c").replace("ی", "ي" if rng.random() < 0.2 else "ی")
            if kind > 0.9:
                text += (" " + " ".join(hyp[-3:])) * 20  # a repetition loop
            response = json.dumps({"transcription": text}, ensure_ascii=False) if rng.random() < 0.7 else text
        items.append(({"id": f"asr_{index:05d}", "reference": reference}, response))
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    header(f"PARSA ASR scoring, {args.items} items")
    import jiwer

    from parsa import metrics, scoring
    from parsa.normalize import clear_normalisation_cache, normalize_persian

    items = make_items(args.items)
    names = [m for m in scoring.metric_names("asr") if m != "signature"]

    def floor():
        return statistics.median(jiwer.wer(normalize_persian(doc["reference"]), normalize_persian(response)) for doc, response in items)

    def ours():
        records = [scoring.score_response("asr", doc, response) for doc, response in items]
        return {name: scoring.aggregate("asr", name, records) for name in names}

    result = ours()
    print(f"  ours: wer_median {result['wer_median']:.4f}, ci95 {result['wer_median_ci95']}, scored {result['scored']}, refused {result['refused']}, "
          f"excluded {result['excluded']}, repetition_rate {result['repetition_rate']:.3f}")
    def cold():
        clear_normalisation_cache()
        metrics.clear_bootstrap_cache()

    results = alternate({"floor: jiwer.wer per item": floor, "ours: score_response + aggregations": ours}, args.repeats, setup=cold)
    report(results)
    ratio = results["ours: score_response + aggregations"].wall_median / results["floor: jiwer.wer per item"].wall_median
    figure("parsa_asr_scoring_vs_jiwer (ours / floor)", ratio, f"<= {GOAL}x", ratio <= GOAL, "ours includes CER, WERfix, loop check, JSON parsing and two 1,000-resample bootstrap intervals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
