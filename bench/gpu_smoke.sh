#!/usr/bin/env bash
# GPU smoke check of the real model classes on mcga_asr,parsa_vazn (one command; not run in CI: needs a GPU and weights).
#
#   bench/gpu_smoke.sh OMNI_WEIGHTS QWEN2_AUDIO_WEIGHTS [LIMIT]
#   OMNI_WEIGHTS=/models/Qwen2.5-Omni-7B QWEN2_AUDIO_WEIGHTS=/models/Qwen2-Audio-7B-Instruct bench/gpu_smoke.sh
#
# Weights: local folders in the hub layout (or hub ids when the hub is reachable). LIMIT: documents per task
# (default 20). OUT_DIR: where results go (default out/gpu_smoke). Data: the shipped samples, or set
# MCGA_DATA_DIR / PARSA_DATA_DIR to the real releases. Extra --model_args for every Omni run: OMNI_ARGS
# (e.g. "attn_implementation=flash_attention_2").
#
# Runs, each with --verbosity DEBUG (without it lmms-eval exits 0 on failure):
#   1. --model qwen2_5_omni                 (the plugin's Qwen2_5OmniThinkerChat)
#   2. --model qwen2_5_omni --force_simple  (the plugin's Qwen2_5OmniThinkerSimple)
#   3. --model qwen2_audio                  (lmms-eval's own class)
# and prints, per run: CER (mcga_asr, official, %), accuracy (parsa_vazn), empty and failed answers, wall
# seconds per document (model loading included). Exits non-zero if a run fails, writes no results, or
# returns any empty or failed (placeholder) answer.
set -u -o pipefail
OMNI_WEIGHTS=${1:-${OMNI_WEIGHTS:-}}
QWEN2_AUDIO_WEIGHTS=${2:-${QWEN2_AUDIO_WEIGHTS:-}}
LIMIT=${3:-${LIMIT:-20}}
OUT_DIR=${OUT_DIR:-out/gpu_smoke}
OMNI_ARGS=${OMNI_ARGS:-}
LMMS_EVAL=${LMMS_EVAL:-lmms-eval}
PYTHON=${PYTHON:-python}
if [[ -z "$OMNI_WEIGHTS" || -z "$QWEN2_AUDIO_WEIGHTS" ]]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1} HF_DATASETS_OFFLINE=${HF_DATASETS_OFFLINE:-1}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || echo "warning: nvidia-smi not found" >&2
"$PYTHON" -c "import torch, transformers, lmms_eval; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), '| transformers', transformers.__version__)"

status=0
run() {  # run NAME MODEL MODEL_ARGS [EXTRA...]
  local name=$1 model=$2 args=$3; shift 3
  local out="$OUT_DIR/$name"
  rm -rf "$out"; mkdir -p "$out"
  echo "=== $name: --model $model --model_args $args $*"
  local start=$SECONDS
  "$LMMS_EVAL" --tasks mcga_asr,parsa_vazn --model "$model" --model_args "$args" "$@" --limit "$LIMIT" \
    --output_path "$out" --log_samples --verbosity DEBUG > "$out/log.txt" 2>&1
  local code=$?
  local wall=$((SECONDS - start))
  grep -h "lmms-eval-audio-plugin" "$out/log.txt" | head -1
  if [[ $code -ne 0 ]]; then
    echo "FAIL $name: lmms-eval exited $code; last lines of $out/log.txt:"; tail -30 "$out/log.txt"; status=1; return
  fi
  "$PYTHON" - "$out" "$name" "$wall" <<'PY' || status=1
import json, sys
from pathlib import Path
from audio_bench_core.responses import generation_failure

out, name, wall = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
results_files = sorted(out.rglob("*_results.json"))
if not results_files:
    sys.exit(f"FAIL {name}: no results file under {out}")
results = json.loads(results_files[-1].read_text(encoding="utf-8"))["results"]
docs = bad = 0
for task in ("mcga_asr", "parsa_vazn"):
    answers = []
    for file in out.rglob(f"*_samples_{task}.jsonl"):
        for line in file.read_text(encoding="utf-8").splitlines():
            response = json.loads(line)["filtered_resps"]
            while isinstance(response, list):
                response = response[0] if response else ""
            answers.append(response or "")
    empty = sum(not a.strip() for a in answers)
    failed = [generation_failure(a) for a in answers if generation_failure(a)]
    docs, bad = docs + len(answers), bad + empty + len(failed)
    metric = "cer_official,none" if task == "mcga_asr" else "accuracy,none"
    value = results[task].get(metric)
    shown = f"{value:.2f}" if isinstance(value, (int, float)) else str(value)[:70]
    print(f"{name:22s} {task:11s} {metric.split(',')[0]:13s} {shown}  docs {len(answers):3d}  empty {empty}  failed {len(failed)}"
          + (f"  first failure: {failed[0][:160]}" if failed else "") + (f"  example answer: {answers[0][:80]!r}" if answers else ""))
print(f"{name:22s} {wall:.1f} s wall for {docs} docs = {wall / max(docs, 1):.2f} s/doc (model loading included)")
if bad or not docs:
    sys.exit(f"FAIL {name}: {bad} empty or failed answers of {docs}")
PY
}

run qwen2_5_omni_chat qwen2_5_omni "pretrained=$OMNI_WEIGHTS${OMNI_ARGS:+,$OMNI_ARGS}"
run qwen2_5_omni_simple qwen2_5_omni "pretrained=$OMNI_WEIGHTS${OMNI_ARGS:+,$OMNI_ARGS}" --force_simple
run qwen2_audio qwen2_audio "pretrained=$QWEN2_AUDIO_WEIGHTS"
[[ $status -eq 0 ]] && echo "gpu_smoke: all runs passed" || echo "gpu_smoke: FAILED (see above)"
exit $status
