// eer, all variant (see common.libsonnet)
(import 'common.libsonnet').experiment('eer', 'all')
