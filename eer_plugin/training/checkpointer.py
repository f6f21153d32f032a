"""Checkpoints that survive a kill, and a resumed run that is the run it resumes.

Registered as the checkpointer ``eer_atomic`` (``trainer: {checkpointer: {type: 'eer_atomic', ...}}``;
every argument is AllenNLP's ``default`` checkpointer's). Compared with that one:

* **Atomic files.** ``training_state_e<E>_b<B>.th`` and ``model_state_e<E>_b<B>.th`` are written
  to a temporary file in the same directory, flushed to disk, and renamed over the final name, the
  training state first: a ``model_state`` file therefore always belongs to a complete checkpoint,
  and only checkpoints with both files count. A kill at any moment leaves the previous checkpoint
  intact (old checkpoints are removed only after the new one is complete), so ``--recover``
  always works; leftover temporary files are removed on the next start.
* **``best.th`` and the other outputs.** :func:`install` (called when the plugin is imported) makes
  the trainer's ``best.th`` writes atomic (``GradientDescentTrainer._save_model_state`` and its
  hard-link-or-copy of the checkpoint), and ``metrics*.json`` (``dump_metrics``). The trainer
  deletes ``best.th`` just before linking the new one; if a kill falls in between, the next
  ``--recover`` re-creates it from the checkpoint it was being linked from (that checkpoint is the
  best epoch's: the trainer saves the checkpoint first). A run killed after its last checkpoint
  (while archiving, say) has no epoch left when recovered; AllenNLP would then write a
  ``metrics.json`` without the last epoch's metrics: they are taken from ``metrics_epoch_<N>.json``.
  ``model.tar.gz`` is atomic too (:mod:`eer_plugin.runtime.archive`); the files are written by
  :mod:`eer_plugin.common.atomic`.
* **Random number generators.** Every checkpoint also holds the states of Python's ``random``,
  NumPy's global generator, torch's CPU (and CUDA) generators, and every private generator of the
  model's modules and of the training data loader and its batch sampler (``random.Random``,
  ``numpy.random.RandomState``/``Generator``, ``torch.Generator`` attributes; e.g. the negative
  sampler of ``sns_tagger``). AllenNLP resumes by replaying the data loader over the finished
  epochs (it skips their batches; no forward passes, no validation), so the generators cannot
  simply be restored when the checkpoint is read: the states are put back at the moment the run
  resumes, i.e. when the data loader starts the first epoch that is trained again (for a
  checkpoint inside an epoch: that epoch starts from its saved start-of-epoch states, so its
  batches come in the same order, and the saved states are restored before the first batch
  that is trained again). An interrupted and recovered run then has the metrics and weights of
  the uninterrupted run, bit for bit (``tests/runtime/test_reliability.py``).
* **A checkpoint inside an epoch** (``save_every_num_seconds`` / ``save_every_num_batches``; the
  configs' ``EER_CHECKPOINT_SECONDS``) also holds what the epoch has summed so far, the training
  loss sums and the model's metric objects (:mod:`eer_plugin.training.epoch_state`), put back
  with the generators: the resumed epoch's ``training_*`` metrics are the uninterrupted run's
  too (AllenNLP alone would report them over the batches after the resume only).

AllenNLP's ``Checkpointer.load_checkpoint()`` receives no trainer; the trainer that calls it
(``GradientDescentTrainer._maybe_restore_checkpoint``, at the start of ``train()``) is found as the
caller, and its training data loader is wrapped (:class:`_ResumingLoader`, transparent otherwise).
Without such a caller the states are restored at once.
"""

import logging
import os
import sys
from typing import Any, Dict, Iterator, Optional, Set, Tuple, Union

import torch
from allennlp.nn import util as nn_util
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

from eer_plugin.common import atomic
from eer_plugin.training import epoch_state
from eer_plugin.training.rng_states import rng_states, set_rng_states

logger = logging.getLogger(__name__)

RNG_KEY = "eer_rng"


class _ResumingLoader:
    """The trainer's training data loader, unchanged, except that it records the generator states
    at the start of every epoch and puts back a checkpoint's states where the run resumes."""

    def __init__(self, loader, trainer, checkpointer: "AtomicCheckpointer") -> None:
        self.wrapped_loader = loader
        self._trainer = trainer
        self._checkpointer = checkpointer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped_loader, name)

    def __len__(self) -> int:
        return len(self.wrapped_loader)

    def __iter__(self) -> Iterator[Any]:
        trainer, checkpointer = self._trainer, self._checkpointer
        pending = checkpointer.pending_rng
        if pending is None or getattr(trainer, "_epochs_completed", None) != pending["epochs_completed"]:
            checkpointer.epoch_start_rng = rng_states(trainer)
            yield from self.wrapped_loader
            return
        checkpointer.pending_rng = None
        skip = pending["batches_in_epoch_completed"] * max(getattr(trainer, "_num_gradient_accumulation_steps", 1), 1)
        start = pending["now"] if skip == 0 else pending["epoch_start"]
        set_rng_states(start, trainer)
        checkpointer.epoch_start_rng = start
        logger.info(
            "random number generators restored from the checkpoint (epoch %d, batch %d)",
            pending["epochs_completed"],
            skip,
        )
        batches = iter(self.wrapped_loader)
        position = 0
        while True:
            if position == skip and skip > 0:
                set_rng_states(pending["now"], trainer)
                if pending.get("epoch") is not None:  # the epoch's loss sums and metrics so far
                    epoch_state.resume_epoch(trainer.model, pending["epoch"])
            try:
                batch = next(batches)
            except StopIteration:
                return
            yield batch
            position += 1


# ----------------------------------------------------------------------------------------- the checkpointer


@Checkpointer.register("eer_atomic")
class AtomicCheckpointer(Checkpointer):
    """AllenNLP's checkpointer with atomic files and the generators' states (module docstring)."""

    def __init__(
        self,
        serialization_dir: Union[str, os.PathLike],
        save_completed_epochs: bool = True,
        save_every_num_seconds: Optional[float] = None,
        save_every_num_batches: Optional[int] = None,
        keep_most_recent_by_count: Optional[int] = 2,
        keep_most_recent_by_age: Optional[int] = None,
    ) -> None:
        super().__init__(
            serialization_dir,
            save_completed_epochs=save_completed_epochs,
            save_every_num_seconds=save_every_num_seconds,
            save_every_num_batches=save_every_num_batches,
            keep_most_recent_by_count=keep_most_recent_by_count,
            keep_most_recent_by_age=keep_most_recent_by_age,
        )
        self.pending_rng: Optional[Dict[str, Any]] = None  # a checkpoint's states, until the run resumes
        self.epoch_start_rng: Optional[Dict[str, Any]] = None  # the states when the current epoch began
        self._trainer = None

    # ---- attaching to the trainer
    def _attach(self, trainer) -> None:
        if trainer is None or self._trainer is trainer:
            return
        self._trainer = trainer
        loader = getattr(trainer, "data_loader", None)
        if loader is not None and not isinstance(loader, _ResumingLoader):
            trainer.data_loader = _ResumingLoader(loader, trainer, self)

    @staticmethod
    def _calling_trainer() -> Optional[Trainer]:
        """The trainer whose ``_maybe_restore_checkpoint`` called ``load_checkpoint`` (a few frames up at most)."""
        frame = sys._getframe(2)  # 0: here, 1: load_checkpoint, 2: its caller
        for _ in range(4):
            if frame is None:
                break
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, Trainer):
                return candidate
            frame = frame.f_back
        return None

    # ---- saving
    def save_checkpoint(self, trainer: Trainer) -> None:
        if self._serialization_dir is None:
            return
        self._attach(trainer)
        checkpoint = trainer.get_checkpoint_state()
        if checkpoint is not None:
            state = checkpoint.trainer_state
            epochs, batches = state["epochs_completed"], state["batches_in_epoch_completed"]
            now = rng_states(trainer)
            training_state = dict(state)
            training_state[RNG_KEY] = {
                "now": now,
                "epoch_start": self.epoch_start_rng if self.epoch_start_rng is not None else now,
                "epochs_completed": epochs,
                "batches_in_epoch_completed": batches,
            }
            running = epoch_state.epoch_state(trainer) if batches > 0 else None
            if running is not None:  # inside an epoch: what the epoch has summed so far
                training_state[epoch_state.EPOCH_KEY] = running
            # the training state first: a model_state file marks a complete checkpoint
            training_path = self._training_state_path(epochs, batches)
            model_path = self._model_state_path(epochs, batches)
            if not os.path.isfile(training_path):
                atomic.atomic_torch_save(training_state, training_path)
            if not os.path.isfile(model_path):
                atomic.atomic_torch_save(checkpoint.model_state, model_path)
        # both files exist now: AllenNLP's method only does its bookkeeping and removes old checkpoints
        # (model_state before training_state, so a kill there leaves no half checkpoint either)
        super().save_checkpoint(trainer)

    def _find_all_checkpoints(self) -> Set[Tuple[int, int]]:
        """Only checkpoints with both files (a model_state alone is what a non-atomic writer left)."""
        return {c for c in super()._find_all_checkpoints() if os.path.isfile(self._training_state_path(*c))}

    # ---- loading
    def load_checkpoint(self) -> Optional[TrainerCheckpoint]:
        trainer = self._calling_trainer()
        if self._serialization_dir is not None and os.path.isdir(self._serialization_dir):
            atomic.remove_temporary_files(self._serialization_dir)
        self._attach(trainer)
        latest = self.find_latest_checkpoint()
        if latest is None:
            return None
        model_path, training_path = latest
        try:
            model_state = torch.load(model_path, map_location=nn_util.device_mapping(-1), weights_only=True)
            training_state = torch.load(training_path, map_location=nn_util.device_mapping(-1), weights_only=True)
        except Exception as error:
            raise RuntimeError(f"checkpoint {model_path} / {training_path} cannot be read: {error}") from error
        self._restore_best_weights(training_state, model_path)
        running = training_state.pop(epoch_state.EPOCH_KEY, None)
        rng = training_state.pop(RNG_KEY, None)
        if rng is None:
            logger.warning(
                "%s has no random number generator states (written by another checkpointer): "
                "the resumed run will not repeat the interrupted one exactly",
                training_path,
            )
        elif trainer is None:
            set_rng_states(rng["now"])
        else:
            self.pending_rng = {**rng, "epoch": running}
        return TrainerCheckpoint(model_state, training_state)

    def _restore_best_weights(self, training_state: Dict[str, Any], model_path: str) -> None:
        """Right after saving a checkpoint at the end of an epoch, the trainer replaces best.th if
        that epoch is the best so far (removes it, links the checkpoint's weights). A kill between
        the two leaves best.th missing or stale: if the checkpoint is the best epoch's, best.th is
        (re-)linked to its weights here, as the trainer would have done."""
        tracker = training_state.get("metric_tracker") or {}
        at_best_epoch = (
            training_state.get("batches_in_epoch_completed") == 0
            and tracker.get("best_epoch") is not None
            and tracker.get("best_epoch") == training_state.get("epochs_completed", 0) - 1
            and "moving_average" not in training_state  # best.th then holds averaged weights
        )
        best = os.path.join(self._serialization_dir, "best.th")
        if at_best_epoch:
            if not (os.path.exists(best) and os.path.samefile(best, model_path)):
                logger.info("best.th <- %s (the checkpoint of the best epoch)", model_path)
                atomic.atomic_link_or_copy(model_path, best)
            training_state["best_model_filename"] = best
        elif training_state.get("best_model_filename") and not os.path.exists(training_state["best_model_filename"]):
            logger.warning("%s (the best weights so far) is missing", training_state["best_model_filename"])


# ----------------------------------------------------------------------------------------- install


def _atomic_save_model_state(self, path: str) -> None:
    """``GradientDescentTrainer._save_model_state`` (best.th), written atomically."""
    model = self._ddp_wrapped_model if self._ddp_wrapped_model is not None else self.model
    atomic.atomic_torch_save(model.state_dict(), path)


def _atomic_dump_metrics(file_path: Optional[str], metrics: Dict[str, Any], log: bool = False) -> None:
    """``allennlp.common.util.dump_metrics`` writing the file atomically."""
    import json

    metrics_json = json.dumps(metrics, indent=2)
    if file_path:
        atomic.atomic_write_text(file_path, metrics_json)
    if log:
        logging.getLogger("allennlp.common.util").info("Metrics: %s", metrics_json)


def _with_last_epoch_metrics(try_train):
    """``GradientDescentTrainer._try_train``, completing the metrics of a run that had no epoch left
    to train (recovered after its last checkpoint, e.g. killed while archiving): AllenNLP then
    returns only the ``best_*`` metrics; the last epoch's (``metrics_epoch_<N>.json``, as the
    uninterrupted run reports them) are added, so ``metrics.json`` is the same as without the kill."""

    def _try_train(self):
        metrics, epoch = try_train(self)
        if "epoch" not in metrics and self._serialization_dir and self._epochs_completed > 0:
            path = os.path.join(self._serialization_dir, f"metrics_epoch_{self._epochs_completed - 1}.json")
            if os.path.isfile(path):
                from eer_plugin.corpus import strict_json

                with open(path, encoding="utf-8") as handle:
                    for key, value in strict_json.load(handle).items():
                        metrics.setdefault(key, value)
        return metrics, epoch

    _try_train.eer_completed = True  # type: ignore[attr-defined]
    return _try_train


def install() -> None:
    """Atomic ``best.th`` and ``metrics*.json`` in AllenNLP's trainer, and the whole metrics of a
    recovered run that had nothing left to train (idempotent; see the module docstring)."""
    from allennlp.common import util as common_util
    from allennlp.training import gradient_descent_trainer
    from allennlp.training import util as training_util

    trainer_class = gradient_descent_trainer.GradientDescentTrainer
    trainer_class._save_model_state = _atomic_save_model_state
    if not getattr(trainer_class._try_train, "eer_completed", False):
        trainer_class._try_train = _with_last_epoch_metrics(trainer_class._try_train)
    gradient_descent_trainer.hardlink_or_copy = atomic.atomic_link_or_copy
    common_util.dump_metrics = _atomic_dump_metrics
    training_util.dump_metrics = _atomic_dump_metrics
