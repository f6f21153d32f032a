#!/usr/bin/env bash
# benchmarks/conll_real_runs.sh — the real CPU runs behind the numbers in docs: CoNLL-2003 English,
# EE-1000 (seed 0), the packaged all-MiniLM-L6-v2 encoder, fewer epochs than the paper (EPOCHS).
#   OUT=/tmp/eer-runs EPOCHS=10 bash benchmarks/conll_real_runs.sh [eer_short raw_shortest raw_cd sns_shortest cbl_bert_shortest]
# Needs ../shared/data/conll2003-en (never copied into the repo). Writes OUT/summary.tsv:
# run, wall seconds, test P/R/F1, final training rho_hat.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DATA="${DATA:-$ROOT/../shared/data/conll2003-en}"
OUT="$(realpath -m "${OUT:-$ROOT/runs/conll}")"
export EER_SEED="${SEED:-0}"
# hyperparameters: given to the trainings as -o (cbl.round_epochs is read by CBL's configs only)
EPOCHS="${EPOCHS:-10}" BATCH_SIZE="${BATCH_SIZE:-8}" CBL_ROUND_EPOCHS="${CBL_ROUND_EPOCHS:-5}"
HYPER="{\"trainer.num_epochs\": $EPOCHS, \"data_loader.batch_sampler.batch_size\": $BATCH_SIZE}"
CBL_HYPER="{\"trainer.num_epochs\": $EPOCHS, \"data_loader.batch_sampler.batch_size\": $BATCH_SIZE, \"cbl.round_epochs\": $CBL_ROUND_EPOCHS}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
ALLENNLP="$ROOT/.venv/bin/allennlp"
PY="$ROOT/.venv/bin/python"
mkdir -p "$OUT"
[ -f "$OUT/ee1000_s0.jsonl" ] || "$ALLENNLP" eer-simulate ee "$DATA/train.txt" "$OUT/ee1000_s0.jsonl" --budget 1000 --seed 0
export EER_TRAIN_DATA="$OUT/ee1000_s0.jsonl" EER_DEV_DATA="$DATA/dev.txt" EER_TEST_DATA="$DATA/test.txt"
export EER_GOLD_TRAIN_DATA="$DATA/train.txt"

record() {  # name seconds serialization_dir
  "$PY" - "$@" >> "$OUT/summary.tsv" <<'PY'
import json, sys
name, seconds, directory = sys.argv[1], float(sys.argv[2]), sys.argv[3]
m = json.load(open(f"{directory}/metrics.json"))
print("\t".join([name, f"{seconds:.0f}", *(f"{m.get(k, float('nan')):.4f}" for k in
      ("test_precision-overall", "test_recall-overall", "test_f1-measure-overall", "training_rho_hat", "test_rho_hat"))]))
PY
}

train() {  # name config
  local name=$1 config=$2 start
  [ -f "$OUT/$name/metrics.json" ] && { echo "== $name: done already"; return; }
  rm -rf "$OUT/$name"; start=$(date +%s)
  echo "== $name: allennlp train training_configs/$config ($EPOCHS epochs)"
  "$ALLENNLP" train "training_configs/$config" -s "$OUT/$name" -o "$HYPER" --include-package eer_plugin > "$OUT/$name.log" 2>&1
  record "$name" $(( $(date +%s) - start )) "$OUT/$name"
}

[ -f "$OUT/summary.tsv" ] || printf "run\tseconds\ttest_P\ttest_R\ttest_F1\ttrain_rho_hat\ttest_rho_hat\n" > "$OUT/summary.tsv"
for run in "${@:-eer_short raw_shortest raw_cd sns_shortest}"; do
  for r in $run; do
    case $r in
      raw_cd)
        train raw_shortest raw_shortest.jsonnet
        [ -f "$OUT/raw_shortest/o_cost.json" ] || { start=$(date +%s)
          "$ALLENNLP" tune-o-cost "$OUT/raw_shortest/model.tar.gz" "$DATA/dev.txt" --test-file "$DATA/test.txt" --include-package eer_plugin > "$OUT/raw_cd.log" 2>&1
          echo "raw_cd tuning seconds: $(( $(date +%s) - start ))" >> "$OUT/raw_cd.log"; }
        tail -4 "$OUT/raw_cd.log";;
      cbl_*)
        [ -f "$OUT/$r/final/metrics.json" ] || { rm -rf "$OUT/$r"; start=$(date +%s)
          echo "== $r: allennlp cbl training_configs/$r.jsonnet (rounds: $CBL_ROUND_EPOCHS epochs, final: $EPOCHS)"
          "$ALLENNLP" cbl "training_configs/$r.jsonnet" -s "$OUT/$r" -o "$CBL_HYPER" --include-package eer_plugin > "$OUT/$r.log" 2>&1
          record "$r" $(( $(date +%s) - start )) "$OUT/$r/final"; };;
      *) train "$r" "$r.jsonnet";;
    esac
  done
done
column -t "$OUT/summary.tsv"
# Markdown report rendered from summary.tsv and the runs' own files (no number typed by hand)
"$PY" - "$OUT" "$EPOCHS" > "$OUT/summary.md" <<'PY'
import csv, json, math, os, platform, sys
from pathlib import Path
out, epochs = Path(sys.argv[1]), sys.argv[2]
rows = list(csv.DictReader(open(out / "summary.tsv"), delimiter="\t"))
print("# CoNLL-2003 English, EE-1000 (seed 0), all-MiniLM-L6-v2 on CPU\n")
print(f"Produced by `benchmarks/conll_real_runs.sh` on {platform.node() or 'this machine'} "
      f"({os.cpu_count()} CPU cores, {platform.processor() or platform.machine()}); word-level test span scores.\n")
print("| run | wall time (s) | epochs | test P | test R | test F1 | final training rho_hat |")
print("|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    run_dir = out / r["run"] / ("final" if r["run"].startswith("cbl_") else "")
    config = json.load(open(run_dir / "config.json")) if (run_dir / "config.json").exists() else {}
    n = config.get("trainer", {}).get("num_epochs", "?")
    rho = float(r["train_rho_hat"])
    rho_text = "n/a (span model)" if math.isnan(rho) else f"{rho:.3f}"
    print(f"| {r['run']} | {r['seconds']} | {n} | {float(r['test_P']):.3f} | {float(r['test_R']):.3f} | "
          f"{float(r['test_F1']):.3f} | {rho_text} |")
cd = out / "raw_shortest" / "o_cost.json"
if cd.exists():
    report = json.load(open(cd))
    t = report.get("test", {})
    print(f"\nRaw+CD-shortest: O-cost {report['o_cost']:.4g} tuned on dev ({len(report['evaluations'])} GP evaluations); "
          f"dev F1 {report['dev_f1']:.3f} (without cost {report['dev_f1_without_cost']:.3f}); "
          f"test P {t.get('precision-overall', float('nan')):.3f} R {t.get('recall-overall', float('nan')):.3f} "
          f"F1 {t.get('f1-measure-overall', float('nan')):.3f} (without cost {report['test_without_cost']['f1-measure-overall']:.3f}).")
for r in rows:
    epochs_files = sorted((out / r["run"]).glob("metrics_epoch_*.json"), key=lambda f: int(f.stem.split("_")[-1]))
    if r["run"].startswith("eer_") and epochs_files:
        print(f"\n{r['run']} per epoch (training rho_hat, dev F1): " + ", ".join(
            f"{json.load(open(f))['training_rho_hat']:.3f}/{json.load(open(f))['validation_f1-measure-overall']:.3f}"
            for f in epochs_files) + ".")
for r in rows:
    if r["run"].startswith("cbl_"):
        log = json.load(open(out / r["run"] / "cbl_rounds.json"))
        print(f"\n{r['run']}: {len(log['rounds'])} binary rounds (annotated ratio {log['annotated_ratio']:.3f} -> {log['entity_ratio']}), "
              f"total {log['total_seconds']:.0f} s, final model {log['final_seconds']:.0f} s.")
PY
cat "$OUT/summary.md"
