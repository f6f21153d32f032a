#!/usr/bin/env bash
# benchmarks/results.sh — the real CPU benchmark behind docs/results.md: the plan
# benchmarks/plans/conll_en_minilm.jsonnet (CoNLL-2003 English from ../shared/data/conll2003-en,
# the packaged all-MiniLM-L6-v2), then docs/results.md and its plots.
#   bash benchmarks/results.sh               # run what is missing (resumable), then render
#   RENDER_ONLY=1 bash benchmarks/results.sh # only render docs/results.md from OUT
# The runs are started in order of importance (Gold and EE first, then the NNS baselines and EER,
# then the learning curve); the last call runs whatever is left of the plan.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PLAN="${PLAN:-benchmarks/plans/conll_en_minilm.jsonnet}"
OUT="$(realpath -m "${OUT:-$ROOT/runs/bench-conll}")"
export PATH="$ROOT/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
bench() { allennlp eer-benchmark "$PLAN" -o "$OUT" "$@"; }
if [ -z "${RENDER_ONLY:-}" ]; then
  bench --runs 'eng-c/gold/*' 'eng-c/EE/*'
  bench --runs 'eng-c/NNS/raw_*' 'eng-c/NNS/eer_short/*' 'eng-c/NNS/sns_shortest/*'
  bench --runs 'eng-c/EE-*' 'eng-c/Exh-*'
  bench
fi
python benchmarks/render_results.py "$PLAN" "$OUT" --command "OUT=$OUT bash benchmarks/results.sh   # runs: allennlp eer-benchmark $PLAN -o $OUT (by priority, see the script)"
