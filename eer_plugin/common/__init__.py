"""The ground floor, below everything else and without AllenNLP: how eer-ner writes files (the output
policy and the one atomic write, :mod:`eer_plugin.common.outputs`; torch saves, links and JSON on top of it,
:mod:`eer_plugin.common.atomic`) and the root of its user errors (:mod:`eer_plugin.common.errors`)."""
