"""Distributed training's workers leave their process group before they exit.

AllenNLP's ``allennlp.commands.train._train_worker`` (the function ``torch.multiprocessing.spawn``
runs in every worker of ``allennlp train`` with a ``distributed`` section) initialises the process
group and never destroys it. A worker then exits with the group alive, and its gloo (CPU) threads
are torn down during interpreter finalisation; now and then that aborts the worker with SIGABRT
("terminate called without an active exception", pytorch/pytorch#190489) after training has
finished, and ``allennlp train`` fails without writing ``model.tar.gz``. On GPUs, NCCL prints a
warning for the same reason.

The same omission broke ``evaluate_on_test`` (a config with ``EER_TEST_DATA``): only worker 0
evaluates the test data after training (``TrainModel.finish``), and the metrics sum their counts over
all workers while a process group exists, so worker 0 waited forever for workers that had finished.
Worker 0 now leaves the group before that evaluation: every worker has returned from training by
then (the last collective operation is behind it), and the test data is read whole (the reader shards
only while a process group exists) and evaluated as in a run of one process.

:func:`install` (called when the plugin is imported; see :mod:`eer_plugin.patches`) puts
:func:`train_worker` in its place: AllenNLP's worker, then ``destroy_process_group()`` once it has
returned. A worker that fails keeps AllenNLP's behaviour (its group is left alone: destroying it
could wait for peers that are gone). ``mp.spawn`` pickles the worker function by name, so the spawned
process imports this module, which imports the plugin and so installs the patch there too; the
original is kept in :data:`_ALLENNLP_TRAIN_WORKER` (set by :func:`install` before the worker can run) and
is the one called.
"""

import importlib
import logging
from typing import Any, Callable, Optional

import torch.distributed as dist

logger = logging.getLogger(__name__)

#: AllenNLP's ``_train_worker`` as it was before :func:`install` replaced it
_ALLENNLP_TRAIN_WORKER: Optional[Callable[..., Any]] = None


def leave_process_group() -> bool:
    """Destroys the default process group if this process has one; True if it had."""
    if not (dist.is_available() and dist.is_initialized()):
        return False
    rank = dist.get_rank()
    dist.destroy_process_group()
    logger.info("worker %d left the process group", rank)
    return True


#: the plugin's registration module: ``mp.spawn`` starts each worker in a fresh interpreter that imports only
#: this module (the pickled function's), and ``import eer_plugin`` registers nothing, so a worker imports the
#: registration by name before it builds anything (it installs :func:`install` there too, which sets
#: :data:`_ALLENNLP_TRAIN_WORKER`). By name, because the registration is the layer above this one.
REGISTRATION = "eer_plugin.allennlp_plugin"


def train_worker(*args: Any, **kwargs: Any) -> Any:
    """AllenNLP's ``_train_worker`` (same arguments, same result), then :func:`leave_process_group`."""
    if _ALLENNLP_TRAIN_WORKER is None:  # a spawned worker: register the plugin (and install this patch) first
        importlib.import_module(REGISTRATION)
    result = _ALLENNLP_TRAIN_WORKER(*args, **kwargs)
    leave_process_group()
    return result


def _leaving_first(finish: Callable[..., Any]) -> Callable[..., Any]:
    """``TrainModel.finish`` (the test evaluation and ``metrics.json``, worker 0 only) after
    :func:`leave_process_group`."""

    def finish_alone(train_model: Any, metrics: dict) -> Any:
        leave_process_group()
        return finish(train_model, metrics)

    finish_alone.eer_leaves_process_group = True
    return finish_alone


def install() -> None:
    """Replaces ``allennlp.commands.train._train_worker`` with :func:`train_worker`, and makes
    ``TrainModel.finish`` leave the process group first (idempotent)."""
    global _ALLENNLP_TRAIN_WORKER
    from allennlp.commands import train as train_command

    if train_command._train_worker is not train_worker:
        _ALLENNLP_TRAIN_WORKER = train_command._train_worker
        train_command._train_worker = train_worker
    if not getattr(train_command.TrainModel.finish, "eer_leaves_process_group", False):
        train_command.TrainModel.finish = _leaving_first(train_command.TrainModel.finish)
