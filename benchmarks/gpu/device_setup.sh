# Call 1 on the device (README.md): unpack the runtime packages, data and the encoder's small files;
# check the imports and the GPU; with SMOKE=1 also a 1-minute fixture smoke run on GPU 0 (tiny local BERT).
T0=$SECONDS
mkdir -p /tmp/pieces /tmp/eer-models ../shared/data || exit 1
tar -C /tmp -xJf .gpu/p1/site312.tar.xz || exit 1
cp .gpu/p1/piece-00 .gpu/p1/model_planes.py .gpu/p1/device_run.sh /tmp/pieces/
tar -C /tmp/eer-models -xf .gpu/p1/model-small.tar
tar -C ../shared/data -xJf .gpu/p1/conll.tar.xz
mkdir -p /tmp/random-models && tar -C /tmp/random-models -xf .gpu/p1/minilm-small.tar
tar -C /tmp/random-models -xf .gpu/p1/model-small.tar
# the package is not installed there (PYTHONPATH only): its entry points are not either, so the benchmark's
# subcommands are named in .allennlp_plugins, as an installed checkout's entry point group would load them
grep -qx eer_benchmark.allennlp_plugin .allennlp_plugins || echo eer_benchmark.allennlp_plugin >> .allennlp_plugins
export PYTHONPATH=/tmp/site312:$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c "import torch, transformers, tokenizers, numpy; print('torch', torch.__version__, 'CUDA', torch.version.cuda, torch.cuda.get_device_name(0), '| transformers', transformers.__version__, '| tokenizers', tokenizers.__version__, '| numpy', numpy.__version__)"
python3 -c "import allennlp.commands, eer_plugin, allennlp_models.tagging, skopt; print('imports ok')" 2>&1 | tail -5
if [ "${CHECKS:-0}" = 1 ]; then  # issue 52: the CRF's exactness tests on CUDA, then the step-time breakdown
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/core/test_scan.py -k cuda > $OUT/cuda_tests.log 2>&1
  echo "CUDA tests: exit $?"; tail -4 $OUT/cuda_tests.log
  python3 - <<'PY'  # random initialisations of the two architectures (timing only; their tokenizers are real)
from transformers import AutoConfig, AutoModel
for name in ("all-MiniLM-L6-v2", "all-mpnet-base-v2"):
    path = f"/tmp/random-models/{name}"
    AutoModel.from_config(AutoConfig.from_pretrained(path)).save_pretrained(path, safe_serialization=True)
PY
  timeout 240 python3 benchmarks/speed_report.py --parts breakdown --breakdown-device cuda --threads 4 \
    --breakdown-encoders /tmp/random-models/all-MiniLM-L6-v2,/tmp/random-models/all-mpnet-base-v2 \
    --breakdown-weights "random initialisation of the architecture (timing only)" --json $OUT/speed_gpu.json \
    > $OUT/breakdown.log 2>&1
  echo "breakdown: exit $?"; grep -A12 "encoder, device" $OUT/breakdown.log; tail -3 $OUT/breakdown.log
fi
[ "${SMOKE:-0}" = 1 ] || { echo "call 1: $((SECONDS-T0)) s (no smoke run)"; exit 0; }
python3 -c "from tests.conftest import build_tiny_encoder; from pathlib import Path; build_tiny_encoder(Path('/tmp/tiny'))"
EER_ENCODER=/tmp/tiny EER_CUDA_DEVICE=0 timeout 150 python3 -m allennlp eer-benchmark benchmarks/plans/fixture_smoke.jsonnet -o /tmp/smoke > $OUT/smoke.log 2>&1; echo "smoke: exit $?"
grep -h '"f1"\|"gpu"' /tmp/smoke/runs/*/*/*/*/seed0/result.json
echo "call 1: $((SECONDS-T0)) s"
