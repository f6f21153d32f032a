// SNS (Li et al. 2021 span negative sampling), short variant, on sentences (see common.libsonnet)
(import 'common.libsonnet').experiment('sns', 'short')
