#!/usr/bin/env bash
# scripts/demo.sh — the main job on the embedded default: set up .venv, train EER (eer_short) on the
# bundled partially annotated fixture with the packaged all-MiniLM-L6-v2 encoder, evaluate it on the
# fixture dev set, and tag an example document given as raw text. A few minutes on a 2-core CPU.
#   OUT=runs/demo EER_EPOCHS=20 bash scripts/demo.sh
# The fixture has two annotated documents, so the demo takes more, smaller steps than the paper's
# settings would (batch size 1, lr 1e-4 instead of 2e-5): enough for rho_hat to come down and for
# sensible predictions in a few minutes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/prepare.sh"
export EER_EPOCHS="${EER_EPOCHS:-20}" EER_BATCH_SIZE="${EER_BATCH_SIZE:-1}"
OUT="${OUT:-runs/demo}"
ALLENNLP="$VENV/bin/allennlp"
rm -rf "$OUT"
echo "== train: training_configs/eer_short.jsonnet ($EER_EPOCHS epochs) -> $OUT"
"$ALLENNLP" train training_configs/eer_short.jsonnet --include-package eer_plugin -s "$OUT" \
  -o '{"trainer.optimizer.lr": 1e-4}'
echo "== evaluate on fixtures/conll2003_tiny_dev.txt"
"$ALLENNLP" evaluate "$OUT/model.tar.gz" fixtures/conll2003_tiny_dev.txt --include-package eer_plugin \
  --output-file "$OUT/dev_metrics.json"
echo "== predict on fixtures/example_document.jsonl"
"$ALLENNLP" predict "$OUT/model.tar.gz" fixtures/example_document.jsonl --predictor eer_tagger \
  --include-package eer_plugin --output-file "$OUT/predictions.jsonl" --silent
"$VENV/bin/python" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
metrics = json.load(open(f"{out}/dev_metrics.json"))
print("dev  P {precision-overall:.3f}  R {recall-overall:.3f}  F1 {f1-measure-overall:.3f}  rho_hat {rho_hat:.3f}".format(**metrics))
for line in open(f"{out}/predictions.jsonl"):
    doc = json.loads(line)
    print(f"document {doc['id']!r}: {len(doc['tokens'])} tokens, {len(doc['spans'])} entities")
    for span in doc["spans"]:
        where = f"chars {span['char_start']}-{span['char_end']}" if "char_start" in span else f"words {span['start']}-{span['end']}"
        print(f"  {span['type']:5s} {span['text']!r} {where} p={span['probability']:.2f}")
PY
