// The benchmark table of the paper (Table "Benchmark test set F1"), reduced to what a CPU can run:
// CoNLL-2003 English only, the packaged all-MiniLM-L6-v2 encoder, 10 epochs, 3 seeds, the two annotation
// scenarios (EE with 1,000 annotations, NNS) and the approaches of the paper's EE block that matter
// (the paper: RoBERTa-base / mBERT on 7 data sets, 20 epochs (all) / 50 (short, shortest), one sample).
//   allennlp eer-benchmark benchmarks/plans/conll_en_minilm.jsonnet -o runs/bench-conll --jobs 1
// Run from the repository root: the data paths are relative to the current directory.
local data = '../shared/data/conll2003-en/';
{
  name: 'CoNLL-2003 English, all-MiniLM-L6-v2 (reduced CPU version of the paper table)',
  datasets: [
    { name: 'eng-c', train: data + 'train.txt', dev: data + 'dev.txt', test: data + 'test.txt' },
  ],
  scenarios: [
    { name: 'EE', type: 'ee', budget: 1000 },  // keep probability 0.8, at most 10 per document (the paper)
    { name: 'NNS', type: 'nns' },  // recall 0.5, precision 0.9
  ],
  approaches: ['gold', 'raw_shortest', 'raw_cd_shortest', 'cbl_bert_shortest', 'sns_shortest', 'eer_all', 'eer_short', 'eer_shortest'],
  encoders: ['all-MiniLM-L6-v2'],
  seeds: [0, 1, 2],
  epochs: 10,
  env: { EER_BATCH_SIZE: '8' },
  reference: 'sns_shortest',  // the paper's significance marks: better than SNS-shortest (99% paired bootstrap)
  bootstrap: { resamples: 100000, confidence: 0.99, seed: 0 },
}
