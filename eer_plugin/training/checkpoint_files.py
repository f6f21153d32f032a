"""One checkpoint of a training read safely, and why it cannot be used: the reading shared by ``--recover``'s checks
(:mod:`eer_plugin.training.recovery`) and the ``eer_atomic`` checkpointer's load
(:mod:`eer_plugin.training.checkpointer`).

* :func:`load_file` reads a ``.th`` file with the package's one weights-only reader
  (:func:`eer_plugin.runtime.weights_files.read_file`: no code from the file runs), whose reasons say in words why a
  file cannot be used: empty, incomplete (truncated), not a torch file, objects beyond plain values. A file the
  process may not read is a :class:`CheckpointError` at once (the user can fix it: ``chmod``); any other failure is
  an :class:`UnusableCheckpoint`, so the run may continue from an older checkpoint.
* :func:`read_checkpoint` reads both files of a checkpoint and checks what they hold: a model state of named
  tensors, a training state of AllenNLP's version 1 whose counters are those of its name, generator and epoch
  states of the checkpointer's format, and, for a checkpoint that records it (:data:`FINGERPRINT_KEY`), that the
  model state is the one saved with that training state (a model file newer or older than its training state is
  refused: the run would go on from weights that do not belong to its optimizer and epoch).
* :func:`fit_problem` compares a readable checkpoint with the model and optimizer a run has built: the weights'
  names and shapes, the vocabulary the checkpoint records (:data:`VOCABULARY_KEY`: another tag set of the same size
  loads without error and means other tags), the optimizer's parameter groups, the running epoch's metric states.
* :func:`best_weights_source`: where ``best.th`` comes from when a run resumes (or that its weights are lost).
* :func:`load_model_state` and :func:`load_default_checkpoint` replace AllenNLP's own loads of ``best.th`` at the end
  of training and of the ``default`` checkpointer's files (installed by the checkpointer's ``install``):
  ``weights_only=True``, a damaged file one line.
"""

import hashlib
import os
from typing import Any, Dict, Optional, Tuple

import torch

from eer_plugin.common.errors import UserError
from eer_plugin.common.wording import counted
from eer_plugin.runtime.weights_files import UnloadableFile, read_file
from eer_plugin.training import epoch_state
from eer_plugin.training.rng_states import rng_states_problem

#: the training state's key for :func:`fingerprint` of the model state saved with it
FINGERPRINT_KEY = "eer_model_sha256"
#: the training state's key for :func:`vocabulary_record` of the model's vocabulary
VOCABULARY_KEY = "eer_vocabulary"
#: the key of the generator states in a training state (the checkpointer's)
RNG_KEY = "eer_rng"
#: the fix for a run that cannot be continued
START_AGAIN = "start the run again with --force (it replaces the directory) or into a new directory"
#: the training state's keys that AllenNLP's trainer reads on every resume
TRAINER_KEYS = ("version", "epochs_completed", "batches_in_epoch_completed", "metric_tracker", "optimizer")


class CheckpointError(UserError):
    """A serialization directory that ``--recover`` cannot continue: one line naming the file, what is wrong and
    the fix."""


class UnusableCheckpoint(Exception):
    """A checkpoint that cannot be used (``reason``, naming ``path``): damaged, not a pair, or (``foreign``) whole
    but another model's."""

    def __init__(self, path: str, reason: str, foreign: bool = False) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.foreign = path, reason, foreign


def unreadable(path: str, error: OSError) -> CheckpointError:
    """The one line for a file of the run that this process may not read (``chmod 000``, another owner)."""
    return CheckpointError(
        f"{path}: cannot be read ({error.strerror or error}): make it readable (chmod u+r {path}) and run the "
        "same command again; nothing was changed"
    )


def load_file(path: str, mmap: bool = False) -> Any:
    """What the ``.th`` file ``path`` holds (:func:`~eer_plugin.runtime.weights_files.read_file`: weights-only;
    ``mmap``: its tensors mapped, not read, for checks); :class:`CheckpointError` when it may not be read,
    :class:`UnusableCheckpoint` otherwise."""
    try:
        return read_file(path, mmap=mmap)
    except OSError as error:
        raise unreadable(path, error) from None
    except UnloadableFile as unloadable:
        raise UnusableCheckpoint(path, unloadable.reason) from None


def _tensors(state: Any) -> bool:
    return isinstance(state, dict) and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items())


def fingerprint(model_state: Dict[str, torch.Tensor]) -> str:
    """SHA-256 of the model state's names, types, shapes and bytes (two saves of the same weights agree)."""
    digest = hashlib.sha256()
    for name in sorted(model_state):
        tensor = model_state[name].detach().cpu().contiguous()
        digest.update(f"{name}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        if tensor.numel():
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def _model_state_problem(state: Any) -> Optional[str]:
    if not _tensors(state) or not state:
        return f"holds a {type(state).__name__}, not a model's weights (named tensors)"
    return None


def _training_state_problem(state: Any, epochs: int, batches: int) -> Optional[str]:
    if not isinstance(state, dict):
        return f"holds a {type(state).__name__}, not a training state"
    missing = [key for key in TRAINER_KEYS if key not in state]
    if missing:
        return f"is not a training state (no {', '.join(missing)})"
    if state["version"] != 1:
        return f"is a training state of version {state['version']!r}; AllenNLP 2.10 reads version 1"
    if (state["epochs_completed"], state["batches_in_epoch_completed"]) != (epochs, batches):
        return (
            f"holds the training state after {state['epochs_completed']!r} epochs and "
            f"{state['batches_in_epoch_completed']!r} batches, not the {epochs} and {batches} of its name"
        )
    optimizer = state["optimizer"]
    if not isinstance(optimizer, dict) or not isinstance(optimizer.get("param_groups"), list):
        return "holds no optimizer state"
    if not isinstance(state["metric_tracker"], dict):
        return "holds no metric tracker state"
    if state.get(RNG_KEY) is not None:
        rng = state[RNG_KEY]
        problem = rng_states_problem(rng.get("now")) if isinstance(rng, dict) else "not a dict"
        problem = problem or (rng_states_problem(rng.get("epoch_start")) if isinstance(rng, dict) else None)
        if problem:
            return f"holds damaged random number generator states ({problem})"
    if state.get(epoch_state.EPOCH_KEY) is not None:
        problem = epoch_state.saved_state_problem(state[epoch_state.EPOCH_KEY])
        if problem:
            return f"holds a damaged state of the running epoch ({problem})"
    return None


def read_checkpoint(model_path: str, training_path: str, epochs: int, batches: int, mmap: bool = False) -> Tuple:
    """``(model_state, training_state)`` of the checkpoint after ``epochs`` epochs and ``batches`` batches, checked
    (see the module docstring); :class:`UnusableCheckpoint` naming the file that is wrong, or
    :class:`CheckpointError` for a file that may not be read."""
    training_state = load_file(training_path, mmap=mmap)
    problem = _training_state_problem(training_state, epochs, batches)
    if problem:
        raise UnusableCheckpoint(training_path, problem)
    model_state = load_file(model_path, mmap=mmap)
    problem = _model_state_problem(model_state)
    if problem:
        raise UnusableCheckpoint(model_path, problem)
    saved = training_state.get(FINGERPRINT_KEY)
    files = (_file_identity(model_path), _file_identity(training_path), saved)
    if saved is not None and _AGREED.get((model_path, training_path)) != files and saved != fingerprint(model_state):
        raise UnusableCheckpoint(
            model_path,
            f"does not hold the weights saved with {os.path.basename(training_path)} (written by another save: "
            "the pair does not belong together)",
        )
    _AGREED[(model_path, training_path)] = files
    return model_state, training_state


#: ``(model path, training path) -> (their identities, the fingerprint)`` of the pairs whose weights this process
#: found to agree with their fingerprint: ``--recover`` checks the checkpoint before training and loads it to
#: resume, and the second read hashes the weights again only when either file has changed
_AGREED: Dict[Tuple[str, str], Tuple] = {}


def _file_identity(path: str) -> Tuple[int, int, int, int]:
    """Device, inode, size and modification time of ``path``: an atomic write makes a new file, a write in place
    a new time or size."""
    status = os.stat(path)
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


# ----------------------------------------------------------------------------------------- the run's model


def vocabulary_record(vocab) -> Dict[str, Dict[str, Any]]:
    """``{namespace: {"size": n, "sha256": digest of its tokens in index order}}`` of an AllenNLP vocabulary."""
    record = {}
    for namespace in sorted(vocab.get_namespaces()):
        tokens = [vocab.get_token_from_index(i, namespace) for i in range(vocab.get_vocab_size(namespace))]
        record[namespace] = {
            "size": len(tokens),
            "sha256": hashlib.sha256("\n".join(tokens).encode("utf-8", "surrogatepass")).hexdigest(),
        }
    return record


def _weights_problem(saved: Dict[str, torch.Tensor], model) -> Optional[str]:
    own = model.state_dict()
    missing, unexpected = sorted(set(own) - set(saved)), sorted(set(saved) - set(own))
    if missing or unexpected:
        parts = [f"lacks {counted(len(missing), 'weight')} of this model ({missing[0]}, ...)"] if missing else []
        parts += (
            [f"has {counted(len(unexpected), 'weight')} this model lacks ({unexpected[0]}, ...)"] if unexpected else []
        )
        return "holds the weights of another model: it " + " and ".join(parts)
    for name in sorted(own):
        if tuple(saved[name].shape) != tuple(own[name].shape):
            return (
                f"holds the weights of another model: {name} is {list(saved[name].shape)} there and "
                f"{list(own[name].shape)} in the model this configuration and data build"
            )
    return None


def _vocabulary_problem(saved: Any, vocab) -> Optional[str]:
    if not isinstance(saved, dict):
        return None
    own = vocabulary_record(vocab)
    for namespace in sorted(set(saved) | set(own)):
        there, here = saved.get(namespace), own.get(namespace)
        if there != here:
            sizes = f"{there['size'] if there else 'no'} entries there, {here['size'] if here else 'none'} now"
            return f"was saved by a model with another vocabulary (namespace {namespace!r}: {sizes}, other entries)"
    return None


def _optimizer_problem(saved: Dict[str, Any], optimizer) -> Optional[str]:
    if optimizer is None:
        return None
    groups = saved["optimizer"]["param_groups"]
    own = [len(group["params"]) for group in optimizer.param_groups]
    there = [len(group.get("params", ())) if isinstance(group, dict) else -1 for group in groups]
    if own != there:
        return f"holds the optimizer of another model (parameters per group: {there} there, {own} here)"
    return None


def fit_problem(model_state: Dict[str, torch.Tensor], training_state: Dict[str, Any], trainer) -> Optional[str]:
    """Why the checkpoint does not fit the model and optimizer ``trainer`` has built, or None."""
    model = trainer.model
    problem = _weights_problem(model_state, model) or _vocabulary_problem(
        training_state.get(VOCABULARY_KEY), model.vocab
    )
    problem = problem or _optimizer_problem(training_state, getattr(trainer, "optimizer", None))
    running = training_state.get(epoch_state.EPOCH_KEY)
    if problem is None and running is not None:
        problem = epoch_state.resume_problem(model, running)
        problem = problem and f"holds the running epoch's metrics of another model ({problem})"
    rng = training_state.get(RNG_KEY)
    if problem is None and isinstance(rng, dict):
        problem = rng_states_problem(rng.get("now"), trainer) or rng_states_problem(rng.get("epoch_start"), trainer)
        problem = problem and f"holds the generator states of another model or data loader ({problem})"
    return problem


# ----------------------------------------------------------------------------------------- best.th


def read_model_weights(path: str, mmap: bool = False) -> Dict[str, torch.Tensor]:
    """The weights file ``path`` (``best.th``) read with :func:`load_file`; :class:`UnusableCheckpoint` when it holds
    no model weights."""
    state = load_file(path, mmap=mmap)
    problem = _model_state_problem(state)
    if problem:
        raise UnusableCheckpoint(path, problem)
    return state


def weights_file_problem(path: str) -> Optional[str]:
    """Why the weights file ``path`` cannot be loaded into a model, or None (:class:`CheckpointError` when it may not
    be read)."""
    try:
        read_model_weights(path, mmap=True)
    except UnusableCheckpoint as problem:
        return problem.reason
    return None


def best_weights_source(directory: str, training_state: Dict[str, Any], model_path: str) -> Optional[str]:
    """The checkpoint file that ``best.th`` must be (re-)linked from before a run resumes from ``training_state``
    (the checkpoint of ``model_path``), or None when ``best.th`` is right as it is.

    The trainer links ``best.th`` to the checkpoint of every epoch that is the best so far, and loads it when the
    run ends (unless the last epoch is the best). A run resumed from the best epoch's own checkpoint gets it from
    there (a kill between the trainer's removal of the old ``best.th`` and the new link leaves it missing or
    stale); otherwise ``best.th`` must be whole, or come from the best epoch's checkpoint if that is still there: a
    :class:`CheckpointError` says when the best weights are lost."""
    tracker = training_state.get("metric_tracker") or {}
    best_epoch = tracker.get("best_epoch")
    if best_epoch is None or "moving_average" in training_state:  # no best yet; averaged weights are in best.th only
        return None
    own = os.path.join(directory, f"model_state_e{best_epoch + 1}_b0.th")
    best = os.path.join(directory, "best.th")
    at_best_epoch = (
        training_state.get("batches_in_epoch_completed") == 0
        and training_state.get("epochs_completed") == best_epoch + 1
    )
    if at_best_epoch:
        return None if os.path.exists(best) and os.path.samefile(best, model_path) else model_path
    problem = weights_file_problem(best) if os.path.exists(best) else "missing"
    if problem is None:
        return None
    if os.path.isfile(own) and weights_file_problem(own) is None:
        return own
    raise CheckpointError(
        f"{best}: {problem}; it holds the weights of the best epoch so far (metrics_epoch_{best_epoch}.json), which "
        f"the run ends with, and {os.path.basename(own)} (that epoch's checkpoint) is not there to restore them "
        f"from: {START_AGAIN}; nothing was changed"
    )


# ----------------------------------------------------------------------------------------- AllenNLP's own loads


def load_model_state(self, path: str) -> None:  # a GradientDescentTrainer method (installed by the checkpointer)
    """``GradientDescentTrainer._load_model_state`` (``best.th`` at the end of training) reading with
    ``weights_only=True`` (AllenNLP's ``torch.load`` without it unpickles anything under
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``), a damaged file one line."""
    try:
        state = read_model_weights(path)
    except UnusableCheckpoint as unusable:
        raise CheckpointError(f"{unusable}: the weights of the run's best epoch are lost; {START_AGAIN}") from None
    model = self._ddp_wrapped_model if self._ddp_wrapped_model is not None else self._pytorch_model
    model.load_state_dict(state)


def load_default_checkpoint(self):
    """AllenNLP's ``default`` checkpointer's ``load_checkpoint``, reading both files with ``weights_only=True``."""
    latest = self.find_latest_checkpoint()
    if latest is None:
        return None
    try:
        model_state, training_state = (load_file(path) for path in latest)
    except UnusableCheckpoint as unusable:
        raise CheckpointError(f"{unusable}: {START_AGAIN}") from None
    from allennlp.training.trainer import TrainerCheckpoint

    return TrainerCheckpoint(model_state, training_state)
