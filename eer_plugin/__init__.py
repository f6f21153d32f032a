"""eer-ner: named-entity taggers trained from partially annotated text with the Expected Entity Ratio loss.

Importing ``eer_plugin`` registers the AllenNLP components (readers, models, predictors, subcommands)
when AllenNLP is installed. The maths (:mod:`eer_plugin.core`), the corpus (:mod:`eer_plugin.corpus`) and the annotation
(:mod:`eer_plugin.annotation`) never import AllenNLP, so they can be used (and tested) on their own. ``from eer_plugin import Tagger`` is the Python API
(:mod:`eer_plugin.api`: load a trained model once, tag text), imported on first use.
"""
import importlib.util
import warnings

__version__ = "0.1.0"

# allennlp 2.10.1's trainer calls the deprecated torch.cuda.amp.autocast(...) (torch >= 2.4 warns once per site).
warnings.filterwarnings(
    "ignore", message=r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated", category=FutureWarning
)
# `python -m eer_plugin.commands.simulate` (or .benchmark, or eer_plugin.benchmark.records): importing the plugin
# registers that module first; runpy then warns that it is in sys.modules already. It runs as __main__ without
# registering again.
warnings.filterwarnings(
    "ignore", message=r"'eer_plugin\.(commands\.\w+|benchmark\.records)' found in sys\.modules", category=RuntimeWarning
)

if importlib.util.find_spec("allennlp") is not None:  # pragma: no branch
    from eer_plugin import _register  # noqa: F401  (registers every AllenNLP component)


def __getattr__(name: str):
    """``from eer_plugin import Tagger`` (:mod:`eer_plugin.api`), imported on first use: the API module
    imports no AllenNLP until :meth:`Tagger.load` loads an archive."""
    if name in ("Tagger", "TaggerInputError"):
        from eer_plugin import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
