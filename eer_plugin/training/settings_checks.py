"""What ``eer-ner train`` checks of its command line before AllenNLP reads the config: ``-s`` is an empty or new
directory that can be written (unless ``--recover`` / ``--force``); one that holds only the start of a run that failed
before its first checkpoint (bad data: ``config.json``, ``out.log``) is named as such, with ``--force`` as the fix
(``--recover`` would find nothing to continue). Each is one :class:`~eer_plugin.common.errors.UserError` line.

``-o`` is read once, before (:func:`eer_plugin.commands.overrides.check_overrides`); what needs only the evaluated
config (unknown keys, the values of the rules, the encoder, the training data) is checked where every training
config is read, in ``Params.from_file`` (:mod:`eer_plugin.runtime.config_checks`), so that plain ``allennlp train
--include-package eer_plugin`` and ``cbl`` check the same, and the config is evaluated once.

A CBL config (one with a top-level ``cbl`` block) given to ``train`` is one line pointing at ``eer-ner cbl``
(:func:`check_not_cbl_config`), before ``-s`` is created or anything in it removed: it runs where every training
creates its serialization directory (:mod:`eer_plugin.training.recovery`), so ``allennlp train`` and ``train_model``
say it too (AllenNLP's own answer came after ``-s`` was written: ``Extra parameters passed to TrainModel``).
"""

import os
import shlex

from eer_plugin.common.errors import UserError
from eer_plugin.runtime.config_files import config_name


def check_serialization_dir(directory: str, recover: bool, force: bool) -> None:
    if recover or force:
        return
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UserError(f"-s {directory}: a file, not a directory; give a new or empty directory for the run")
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    if names and not any(name.endswith(".th") or name == "model.tar.gz" for name in names):
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        raise UserError(
            f"-s {directory} holds a run without a checkpoint ({shown}): it stopped before its first epoch ended "
            "(out.log says why), so there is nothing to --recover. Add --force to start it again, or choose a new "
            "directory"
        )
    if names:
        raise UserError(
            f"-s {directory} already holds files (a run?): add --recover to continue that run, --force to replace it, "
            "or choose a new directory"
        )
    parent = os.path.abspath(directory)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"-s {directory}: cannot write in {parent}; choose a directory you can write to")


def check_not_cbl_config(params) -> None:
    """A :class:`UserError` when the training config ``params`` (``Params`` or a dict) has a top-level ``cbl`` block:
    a CBL config, whose rounds ``train`` does not run. The line names the config file as the command named it when
    ``Params.from_file`` read it (:func:`~eer_plugin.runtime.config_files.config_name`), else "the config"."""
    if "cbl" in params:
        name = config_name(params)
        raise UserError(
            f"{name or 'the config'} has a top-level cbl block, so it is a CBL config: its binary relabelling rounds "
            f"and final tagger are trained by eer-ner cbl {shlex.quote(name) if name else 'CONFIG'} -s DIR (allennlp "
            "cbl in the repository root), not by train; to train one tagger, give a config without a cbl block "
            "(eer_short, raw_short, ...)"
        )
