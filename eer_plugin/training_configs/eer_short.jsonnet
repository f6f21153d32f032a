// eer, short variant (see common.libsonnet)
(import 'common.libsonnet').experiment('eer', 'short')
