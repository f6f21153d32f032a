// Gold: fully annotated training data (EER_GOLD_TRAIN_DATA), supervised CRF likelihood
(import 'common.libsonnet').experiment('gold', 'all')
