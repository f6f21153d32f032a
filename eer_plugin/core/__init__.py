"""Pure-PyTorch core of eer-ner: tag schemes, the constrained CRF, losses, documents and simulators.

Nothing in this sub-package imports ``allennlp``; the AllenNLP layer (``eer_plugin.data``,
``eer_plugin.models``, ``eer_plugin.predictors``, ``eer_plugin.commands``) wires it up.
"""
