// raw, all variant (see common.libsonnet)
(import 'common.libsonnet').experiment('raw', 'all')
