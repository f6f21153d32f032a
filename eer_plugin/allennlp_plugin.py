"""The one module that registers eer-ner with AllenNLP: importing it imports every module that registers an
AllenNLP component (readers, models, predictors, trainers, subcommands), then installs the AllenNLP patches
(:mod:`eer_plugin.patches` lists them) and the warnings filters AllenNLP's own code needs.

``import eer_plugin`` does none of this (it imports no AllenNLP and changes no global state). What reaches
this module: ``.allennlp_plugins`` (it lists ``eer_plugin.allennlp_plugin``), ``--include-package
eer_plugin`` (AllenNLP imports every public submodule of the package, this one among them), the ``eer-ner``
console script (:mod:`eer_plugin.cli`), :meth:`eer_plugin.api.Tagger.load` of a model archive (and
so the spaCy component) and the benchmark's per-document evaluation. Packages that add subcommands (the
benchmark beside this package) register through the ``eer_ner.plugins`` entry point group, loaded last.
"""

import warnings

from eer_plugin import patches
from eer_plugin.commands import evaluate_checks, subcommand, train  # noqa: F401  (the wrapped AllenNLP commands)
from eer_plugin.data import reader  # noqa: F401
from eer_plugin.models import sns, tagger  # noqa: F401
from eer_plugin.predictors import tagger as _predictor  # noqa: F401
from eer_plugin.training import checkpointer, ratio_init, trainer  # noqa: F401

# allennlp 2.10.1's trainer calls the deprecated torch.cuda.amp.autocast(...) (torch >= 2.4 warns once per site).
warnings.filterwarnings(
    "ignore", message=r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated", category=FutureWarning
)
patches.install()

subcommand.define_all()  # eer-ner's command modules and the packages that add commands (subcommand.PLUGIN_GROUP)
subcommand.register_all()  # every command module imported above (and any imported later)
