#!/usr/bin/env bash
# scripts/demo.sh — the main job on the embedded default: set up .venv, train EER (eer_short) on the
# bundled partially annotated fixture with the packaged all-MiniLM-L6-v2 encoder, evaluate it on the
# fixture dev set, and tag an example document given as raw text. A few minutes on a 2-core CPU.
#   OUT=runs/demo EPOCHS=20 BATCH_SIZE=1 bash scripts/demo.sh
# The terminal shows the steps, AllenNLP's progress bars and the results (metrics, tagged entities);
# AllenNLP's full log (about 1,000 lines of parameter logging per command) goes to $OUT.log, whose
# path is printed. The fixture has two annotated documents, so the demo takes more, smaller steps
# than the paper's settings would (batch size 1, lr 1e-4 instead of 2e-5): enough for rho_hat to come
# down and for sensible predictions in a few minutes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/prepare.sh"
EPOCHS="${EPOCHS:-20}" BATCH_SIZE="${BATCH_SIZE:-1}"  # hyperparameters: given to the training as -o
# the demo's data: the bundled fixtures, named explicitly (the configs have no data defaults)
export EER_TRAIN_DATA="${EER_TRAIN_DATA:-fixtures/conll2003_tiny_partial.jsonl}"
export EER_DEV_DATA="${EER_DEV_DATA:-fixtures/conll2003_tiny_dev.txt}" EER_TEST_DATA="${EER_TEST_DATA:-fixtures/conll2003_tiny_dev.txt}"
OUT="${OUT:-runs/demo}"
LOG="$OUT.log"  # next to the serialization directory: `allennlp train` wants that directory new
ALLENNLP="$VENV/bin/allennlp"
rm -rf "$OUT"
mkdir -p "$(dirname "$LOG")"
: > "$LOG"
STARTED=$SECONDS

# Shows AllenNLP's progress bars (tqdm lines on stderr, drawn with \r) in short: the bar, then the
# loss and rho_hat of AllenNLP's long metric description; drops its log records. Every byte also goes
# to $LOG. Usage: COMMAND 2>&1 | python -c "$SHOW_PROGRESS" LOG
read -r -d '' SHOW_PROGRESS <<'PY' || true
import os, re, sys
log = open(sys.argv[1], "ab")
bar = re.compile(rb"(\d+%\|.*|\d+it \[.*)$")
shown = re.compile(rb"(?<![\w-])(loss|rho_hat): (-?[\d.]+)")
record = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - ")
on_bar, rest = False, b""
phase = [b"", b""]  # from the trainer's log records: "epoch k/n", then "train" or "validate"
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    log.write(chunk)
    log.flush()
    *segments, rest = re.split(rb"(\r|\n)", rest + chunk)
    for text, end in zip(segments[0::2], segments[1::2]):
        epoch = re.search(rb"gradient_descent_trainer - (Epoch \d+/\d+|Training|Validating)$", text)
        if epoch and epoch.group(1).startswith(b"Epoch"):
            number, total = map(int, epoch.group(1).split()[1].split(b"/"))
            phase[0] = b"epoch %d/%d" % (number + 1, total + 1)
        elif epoch:
            phase[1] = b"train" if epoch.group(1) == b"Training" else b"validate"
        elif b"will be evaluated using the best epoch weights" in text:
            phase[:] = [b"test", b"(best epoch)"]
        text = record.split(text)[0]  # a log record may follow a bar on the same line
        found = bar.search(text)
        if found:
            description = text[: found.start()]
            if b"||" in description:  # AllenNLP's metrics: a training loop's or an evaluation's
                label = b" ".join(phase) if phase[0] else b"evaluate"
            else:
                label = description.rstrip(b": ")
            values = b"  ".join(b"%s %s" % m for m in shown.findall(description))
            line = (label + b": " if label else b"") + found.group(1) + b"  " + values
            sys.stderr.buffer.write(b"\r  " + line.strip()[:110] + b"\033[K")
            on_bar = True
        elif end == b"\n" and on_bar and not text.strip():
            sys.stderr.buffer.write(b"\n")
            on_bar = False
        sys.stderr.flush()
if on_bar:
    sys.stderr.buffer.write(b"\n")
PY

# run STEP-NAME COMMAND...: the command's output (AllenNLP's log and bars) to $LOG, its progress bars to
# the terminal; on failure, the end of the log and its path.
run() {
  local name="$1"
  shift
  printf '\n=== %s: %s\n' "$name" "$*" >> "$LOG"
  if ! "$@" 2>&1 | "$VENV/bin/python" -c "$SHOW_PROGRESS" "$LOG"; then
    echo "demo: $name failed; the last lines of the full log $LOG:" >&2
    tail -n 25 "$LOG" >&2
    exit 1
  fi
}

echo "full AllenNLP log: $LOG"
echo "[1/3] train training_configs/eer_short.jsonnet ($EPOCHS epochs, batch size $BATCH_SIZE) -> $OUT"
run train "$ALLENNLP" train training_configs/eer_short.jsonnet --include-package eer_plugin -s "$OUT" \
  -o "{\"trainer.optimizer.lr\": 1e-4, \"trainer.num_epochs\": $EPOCHS, \"data_loader.batch_sampler.batch_size\": $BATCH_SIZE}"
echo "[2/3] evaluate on fixtures/conll2003_tiny_dev.txt"
run evaluate "$ALLENNLP" evaluate "$OUT/model.tar.gz" fixtures/conll2003_tiny_dev.txt --include-package eer_plugin \
  --output-file "$OUT/dev_metrics.json"
echo "[3/3] tag fixtures/example_document.jsonl"
run predict "$ALLENNLP" predict "$OUT/model.tar.gz" fixtures/example_document.jsonl --predictor eer_tagger \
  --include-package eer_plugin --output-file "$OUT/predictions.jsonl" --silent
echo
"$VENV/bin/python" - "$OUT" "$LOG" "$((SECONDS - STARTED))" <<'PY'
import json, sys
out, log, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
train = json.load(open(f"{out}/metrics.json"))
print(f"== results ({seconds // 60} min {seconds % 60} s)")
print(f"training: {train['epoch'] + 1} epochs ({train['training_duration']}), best epoch {train['best_epoch'] + 1}, "
      f"final training rho_hat {train['training_rho_hat']:.3f}")
metrics = json.load(open(f"{out}/dev_metrics.json"))
print("dev  P {precision-overall:.3f}  R {recall-overall:.3f}  F1 {f1-measure-overall:.3f}  rho_hat {rho_hat:.3f}".format(**metrics))
for line in open(f"{out}/predictions.jsonl"):
    doc = json.loads(line)
    print(f"document {doc['id']!r}: {len(doc['tokens'])} tokens, {len(doc['spans'])} entities")
    for span in doc["spans"]:
        where = f"chars {span['char_start']}-{span['char_end']}" if "char_start" in span else f"words {span['start']}-{span['end']}"
        print(f"  {span['type']:5s} {span['text']!r} {where} p={span['probability']:.2f}")
print(f"model: {out}/model.tar.gz; full AllenNLP log: {log}")
PY
