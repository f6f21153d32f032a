"""The ``-o/--overrides`` argument of the commands that load a config or a model with AllenNLP (``evaluate``,
``cbl``), checked before anything is loaded: AllenNLP reads it as a jsonnet snippet evaluating to a JSON object
of config keys (``{"model.o_cost": 1.5}``); anything else was a traceback (a list: ``AttributeError``) or an
error blaming the model archive's ``config.json`` ("edited by hand?") for the command line's mistake."""

from typing import Optional

from eer_plugin.common.errors import UserError, one_line, shortened

EXAMPLE = """-o '{"model.o_cost": 1.5}'"""


def check_overrides(text: Optional[str], what: str = "-o/--overrides") -> None:
    """:class:`UserError` (one line, the value and an example) unless ``text`` is empty or a JSON object."""
    if not text:
        return
    from allennlp.common.params import parse_overrides

    shown = shortened(one_line(text), 120)
    try:
        value = parse_overrides(text)
    except Exception as error:  # noqa: BLE001  (jsonnet's RuntimeError, json's ValueError: the value is wrong)
        reason = one_line(str(error).replace("RUNTIME ERROR: ", "").replace("STATIC ERROR: ", ""))[:200]
        raise UserError(
            f"{what} {shown}: not valid JSON ({reason}); give config keys and values, e.g. {EXAMPLE}"
        ) from None
    if not isinstance(value, dict):
        raise UserError(
            f"{what} {shown}: a JSON {type(value).__name__}, not an object of config keys and values, e.g. {EXAMPLE}"
        )
