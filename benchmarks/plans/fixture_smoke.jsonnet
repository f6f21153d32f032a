// Smoke test of `allennlp eer-benchmark` on the bundled fixtures (minutes on a CPU; the scores mean nothing).
//   allennlp eer-benchmark benchmarks/plans/fixture_smoke.jsonnet -o runs/bench-smoke
// Relative paths are relative to the directory the command runs from: run it from the repository root.
// The encoder comes from the environment variable EER_ENCODER (importing eer_plugin defaults it to the
// packaged all-MiniLM-L6-v2); tests_benchmark/test_benchmark.py sets it to a tiny local BERT.
{
  name: 'fixture smoke test',
  datasets: [
    { name: 'fixture', train: 'fixtures/conll2003_tiny.txt', dev: 'fixtures/conll2003_tiny_dev.txt', test: 'fixtures/conll2003_tiny_dev.txt' },
  ],
  scenarios: [{ name: 'EE-15', type: 'ee', budget: 15 }],
  approaches: ['raw_shortest', 'eer_short'],
  seeds: [0],
  epochs: 1,
  // EER_CUDA_DEVICE from the environment (default -1, the CPU): EER_CUDA_DEVICE=0 smoke-tests GPU 0
  env: { EER_ENCODER: std.extVar('EER_ENCODER'), EER_CUDA_DEVICE: std.extVar('EER_CUDA_DEVICE'), EER_BATCH_SIZE: '4', EER_MAX_LENGTH: '128' },
  reference: 'raw_shortest',
  bootstrap: { resamples: 10000 },
}
