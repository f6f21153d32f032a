"""What a training epoch has accumulated so far, kept in a checkpoint *inside* an epoch, so that a run resumed
from it reports that epoch's training metrics over all its batches, as the uninterrupted run does.

AllenNLP keeps two things of a running epoch outside any checkpoint: the trainer's sums of the batch losses (local
variables of ``GradientDescentTrainer._train_epoch``: the ``loss`` and ``reg_loss`` metrics are those sums over the
epoch's batches) and the model's metric objects (``allennlp.training.metrics.Metric`` attributes of its modules, e.g.
the tagger's ``rho_hat`` average, reset at every epoch's end). Resumed inside an epoch, both would start from zero,
and that epoch's ``training_*`` metrics (``training_rho_hat`` among them, which the benchmark reports) would cover the
batches after the resume only.

* :func:`epoch_state` (called by the checkpointer, :mod:`eer_plugin.training.checkpointer`) returns both: the loss
  sums as the trainer has them after the checkpoint's batch, and each metric object's attributes in plain values
  (numbers, text, lists, tensors; ``Counter`` and nested objects tagged), which ``torch.load(weights_only=True)``
  reads back.
* :func:`resume_epoch` puts them back when the resumed epoch trains its first batch again: the metric objects'
  attributes, and the loss sums, from which the training loss is summed on batch by batch in the trainer's order,
  so the epoch's ``loss`` is the uninterrupted run's to the last bit (floating-point addition is not associative:
  adding the saved sum to the sum of the later batches would not be).

:func:`install` wraps ``allennlp.training.util.get_metrics``, which the trainer calls after every training batch with
its running sums: it records them (:func:`epoch_state` reads them) and, in a resumed epoch, hands on the continued
sums instead. Under distributed training the sums are per worker and reduced at the epoch's end, so nothing is
carried there (a warning says so): that epoch's training loss covers the batches after the resume, as in AllenNLP.
"""

import copy
import inspect
import logging
import weakref
from collections import Counter
from typing import Any, Dict, Optional

from eer_plugin.core.ranges import is_number

logger = logging.getLogger(__name__)

#: the key of a checkpoint's training state that holds :func:`epoch_state` (only for a checkpoint inside an epoch)
EPOCH_KEY = "eer_epoch"


class _Sums:
    """The training loss sums of the current epoch, as the trainer has them (``carried``: summed on by us)."""

    def __init__(self, loss: float = 0.0, reg_loss: Optional[float] = None, carried: bool = False) -> None:
        self.loss, self.reg_loss, self.carried = loss, reg_loss, carried


_SUMS: "weakref.WeakKeyDictionary[Any, _Sums]" = weakref.WeakKeyDictionary()  # model -> its epoch's sums


def metric_objects(model) -> Dict[str, Any]:
    """``{module.attribute: metric}`` of the ``Metric`` attributes of the model's modules."""
    from allennlp.training.metrics import Metric

    return {
        f"{module_name}.{attribute}": value
        for module_name, module in model.named_modules()
        for attribute, value in vars(module).items()
        if isinstance(value, Metric)
    }


def _plain(value: Any) -> Any:
    """``value`` in what a weights-only ``torch.load`` reads: numbers, text, None, tensors, and tagged dicts for
    lists, tuples, dicts, ``Counter`` and objects (their attributes); anything else is a ``TypeError``."""
    import torch

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, Counter):
        return {"kind": "counter", "items": [[_plain(k), _plain(v)] for k, v in value.items()]}
    if isinstance(value, dict):
        return {"kind": "dict", "items": [[_plain(k), _plain(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"kind": type(value).__name__, "items": [_plain(v) for v in value]}
    if hasattr(value, "__dict__") and not isinstance(value, type) and not inspect.isroutine(value):
        return {"kind": "object", "class": type(value).__qualname__, "items": _plain(dict(vars(value)))}
    raise TypeError(f"a {type(value).__name__} cannot be kept in a checkpoint")


def _restored(saved: Any, current: Any) -> Any:
    """The value :func:`_plain` made ``saved`` from; an object's attributes are set on ``current``, the object of
    the same class that the fresh model holds in its place (a ``TypeError`` when there is none)."""
    if not isinstance(saved, dict):
        return saved
    kind, items = saved["kind"], saved["items"]
    if kind == "counter":
        return Counter({_restored(k, None): _restored(v, None) for k, v in items})
    if kind == "dict":
        return {_restored(k, None): _restored(v, None) for k, v in items}
    if kind in ("list", "tuple"):
        values = [_restored(v, None) for v in items]
        return values if kind == "list" else tuple(values)
    if current is None or type(current).__qualname__ != saved["class"]:
        raise TypeError(f"the checkpoint holds a {saved['class']} where the model has a {type(current).__name__}")
    for name, value in items["items"]:
        setattr(current, name, _restored(value, getattr(current, name, None)))
    return current


def epoch_state(trainer) -> Optional[Dict[str, Any]]:
    """The running epoch's loss sums and metric states of ``trainer``'s model (None before its first batch or when a
    metric holds a value that cannot be kept: a warning names it, and a resume then covers the later batches)."""
    model = trainer.model
    sums = _SUMS.get(model)
    if sums is None:
        return None
    try:
        metrics = {name: _plain(metric) for name, metric in metric_objects(model).items()}
    except TypeError as error:
        logger.warning("the running epoch's metrics are not kept in the checkpoint (%s)", error)
        return None
    return {"loss": sums.loss, "reg_loss": sums.reg_loss, "metrics": metrics}


def saved_state_problem(state: Any) -> Optional[str]:
    """Why ``state`` is not an :func:`epoch_state` as the checkpointer saves it, or None."""
    if not isinstance(state, dict) or not isinstance(state.get("metrics"), dict):
        return "no metrics"
    if not is_number(state.get("loss")) or not (state.get("reg_loss") is None or is_number(state["reg_loss"])):
        return f"the loss sums are {state.get('loss')!r} and {state.get('reg_loss')!r}, not numbers"
    return None


def resume_problem(model, state: Dict[str, Any]) -> Optional[str]:
    """Why :func:`resume_epoch` could not put ``state`` back into ``model``'s metric objects (tried on copies of
    them), or None."""
    metrics = metric_objects(model)
    try:
        for name, saved in state["metrics"].items():
            if name in metrics:
                _restored(saved, copy.deepcopy(metrics[name]))
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None


def resume_epoch(model, state: Dict[str, Any]) -> None:
    """Puts a checkpoint's :func:`epoch_state` back into ``model``'s metric objects and loss sums."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        logger.warning(
            "resumed inside an epoch under distributed training: that epoch's training metrics cover the "
            "batches after the resume only"
        )
        return
    metrics = metric_objects(model)
    for name, saved in state["metrics"].items():
        if name not in metrics:
            logger.warning("the checkpoint has the state of metric %s, which this model does not have", name)
            continue
        _restored(saved, metrics[name])
    _SUMS[model] = _Sums(state["loss"], state["reg_loss"], carried=True)


def _get_metrics(original):
    """``allennlp.training.util.get_metrics`` recording the trainer's training loss sums per model, and handing on
    the continued sums in an epoch resumed from a checkpoint inside it."""

    def get_metrics(
        model, total_loss, total_reg_loss, batch_loss=None, batch_reg_loss=None, num_batches=0, *args, **kwargs
    ):
        if getattr(model, "training", False):
            sums = _SUMS.get(model)
            if sums is not None and sums.carried:
                if batch_loss is not None:  # a batch: sum on in the trainer's order
                    sums.loss += batch_loss
                    if batch_reg_loss is not None:
                        sums.reg_loss = (sums.reg_loss or 0.0) + batch_reg_loss
                total_loss = sums.loss
                total_reg_loss = sums.reg_loss if total_reg_loss is not None else None
            else:
                _SUMS[model] = _Sums(total_loss, total_reg_loss)
            if batch_loss is None:  # the epoch's end: its sums start again from zero
                _SUMS.pop(model, None)
        return original(model, total_loss, total_reg_loss, batch_loss, batch_reg_loss, num_batches, *args, **kwargs)

    get_metrics.eer_epoch_state = True  # type: ignore[attr-defined]
    return get_metrics


def install() -> None:
    """Wraps ``allennlp.training.util.get_metrics`` (idempotent; see the module docstring)."""
    from allennlp.training import util as training_util

    if not getattr(training_util.get_metrics, "eer_epoch_state", False):
        training_util.get_metrics = _get_metrics(training_util.get_metrics)
