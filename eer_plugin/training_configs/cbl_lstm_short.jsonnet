// CBL-LSTM (Mayhew et al. 2019: constrained binary learning with a BiLSTM over word embeddings), short variant.
// Run with: allennlp cbl training_configs/cbl_lstm_short.jsonnet -s OUT --include-package eer_plugin
(import 'common.libsonnet').experiment('cbl_lstm', 'short')
