// CBL-LSTM (Mayhew et al. 2019: constrained binary learning with a BiLSTM over word embeddings), shortest variant.
// Run with: allennlp cbl training_configs/cbl_lstm_shortest.jsonnet -s OUT --include-package eer_plugin
(import 'common.libsonnet').experiment('cbl_lstm', 'shortest')
