"""The packaged training configs: found by name from any directory, with the settings' defaults.

The configs live in ``eer_plugin/training_configs/`` (package data, installed with the package; the
checkout's ``training_configs/`` is a link to it). :func:`install` wraps AllenNLP's
``Params.from_file``, through which ``train``, ``cbl``, ``evaluate`` and every archive load read a
config, so that:

* a config given by name (``eer_short.jsonnet``, ``eer_short``, ``training_configs/eer_short.jsonnet``)
  that is no file here is the packaged config of that name; a local file of that name wins;
* ``import 'common.libsonnet'`` resolves next to the importing file first and then in the packaged
  directory (a local copy of ``eer_short.jsonnet`` works alone);
* every environment setting (``EER_TRAIN_DATA``, ``EER_ENCODER``, ...) that the environment does not set
  gets its default from :mod:`eer_plugin.runtime.settings` as a jsonnet external variable (nothing is
  written to ``os.environ``); a hyperparameter set as an environment variable (``EER_RATIO_LOSS_WEIGHT``),
  which no config reads, stops a training config with the ``-o`` to give instead;
* a missing config, or a config error (a required setting not set, a bad value), is one
  :class:`~eer_plugin.common.errors.UserError` line instead of a traceback;
* a training config, once evaluated with its overrides, names data files that are there and passes
  :func:`~eer_plugin.runtime.config_checks.check_training_config` (unknown keys, the rules' values, the encoders,
  the training data), so that every command that reads one (``eer-ner train``, ``allennlp train --include-package
  eer_plugin``, ``cbl``) stops with the same one line before it creates its serialization directory;
* the ``Params`` it returns remember the config as the command named it (:func:`config_name`), so that a check made
  later, on the params alone, can name the file (a CBL config given to ``train``).
"""

import functools
import os
from pathlib import Path
from typing import List, Optional, Union

from eer_plugin.common.errors import UserError, relative_paths_hint
from eer_plugin.corpus.documents import DataFileError
from eer_plugin.runtime import config_overrides
from eer_plugin.runtime.config_checks import check_training_config
from eer_plugin.runtime.custom_code import config_items
from eer_plugin.runtime.settings import unset_defaults
from eer_plugin.runtime.settings_environment import environment_hyperparameters_error, environment_values_error

CONFIG_DIR = Path(__file__).resolve().parents[1] / "training_configs"
#: directory names under which a config name means the packaged one (the checkout's layout)
_PACKAGED_PREFIXES = (Path("."), Path("training_configs"))
#: the attribute of a Params read from a file: the config as the command named it (kept by ``Params.duplicate``)
SOURCE = "_eer_config_file"


def config_name(params) -> Optional[str]:
    """The config ``params`` were read from, as the command named it (``cbl_bert_short.jsonnet``, a path), when
    ``Params.from_file`` read them; None for params built otherwise (``Params({...})`` in Python)."""
    return getattr(params, SOURCE, None)


def packaged_configs() -> List[str]:
    """File names of the packaged configs (``eer_short.jsonnet``, ...)."""
    return sorted(p.name for p in CONFIG_DIR.glob("*.jsonnet"))


def resolve_config(name: Union[str, "os.PathLike[str]"]) -> str:
    """The path of config ``name``: the file itself when it exists (or is a URL), else the packaged
    config of that name (``.jsonnet`` may be left out); a :class:`UserError` when neither exists, or when ``name``
    is a directory."""
    text = str(name)
    if "://" in text or os.path.exists(text) and not os.path.isdir(text):
        return text
    path = Path(text)
    if path.parent in _PACKAGED_PREFIXES:
        for candidate in (path.name, f"{path.name}.jsonnet"):
            if (CONFIG_DIR / candidate).is_file():
                return str(CONFIG_DIR / candidate)
    packaged = ", ".join(packaged_configs())
    if os.path.isdir(text):  # jsonnet would abort the process (SIGABRT) reading it
        raise UserError(
            f"config {text!r} is a directory, not a config file: give a .jsonnet file, or a packaged config by name (packaged: {packaged})"
        )
    raise UserError(
        f"config {text!r} not found: no such file in {os.getcwd()}, and no packaged config of that name "
        f"(packaged: {packaged}; give one by name, e.g. eer_short.jsonnet)"
    )


#: config key -> the setting that names it in the packaged configs
DATA_KEYS = {
    "train_data_path": "EER_TRAIN_DATA (EER_GOLD_TRAIN_DATA in gold, gold_sns)",
    "validation_data_path": "EER_DEV_DATA",
    "test_data_path": "EER_TEST_DATA",
}


#: config key (at any depth) of another file a training config reads -> the setting that names it
FILE_KEYS = {"pretrained_file": "EER_WORD_VECTORS"}


def check_data_paths(config: str, params: dict) -> None:
    """A :class:`DataFileError` for the first data path of a training config that is no file (and the first file of
    :data:`FILE_KEYS`, CBL-LSTM's word vectors, that is no regular file), before ``train`` creates its serialization
    directory (a rerun after the fix then needs no clean-up)."""
    named = [(key, params.get(key), setting) for key, setting in DATA_KEYS.items()]
    named += [(key, path, FILE_KEYS[key]) for _, key, path in config_items(params) if key in FILE_KEYS]
    for key, path, setting in named:
        if not isinstance(path, str) or "://" in path or path.startswith("("):  # a URL, AllenNLP's "(archive)#member"
            continue
        if not os.path.exists(path):
            problem = f"not found{relative_paths_hint(path)}"
        elif key in FILE_KEYS and os.path.isdir(path):
            problem = "is a directory, not a file"
        else:
            continue
        raise DataFileError(
            f"{config}: {key} {path!r} {problem}; check the path, or the setting that names it: {setting}"
        )


def _jsonnet_error(config: str, error: RuntimeError) -> UserError:
    """``RUNTIME ERROR: EER_TRAIN_DATA is not set ...`` (and the jsonnet stack trace) -> one line."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
    for prefix in ("RUNTIME ERROR: ", "STATIC ERROR: "):
        first = first[len(prefix) :] if first.startswith(prefix) else first
    return UserError(f"{config}: {first}")


def _is_model_config(config: str) -> bool:
    """Whether ``config`` is the ``config.json`` of an extracted archive or of a serialization directory (beside
    weights or a vocabulary), not a training config that happens to be JSON."""
    from eer_plugin.runtime.archive import _EXTRACTED_FROM

    directory = os.path.dirname(config)
    return os.path.basename(config) == "config.json" and (
        directory in _EXTRACTED_FROM
        or any(os.path.exists(os.path.join(directory, name)) for name in ("weights.th", "best.th", "vocabulary"))
    )


def _model_config_name(config: str) -> str:
    """A model's ``config.json`` as a user knows it: ``ARCHIVE: its config.json`` for an extracted archive (not its
    temporary directory), else its path."""
    from eer_plugin.runtime.archive import _EXTRACTED_FROM

    archive = _EXTRACTED_FROM.get(os.path.dirname(config))
    return f"{archive}: its config.json" if archive else config


def _model_config_error(config: str, error: RuntimeError) -> UserError:
    """A model's ``config.json`` (in an archive or a serialization directory) that is not valid JSON -> one line
    naming the archive (not its temporary extraction directory) and the fix."""
    from eer_plugin.common.errors import ArchiveError

    detail = str(_jsonnet_error(config, error)).split(": ", 1)[-1]
    detail = detail[len(config) :].lstrip(":") if detail.startswith(config) else detail
    return ArchiveError(
        f"{_model_config_name(config)}: not valid JSON (line:column {detail}); edited by hand? use the model.tar.gz (or serialization "
        "directory) that eer-ner train wrote"
    )


def _refuse_custom_code(config: str, values: dict) -> None:
    """A model (archive or serialization directory) whose config would run code shipped with its encoder: one
    ArchiveError naming the archive, before anything of the model is loaded."""
    from eer_plugin.common.errors import ArchiveError
    from eer_plugin.runtime.custom_code import model_config_problem

    problem = model_config_problem(values)
    if problem:
        raise ArchiveError(
            f"{_model_config_name(config)} {problem}, which eer-ner never does; a model written by eer-ner train has none: do not load "
            "a model of unknown origin"
        )


def install() -> None:
    """Wraps ``Params.from_file`` and jsonnet's ``evaluate_file`` in AllenNLP (idempotent)."""
    from allennlp.common import params as params_module
    from allennlp.common.params import Params, parse_overrides, with_overrides

    if getattr(Params.from_file, "eer_configs", False):
        return
    try:
        import _jsonnet
    except ImportError:  # pragma: no cover - AllenNLP then reads configs as plain JSON
        _jsonnet = None
    if _jsonnet is not None:
        params_module.evaluate_file = functools.partial(_jsonnet.evaluate_file, jpathdir=[str(CONFIG_DIR)])
    original = Params.from_file.__func__

    def from_file(cls, params_file, params_overrides="", ext_vars=None):
        config = resolve_config(params_file)
        jsonnet = config.endswith((".jsonnet", ".libsonnet"))  # reads EER_* variables; plain JSON reads none
        refused = (environment_values_error() or environment_hyperparameters_error(config)) if jsonnet else None
        if refused:
            raise UserError(f"{params_file}: {refused}")
        ext_vars = {**unset_defaults(), **(ext_vars or {})}  # the environment wins over the defaults
        # text is evaluated here, once; a command's -o arrives read already (config_overrides.Overrides)
        values = config_overrides.parsed(params_overrides, parse_overrides, ext_vars=ext_vars)
        model_config = not jsonnet and _is_model_config(config)
        try:  # the file alone, evaluated once: AllenNLP's own from_file would read the overrides a second time
            params = original(cls, config, "", ext_vars)
        except RuntimeError as error:
            if str(error).startswith(("RUNTIME ERROR", "STATIC ERROR")):
                if model_config:
                    raise _model_config_error(config, error) from None
                raise _jsonnet_error(str(params_file), error) from None
            raise
        file_config = params.as_dict(quiet=True)
        if values:
            try:
                params = cls(with_overrides(file_config, values))
            except ValueError as error:  # a key the config lacks, or one under an object the same -o replaces
                named = _model_config_name(config) if model_config else str(params_file)
                unapplied = config_overrides.unapplied_error(error, params_overrides, values, file_config, named)
                if unapplied is None:
                    raise
                raise unapplied from None
        evaluated = params.as_dict(quiet=True)
        # a training config, .jsonnet or .json (not a model's config.json): checked before train creates its
        # serialization directory (runtime.config_checks)
        if not model_config and "train_data_path" in evaluated:
            check_data_paths(str(params_file), evaluated)
            check_training_config(evaluated)
        elif model_config:
            _refuse_custom_code(config, params.as_dict(quiet=True))
            if values:  # a part that does not build with them names them, not the archive (archive_contents)
                config_overrides.record(params, params_overrides, values, file_config)
        setattr(params, SOURCE, str(params_file))
        return params

    from_file.eer_configs = True  # type: ignore[attr-defined]
    from_file.__doc__ = original.__doc__
    Params.from_file = classmethod(from_file)
