"""The environment's ``EER_*`` variables checked before a training config is evaluated (by the config-file wrapper,
:mod:`eer_plugin.runtime.config_files`): an environment setting whose text the configs cannot use, and a
hyperparameter set as an environment variable, which no config reads. Both are one line naming the variables and
what to do; the table they check is :mod:`eer_plugin.runtime.settings`."""

import json
import os
import re
from typing import Any, Dict, Mapping, Optional

from eer_plugin.core.tags import SCHEME_SETTINGS, is_scheme_setting
from eer_plugin.corpus import strict_json
from eer_plugin.runtime.setting_values import RULES
from eer_plugin.runtime.settings import HYPERPARAMETERS, SETTINGS, config_approach

#: the rule of the config key that ``EER_CHECKPOINT_SECONDS`` (the kind ``seconds``) fills
SECONDS = RULES["trainer.checkpointer.save_every_num_seconds"]


def _json(text: str) -> Any:
    """The JSON value of ``text``, or None where it is no JSON (what jsonnet's ``std.parseJson`` cannot read)."""
    try:
        return strict_json.loads(text)
    except ValueError:
        return None


def environment_values_error(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The error for environment settings whose text the configs cannot use (``EER_SEED=x``: jsonnet's
    ``std.parseInt`` said only "x is not a base 10 integer"; ``EER_CHECKPOINT_SECONDS=0``, a checkpoint after every
    batch): one line naming each with what it must be; None when all are usable. Ranges that need the encoder or the
    machine are checked where those are known."""
    environ = os.environ if environ is None else environ
    wrong = []
    for setting in SETTINGS:
        text = environ.get(setting.name)
        if setting.is_hyperparameter or text is None or setting.kind == "text":
            continue
        if setting.kind == "tag_scheme":
            if not is_scheme_setting(text):
                wrong.append(f"{setting.name}={text!r}: expected {SCHEME_SETTINGS}")
            continue
        if setting.kind in ("count", "seconds") and text == "" == setting.default:
            continue
        if setting.kind == "seconds":  # the configs' std.parseJson: a JSON number
            if not SECONDS.test(_json(text)):
                wrong.append(f"{setting.name}={text!r}: expected {SECONDS.expected}, or empty for its default")
            continue
        number = int(text) if re.fullmatch(r"-?[0-9]+", text) else None  # what jsonnet's std.parseInt reads
        if number is None or (setting.kind == "count" and number < 1):
            least = " of at least 1" if setting.kind == "count" else ""
            default = f"such as its default {setting.default}" if setting.default else "or empty for its default"
            wrong.append(f"{setting.name}={text!r}: expected a whole number{least}, {default}")
    if not wrong:
        return None
    unset = "unset it for its default" if len(wrong) == 1 else "unset a setting for its default"
    return "; ".join(wrong) + f" ({unset}; eer-ner eer-settings lists every setting)"


def environment_hyperparameters_error(config: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The error for hyperparameters set as environment variables (``EER_RATIO_LOSS_WEIGHT=100``), which no
    config reads: one line naming them and the ``-o`` to give instead; None when there are none."""
    environ = os.environ if environ is None else environ
    found = [s for s in HYPERPARAMETERS if s.name in environ]
    if not found:
        return None
    approach, variant = config_approach(config)
    replacement: Dict[str, Any] = {}
    for setting in (s for s in found if s.path_for(approach) is not None):
        try:
            value = setting.value(environ[setting.name], approach, variant)
        except ValueError:
            value = environ[setting.name]
        replacement[str(setting.path_for(approach))] = value
    unheld = [s.name for s in found if s.path_for(approach) is None]
    names = ", ".join(f"{s.name}={environ[s.name]}" for s in found)
    fix = f" and give -o '{json.dumps(replacement)}'" if replacement else ""
    return (
        f"{names} {'is' if len(found) == 1 else 'are'} set in the environment, but hyperparameters are config "
        f"values, not environment variables: unset {' '.join(s.name for s in found)}{fix}"
        + (f" ({', '.join(unheld)}: no key in this config)" if unheld else "")
        + " (eer-ner eer-settings lists every setting)"
    )
