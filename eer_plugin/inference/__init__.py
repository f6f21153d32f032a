"""Inference without AllenNLP: text -> subword chunks (:mod:`~eer_plugin.inference.subwords`,
:mod:`~eer_plugin.inference.chunking`) -> the encoder in its precision
(:mod:`~eer_plugin.inference.precision`) -> CRF spans and probabilities
(:mod:`~eer_plugin.inference.decoding`) -> tagged documents (:mod:`~eer_plugin.inference.documents`),
and the exported model that runs them with torch, transformers and safetensors only
(:mod:`~eer_plugin.inference.exported`). The AllenNLP roles build on it (the reader chunks, the taggers
decode and the predictor tags documents through these modules), so both paths tag alike. No AllenNLP
import; builds on :mod:`eer_plugin.core`, :mod:`eer_plugin.corpus` and the errors of :mod:`eer_plugin.runtime`."""
