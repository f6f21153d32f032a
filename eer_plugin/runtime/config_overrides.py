"""The ``-o/--overrides`` of a config read with AllenNLP (``Params.from_file``, wrapped by
:mod:`eer_plugin.runtime.config_files`): an override that cannot apply, or that makes a model's config build
nothing, is one :class:`~eer_plugin.common.errors.UserError` line naming the override, never the model archive's
``config.json``, which the user did not write.

* an override that is no JSON object, or a dotted key under a key the config lacks (``no_such.key``, a key
  under a number): :func:`unapplied_error`, when the config is read;
* an override that the model or reader does not build with (``{"model.dropout": "x"}``, ``{"model.no_such": 1}``,
  ``{"model": {"dropout": 0.2}}``, which replaces the whole model): :func:`record` marks the config read with
  the overrides, and :func:`override_error` is the error :mod:`eer_plugin.runtime.archive_contents` raises
  instead of blaming the archive when a part the overrides change does not build.
"""

import json
from typing import Any, Callable, Dict, List, Optional

from eer_plugin.common.errors import UserError, one_line, shortened
from eer_plugin.runtime.encoders import EncoderError
from eer_plugin.runtime.settings import unset_defaults

#: the option, as the commands name it
OPTION = "-o/--overrides"
EXAMPLE = """-o '{"model.o_cost": 1.5}'"""
#: the example of a training's ``-o``
TRAINING_EXAMPLE = """-o '{"trainer.num_epochs": 5}'"""
#: the top-level keys a model's config is read for, besides its own (``load_archive``, ``evaluate``)
MODEL_CONFIG_KEYS = ("dataset_reader", "validation_dataset_reader", "model", "data_loader", "validation_data_loader")
#: the attribute of a Params read with overrides: what they change (kept by ``Params.duplicate``, a deep copy)
MARK = "eer_overrides"


class Overrides(dict):
    """An ``-o`` read once: the JSON object of config keys it evaluates to, which keeps the ``text`` the user gave for
    the messages about it. A command reads its ``-o`` text once, when it checks it (:func:`parsed`), and hands this
    on: every later reader (``eer-ner train``'s checks, ``Params.from_file``, ``load_archive``) takes it as it is,
    where each of them evaluated the text with jsonnet again."""

    def __init__(self, values: Dict[str, Any], text: str) -> None:
        super().__init__(values)
        self.text = text


def parsed(
    overrides: Any,
    parse: Callable[..., Any],
    what: str = OPTION,
    ext_vars: Optional[Dict[str, Any]] = None,
    example: str = EXAMPLE,
) -> Overrides:
    """``overrides`` as the JSON object of config keys it must be (an :class:`Overrides`, which is returned as it is;
    ``{}`` when empty), or a :class:`UserError` with the value and an example. Text is evaluated once, by ``parse``
    (AllenNLP's ``parse_overrides``) with ``ext_vars`` (default: the environment settings' defaults, as the configs
    get them: :func:`eer_plugin.runtime.settings.unset_defaults`); ``example``: the one the message gives."""
    if isinstance(overrides, Overrides):
        return overrides
    if isinstance(overrides, dict) or not overrides:
        return Overrides(dict(overrides or {}), json.dumps(overrides) if overrides else "")
    text = shortened(one_line(overrides), 120)
    try:
        value = parse(overrides, unset_defaults() if ext_vars is None else ext_vars)
    except Exception as error:  # noqa: BLE001  (jsonnet's RuntimeError, json's ValueError: the value is wrong)
        reason = one_line(str(error).replace("RUNTIME ERROR: ", "").replace("STATIC ERROR: ", ""))[:200]
        raise UserError(
            f"{what} {text}: not valid JSON ({reason}); give config keys and values, e.g. {example}"
        ) from None
    if not isinstance(value, dict):
        raise UserError(
            f"{what} {text}: a JSON {type(value).__name__}, not an object of config keys and values, e.g. {example}"
        )
    return Overrides(value, overrides)


def shown(overrides: Any) -> str:
    """The overrides as the user typed them (or as JSON), one line, at most 200 characters."""
    text = getattr(overrides, "text", None) or (overrides if isinstance(overrides, str) else json.dumps(overrides))
    return shortened(one_line(text), 200)


def _value_at(config: Any, path: List[str]) -> Any:
    for key in path:
        if isinstance(config, dict) and key in config:
            config = config[key]
        elif isinstance(config, list) and key.isdigit() and int(key) < len(config):
            config = config[int(key)]
        else:
            raise KeyError(key)
    return config


def _missing_part(config: Dict[str, Any], key: str) -> Optional[str]:
    """Why the dotted ``key`` has no place in ``config`` (its parent is not there, or is no object), or None."""
    parts = key.split(".")
    for end in range(1, len(parts)):
        try:
            value = _value_at(config, parts[:end])
        except KeyError:
            above = _value_at(config, parts[: end - 1]) if end > 1 else config
            keys = sorted(above) if isinstance(above, dict) else []
            listed = f" (its keys there: {', '.join(keys[:12])}{', ...' if len(keys) > 12 else ''})" if keys else ""
            return f"the config has no {'.'.join(parts[:end])!r}{listed}"
        if not isinstance(value, (dict, list)):
            return f"{'.'.join(parts[:end])!r} is a {type(value).__name__} in the config, not an object with keys"
    return None


def unapplied_error(
    error: ValueError, overrides: Any, values: Dict[str, Any], file_config: Dict[str, Any], config_name: str
) -> Optional[UserError]:
    """The one line for AllenNLP's refusal (``error``, from ``with_overrides``) to apply ``overrides`` (``values``:
    parsed) to the config ``file_config`` read from ``config_name``, or None when ``error`` is another."""
    text = str(error)
    if not text.startswith(("overrides dict contains unused keys", "overrides for ")):
        return None
    for key in values:
        reason = _missing_part(file_config, key) if "." in key else None
        if reason:
            return UserError(
                f"{OPTION} {shown(overrides)}: {key!r} sets nothing: {reason} ({config_name}); give a key the config "
                f"has, e.g. {EXAMPLE}"
            )
    return UserError(
        f"{OPTION} {shown(overrides)}: {text.split(': ', 1)[-1]} are not applied, because the same -o replaces an "
        'object above them (e.g. "trainer": {...} with "trainer.num_epochs"); give dotted keys only, such as '
        '\'{"trainer.num_epochs": 5, "trainer.optimizer.lr": 1e-4}\''
    )


def record(params, overrides: Any, values: Dict[str, Any], file_config: Dict[str, Any]) -> None:
    """Marks ``params`` (a model's config, read from ``file_config`` with ``overrides``, ``values`` parsed) with what
    the overrides change: the text shown, the keys set, and for a key given an object where the config has one, the
    keys that object drops (AllenNLP replaces the value of a key given, it does not merge into it). A key that sets
    nothing a model's config is read for (``{"no_such": 1}``, silently ignored by AllenNLP) is a :class:`UserError`."""
    for key in values:
        head = key.split(".", 1)[0]
        if head not in file_config and head not in MODEL_CONFIG_KEYS:
            raise UserError(
                f"{OPTION} {shown(overrides)}: {head!r} sets nothing: a model's config has no such key (it has "
                f"{', '.join(sorted(file_config))}); give a key the config has, e.g. {EXAMPLE}"
            )
    dropped: Dict[str, List[str]] = {}
    for key, value in values.items():
        try:
            before = _value_at(file_config, key.split("."))
        except KeyError:
            continue
        if isinstance(value, dict) and isinstance(before, dict) and set(before) - set(value):
            dropped[key] = sorted(set(before) - set(value))
    setattr(params, MARK, {"shown": shown(overrides), "values": values, "dropped": dropped})


def override_error(config, part: str, error: BaseException, where: str) -> Optional[UserError]:
    """The :class:`UserError` naming the overrides when they change ``part`` (``model``, ``dataset_reader``) of
    ``config`` (a Params :func:`record` marked) and ``part`` did not build (``error``); None when no override
    touches it (the config itself is then to blame). ``where``: the model as the user named it (the archive)."""
    applied = getattr(config, MARK, None)
    if not applied:
        return None
    prefixes = (part, f"validation_{part}") if part == "dataset_reader" else (part,)
    touching = [k for k in applied["values"] if k.split(".", 1)[0] in prefixes]
    if not touching:
        return None
    if isinstance(error, EncoderError):
        reason = f"the encoder {error.name}: {error.problem}"
    else:
        reason = (one_line(getattr(error, "message", error)) or type(error).__name__)[:240]
    replaced = [k for k in touching if k in applied["dropped"]]
    if replaced:
        key = replaced[0]
        first = next(iter(applied["values"][key].items()), None)
        dotted = json.dumps({f"{key}.{first[0]}": first[1]}) if first else ""
        fix = (
            f"{key!r} replaces the whole {key!r} of {where}'s config (an override replaces a key's value, it does "
            f"not merge into it), dropping its {', '.join(applied['dropped'][key][:6])}: give dotted keys"
            + (f", e.g. -o '{dotted}'" if dotted else "")
        )
    else:
        values = ", ".join(f"{k}={json.dumps(applied['values'][k])}"[:120] for k in touching)
        fix = (
            f"the override {values} is what changed it, not {where}'s config.json: give keys and values the "
            f"{part.replace('_', ' ')} takes, or leave the override out"
        )
    return UserError(
        f"{OPTION} {applied['shown']}: the {part.replace('_', ' ')} of {where} does not build with it "
        f"({type(error).__name__}: {reason}); {fix}"
    )
