// SNS (Li et al. 2021 span negative sampling), all variant, on sentences (see common.libsonnet)
(import 'common.libsonnet').experiment('sns', 'all')
