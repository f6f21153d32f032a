// raw, short variant (see common.libsonnet)
(import 'common.libsonnet').experiment('raw', 'short')
