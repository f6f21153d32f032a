"""Model files from someone else never run code of theirs.

transformers runs Python files shipped with a model when its ``config.json`` or ``tokenizer_config.json`` maps a
class to them (``auto_map``) and the caller passes ``trust_remote_code=True``; without it, it asks on a terminal
(``Do you wish to run the custom code? [y/N]``). eer-ner never needs either: its encoders are standard
transformers classes. A model's AllenNLP config (``config.json`` of a ``model.tar.gz`` or a serialization
directory) could still set ``trust_remote_code`` in ``transformer_kwargs`` / ``tokenizer_kwargs``, or name as its
encoder a local directory with ``auto_map``: :func:`model_config_problem` finds both, for the config reader to
refuse the model before any of it is loaded (:mod:`eer_plugin.runtime.config_files`); the exported model's loader
uses :func:`asks_for_custom_code` on its encoder's files (:mod:`eer_plugin.inference.exported`).
"""

import json
import os
from typing import Any, Iterator, Optional, Tuple

#: the files of an encoder directory whose ``auto_map`` would make transformers import code from it
ENCODER_CODE_FILES = ("config.json", "tokenizer_config.json")


def asks_for_custom_code(data: Any) -> bool:
    """Whether a transformers ``config.json`` / ``tokenizer_config.json`` (parsed) maps a class to code of its own."""
    return isinstance(data, dict) and "auto_map" in data


def config_items(value: Any, path: str = "") -> Iterator[Tuple[str, str, Any]]:
    """``(dotted path, key, value)`` of every key in nested dicts and lists (a config as a dict): the one walk of a
    whole config, also for the data files (:mod:`eer_plugin.runtime.config_files`) and the encoders
    (:mod:`eer_plugin.runtime.config_checks`) a training config names."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            yield where, str(key), item
            yield from config_items(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from config_items(item, f"{path}.{index}")


def _directory_asks(directory: str) -> Optional[str]:
    for name in ENCODER_CODE_FILES:
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):  # absent or unreadable: transformers reports that itself
            continue
        if asks_for_custom_code(data):
            return path
    return None


def model_config_problem(config: Any) -> Optional[str]:
    """Why a model's AllenNLP config (as a dict) would run code from outside eer-ner, or None: a
    ``trust_remote_code`` that is set, or a ``model_name`` that is a local directory whose files have ``auto_map``."""
    for where, key, value in config_items(config):
        if key == "trust_remote_code" and value:
            return f"sets {where} to {json.dumps(value)}: it would run code shipped with the encoder"
        if key == "model_name" and isinstance(value, str) and os.path.isdir(value):
            path = _directory_asks(value)
            if path:
                return f'names as {where} an encoder whose {path} asks to run code of its own ("auto_map")'
    return None
