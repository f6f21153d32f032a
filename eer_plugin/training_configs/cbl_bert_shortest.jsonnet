// CBL-BERT (Mayhew et al. 2019 constrained binary learning), shortest variant. Run with:
//   allennlp cbl training_configs/cbl_bert_shortest.jsonnet -s OUT --include-package eer_plugin
(import 'common.libsonnet').experiment('cbl', 'shortest')
