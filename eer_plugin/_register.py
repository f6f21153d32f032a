"""Imports every module that registers an AllenNLP component (readers, models, predictors, commands)."""
