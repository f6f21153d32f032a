#!/usr/bin/env bash
# benchmarks/open_blocks.sh — the runs that issues 48 and 53 still need, in order of importance, one step after
# another with one job (2 CPU cores: one heavy job at a time). Each step skips finished runs and an interrupted
# run continues from its checkpoint, so after any stop run it again. Start it at a session's start, in the
# background, from a checkout that stays as it is while it runs (a second worktree), e.g.
#   nohup setsid bash benchmarks/open_blocks.sh >> open_blocks.log 2>&1 < /dev/null &
#   bash benchmarks/open_blocks.sh --dry-run      # the steps' runs and their state (done, missing, stale)
# Run other work beside it in the idle scheduling class (`chrt -i 0 make test`): under `nice` alone a test process
# slowed its training steps 3-5 times (docs/benchmark.md).
# It first restores the finished runs' records from docs/results/ (a fresh clone goes on where the last session
# stopped). After a step, from the checkout whose docs/ you commit:
#   eer-ner eer-records save OUT docs/results/records.jsonl
#   RENDER_ONLY=1 bash benchmarks/results.sh && git add docs && git commit -m "Results: ..."
#   EN_OUT=...  the benchmark directory (default runs/bench-conll)
# The steps:
#   1. the dictionary block (issue 48): Dict-20 and Dict-50, EER-shortest, Raw(+CD)-shortest and "estimate, then
#      bind" seed by seed (EER-short and SNS-shortest have their 3 seeds)
#   2. the NNS rows on seeds 1 and 2 (issue 48): EER-short and EER-shortest, fixed and bound; SNS-shortest;
#      Raw+CD-shortest; CBL-BERT-shortest
#   3. seed by seed (issue 53): CoNLL-2002 Spanish (benchmarks/plans/conll_es_minilm.jsonnet, 12 runs a seed, into
#      ES_OUT, default runs/bench-esp), then the learning curve at 500 and 1,000 (MiniLM)
#   4. the learning curve at 1,000 on all-mpnet-base-v2 (issue 53)
#   5. mpnet EE EER-short with another dropout stream, seeds 1 and 2 (issue 53's CPU check of the GPU gap)
# CoNLL-2002 Spanish runs here, all 36 runs on this kind of machine: a lent GPU started it on 2026-11-28 (18 runs),
# no GPU has been lent since, and a block is not split between machines. Those 18 runs are kept as device checks
# (docs/results/device_checks.jsonl), set beside their CPU twins in docs/results.md. Its records:
#   eer-ner eer-records save ES_OUT docs/results/records-conll_es_minilm.jsonl
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# a checkpoint inside an epoch every 10 minutes (a MiniLM one, 271 MB, is written in 1.2 s here: 0.2%): the end
# of a session loses at most that much of a run instead of its epoch so far (the resumed run is the uninterrupted
# one: docs/configs.md)
export EER_CHECKPOINT_SECONDS="${EER_CHECKPOINT_SECONDS:-600}"
EN=benchmarks/plans/conll_en_minilm.jsonnet
EN_OUT="${EN_OUT:-runs/bench-conll}"
ES=benchmarks/plans/conll_es_minilm.jsonnet
ES_OUT="${ES_OUT:-runs/bench-esp}"
ES_RECORDS=docs/results/records-conll_es_minilm.jsonl
EXTRA=("$@")
eer-ner eer-records restore docs/results/records.jsonl "$EN_OUT" || exit
if [ -f "$ES_RECORDS" ]; then eer-ner eer-records restore "$ES_RECORDS" "$ES_OUT" || exit; fi
step() {  # PLAN OUT RUN_PATTERN...
  local plan="$1" out="$2"
  shift 2
  echo "=== $(date -u +%FT%TZ) $plan -> $out: $*"
  allennlp eer-benchmark "$plan" -o "$out" --jobs 1 --runs "$@" "${EXTRA[@]}"
  echo "=== $(date -u +%FT%TZ) exit status $?"
}
BIND_DICT=eng-c/ablations/estimate-then-bind-dictionary
step "$EN" "$EN_OUT" "$BIND_DICT/Dict-*/*/*/seed0" "eng-c/Dict-*/*/*/seed0"
for s in 1 2; do
  for coverage in Dict-20 Dict-50; do
    step "$EN" "$EN_OUT" "eng-c/$coverage/*/*/seed$s" "$BIND_DICT/$coverage/*/*/seed$s"
  done
done
BIND=eng-c/ablations/binding-ratio-control
for s in 1 2; do
  step "$EN" "$EN_OUT" "eng-c/NNS/eer_short/*/seed$s" "eng-c/NNS/eer_shortest/*/seed$s" \
    "$BIND/NNS/eer_short/*/seed$s" "$BIND/NNS/eer_shortest/*/seed$s" "eng-c/NNS/sns_shortest/*/seed$s"
  step "$EN" "$EN_OUT" "eng-c/NNS/raw_cd_shortest/*/seed$s" "eng-c/NNS/cbl_bert_shortest/*/seed$s"
done
MINILM=all-MiniLM-L6-v2
for s in 0 1 2; do
  step "$ES" "$ES_OUT" "esp/*/seed$s"
  step "$EN" "$EN_OUT" "eng-c/EE-500/*/$MINILM/seed$s" "eng-c/EE-1000/*/$MINILM/seed$s" \
    "eng-c/Exh-500/*/$MINILM/seed$s" "eng-c/Exh-1000/*/$MINILM/seed$s" \
    "$BIND/EE-500/*/$MINILM/seed$s" "$BIND/EE-1000/*/$MINILM/seed$s" \
    "$BIND/Exh-500/*/$MINILM/seed$s" "$BIND/Exh-1000/*/$MINILM/seed$s"
done
EXTRA_ENCODERS=all-mpnet-base-v2 bash scripts/setup_env.sh || exit
for s in 0 1 2; do
  step "$EN" "$EN_OUT" "eng-c/EE-1000/*/all-mpnet-base-v2/seed$s" "eng-c/Exh-1000/*/all-mpnet-base-v2/seed$s"
done
step "$EN" "$EN_OUT" "eng-c/ablations/another-dropout-stream/EE/eer_short/all-mpnet-base-v2/*"
echo "=== $(date -u +%FT%TZ) the open blocks' steps are done (runs that failed say so above)"
