"""Imports every module that registers an AllenNLP component (readers, models, predictors, commands)."""
from eer_plugin.commands import simulate  # noqa: F401
