"""Cost of ``audio-bench-compare`` on a full MCGA + PARSA-Bench run pair: every comparison (all headline metrics,
10,000 resamples each) against scoring the two runs once.

Runs are synthesized from per-document values at the releases' sizes (no CLI, no audio): MCGA ASR/SQA/SU/SR 1,000
documents each (ASR texts in 915 clusters, as the release: tests/release_shaped_mcga.py), every PARSA task at its
``eval_items`` (parsa/tasks.py). Run B is run A with ~20 % of the documents answered otherwise. Per-document values
have the shapes the hooks log (MCGA ``{"key", "id", "ref", "output"}`` items and 0/100 scores; PARSA
:func:`parsa.scoring.score_response` records).

Figures (bench/_timing.py: the two cases alternate, ``--repeats`` times, medians compared): the wall and CPU time of
every comparison, absolute (goal: under 10 s in all) and over the time to compute every compared figure of both runs
once with the benchmarks' own aggregations (``mcga.metrics``, ``parsa.scoring.aggregate``); peak traced memory
(``tracemalloc``) of mcga_asr + parsa_emotion at 1,000 and 10,000 resamples (goal: flat). Both runs are synthesized
and compared once before timing, so one-off imports (scipy.stats, sacrebleu) are in neither case. Two BLAS threads
(the CI machine's 2 cores; the resampling itself asks for one, audio_bench_report/stats.py).

Usage: ``python -m bench.compare_speed [--resamples N] [--repeats N]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import argparse
import random
import tracemalloc

from audio_bench_report import compare as cmp

CLAUSES = ("床前明月光", "疑是地上霜", "举头望明月", "低头思故乡", "关关雎鸠", "在河之洲", "窈窕淑女", "君子好逑", "明月几时有", "把酒问青天")
WORDS = ("امروز", "هوا", "آفتابی", "گرم", "است", "کتاب", "شهر", "باز", "می‌شود", "تهران")


def _mcga(rng: random.Random, changed: bool) -> dict[str, cmp.TaskDocs]:
    out = {}
    ids = [f"t{n}" for n in range(915)] + [f"t{rng.randrange(915)}" for _ in range(85)]
    asr = {}
    for n, text_id in enumerate(ids):
        ref = "，".join(rng.sample(CLAUSES, 3)) + "。"
        output = ref if rng.random() < 0.5 else ref[: rng.randrange(1, len(ref))]
        if changed and n % 5 == 0:
            output = ref
        item = {"key": f"upload/s/{n}.wav", "id": text_id, "ref": ref, "output": output}
        asr[str(n)] = {"doc_id": n, "cer_official": item, "cer_strict": item}
    out["mcga_asr"] = cmp.TaskDocs("sha256:bench", asr, None)
    for task, metrics in (("mcga_su", ("acc_official", "acc_strict")), ("mcga_sr", ("acc_official", "acc_strict")), ("mcga_sqa", ("f1_official",))):
        docs = {}
        for n in range(1000):
            right = rng.random() < (0.7 if changed and n % 5 == 0 else 0.5)
            docs[str(n)] = {"doc_id": n, **{m: 100.0 * right for m in metrics}}
        out[task] = cmp.TaskDocs("sha256:bench", docs, None)
    return out


def _parsa_record(rng: random.Random, task: str, spec, n: int) -> dict:
    status = "scored" if rng.random() < 0.9 else "excluded"
    record = {"task": task, "id": f"{task}_{n}", "status": status, "reason": "", "out_of_set": None}
    if spec.kind == "asr":
        record.update(wer=rng.random() if status == "scored" else None)
    elif spec.kind == "translation":
        gold = " ".join(rng.choices(WORDS, k=8))
        record.update(gold=gold, prediction=" ".join(rng.choices(WORDS, k=8)) if status == "scored" else None)
    elif spec.kind == "ner":
        n_gold = rng.randrange(4)
        record.update(matches=rng.randrange(n_gold + 1) if status == "scored" else 0, n_predicted=n_gold if status == "scored" else 0, n_gold=n_gold)
    elif spec.kind == "classification":
        gold, predicted = rng.choice(spec.labels), rng.choice(spec.labels)
        record.update(gold=gold, prediction=predicted if status == "scored" else None, correct=gold == predicted if status == "scored" else None)
    else:
        gold, predicted = rng.randrange(1, spec.n_options + 1), rng.randrange(1, spec.n_options + 1)
        scored = status == "scored"
        record.update(gold=gold, prediction=predicted if scored else None, correct=gold == predicted if scored else None, gold_option=f"option {gold}",
                      predicted_option=f"option {predicted}" if scored else None)  # fmt: skip
    return record


def _parsa(rng: random.Random) -> tuple[dict[str, cmp.TaskDocs], dict[str, cmp.TaskDocs]]:
    """PARSA runs A and B: B's record of a document is A's (same gold) with about 20 % of answers drawn again."""
    from parsa import scoring
    from parsa.tasks import TASKS

    a, b = {}, {}
    for task, spec in TASKS.items():
        docs_a, docs_b = {}, {}
        for n in range(spec.eval_items):
            record = _parsa_record(rng, task, spec, n)
            other = dict(record)
            if rng.random() < 0.2:
                fresh = _parsa_record(rng, task, spec, n)
                other.update({k: v for k, v in fresh.items() if k not in ("gold", "n_gold", "gold_option")})
                if "correct" in other and other["status"] == "scored":
                    other["correct"] = other["prediction"] == other["gold"]
                if "matches" in other:
                    other["matches"] = min(other["matches"], other["n_gold"])
            docs_a[str(n)] = {"doc_id": n, **{m: record for m in scoring.metric_names(task)}}
            docs_b[str(n)] = {"doc_id": n, **{m: other for m in scoring.metric_names(task)}}
        a[f"parsa_{task}"], b[f"parsa_{task}"] = cmp.TaskDocs("sha256:bench", docs_a, None), cmp.TaskDocs("sha256:bench", docs_b, None)
    return a, b


def runs() -> tuple[dict, dict]:
    """Runs A and B: ``{task: TaskDocs}`` over the same documents (same seed for the references)."""
    parsa_a, parsa_b = _parsa(random.Random(2))
    return {**_mcga(random.Random(1), False), **parsa_a}, {**_mcga(random.Random(1), True), **parsa_b}


def score_once(a: dict, b: dict) -> None:
    """Every compared figure of both runs, once, with the benchmarks' own aggregations."""
    from mcga import metrics as mcga_metrics
    from parsa import scoring

    for run in (a, b):
        items = [s["cer_official"] for s in run["mcga_asr"].samples.values()]
        refs, outputs = [i["ref"] for i in items], [i["output"] for i in items]
        mcga_metrics.official_cer_percent(refs, outputs)
        mcga_metrics.strict_cer_percent(refs, outputs)
        for task in ("mcga_su", "mcga_sr", "mcga_sqa"):
            for metric in ("acc_official", "acc_strict", "f1_official"):
                values = [s[metric] for s in run[task].samples.values() if metric in s]
                sum(values) / max(len(values), 1)
        for task, docs in run.items():
            if task.startswith("parsa_"):
                records = [next(v for v in s.values() if isinstance(v, dict)) for s in docs.samples.values()]
                for measure in cmp.measures_for(task):
                    scoring.aggregate(task.removeprefix("parsa_"), measure.metric, records)


def compare_all(a: dict, b: dict, resamples: int) -> int:
    count = 0
    for task, docs in a.items():
        rows, _ = cmp.compare_task(task, docs, b[task], resamples, 0)
        count += len(rows)
    return count


def peak_traced_mib(a: dict, b: dict, tasks: tuple[str, ...], resamples: int) -> float:
    """Peak ``tracemalloc`` memory (MiB) of comparing ``tasks`` at ``resamples``."""
    tracemalloc.start()
    compare_all({t: a[t] for t in tasks}, {t: b[t] for t in tasks}, resamples)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def main() -> None:
    from bench._timing import alternate, figure, header, report

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    header("audio-bench-compare: every comparison of a full MCGA + PARSA-Bench pair")
    a, b = runs()
    count = compare_all(a, b, 50)  # untimed: imports
    score_once(a, b)
    results = alternate({"score both runs once": lambda: score_once(a, b), "every comparison": lambda: compare_all(a, b, args.resamples)}, args.repeats)
    report(results)
    once, every = results["score both runs once"], results["every comparison"]
    docs = sum(len(t.samples) for t in a.values())
    figure(f"compare_seconds ({count} comparisons, {len(a)} tasks, {docs} documents per run, {args.resamples} resamples each)", every.wall_median, "< 10 s",
           every.wall_median < 10, f"CPU {every.cpu_median:.2f} s; walls {', '.join(f'{w:.2f}' for w in every.wall)} s")  # fmt: skip
    figure("compare_vs_scoring_once (every comparison / scoring both runs once, wall)", every.wall_median / once.wall_median, "none (issue 26 measures it as this ratio)",
           None, f"{every.wall_median:.2f} s / {once.wall_median:.2f} s; by CPU {every.cpu_median / once.cpu_median:.2f}x")  # fmt: skip
    tasks = ("mcga_asr", "parsa_emotion")
    peaks = {r: peak_traced_mib(a, b, tasks, r) for r in (1000, 10_000)}
    growth = (peaks[10_000] - peaks[1000]) * 2**20 / 9000
    figure("compare_peak_memory_growth (peak traced memory at 10,000 / 1,000 resamples, mcga_asr + parsa_emotion)", peaks[10_000] / peaks[1000],
           "flat (<= 1.25)", peaks[10_000] / peaks[1000] <= 1.25, f"{peaks[1000]:.1f} MiB -> {peaks[10_000]:.1f} MiB: {growth:.0f} bytes per resample "
           "(the kept differences, 8 bytes per resample per figure and test)")  # fmt: skip


if __name__ == "__main__":
    main()
