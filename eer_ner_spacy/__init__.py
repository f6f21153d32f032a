"""The spaCy factory ``eer_ner`` of eer-ner, registered through the ``spacy_factories`` entry point.

spaCy imports every ``spacy_factories`` entry point whenever it builds a pipeline, so this module
imports spaCy only: the component (:mod:`eer_plugin.spacy_component`, which loads the model with
AllenNLP) is imported when a pipeline adds ``eer_ner``.
"""
from spacy.language import Language


@Language.factory(
    "eer_ner",
    default_config={"batch_size": 8, "spans_key": "eer_ner"},
    assigns=["doc.ents", "doc.spans"],
)
def make_eer_ner(nlp: Language, name: str, model: str, batch_size: int, spans_key: str):
    """``nlp.add_pipe("eer_ner", config={"model": "model.tar.gz"})``: see :mod:`eer_plugin.spacy_component`."""
    from eer_plugin.spacy_component import EntityTaggerComponent

    return EntityTaggerComponent(nlp, name, model=model, batch_size=batch_size, spans_key=spans_key)
