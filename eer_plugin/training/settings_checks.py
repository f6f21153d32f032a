"""The checks ``eer-ner train`` runs before AllenNLP builds anything: settings AllenNLP would answer with a
traceback (a ``ZeroDivisionError`` for a batch size of 0, a ``TypeError`` for a misspelt ``-o`` key, ...)
are one :class:`~eer_plugin.runtime.errors.UserError` line each, naming the setting and the fix.

* ``-o`` must be a JSON(net) object (``'{"trainer.num_epochs": 5}'``);
* ``trainer.num_epochs`` and every data loader's batch size are integers of at least 1;
* the numbers of :data:`NUMBER_RANGES` are in range (``model.entity_ratio`` in (0, 1), ``model.ratio_margin`` and
  ``model.ratio_loss_weight`` at least 0, ``model.dropout`` a probability, the learning rate above 0, ...);
* every key of ``model`` and ``dataset_reader`` is an argument of the registered class (misspelt keys are
  named with the closest argument);
* ``-s`` is an empty or new directory that can be written (unless ``--recover`` / ``--force``); one that holds
  only the start of a run that failed before its first checkpoint (bad data: ``config.json``, ``out.log``) is
  named as such, with ``--force`` as the fix (``--recover`` would find nothing to continue);
* every ``model_name`` (the encoder) is a local directory, or a model in the Hugging Face cache when offline.
"""

import difflib
import inspect
import os
from typing import Any, Dict, Iterator, List, Tuple

from eer_plugin.common.errors import UserError
from eer_plugin.corpus.strict_json import is_integer, is_number


def _overrides(text: str) -> Dict[str, Any]:
    from allennlp.common.params import parse_overrides

    if not text:
        return {}
    try:
        value = parse_overrides(text)
    except Exception as error:  # noqa: BLE001 - jsonnet's and json's errors alike
        raise UserError(
            f"-o/--overrides {text!r} is no JSON(net) object ({str(error).strip().splitlines()[-1]}); "
            "give one such as '{\"trainer.num_epochs\": 5}'"
        ) from None
    if not isinstance(value, dict):
        raise UserError(
            f"-o/--overrides {text!r} is a {type(value).__name__}, not a JSON object; give one such as "
            "'{\"trainer.num_epochs\": 5}'"
        )
    return value


def _is_count(value: Any) -> bool:
    return is_integer(value) and value >= 1


#: ``(config path, test, what is expected)`` of the numbers a run cannot use (absent or null: not checked)
NUMBER_RANGES = (
    ("model.entity_ratio", lambda v: is_number(v) and 0 < v < 1, "a number in (0, 1) (the expected share of entity subwords)"),
    ("model.ratio_margin", lambda v: is_number(v) and v >= 0, "a number of at least 0"),
    ("model.ratio_loss_weight", lambda v: is_number(v) and v >= 0, "a number of at least 0 (0: no ratio loss)"),
    ("model.dropout", lambda v: is_number(v) and 0 <= v < 1, "a probability in [0, 1)"),
    ("model.price_rate", lambda v: is_number(v) and v >= 0, "a number of at least 0"),
    ("model.price_penalty", lambda v: is_number(v) and v > 0, "a number above 0"),
    ("model.o_cost", is_number, "a finite number"),
    ("trainer.optimizer.lr", lambda v: is_number(v) and v > 0, "a learning rate above 0"),
    ("trainer.min_steps", lambda v: is_integer(v) and v >= 0, "an integer of at least 0 (0: the epochs decide)"),
    ("trainer.patience", lambda v: is_integer(v) and v >= 1, "an integer of at least 1, or null (never stop early)"),
    ("trainer.grad_norm", lambda v: is_number(v) and v > 0, "a number above 0, or null (no clipping)"),
    ("trainer.checkpointer.save_every_num_seconds", lambda v: is_number(v) and v > 0, "a number of seconds above 0, or null"),
)  # fmt: skip


def _value_at(config: Dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        config = config.get(key) if isinstance(config, dict) else None  # type: ignore[assignment]
    return config


def _arguments(registrable, config: Dict[str, Any]) -> Tuple[str, List[str]]:
    """``(class name, its constructor's argument names)`` of the registered class ``config`` names; no
    names when it takes ``**kwargs`` or is not known."""
    name = config.get("type")
    if not isinstance(name, str):
        return "", []
    try:
        cls = registrable.resolve_class_name(name)[0]
    except Exception:  # noqa: BLE001  (AllenNLP reports an unknown type itself, in one line)
        return name, []
    names: List[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = inspect.signature(klass.__init__).parameters
        names += [
            p
            for p in parameters
            if p != "self"
            and parameters[p].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            break
    return name, names


def _model_names(value: Any, path: str = "") -> Iterator[Tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if key == "model_name" and isinstance(item, str):
                yield where, item
            else:
                yield from _model_names(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _model_names(item, f"{path}.{index}")


def _check_encoder(where: str, name: str) -> None:
    from eer_plugin.runtime.encoders import resolve_model_name  # the packaged MiniLM, mpnet from its wheels

    try:
        resolved = resolve_model_name(name)
    except Exception:  # noqa: BLE001  (an alias whose package is missing: checked as the name given)
        resolved = name
    if os.path.isdir(name) or os.path.isdir(resolved):
        return
    offline = any(os.environ.get(v, "") not in ("", "0") for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    if not offline:
        return  # transformers may download it
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001  (not a valid model id either)
        cached = None
    if not isinstance(cached, str):
        raise UserError(
            f"{where} {name!r}: no such directory, and no such model in the Hugging Face cache (offline): give the "
            "directory of a downloaded encoder (EER_ENCODER) or the name of one downloaded before"
        )


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


def check_environment() -> None:
    """The environment settings the configs parse as numbers (a bad value would be a jsonnet error)."""
    seconds = os.environ.get("EER_CHECKPOINT_SECONDS", "").strip()
    if seconds:
        try:
            value = float(seconds)
        except ValueError:
            value = float("nan")
        if not value > 0 or value == float("inf"):
            raise UserError(
                f"EER_CHECKPOINT_SECONDS must be a number of seconds above 0 (how often to checkpoint inside an "
                f"epoch), got {seconds!r}; unset it to checkpoint at each epoch's end only"
            )


def check_training_arguments(
    param_path: str, overrides: str, serialization_dir: str, recover: bool = False, force: bool = False
) -> None:
    """:class:`UserError` for the first setting of ``eer-ner train`` that cannot work (see the module docstring)."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from allennlp.models import Model

    _overrides(overrides)
    check_environment()
    check_serialization_dir(serialization_dir, recover, force)
    try:
        config = Params.from_file(param_path, overrides).as_dict(quiet=True)
    except Exception:  # noqa: BLE001  (a config that does not evaluate: AllenNLP's own one-line error follows)
        return
    trainer = config.get("trainer") or {}
    if "num_epochs" in trainer and not _is_count(trainer["num_epochs"]):
        raise UserError(f"trainer.num_epochs must be an integer of at least 1, got {trainer['num_epochs']!r}")
    for loader in ("data_loader", "validation_data_loader"):
        settings = config.get(loader) or {}
        for where, holder in ((loader, settings), (f"{loader}.batch_sampler", settings.get("batch_sampler") or {})):
            if isinstance(holder, dict) and "batch_size" in holder and not _is_count(holder["batch_size"]):
                raise UserError(f"{where}.batch_size must be an integer of at least 1, got {holder['batch_size']!r}")
    for path, test, expected in NUMBER_RANGES:
        value = _value_at(config, path)
        if value is not None and not test(value):
            raise UserError(f"{path} must be {expected}, got {value!r}")
    for part, registrable in (("model", Model), ("dataset_reader", DatasetReader)):
        settings = config.get(part) or {}
        kind, known = _arguments(registrable, settings) if isinstance(settings, dict) else ("", [])
        unknown = sorted(k for k in settings if k != "type" and known and k not in known)
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            raise UserError(
                f"{part}.{unknown[0]} is not a setting of the {part.replace('_', ' ')} {kind!r}"
                + (f" (did you mean {part}.{close[0]}?)" if close else "")
                + f"; its settings are {', '.join(sorted(known))}"
            )
    for where, name in _model_names(config):
        _check_encoder(where, name)
