"""Imports every module that registers an AllenNLP component (readers, models, predictors, trainers,
subcommands), then installs the AllenNLP patches (:mod:`eer_plugin.runtime.patches` lists them)."""
from eer_plugin.commands import benchmark, cbl, dictionary, eer_export, eer_import, eer_records, eer_settings, estimate_ratio  # noqa: F401
from eer_plugin.commands import evaluate_checks, export_model, inspect_data, shard, simulate, split, train, tune_o_cost  # noqa: F401
from eer_plugin.data import reader  # noqa: F401
from eer_plugin.models import sns, tagger  # noqa: F401
from eer_plugin.predictors import tagger as _predictor  # noqa: F401
from eer_plugin.runtime import patches
from eer_plugin.training import checkpointer, ratio_init, trainer  # noqa: F401

patches.install()
