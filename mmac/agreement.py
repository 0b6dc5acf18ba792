"""``mmac-agreement``: score the same captions with several LLM judges (and, optionally, humans) and compare.

The paper's robustness check (arXiv 2607.27109, Sec. 3.3, Fig. 4): the captions of all models on a subset
stratified by dimension were scored by four LLM judges and by humans; the five rankings of the models by
Accuracy agreed with Kendall's W = 0.981. This command does the same on logged captions:

    mmac-agreement --run qwen=out/qwen --run gemini=out/gemini --run af=out/af \\
        --judge qwen36=http://localhost:8000/v1,Qwen/Qwen3.6-27B,LOCAL_KEY \\
        --judge deepseek=https://api.deepseek.com,deepseek-chat,DEEPSEEK_API_KEY \\
        [--human human.csv] [--fraction 0.1] [--data DIR] [--json]

- ``--run NAME=PATH``: one model's captions: lmms-eval's logged samples of the MMAC tasks (a folder or
  ``*_samples_mmac_*.jsonl`` files) or ``{"task", "id", "response"}`` jsonl (the ``replay`` format);
- ``--judge NAME=BASE_URL,MODEL,API_KEY_VAR``: an OpenAI-compatible endpoint; the other settings (timeout,
  attempts, concurrency, cache) come from ``AUDIO_JUDGE_*`` (:class:`audio_bench_core.judge.JudgeConfig`),
  so cached replies are reused;
- ``--human CSV``: columns ``model,id,dimension,mentioned,score`` (mentioned 0/1, score normalised to [0, 1],
  empty when not mentioned); it becomes one more rater, and every rater is compared on the (model, id,
  dimension) pairs it covers only;
- ``--fraction F``: judge only a subset stratified by dimension: per dimension the ceil(F x n) samples with the
  smallest sha256 of their id (the same subset for every model and judge).

Reported: each rater's Accuracy / Precision / Coverage per model (category-macro over the categories
present), each rater's ranking of the models, Kendall's W over the rankings (needs >= 3 models), and for
each pair of raters the agreement and Cohen's kappa on the per-sample mention decision.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from audio_bench_core.json_text import json_text
from mmac import data, judging, metrics
from mmac.schema import DIMENSION_CATEGORY


class AgreementError(ValueError):
    """Bad input to the agreement command; the message names the file or argument."""


def read_captions(path: str | Path) -> dict[str, str]:
    """``{sample id: caption}`` from logged lmms-eval samples of MMAC tasks or ``{"task","id","response"}`` jsonl.

    Raises:
        AgreementError: missing path, bad line, no caption, or one id twice.
    """
    path = Path(path)
    files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path] if path.is_file() else []
    if not files:
        raise AgreementError(f"{path}: no jsonl file found")
    captions: dict[str, str] = {}
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise AgreementError(f"{file}:{number}: not valid JSON ({error.msg})") from None
            if isinstance(row.get("accuracy"), dict) and "caption" in row["accuracy"]:  # our logged item
                item = row["accuracy"]
                sample_id, caption = str(item["id"]), "" if item.get("generation_failure") else item["caption"]
            elif {"task", "id", "response"} <= set(row) and str(row["task"]).startswith("mmac_"):
                sample_id, caption = str(row["id"]), str(row["response"] or "").strip()
            else:
                continue
            if sample_id in captions:
                raise AgreementError(f"{file}:{number}: second caption for id {sample_id!r}")
            captions[sample_id] = caption
    if not captions:
        raise AgreementError(f"{path}: no MMAC caption found (expected logged *_samples_mmac_*.jsonl or replay rows of mmac_* tasks)")
    return captions


def stratified_subset(samples: list[dict], fraction: float) -> set[tuple[str, str]]:
    """``{(id, dimension)}``: per dimension the ceil(fraction x n) samples with the smallest sha256 of their id."""
    by_dimension: dict[str, list[str]] = defaultdict(list)
    for sample in samples:
        for target in sample["targets"]:
            by_dimension[target["dimension"]].append(sample["id"])
    chosen = set()
    for dimension, ids in by_dimension.items():
        ordered = sorted(ids, key=lambda i: hashlib.sha256(i.encode("utf-8")).hexdigest())
        chosen |= {(i, dimension) for i in ordered[: math.ceil(fraction * len(ids))]}
    return chosen


def read_human(path: str | Path) -> dict[tuple[str, str, str], tuple[bool, float | None]]:
    """``{(model, id, dimension): (mentioned, score)}`` from the human CSV (see the module docstring).

    Raises:
        AgreementError: a missing column, an unknown dimension, or a bad mentioned/score value (names the line).
    """
    judgments = {}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"model", "id", "dimension", "mentioned", "score"} - set(reader.fieldnames or [])
        if missing:
            raise AgreementError(f"{path}: missing column(s) {sorted(missing)}")
        for number, row in enumerate(reader, start=2):
            where = f"{path}:{number}"
            dimension = row["dimension"].strip()
            if dimension not in DIMENSION_CATEGORY:
                raise AgreementError(f"{where}: unknown dimension {dimension!r}")
            if row["mentioned"].strip() not in ("0", "1"):
                raise AgreementError(f"{where}: mentioned must be 0 or 1, got {row['mentioned']!r}")
            mentioned = row["mentioned"].strip() == "1"
            score = None
            if mentioned:
                try:
                    score = float(row["score"])
                except ValueError:
                    raise AgreementError(f"{where}: score {row['score']!r} is not a number in [0, 1]") from None
                if not 0.0 <= score <= 1.0:
                    raise AgreementError(f"{where}: score {score} outside [0, 1]")
            elif row["score"].strip() not in ("", "0"):
                raise AgreementError(f"{where}: score given for a sample marked not mentioned")
            judgments[(row["model"].strip(), row["id"].strip(), dimension)] = (mentioned, score)
    return judgments


def _judge_config(spec: str):
    from audio_bench_core.judge import JudgeConfig

    name, _, value = spec.partition("=")
    parts = value.split(",")
    if not name or len(parts) != 3 or not all(parts):
        raise AgreementError(f"--judge {spec!r}: expected NAME=BASE_URL,MODEL,API_KEY_VAR")
    base = JudgeConfig.from_env()
    return name, JudgeConfig(**{**base.__dict__, "base_url": parts[0], "model": parts[1], "api_key_var": parts[2]})


def judge_runs(config, runs: dict[str, dict[str, str]], samples: dict[str, dict], keys: list[tuple[str, str, str]]) -> tuple[dict, dict]:
    """Judge every (model, id, dimension) of ``keys`` with one judge.

    Returns:
        ``({key: (mentioned, normalised score) or None when judge_failed}, provenance)``. Empty captions are
        omissions without a call, as in the tasks.
    """
    from audio_bench_core.judge import Judge, JudgeRequest

    rubric = judging.load_rubric()
    client = Judge(config)
    planned, results = [], {}
    for key in keys:
        model, sample_id, dimension = key
        caption = runs[model][sample_id]
        if not caption:
            results[key] = (False, None)
            continue
        label = next(t["label"] for t in samples[sample_id]["targets"] if t["dimension"] == dimension)
        planned.append((key, caption, JudgeRequest.of(judging.judge_messages(dimension, label, caption, rubric))))

    def read(key, caption, final: str) -> judging.Judgment | None:
        try:
            return judging.parse_judge_reply(final, rubric["dimensions"][key[2]]["scale"], caption=caption)
        except judging.InvalidJudgeReply:
            return None

    def check(key, caption):  # the same validity rule as the tasks: only valid verdicts are cached; others asked again
        return lambda final: None if read(key, caption, final) is not None else "invalid judge reply"

    # reply.final: the judge's reply with its reasoning removed (a reasoning that never closed fails the reply)
    replies = client.complete_many(
        [request for _, _, request in planned], description=f"judge {config.model}", validate=[check(key, caption) for key, caption, _ in planned]
    )
    for (key, caption, _), reply in zip(planned, replies):
        judgment = read(key, caption, reply.final) if reply.ok else None
        results[key] = None if judgment is None else (judgment.mentioned, judging.normalized_score(judgment, rubric["dimensions"][key[2]]["scale"]))
    return results, client.provenance()


def rater_scores(judgments: dict[tuple[str, str, str], tuple[bool, float | None] | None], models: list[str]) -> dict[str, dict]:
    """Per model: category-macro Accuracy / Precision / Coverage (percent) over the categories present, and counts."""
    scores = {}
    for model in models:
        outcomes = [metrics.Outcome(key[2], None if value is None else value[0], None if value is None else value[1])
                    for key, value in judgments.items() if key[0] == model]  # fmt: skip
        per_category = metrics.category_scores(metrics.dimension_scores(outcomes))
        scores[model] = {m: metrics.category_macro({c: v[m] for c, v in per_category.items()}) for m in metrics.METRICS}
        scores[model]["categories"] = sorted(per_category)
        scores[model]["judge_failed"] = sum(o.mentioned is None for o in outcomes)
    return scores


def compare(judgments_by_rater: dict[str, dict], models: list[str]) -> dict:
    """Accuracy per model per rater, rankings, Kendall's W and pairwise mention agreement."""
    report: dict = {"raters": {}, "rankings": {}, "pairwise_mention_agreement": {}}
    accuracy = {}
    for rater, judgments in judgments_by_rater.items():
        report["raters"][rater] = rater_scores(judgments, models)
        accuracy[rater] = {m: report["raters"][rater][m]["accuracy"] for m in models}
        if any(v is None for v in accuracy[rater].values()):
            raise AgreementError(f"rater {rater}: no Accuracy for some model ({accuracy[rater]}); every judgment failed?")
        report["rankings"][rater] = metrics.rankings(accuracy[rater])
    report["kendalls_w"] = metrics.kendalls_w(accuracy) if len(models) >= 3 and len(accuracy) >= 2 else None
    if report["kendalls_w"] is None:
        report["kendalls_w_note"] = "needs at least 3 models and 2 raters"
    elif math.isnan(report["kendalls_w"]):  # JSON has no NaN: null and the reason
        report["kendalls_w"], report["kendalls_w_note"] = None, "undefined: every rater gives every model the same score (all tied)"
    raters = list(judgments_by_rater)
    for i, a in enumerate(raters):
        for b in raters[i + 1 :]:
            decided_a = {k: v[0] for k, v in judgments_by_rater[a].items() if v is not None}
            decided_b = {k: v[0] for k, v in judgments_by_rater[b].items() if v is not None}
            report["pairwise_mention_agreement"][f"{a} vs {b}"] = metrics.mention_agreement(decided_a, decided_b)
    return report


def _format(report: dict, models: list[str]) -> str:
    lines = ["Accuracy / Precision / Coverage (percent, category-macro) per model and rater:"]
    for rater, per_model in report["raters"].items():
        for model in models:
            s = per_model[model]
            values = " / ".join("n/a" if s[m] is None else f"{s[m]:.2f}" for m in ("accuracy", "precision", "coverage"))
            lines.append(f"  {rater:>12} {model:>16}: {values}   rank {report['rankings'][rater][model]:g}   judge_failed {s['judge_failed']}")
    w = report["kendalls_w"]
    lines.append(f"Kendall's W over {len(report['rankings'])} rankings of {len(models)} models: " + ("n/a (" + report.get("kendalls_w_note", "") + ")" if w is None else f"{w:.3f}"))
    for pair, value in report["pairwise_mention_agreement"].items():
        kappa = "n/a" if value["cohen_kappa"] is None else f"{value['cohen_kappa']:.3f}"
        agreement = "n/a" if value["agreement"] is None else f"{value['agreement']:.1f}%"
        lines.append(f"Mention agreement {pair}: {agreement} of {value['pairs']} pairs, Cohen's kappa {kappa}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; see the module docstring. Exit 0 on success, 1 on bad input."""
    parser = argparse.ArgumentParser(prog="mmac-agreement", description="Compare MMAC judges (and humans) on the same captions.")
    parser.add_argument("--run", action="append", required=True, metavar="NAME=PATH", help="one model's captions (repeat)")
    parser.add_argument("--judge", action="append", default=[], metavar="NAME=BASE_URL,MODEL,API_KEY_VAR", help="one judge (repeat)")
    parser.add_argument("--human", default=None, help="CSV of human judgments: model,id,dimension,mentioned,score")
    parser.add_argument("--fraction", type=float, default=None, help="judge a subset stratified by dimension (0-1]")
    parser.add_argument("--data", default=None, help="MMAC data folder (default $MMAC_DATA_DIR, else the shipped sample)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        samples = {s["id"]: s for s in data.load_samples(args.data)}
        runs = {}
        for spec in args.run:
            name, _, path = spec.partition("=")
            if not name or not path:
                raise AgreementError(f"--run {spec!r}: expected NAME=PATH")
            runs[name] = read_captions(path)
            unknown = sorted(set(runs[name]) - set(samples))
            if unknown:
                raise AgreementError(f"--run {name}: captions for ids not in the data: {unknown[:10]}")
        models = list(runs)
        common = set.intersection(*(set(c) for c in runs.values()))
        if any(set(c) != common for c in runs.values()):
            raise AgreementError("the runs caption different samples; compare runs over the same samples: " + ", ".join(f"{m}: {len(c)}" for m, c in runs.items()))
        pairs = {(i, t["dimension"]) for i in common for t in samples[i]["targets"]}
        if args.fraction is not None:
            if not 0 < args.fraction <= 1:
                raise AgreementError(f"--fraction {args.fraction}: must be in (0, 1]")
            pairs &= stratified_subset([samples[i] for i in common], args.fraction)
        human = read_human(args.human) if args.human else None
        keys = sorted((m, i, d) for m in models for i, d in pairs)
        if human is not None:
            keys = [k for k in keys if k in human]
            if not keys:
                raise AgreementError(f"{args.human}: covers none of the (model, id, dimension) pairs of the runs")
        raters, provenance = {}, {}
        for spec in args.judge:
            name, config = _judge_config(spec)
            raters[name], provenance[name] = judge_runs(config, runs, samples, keys)
        if human is not None:
            raters["human"] = {k: human[k] for k in keys}
        if len(raters) < 2:
            raise AgreementError("give at least two raters (--judge, and --human)")
        report = compare(raters, models)
    except (AgreementError, data.MMACDataError, judging.RubricError, ValueError, RuntimeError) as error:
        print(f"ERROR {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # one line, as the lmms-eval CLI prints (lmms_eval_tasks/plugin.py)
        print("\nmmac-agreement interrupted (Ctrl-C) while judging. Kept: each judge's replies so far, in its reply cache "
              "(AUDIO_JUDGE_CACHE). Run the same command again to resume from them.", file=sys.stderr)  # fmt: skip
        return 130
    report["judge_provenance"] = provenance
    report["pairs_per_model"] = len(keys) // len(models)
    report["rubric_sha256_16"] = judging.rubric_sha256_16()
    print(json_text(report, indent=1) if args.json else _format(report, models))
    return 0


if __name__ == "__main__":
    sys.exit(main())
