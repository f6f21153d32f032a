"""The ``-o/--overrides`` argument of the commands that load a config or a model with AllenNLP (``train``,
``evaluate``, ``predict``, ``cbl``), read once and checked before anything is loaded: AllenNLP reads it as a jsonnet
snippet evaluating to a JSON object of config keys (``{"model.o_cost": 1.5}``); anything else was a traceback (a
list: ``AttributeError``) or an error blaming the model archive's ``config.json`` ("edited by hand?") for the command
line's mistake. The check is :func:`eer_plugin.runtime.config_overrides.parsed`; the command hands on what it read
(an :class:`~eer_plugin.runtime.config_overrides.Overrides`), which no later reader evaluates again."""

from typing import Any

from eer_plugin.runtime.config_overrides import EXAMPLE, OPTION, Overrides, parsed


def check_overrides(overrides: Any, what: str = OPTION, example: str = EXAMPLE) -> Overrides:
    """``overrides`` (the option's text) read once: the JSON object of config keys for the command to pass on, or a
    :class:`UserError` (one line, the value and ``example``) unless it is empty or a JSON object."""
    from allennlp.common.params import parse_overrides

    return parsed(overrides, parse_overrides, what, example=example)
