// CBL-LSTM (Mayhew et al. 2019: constrained binary learning with a BiLSTM over word embeddings), all variant.
// Run with: allennlp cbl training_configs/cbl_lstm_all.jsonnet -s OUT --include-package eer_plugin
(import 'common.libsonnet').experiment('cbl_lstm', 'all')
