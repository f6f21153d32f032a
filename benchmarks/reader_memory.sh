#!/usr/bin/env bash
# benchmarks/reader_memory.sh — the peak memory of every corpus command on generated inputs, and a check that two
# versions of the package write the same bytes (the numbers of docs/data.md, "Large files: memory").
#
#   python benchmarks/reader_inputs.py INPUTS 10              # the inputs, about 10 MB of words per kind
#   bash benchmarks/reader_memory.sh INPUTS OUT [CODE]        # each command into OUT/<command>/, with OUT/measure.tsv:
#                                                             # command, peak RSS (KB, GNU time), seconds, exit status
#   bash benchmarks/reader_memory.sh --compare OUT_A OUT_B    # every output file, stdout and status the same bytes
#
# CODE is a checkout of the package to run instead of this one (put first on PYTHONPATH), e.g. the version before a
# change: git archive main | tar -x -C /tmp/main-code. Needs GNU time (/usr/bin/time). ONLY="split-conll ..." runs
# those commands alone. Run it in the idle class beside a training (chrt -i 0 or nice -n 15).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${VENV:-$HERE/.venv}/bin/python"

compare() {  # compare A B
  local bad=0 name files
  for dir in "$2"/*/; do
    name=$(basename "$dir")
    [ -d "$1/$name" ] || { echo "$name: not in $1"; bad=1; continue; }
    files=$(cd "$1/$name" && find . -type f ! -name time.txt ! -name stderr.txt | sort)
    if [ "$files" != "$(cd "$2/$name" && find . -type f ! -name time.txt ! -name stderr.txt | sort)" ]; then
      echo "$name: other files"; bad=1; continue
    fi
    for f in $files; do cmp -s "$1/$name/$f" "$2/$name/$f" || { echo "$name: $f differs"; bad=1; }; done
    cmp -s "$1/$name/stderr.txt" "$2/$name/stderr.txt" || echo "$name: stderr differs (log lines; see the files)"
    echo "$name: $(echo "$files" | wc -l) files compared"
  done
  return $bad
}

if [ "${1:-}" = "--compare" ]; then
  compare "$2" "$3"
  exit
fi
IN=$(realpath "$1"); OUT=$(realpath -m "$2"); CODE=$(realpath "${3:-$HERE}")
mkdir -p "$OUT"
run() {  # run NAME ARGUMENTS...: eer-ner ARGUMENTS in OUT/NAME
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  rm -rf "${OUT:?}/$name"; mkdir -p "$OUT/$name"
  local start=$SECONDS
  (cd "$OUT/$name" && PYTHONPATH=$CODE HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 /usr/bin/time -f '%M' -o time.txt \
    "$PY" -m eer_plugin.cli "$@" > stdout.txt 2> stderr.txt; echo $? > status.txt)
  printf '%s\t%s\t%s\t%s\n' "$name" "$(tail -1 "$OUT/$name/time.txt")" "$((SECONDS - start))" \
    "$(cat "$OUT/$name/status.txt")" | tee -a "$OUT/measure.tsv"
}
run inspect-jsonl eer-inspect "$IN/partial.jsonl" --encoder none --json
run inspect-conll eer-inspect "$IN/corpus.conll" --encoder none --json
run inspect-grouped eer-inspect "$IN/grouped.conll" --encoder none --json
run inspect-conll-subwords eer-inspect "$IN/corpus.conll" --json
run import-doccano eer-import doccano "$IN/doccano.jsonl" out.jsonl --report report.json \
  --complete-output complete.jsonl --complete-ids "$IN/ids.txt"
run import-prodigy eer-import prodigy "$IN/prodigy.jsonl" out.jsonl --report report.json
run import-label-studio eer-import label-studio "$IN/labelstudio.json" out.jsonl --report report.json --complete
run import-brat eer-import brat "$IN/brat" out.jsonl --report report.json
run import-spacy eer-import spacy "$IN/docbin.spacy" out.jsonl --report report.json
run split-jsonl eer-split "$IN/partial.jsonl" train.jsonl dev.jsonl --dev-fraction 0.2 --seed 3
run split-jsonl-complete eer-split "$IN/partial.jsonl" train.jsonl dev.jsonl --complete-only --seed 1
run split-conll eer-split "$IN/corpus.conll" train.jsonl dev.jsonl
run split-grouped eer-split "$IN/grouped.conll" train.jsonl dev.jsonl --seed 5
run dictionary-conll eer-dictionary "$IN/corpus.conll" out.jsonl --dictionary "$IN/names.tsv" --report report.json
run dictionary-grouped eer-dictionary "$IN/grouped.conll" out.jsonl --dictionary "$IN/names.tsv"
run export-doccano eer-export doccano "$IN/predictions.jsonl" out.jsonl
run export-label-studio eer-export label-studio "$IN/predictions.jsonl" out.json
run export-prodigy eer-export prodigy "$IN/predictions.jsonl" out.jsonl
run export-brat eer-export brat "$IN/predictions.jsonl" outdir
run shard eer-shard "$IN/raw.jsonl" shards --shards 4
run merge eer-merge "$OUT/shard/shards/raw.shards.json" merged.jsonl "$OUT"/shard/shards/raw.shard-0{0,1,2,3}-of-04.jsonl
run simulate-ee eer-simulate ee "$IN/corpus.conll" out.jsonl --seed 2
run simulate-jsonl eer-simulate gold "$IN/partial.jsonl" out.jsonl
run estimate-ratio eer-estimate-ratio "$IN/partial.jsonl" --partial "$IN/partial.jsonl" --output ratio.json
