"""The checks of an evaluated training config, wherever one is read: ``Params.from_file`` of a training config
(``.jsonnet`` or JSON, not a model's ``config.json``: :mod:`eer_plugin.runtime.config_files`), through which
``eer-ner train``, ``allennlp train --include-package eer_plugin``, ``cbl`` and every other reader of a training config
go, before ``train`` creates its serialization
directory. Settings AllenNLP would answer with a traceback (a ``ZeroDivisionError`` for a batch size of 0, a
``TypeError`` for a value of the wrong type or a misspelt key, ...) are one
:class:`~eer_plugin.common.errors.UserError` line each, naming the setting and the fix:

* every key of ``model`` and ``dataset_reader`` is an argument of the registered class (misspelt keys are
  named with the closest argument);
* the values of :data:`~eer_plugin.runtime.setting_values.RULES` are what their rules take (``model.entity_ratio`` in
  (0, 1), ``model.dropout`` a probability, ``dataset_reader.tag_scheme`` a tag scheme, the learning rate above 0,
  ...): the rules the classes check when they are built;
* ``trainer.cuda_device`` is a device of this machine, and a value of an argument annotated ``float``, ``int``,
  ``bool`` or ``str`` is one;
* every ``model_name`` (the encoder) is a local directory that loads, or a model in the Hugging Face cache when
  offline;
* the training data holds at least one annotated entity as the reader reads it (:func:`check_training_data`).

What needs the command line (``-s``, ``--recover``, ``--force``) is ``eer-ner train``'s own
(:mod:`eer_plugin.training.settings_checks`). AllenNLP is imported inside the functions only.
"""

import contextlib
import copy
import inspect
import logging
import typing
from typing import Any, Dict, Iterator, Set, Tuple

from eer_plugin.common.errors import SettingError, UserError, check_cuda_device
from eer_plugin.common.wording import counted, not_a_setting
from eer_plugin.core.ranges import is_integer, is_number
from eer_plugin.corpus.documents import DataFileError
from eer_plugin.runtime.custom_code import config_items
from eer_plugin.runtime.encoders import WORDS, check_encoder, encoder_source, is_local_path, is_offline, load_tokenizer
from eer_plugin.runtime.setting_values import RULES

_ABSENT = object()


def _value_at(config: Dict[str, Any], path: str) -> Any:
    """The value at the dotted ``path`` (a list's items by their index, or ``callbacks[eer_ratio_init]``: the first
    item of the list ``callbacks`` of that type), or :data:`_ABSENT`."""
    value: Any = config
    for key in path.split("."):
        key, _, of_type = key.rstrip("]").partition("[")
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return _ABSENT
        if of_type:
            items = value if isinstance(value, list) else []
            value = next((i for i in items if isinstance(i, dict) and i.get("type") == of_type), _ABSENT)
    return value


def _rule_problems(config: Dict[str, Any]) -> Iterator[str]:
    """One line for each value of :data:`~eer_plugin.runtime.setting_values.RULES` that its rule refuses (the
    validation reader's by the reader's rules too, each learning rate of the optimizer's parameter groups by the
    learning rate's: ``trainer.optimizer.parameter_groups.0.1.lr`` is the heads' rate)."""
    checks = [
        (path, rule)
        for key, rule in RULES.items()
        for path in ((key, "validation_" + key) if key.startswith("dataset_reader.") else (key,))
    ]
    groups = _value_at(config, "trainer.optimizer.parameter_groups")
    for index in range(len(groups) if isinstance(groups, list) else 0):
        checks.append((f"trainer.optimizer.parameter_groups.{index}.1.lr", RULES["trainer.optimizer.lr"]))
    for path, rule in checks:
        value = _value_at(config, path)
        problem = rule.problem(path, value) if value is not _ABSENT else None
        if problem:
            yield problem


def _arguments(registrable, config: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    """``(class name, {argument name: its annotation})`` of the constructor of the registered class ``config``
    names; no names when it takes ``**kwargs`` or is not known."""
    name = config.get("type")
    if not isinstance(name, str):
        return "", {}
    try:
        cls = registrable.resolve_class_name(name)[0]
    except Exception:  # noqa: BLE001  (AllenNLP reports an unknown type itself, in one line)
        return name, {}
    names: Dict[str, Any] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = inspect.signature(klass.__init__).parameters
        for p, parameter in parameters.items():
            if p != "self" and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                names.setdefault(p, parameter.annotation)
        if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            break
    return name, names


#: what a value of each plain annotation must be (AllenNLP's ``from_params`` raises a ``TypeError`` otherwise)
_EXPECTED = {float: ("a number", is_number), int: ("an integer", is_integer), bool: ("true or false", None), str: ("a string", None)}  # fmt: skip


def _type_problem(value: Any, annotation: Any) -> str:
    """What ``value`` must be to be taken for an argument annotated ``annotation`` (``float``, ``int``, ``bool``,
    ``str`` or ``Optional`` of one), or ``""`` when it is (or the annotation is another)."""
    arms = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Union else (annotation,)
    optional = type(None) in arms
    arms = tuple(a for a in arms if a is not type(None))
    if len(arms) != 1 or arms[0] not in _EXPECTED or value is None and optional:
        return ""
    expected, test = _EXPECTED[arms[0]]
    ok = value is not None and (test(value) if test else type(value) is arms[0])
    return "" if ok else expected + (", or null" if optional else "")


def _check_encoder(where: str, name: str, tokenizers: Set[str]) -> None:
    """:class:`~eer_plugin.runtime.encoders.EncoderError` for the encoder ``name`` at the config key ``where`` that
    cannot load: a local path that is no transformers model (what it lacks: an embedder its config and weights, both
    the tokenizer, which is loaded here unless it is in ``tokenizers``, the paths loaded already), a name that is not
    in the Hugging Face cache when offline."""
    if name == WORDS:
        return
    embedder = where.startswith("model.")
    where = "EER_ENCODER" if encoder_source(name) == "EER_ENCODER" else where
    resolved = check_encoder(name, ("config", "weights") if embedder else (), where)
    if is_local_path(resolved):
        if resolved not in tokenizers:  # the reader and the embedder load it: its EncoderError now, before -s
            load_tokenizer(resolved, name)
            tokenizers.add(resolved)
        return
    if not is_offline():
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


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No INFO lines while the checks build a reader and read a file (AllenNLP logs each parameter of the reader, the
    reader each file's encoding): the run logs them when it builds its own, into its ``out.log``, and a check run
    beside a finished run's log handlers adds nothing to that log. Warnings still show."""
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.INFO))
    try:
        yield
    finally:
        logging.disable(previous)


def check_training_data(config: Dict[str, Any]) -> None:
    """:class:`DataFileError` naming the training file when it holds no annotated entity as the config's reader reads
    it (every document without one, or none left by the short/shortest variant): a tagger would have no entity type
    to learn. The reader is built first (a setting it refuses, ``max_length`` for its tokenizer, is its one line);
    the file is read up to its first entity only, and a bad line of it is its own one-line error."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader

    path, settings = config.get("train_data_path"), config.get("dataset_reader")
    if not isinstance(path, str) or "://" in path or not isinstance(settings, dict):
        return
    with _quiet():
        try:
            reader = DatasetReader.from_params(Params(copy.deepcopy(settings)))
        except UserError:
            raise
        except Exception:  # noqa: BLE001  (AllenNLP reports a reader it cannot build itself, in one line)
            return
        if not hasattr(reader, "iter_documents"):
            return
        documents = 0
        for document in reader.iter_documents(path):
            if document.spans:
                return
            documents += 1
    variant = getattr(reader, "variant", "all")
    kept = (
        f"of the documents the {variant!r} variant keeps (it drops those without annotation)"
        if variant != "all"
        else ""
    )
    raise DataFileError(
        f"{path}: no annotated entity in {counted(documents, 'document')}{' ' + kept if kept else ''}: a tagger learns "
        "its entity types from the annotated entities; annotate some, or label the text with a list of names "
        "(eer-ner eer-dictionary), and check that EER_TRAIN_DATA names the file you meant"
    )


def check_training_config(config: Dict[str, Any]) -> None:
    """:class:`UserError` for the first setting of the evaluated training ``config`` (a dict) that cannot work, in
    the order of the module docstring: the keys, the rules, the device, the types, the encoders, the data."""
    from allennlp.data import DatasetReader
    from allennlp.models import Model

    arguments = {}
    for part, registrable in (("model", Model), ("dataset_reader", DatasetReader)):
        settings = config.get(part) or {}
        kind, known = _arguments(registrable, settings) if isinstance(settings, dict) else ("", {})
        unknown = sorted(k for k in settings if k != "type" and known and k not in known)
        if unknown:
            raise UserError(not_a_setting(part, unknown[0], sorted(known), f"the {part.replace('_', ' ')} {kind!r}"))
        arguments[part] = (settings, known)
    for problem in _rule_problems(config):
        raise SettingError(problem)
    trainer = config.get("trainer") or {}
    if isinstance(trainer, dict) and "cuda_device" in trainer:
        check_cuda_device(trainer["cuda_device"], "trainer.cuda_device (EER_CUDA_DEVICE)")
    for part, (settings, known) in arguments.items():
        for key, value in settings.items():
            expected = _type_problem(value, known.get(key)) if key != "type" else ""
            if expected:
                raise UserError(f"{part}.{key} must be {expected}, got {value!r}")
    checked, tokenizers = set(), set()
    for where, key, name in config_items(config):
        if key == "model_name" and isinstance(name, str) and (where.startswith("model."), name) not in checked:
            checked.add((where.startswith("model."), name))  # each encoder once as an embedder, once otherwise
            _check_encoder(where, name, tokenizers)
    check_training_data(config)
