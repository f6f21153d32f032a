"""The states of every random number generator a training run draws from (Python's, NumPy's, torch's, and the
private generators of the model's modules and of the training data loader), as values a weights-only
``torch.load`` reads: what the ``eer_atomic`` checkpointer (:mod:`eer_plugin.training.checkpointer`) keeps in
every checkpoint, and what the ratio-calibrated start saves and restores around its pass over the data."""

import logging
import random
from typing import Any, Dict, Optional

import numpy
import torch

logger = logging.getLogger(__name__)

_GENERATOR_TYPES = (random.Random, numpy.random.RandomState, numpy.random.Generator, torch.Generator)


def _plain(value: Any) -> Any:
    """Numpy arrays and scalars as lists/ints (``torch.load(weights_only=True)`` reads those)."""
    if isinstance(value, numpy.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _numpy(value: Any) -> Any:
    if isinstance(value, dict) and "__ndarray__" in value:
        return numpy.asarray(value["__ndarray__"], dtype=value["dtype"])
    if isinstance(value, dict):
        return {k: _numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_numpy(v) for v in value)
    return value


def _generator_state(generator) -> Any:
    if isinstance(generator, random.Random):
        return generator.getstate()
    if isinstance(generator, numpy.random.RandomState):
        return _plain(generator.get_state(legacy=False))
    if isinstance(generator, numpy.random.Generator):
        return _plain(generator.bit_generator.state)
    return generator.get_state()  # torch.Generator


def _set_generator_state(generator, state: Any) -> None:
    if isinstance(generator, random.Random):
        generator.setstate(_tuples(state))
    elif isinstance(generator, numpy.random.RandomState):
        generator.set_state(_numpy(state))
    elif isinstance(generator, numpy.random.Generator):
        generator.bit_generator.state = _numpy(state)
    else:
        generator.set_state(state)


def _tuples(state: Any) -> Any:
    """random.Random states are nested tuples; a list (from an older save) becomes a tuple again."""
    return tuple(_tuples(s) for s in state) if isinstance(state, (list, tuple)) else state


def private_generators(trainer) -> Dict[str, Any]:
    """``{name: generator}`` of the generator attributes of the model's modules and of the
    training data loader and its batch sampler."""
    found: Dict[str, Any] = {}
    model = getattr(trainer, "model", None)
    if model is not None:
        for module_name, module in model.named_modules():
            for attribute, value in vars(module).items():
                if isinstance(value, _GENERATOR_TYPES):
                    found[f"model:{module_name}.{attribute}"] = value
    loader = getattr(trainer, "data_loader", None)
    loader = getattr(loader, "wrapped_loader", loader)
    for owner_name, owner in (("data_loader", loader), ("batch_sampler", getattr(loader, "batch_sampler", None))):
        if owner is None:
            continue
        for attribute, value in vars(owner).items() if hasattr(owner, "__dict__") else ():
            if isinstance(value, _GENERATOR_TYPES):
                found[f"{owner_name}.{attribute}"] = value
    return found


def rng_states(trainer=None) -> Dict[str, Any]:
    """The states of every generator a training run draws from (see the module docstring)."""
    states: Dict[str, Any] = {
        "python": random.getstate(),
        "numpy": _plain(numpy.random.get_state(legacy=False)),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    if trainer is not None:
        states["private"] = {name: _generator_state(g) for name, g in private_generators(trainer).items()}
    return states


def set_rng_states(states: Dict[str, Any], trainer=None) -> None:
    random.setstate(_tuples(states["python"]))
    numpy.random.set_state(_numpy(states["numpy"]))
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    if trainer is not None:
        generators = private_generators(trainer)
        for name, state in states.get("private", {}).items():
            if name in generators:
                _set_generator_state(generators[name], state)
            else:
                logger.warning("checkpoint has the state of generator %s, which this run does not have", name)


def _fresh_like(generator) -> Any:
    """A new generator of ``generator``'s kind (to try a state on without touching ``generator``)."""
    if isinstance(generator, random.Random):
        return random.Random()
    if isinstance(generator, numpy.random.RandomState):
        return numpy.random.RandomState()
    if isinstance(generator, numpy.random.Generator):
        return numpy.random.Generator(type(generator.bit_generator)())
    return torch.Generator(device=generator.device)


def rng_states_problem(states: Any, trainer=None) -> Optional[str]:
    """Why ``states`` (a checkpoint's :func:`rng_states`) cannot be set, found by setting them on new generators of
    the same kinds (with ``trainer``: its private generators' too), or None."""
    if not isinstance(states, dict):
        return f"a {type(states).__name__}, not generator states"
    try:
        random.Random().setstate(_tuples(states["python"]))
        numpy.random.RandomState().set_state(_numpy(states["numpy"]))
        torch.Generator().set_state(states["torch"])
        private = states.get("private", {})
        if not isinstance(private, dict):
            return "the private generators' states are not a dict"
        generators = private_generators(trainer) if trainer is not None else {}
        for name, state in private.items():
            if name in generators:
                _set_generator_state(_fresh_like(generators[name]), state)
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as error:
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None
