"""The maths of eer-ner in plain PyTorch: BILUO tags, the constrained CRF and its forward-backward, the
losses, the ratio control and calibration, subword -> word spans and the span sampling of SNS.

Nothing in this sub-package imports ``allennlp`` or another part of ``eer_plugin``; the corpus
(:mod:`eer_plugin.corpus`), the annotation (:mod:`eer_plugin.annotation`) and the AllenNLP layer
(``eer_plugin.data``, ``eer_plugin.models``, ``eer_plugin.predictors``, ``eer_plugin.training``) build on it.
"""
