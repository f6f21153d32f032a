"""The ``-o/--overrides`` argument of the commands that load a config or a model with AllenNLP (``evaluate``,
``predict``, ``cbl``), checked before anything is loaded: AllenNLP reads it as a jsonnet snippet evaluating to a
JSON object of config keys (``{"model.o_cost": 1.5}``); anything else was a traceback (a list: ``AttributeError``)
or an error blaming the model archive's ``config.json`` ("edited by hand?") for the command line's mistake. The
check is :func:`eer_plugin.runtime.config_overrides.parsed`, which every config read with overrides passes too."""

from typing import Optional

from eer_plugin.runtime.config_overrides import OPTION, parsed


def check_overrides(text: Optional[str], what: str = OPTION) -> None:
    """:class:`UserError` (one line, the value and an example) unless ``text`` is empty or a JSON object."""
    from allennlp.common.params import parse_overrides

    parsed(text, parse_overrides, what)
