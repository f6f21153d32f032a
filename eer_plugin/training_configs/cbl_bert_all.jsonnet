// CBL-BERT (Mayhew et al. 2019 constrained binary learning), all variant. Run with:
//   allennlp cbl training_configs/cbl_bert_all.jsonnet -s OUT --include-package eer_plugin
(import 'common.libsonnet').experiment('cbl', 'all')
