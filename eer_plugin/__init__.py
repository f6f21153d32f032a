"""eer-ner: named-entity taggers trained from partially annotated text with the Expected Entity Ratio loss.

Importing ``eer_plugin`` only defines the version: it imports no AllenNLP and changes no global state.
:mod:`eer_plugin.allennlp_plugin` registers the AllenNLP components (readers, models, predictors, subcommands)
and installs the patches; ``.allennlp_plugins``, ``--include-package eer_plugin`` and ``eer-ner`` import it.
The maths (:mod:`eer_plugin.core`), the corpus (:mod:`eer_plugin.corpus`) and the annotation
(:mod:`eer_plugin.annotation`) never import AllenNLP, so they can be used (and tested) on their own.
``from eer_plugin import Tagger`` is the Python API (:mod:`eer_plugin.api`: load a trained model once, tag
text), imported on first use.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``from eer_plugin import Tagger`` (:mod:`eer_plugin.api`), imported on first use: the API module
    imports no AllenNLP until :meth:`Tagger.load` loads an archive."""
    if name in ("Tagger", "TaggerInputError"):
        from eer_plugin import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
