// eer, shortest variant (see common.libsonnet)
(import 'common.libsonnet').experiment('eer', 'shortest')
