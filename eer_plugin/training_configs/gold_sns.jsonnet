// Gold-SNS: the SNS span model (Li et al. 2021) on fully annotated training data (EER_GOLD_TRAIN_DATA),
// the paper's Gold-SNS-BERT row (see common.libsonnet)
(import 'common.libsonnet').experiment('gold_sns', 'all')
