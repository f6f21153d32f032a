// SNS (Li et al. 2021 span negative sampling), shortest variant, on sentences (see common.libsonnet)
(import 'common.libsonnet').experiment('sns', 'shortest')
