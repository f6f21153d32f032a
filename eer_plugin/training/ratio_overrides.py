"""``train --ratio-estimate``'s "estimate, then bind": the ``-o`` overrides of a training with the suggested
``entity_ratio`` (rho) and ``ratio_margin`` (gamma) of an ``eer-estimate-ratio --output`` file added
(``model.entity_ratio``, ``model.ratio_margin``) and the binding control on (``model.ratio_control: bind``) unless
the overrides set it; an override with a different rho or gamma is a conflict (:class:`UserError`)."""

import copy
import json
import logging
from typing import Any, Dict, Tuple

from allennlp.common.params import parse_overrides

from eer_plugin.annotation.ratio_estimate import read_suggestion
from eer_plugin.common.errors import UserError
from eer_plugin.runtime.config_overrides import TRAINING_EXAMPLE, Overrides, parsed
from eer_plugin.runtime.settings import BY_NAME, config_approach

logger = logging.getLogger(__name__)

#: the setting each suggested value goes to
SETTINGS = {"entity_ratio": "EER_ENTITY_RATIO", "ratio_margin": "EER_RATIO_MARGIN"}


def _lookup(overrides: Dict[str, Any], path: str) -> Tuple[Dict[str, Any], str]:
    """The object of ``overrides`` that holds ``path`` (a nested ``{"model": {...}}`` or the dotted key) and
    the key in it."""
    parts = path.split(".")
    for i in range(1, len(parts)):
        head = ".".join(parts[:i])
        if isinstance(overrides.get(head), dict):
            return _lookup(overrides[head], ".".join(parts[i:]))
    return overrides, path


def apply_ratio_estimate(path: str, overrides: Any, config: str) -> Overrides:
    """The ``-o`` overrides ``overrides`` (as ``eer-ner train`` read them, or JSON(net) text) with the estimate at
    ``path`` added for ``config``: rho, gamma and the binding control (unless ``overrides`` sets one); a
    :class:`UserError` for a bad estimate or an override that sets another rho or gamma."""
    try:
        suggestion = read_suggestion(path)
    except ValueError as error:
        raise UserError(f"--ratio-estimate {error}") from None
    merged = copy.deepcopy(dict(parsed(overrides, parse_overrides, example=TRAINING_EXAMPLE)))
    approach, _ = config_approach(config)
    chosen: Dict[str, Any] = {}
    for key, value in suggestion.items():
        setting = BY_NAME[SETTINGS[key]]
        target = setting.path_for(approach)
        if target is None:
            continue
        holder, name = _lookup(merged, target)
        if name in holder and float(holder[name]) != float(value):
            raise UserError(
                f"--ratio-estimate {path} gives {target}={value:g} but your -o sets {target}={holder[name]}: drop one of them"
            )
        holder[name] = chosen[target] = value
    control = BY_NAME["EER_RATIO_CONTROL"].path_for(approach)
    if control is not None:
        holder, name = _lookup(merged, control)
        if name not in holder:
            holder[name] = chosen[control] = "bind"
    logger.info("ratio from %s: %s", path, ", ".join(f"{k}={v}" for k, v in chosen.items()))
    return Overrides(merged, json.dumps(merged))
