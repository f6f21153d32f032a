// The benchmark table of the paper (Table "Benchmark test set F1"), reduced to what a 2-core CPU can
// run in a session (docs/results.md is this plan's report):
//   - CoNLL-2003 English only, the packaged all-MiniLM-L6-v2 encoder (the paper: RoBERTa-base / mBERT, 7 data sets);
//   - epochs scaled to the size of the training data, as the paper's 20 (all) / 50 (short, shortest):
//     2 for runs on (nearly) the whole corpus (Gold, EER-all, every NNS variant: NNS annotates every
//     document, so short and shortest keep 95-100% of the words), 10 for EE short / shortest (6-13%);
//   - batch size 4 chunks (the paper: 14) and a peak learning rate of 5e-5 (the paper: 2e-5), which
//     gives the short runs more and larger updates for their 5x fewer epochs;
//   - seeds [0] (the paper: one sample per setting; add seeds and rerun: finished runs are kept).
//   allennlp eer-benchmark benchmarks/plans/conll_en_minilm.jsonnet -o runs/bench-conll
// Run from the repository root: the data paths are relative to the current directory.
local data = '../shared/data/conll2003-en/';
{
  name: 'CoNLL-2003 English, all-MiniLM-L6-v2 (reduced CPU version of the paper table)',
  datasets: [
    { name: 'eng-c', train: data + 'train.txt', dev: data + 'dev.txt', test: data + 'test.txt' },
  ],
  scenarios: [
    { name: 'EE', type: 'ee', budget: 1000 },  // keep probability 0.8, at most 10 per document (the paper)
    // recall 0.5, precision 0.9; its variants are all ~the whole corpus: 2 epochs, CBL rounds of 1 epoch
    { name: 'NNS', type: 'nns', epochs: 2, env: { EER_CBL_ROUND_EPOCHS: '1' } },
  ],
  approaches: ['gold', 'raw_shortest', 'raw_cd_shortest', 'cbl_bert_shortest', 'sns_shortest', 'eer_all', 'eer_short', 'eer_shortest'],
  encoders: ['all-MiniLM-L6-v2'],
  seeds: [0],
  epochs: { all: 2, short: 10, shortest: 10 },
  env: { EER_BATCH_SIZE: '4', EER_LEARNING_RATE: '5e-5', EER_CBL_ROUND_EPOCHS: '3' },
  reference: 'sns_shortest',  // the paper's significance marks: better than SNS-shortest (99% paired bootstrap)
  bootstrap: { resamples: 100000, confidence: 0.99, seed: 0 },
  // the paper's "Varying EER HPs" table (EER-short on EE, [rho - gamma, rho + gamma]), one seed, a subset of its settings
  ratio_grid: { approach: 'eer_short', scenarios: ['EE'], settings: [[0.15, 0.05], [0.15, 0.0], [0.3, 0.0], [0.25, 0.05], [0.05, 0.05]] },
  // EE vs exhaustive annotation at small budgets (the paper: 100 ... 10,000 and 5 seeds)
  learning_curve: { budgets: [100, 500, 1000], approaches: ['eer_short', 'raw_shortest'] },
}
