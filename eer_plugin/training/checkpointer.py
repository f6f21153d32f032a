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
* **A checked resume.** Every checkpoint also records the fingerprint of its model state and the vocabulary of its
  model. A run resumes from the newest checkpoint that can be used (:meth:`AtomicCheckpointer.newest_usable`):
  both files read with ``weights_only=True`` and checked (:mod:`eer_plugin.training.checkpoint_files`: damaged,
  empty, not a pair, another object, code, another model or vocabulary), a newer one that cannot be used named in
  a warning (it is written again when the run reaches it); none usable is one line. ``--recover`` checks the
  directory before anything is written (:mod:`eer_plugin.training.recovery`). ``best.th`` is re-linked from the
  best epoch's checkpoint when it is missing or damaged, and always read from the run's own directory.
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

from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

from eer_plugin.common import atomic
from eer_plugin.common.wording import counted
from eer_plugin.runtime.setting_values import check_arguments
from eer_plugin.training import checkpoint_files, epoch_state
from eer_plugin.training.checkpoint_files import (
    FINGERPRINT_KEY,
    RNG_KEY,
    START_AGAIN,
    VOCABULARY_KEY,
    CheckpointError,
    UnusableCheckpoint,
)
from eer_plugin.training.rng_states import rng_states, set_rng_states

logger = logging.getLogger(__name__)


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
        # each refused now, not when the first checkpoint is written (runtime.setting_values)
        check_arguments("trainer.checkpointer", locals())
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
            # what a resume checks: these weights belong to this training state, and to this vocabulary
            training_state[FINGERPRINT_KEY] = checkpoint_files.fingerprint(checkpoint.model_state)
            training_state[VOCABULARY_KEY] = checkpoint_files.vocabulary_record(trainer.model.vocab)
            # the training state first: a model_state file marks a complete checkpoint. Both are written even when
            # files of that name exist: they may be the unusable ones a recovered run went back past
            atomic.atomic_torch_save(training_state, self._training_state_path(epochs, batches))
            atomic.atomic_torch_save(checkpoint.model_state, self._model_state_path(epochs, batches))
        # both files exist now: AllenNLP's method only does its bookkeeping and removes old checkpoints
        # (model_state before training_state, so a kill there leaves no half checkpoint either)
        super().save_checkpoint(trainer)

    def _find_all_checkpoints(self) -> Set[Tuple[int, int]]:
        """Only checkpoints with both files (a model_state alone is what a non-atomic writer left)."""
        return {c for c in super()._find_all_checkpoints() if os.path.isfile(self._training_state_path(*c))}

    # ---- loading
    def newest_usable(
        self, trainer=None, mmap: bool = False, quiet: bool = False
    ) -> Optional[Tuple[str, Dict[str, Any], Dict[str, Any]]]:
        """``(model path, model state, training state)`` of the newest checkpoint that can be used (read and checked
        by :mod:`eer_plugin.training.checkpoint_files`; with ``trainer``: that fits its model), None when there is no
        checkpoint. Newer ones that cannot be used are named in a warning (unless ``quiet``); a
        :class:`CheckpointError` when none can."""
        skipped = []
        for epochs, batches in sorted(self._find_all_checkpoints(), reverse=True):
            model_path, training_path = (
                self._model_state_path(epochs, batches),
                self._training_state_path(epochs, batches),
            )
            try:
                model_state, training_state = checkpoint_files.read_checkpoint(
                    model_path, training_path, epochs, batches, mmap=mmap
                )
                problem = checkpoint_files.fit_problem(model_state, training_state, trainer) if trainer else None
                if problem:
                    raise UnusableCheckpoint(model_path, problem, foreign=True)
            except UnusableCheckpoint as unusable:
                skipped.append(unusable)
                continue
            if skipped and not quiet:
                logger.warning(
                    "resuming from %s, the newest checkpoint that can be used: %s cannot (%s); the run replaces "
                    "%s when it reaches %s again",
                    model_path,
                    counted(len(skipped), "newer checkpoint"),
                    "; ".join(str(s) for s in skipped),
                    "it" if len(skipped) == 1 else "them",
                    "that point" if len(skipped) == 1 else "those points",
                )
            return model_path, model_state, training_state
        if not skipped:
            return None
        newest = skipped[0]
        others = (
            f"; the {counted(len(skipped) - 1, 'older checkpoint')} cannot be used either" if len(skipped) > 1 else ""
        )
        fix = (
            "the configuration, the encoder or the training data are not those the run began with: recover with "
            f"those, or {START_AGAIN}"
            if newest.foreign
            else f"there is no checkpoint to continue from: {START_AGAIN}"
        )
        raise CheckpointError(f"{newest}{others}: {fix}")

    def load_checkpoint(self) -> Optional[TrainerCheckpoint]:
        trainer = self._calling_trainer()
        if self._serialization_dir is not None and os.path.isdir(self._serialization_dir):
            atomic.remove_temporary_files(self._serialization_dir)
        self._attach(trainer)
        found = self.newest_usable(trainer)
        if found is None:
            return None
        model_path, model_state, training_state = found
        logger.info(
            "resuming from the checkpoint %s (%s and %s done)",
            model_path,
            counted(training_state["epochs_completed"], "epoch"),
            counted(training_state["batches_in_epoch_completed"], "batch"),
        )
        for key in (FINGERPRINT_KEY, VOCABULARY_KEY):
            training_state.pop(key, None)
        self._restore_best_weights(training_state, model_path)
        running = training_state.pop(epoch_state.EPOCH_KEY, None)
        rng = training_state.pop(RNG_KEY, None)
        if rng is None:
            logger.warning(
                "%s has no random number generator states (written by another checkpointer): "
                "the resumed run will not repeat the interrupted one exactly",
                model_path,
            )
        elif trainer is None:
            set_rng_states(rng["now"])
        else:
            self.pending_rng = {**rng, "epoch": running}
        return TrainerCheckpoint(model_state, training_state)

    def _restore_best_weights(self, training_state: Dict[str, Any], model_path: str) -> None:
        """``best.th`` as the trainer left it at the checkpoint's point (re-linked from the best epoch's checkpoint
        when a kill fell between the trainer's removal and its new link, or it is damaged:
        :func:`~eer_plugin.training.checkpoint_files.best_weights_source`), and the training state pointing at this
        directory's ``best.th`` (it names the path the run had when it was saved: a moved or copied directory would
        end with the weights of another directory's ``best.th``)."""
        best = os.path.join(self._serialization_dir, "best.th")
        source = checkpoint_files.best_weights_source(self._serialization_dir, training_state, model_path)
        if source is not None:
            logger.info("best.th <- %s (the checkpoint of the best epoch)", source)
            atomic.atomic_link_or_copy(source, best)
        saved = training_state.get("best_model_filename")
        # the checkpoint of the first best epoch is saved before the trainer names best.th: it holds None there, and
        # a run resumed from it must still end with best.th's weights, as the trainer would have named it
        has_best = (training_state.get("metric_tracker") or {}).get("best_epoch") is not None
        named = saved and os.path.basename(saved) == "best.th"
        if source is not None or named or has_best and "moving_average" not in training_state:
            training_state["best_model_filename"] = best


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

                try:
                    with open(path, encoding="utf-8") as handle:
                        last = strict_json.load(handle)
                    last = dict(last)
                except (OSError, ValueError, TypeError) as error:  # damaged: the model is whole all the same
                    logger.warning("%s cannot be read (%s): metrics.json lacks the last epoch's metrics", path, error)
                    last = {}
                for key, value in last.items():
                    metrics.setdefault(key, value)
        return metrics, epoch

    _try_train.eer_completed = True  # type: ignore[attr-defined]
    return _try_train


def install() -> None:
    """Atomic ``best.th`` and ``metrics*.json`` in AllenNLP's trainer, weights-only loads of ``best.th`` and of the
    ``default`` checkpointer's files, and the whole metrics of a recovered run that had nothing left to train
    (idempotent; see the module docstring)."""
    from allennlp.common import util as common_util
    from allennlp.training import gradient_descent_trainer
    from allennlp.training import util as training_util

    trainer_class = gradient_descent_trainer.GradientDescentTrainer
    trainer_class._save_model_state = _atomic_save_model_state
    trainer_class._load_model_state = checkpoint_files.load_model_state
    Checkpointer.load_checkpoint = checkpoint_files.load_default_checkpoint
    if not getattr(trainer_class._try_train, "eer_completed", False):
        trainer_class._try_train = _with_last_epoch_metrics(trainer_class._try_train)
    gradient_descent_trainer.hardlink_or_copy = atomic.atomic_link_or_copy
    common_util.dump_metrics = _atomic_dump_metrics
    training_util.dump_metrics = _atomic_dump_metrics
