#!/usr/bin/env bash
# benchmarks/results.sh — the real CPU benchmark behind docs/results.md: the plan
# benchmarks/plans/conll_en_minilm.jsonnet (CoNLL-2003 English from ../shared/data/conll2003-en,
# the packaged all-MiniLM-L6-v2), then docs/results.md and its plots and CSV files (docs/results/),
# written by `allennlp eer-benchmark --report-only --docs docs` (eer_benchmark/report/docs.py).
#   bash benchmarks/results.sh               # run what is missing (resumable), then render
#   RENDER_ONLY=1 bash benchmarks/results.sh # only render docs/results.md from OUT
#   RESULTS_NOTES=$'one remark\nanother' ...  # remarks quoted into docs/results.md
#   docs/results/notes.txt: the same, one remark per line, committed (read before RESULTS_NOTES)
#   PLAN=... OUT=... DOCS=... bash benchmarks/results.sh  # another plan, benchmark directory or docs directory
#   RECORDS=... (default DOCS/results/records.jsonl): where the finished runs' records are kept across sessions
#   CHECKS_FILE=... (default DOCS/results/device_checks.jsonl): records of block runs trained again elsewhere
# The runs are started in order of importance, one block after another (commit docs/ after each):
# Gold, Gold-SNS and the EE block on seed 0, then on seeds 1 and 2 (the 3-seed table), the ablations,
# the NNS block, the learning curve; then the block on all-mpnet-base-v2 (issue 27): EER-short and
# SNS-shortest seed by seed, the recipe pair (estimate, then bind; SNS-shortest on the same data), EER-shortest,
# the NNS pair, the rest (Raw+CD, CBL-BERT, Gold); the last step runs whatever is left of the plan.
#   BLOCK=mpnet bash benchmarks/results.sh    # only the mpnet block's steps (BLOCK=minilm: only the others)
# Stop it at any time: finished runs are kept, and the rendered file says which runs have not finished.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PLAN="${PLAN:-benchmarks/plans/conll_en_minilm.jsonnet}"
OUT="$(realpath -m "${OUT:-$ROOT/runs/bench-conll}")"
SHOWN_OUT="$(realpath -m --relative-to="$ROOT" "$OUT")"  # docs/results.md names no absolute path of this machine
export PATH="$ROOT/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# the gold approaches and the EE block's approaches on the given seeds (a shell pattern), not the ratio grid
main_block() {
  local s="$1"
  echo "--runs 'eng-c/gold/*/*/seed$s' 'eng-c/EE/[!e]*/*/seed$s' 'eng-c/EE/eer_all/*/seed$s' 'eng-c/EE/eer_short/*/seed$s' 'eng-c/EE/eer_shortest/*/seed$s'"
}
MINILM_STEPS=(
  "$(main_block 0)"
  "$(main_block '[12]')"
  "--runs 'eng-c/ablations/*/all-MiniLM-L6-v2/*'"
  "--runs 'eng-c/NNS/*'"
  "--runs 'eng-c/EE-*' 'eng-c/Exh-*'"
)
# the plan's block 'mpnet encoder' (its runs: eng-c/ablations/mpnet-encoder/..., and the recipe's settings with its encoder)
MPNET="eng-c/ablations/mpnet-encoder"
MPNET_STEPS=(
  "--runs '$MPNET/EE/eer_short/*/seed0' '$MPNET/EE/sns_shortest/*/seed0'"
  "--runs '$MPNET/EE/eer_short/*/seed1' '$MPNET/EE/sns_shortest/*/seed1'"
  "--runs '$MPNET/EE/eer_short/*/seed2' '$MPNET/EE/sns_shortest/*/seed2'"
  "--runs 'eng-c/ablations/estimate-then-bind/EE/*/all-mpnet-base-v2/*' 'eng-c/ablations/20-complete-training-documents-plan-s-ratio/EE/*/all-mpnet-base-v2/*'"
  "--runs '$MPNET/EE/eer_shortest/*'"
  "--runs '$MPNET/NNS/*' 'eng-c/ablations/binding-ratio-control/NNS/eer_short/all-mpnet-base-v2/*'"
  "--runs '$MPNET/*'"
)
case "${BLOCK:-}" in
  "") STEPS=("${MINILM_STEPS[@]}" "${MPNET_STEPS[@]}" "") ;;
  minilm) STEPS=("${MINILM_STEPS[@]}") ;;
  mpnet) STEPS=("${MPNET_STEPS[@]}") ;;
  *) echo "error: BLOCK=${BLOCK} is not a block of this script; use BLOCK=mpnet or BLOCK=minilm (or no BLOCK: all steps)" >&2; exit 2 ;;
esac
# The records of the finished runs (what the report reads: DONE, result.json, per-document counts, epoch
# metrics, ratio_init/estimate, O-cost, CBL rounds, data statistics; no model, checkpoint or log) are kept in
# RECORDS, one JSON line per run inside the repository's docs (eer_benchmark/run/records.py): a later session,
# on a fresh clone, restores them into OUT (never over a file there) and goes on with the runs that are missing
# instead of repeating finished ones. Commit docs/ after each block.
RECORDS="$(realpath -m "${RECORDS:-${DOCS:-docs}/results/records.jsonl}")"
restore_records() {
  eer-ner eer-records restore "$RECORDS" "$OUT"
}
save_records() {
  eer-ner eer-records save "$OUT" "$RECORDS"
}
restore_records
# a plan with the 'mpnet encoder' ablation needs all-mpnet-base-v2's wheels (idempotent: a stamp check when installed)
if [ -z "${RENDER_ONLY:-}" ] && grep -q "all-mpnet-base-v2" "$PLAN"; then
  EXTRA_ENCODERS=all-mpnet-base-v2 bash scripts/setup_env.sh
fi
COMMANDS=(--command "OUT=$SHOWN_OUT bash benchmarks/results.sh" --command "# runs these steps in order (each skips finished runs):")
show_steps() {  # the docs show every step, whichever BLOCK runs
  local step
  for step in "$@"; do COMMANDS+=(--command "allennlp eer-benchmark $PLAN -o $SHOWN_OUT $step"); done
}
show_steps "${MINILM_STEPS[@]}"
COMMANDS+=(--command "# the block on all-mpnet-base-v2 (BLOCK=mpnet runs only these):")
show_steps "${MPNET_STEPS[@]}"
COMMANDS+=(--command "# whatever is left of the plan:")
show_steps ""
for step in "${STEPS[@]}"; do
  if [ -z "${RENDER_ONLY:-}" ]; then
    eval "allennlp eer-benchmark \"\$PLAN\" -o \"\$OUT\" $step"
    save_records
  fi
done
save_records
# remarks on how the runs went, one per line (e.g. a run that shared the CPU with another job): the committed
# NOTES_FILE (default DOCS/results/notes.txt, kept across sessions), then RESULTS_NOTES
NOTES_FILE="${NOTES_FILE:-${DOCS:-docs}/results/notes.txt}"
NOTES=()
while IFS= read -r line; do [ -n "$line" ] && NOTES+=(--note "$line"); done \
  <<< "$( [ -f "$NOTES_FILE" ] && cat "$NOTES_FILE"; printf '%s\n' "${RESULTS_NOTES:-}" )"
# the report of OUT and docs/results.md (with the paper's numbers beside ours), one code path: eer_benchmark/
# block runs trained again on another machine (a lent GPU: benchmarks/gpu/README.md), set beside the block's own
CHECKS_FILE="${CHECKS_FILE:-${DOCS:-docs}/results/device_checks.jsonl}"
CHECKS=(); [ -f "$CHECKS_FILE" ] && CHECKS=(--checks "$CHECKS_FILE")
# further corpora (issue 53), each PLAN=OUTDIR rendered as a section of docs/results.md and counted in the guide;
# their finished runs' records live in DOCS/results/records-<plan file name>.jsonl (run a corpus's plan with
# `allennlp eer-benchmark PLAN -o OUTDIR --runs ...`, then RENDER_ONLY=1 bash benchmarks/results.sh saves and renders)
CORPORA_LIST="${CORPORA-benchmarks/plans/conll_es_minilm.jsonnet=runs/bench-esp}"
CORPUS_ARGS=()
for corpus in $CORPORA_LIST; do
  corpus_plan="${corpus%%=*}" corpus_out="$(realpath -m "${corpus#*=}")"
  corpus_records="$(realpath -m "${DOCS:-docs}/results/records-$(basename "${corpus_plan%.*}").jsonl")"
  eer-ner eer-records restore "$corpus_records" "$corpus_out"
  [ -d "$corpus_out" ] && eer-ner eer-records save "$corpus_out" "$corpus_records"
  CORPUS_ARGS+=(--corpus "$corpus_plan=$(realpath -m --relative-to="$ROOT" "$corpus_out")")
done
allennlp eer-benchmark "$PLAN" -o "$OUT" --report-only --docs "${DOCS:-docs}" "${COMMANDS[@]}" "${NOTES[@]}" "${CHECKS[@]}" "${CORPUS_ARGS[@]}"
