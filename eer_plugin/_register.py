"""Imports every module that registers an AllenNLP component (readers, models, predictors, commands)."""
from eer_plugin import archive, config_files, errors

config_files.install()  # packaged configs by name; EER_* defaults as jsonnet variables (no os.environ writes)

archive.install()  # checked extraction and weights-only loading of model archives, inside AllenNLP too
errors.install_excepthook()  # an uncaught eer_plugin.errors.UserError prints one line, no traceback
errors.install_unknown_type_check()  # evaluation data with a type the model never saw: a clear error

from eer_plugin.commands import cbl, simulate  # noqa: E402,F401
from eer_plugin.commands import tune_o_cost  # noqa: E402,F401
from eer_plugin.data import reader  # noqa: E402,F401
from eer_plugin.models import sns, tagger  # noqa: E402,F401
from eer_plugin.training import ratio_init, trainer as _trainer  # noqa: E402,F401
from eer_plugin.training import checkpointer  # noqa: E402

checkpointer.install()  # atomic best.th and metrics*.json in AllenNLP's trainer (the 'eer_atomic' checkpointer: checkpoints)
from eer_plugin.predictors import tagger as _predictor  # noqa: E402,F401
from eer_plugin.commands import benchmark  # noqa: E402,F401
from eer_plugin.commands import eer_import  # noqa: E402,F401
from eer_plugin.commands import estimate_ratio  # noqa: E402,F401
from eer_plugin.commands import train as _train  # noqa: E402,F401  (train --ratio-estimate)
from eer_plugin.commands import evaluate_checks  # noqa: E402

evaluate_checks.install()  # eer-ner evaluate: an output that is an input is refused before the model loads
from eer_plugin.commands import inspect_data  # noqa: E402,F401
from eer_plugin.commands import eer_settings, split  # noqa: E402
from eer_plugin.commands import shard  # noqa: E402,F401  (eer-shard, eer-merge)

eer_settings.install()  # train --help lists the settings and the packaged configs
