// raw, shortest variant (see common.libsonnet)
(import 'common.libsonnet').experiment('raw', 'shortest')
