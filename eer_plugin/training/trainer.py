"""The ``eer`` trainer: AllenNLP's gradient-descent trainer with a budget in optimizer steps.

Registered as ``eer`` (``trainer: {type: 'eer', min_steps: N, ...}``); every other argument is the
``gradient_descent`` trainer's. With ``min_steps`` a small training set gets longer epochs, as the
authors fixed the number of batches per epoch for small data: the number of epochs stays
``num_epochs`` (so validation, checkpoints and patience count the same epochs) and every epoch draws
``ceil(min_steps / num_epochs)`` optimizer steps' worth of batches, cycling through the shuffled data
(the data loader's ``batches_per_epoch``). It is decided before the learning-rate schedule is built,
so the schedule spans the whole budget. A comparison whose runs share ``min_steps`` gives every run
at least that many updates, whatever the size of its data. (A run resumed from a checkpoint starts
its next epoch at a fresh pass through the data, where the uninterrupted run would have continued the
pass it was in.) A data loader without
``batches_per_epoch`` gets more epochs instead (``max(num_epochs, ceil(min_steps / steps per epoch))``).

A training loss that is not finite (NaN, or infinite: a learning rate or ratio weight far too large) stops the run
with one line naming the epoch, the batch and the settings to lower (:func:`diverged_message`), before its step
makes every weight NaN.

Every run is checked before it starts (:func:`warn_about_run`): a run without a dev set says so once
(it keeps its last epoch), and a run of fewer than :data:`FEW_STEPS` optimizer steps gets a warning
with the settings that fix it.

``deterministic: true`` (:func:`make_deterministic`) asks PyTorch for deterministic kernels, so that a
GPU run repeats exactly: on a GPU two runs of the same seed and data otherwise differ from the first
epoch on (atomic adds in the encoder's backward), and on small data that can end several F1 apart
(benchmarks/gpu/README.md: 85.9 and 77.3). CPU runs repeat without it.

``dropout_seed: N`` (:func:`reseed_dropout`) reseeds torch's generators once the model is built and
before training starts: the run keeps its initial weights and its batches (the batch sampler draws from
Python's ``random``) and draws other dropout masks, which is how a GPU run differs from its CPU twin
(CUDA draws dropout from a generator of its own). It measures how much a run's result owes to its
dropout stream alone.
"""

import inspect
import logging
import math
import os
from typing import List, Optional

import torch
from allennlp.training import GradientDescentTrainer, Trainer

from eer_plugin.common.errors import UserError
from eer_plugin.runtime.setting_values import check_arguments

logger = logging.getLogger(__name__)


def epochs_for_budget(num_epochs: int, min_steps: int, batches_per_epoch: int, accumulation_steps: int = 1) -> int:
    """``num_epochs`` raised so that ``epochs * ceil(batches / accumulation) >= min_steps``."""
    steps_per_epoch = math.ceil(batches_per_epoch / max(accumulation_steps, 1))
    if min_steps <= 0 or steps_per_epoch <= 0:
        return num_epochs
    return max(num_epochs, math.ceil(min_steps / steps_per_epoch))


def batches_for_budget(num_epochs: int, min_steps: int, batches_per_epoch: int, accumulation_steps: int = 1) -> int:
    """Batches per epoch so that ``num_epochs`` epochs make at least ``min_steps`` optimizer steps
    (at least ``batches_per_epoch``, the data's own; a multiple of the accumulation steps when raised)."""
    accumulation = max(accumulation_steps, 1)
    if min_steps <= 0 or batches_per_epoch <= 0 or num_epochs <= 0:
        return batches_per_epoch
    if num_epochs * math.ceil(batches_per_epoch / accumulation) >= min_steps:
        return batches_per_epoch
    return math.ceil(min_steps / num_epochs) * accumulation


def apply_budget(min_steps: int, trainer_kwargs: dict) -> None:
    """Make the run of ``trainer_kwargs`` (the ``gradient_descent`` trainer's arguments) at least
    ``min_steps`` optimizer steps long, in place: longer epochs where the data loader has
    ``batches_per_epoch``, else more epochs (and a patience that never stopped early still never does)."""
    if min_steps <= 0:
        return
    data_loader = trainer_kwargs["data_loader"]
    num_epochs = trainer_kwargs.get("num_epochs", 20)
    accumulation = trainer_kwargs.get("num_gradient_accumulation_steps", 1)
    batches = len(data_loader)
    longer = batches_for_budget(num_epochs, min_steps, batches, accumulation)
    if longer <= batches:
        return
    if hasattr(data_loader, "batches_per_epoch"):
        logger.info(
            "min_steps %d: %d batches per epoch instead of %d (the data cycled), %d epochs",
            min_steps,
            longer,
            batches,
            num_epochs,
        )
        data_loader.batches_per_epoch = longer
        return
    epochs = epochs_for_budget(num_epochs, min_steps, batches, accumulation)
    logger.info(
        "min_steps %d: %d optimizer steps per epoch, %d epochs (configured %d)",
        min_steps,
        math.ceil(batches / max(accumulation, 1)),
        epochs,
        num_epochs,
    )
    trainer_kwargs["num_epochs"] = epochs
    patience = trainer_kwargs.get("patience")
    if patience is not None and patience >= num_epochs:  # "never stop early" stays so
        trainer_kwargs["patience"] = epochs


#: fewer optimizer steps than this in a run: a warning with the fix (on a few dozen documents the
#: defaults make one or two batches per epoch, and such a run can end with F1 0)
FEW_STEPS = 150
FEW_STEPS_FIX = (
    f"-o '{{\"trainer.min_steps\": {FEW_STEPS}}}' (longer epochs, the data cycled); on a few dozen documents "
    f'-o \'{{"trainer.min_steps": {FEW_STEPS}, "data_loader.batch_sampler.batch_size": 2, "trainer.optimizer.lr": 1e-4}}\''
)


def optimizer_steps(trainer_kwargs: dict) -> Optional[int]:
    """Optimizer steps of the run of ``trainer_kwargs`` (None when the data loader has no length)."""
    try:
        batches = len(trainer_kwargs["data_loader"])
    except TypeError:  # a lazy data loader
        return None
    accumulation = max(trainer_kwargs.get("num_gradient_accumulation_steps", 1), 1)
    return trainer_kwargs.get("num_epochs", 20) * math.ceil(batches / accumulation)


def warn_about_run(trainer_kwargs: dict) -> List[str]:
    """Logs (and returns) the warnings about a run: no dev set, too few optimizer steps."""
    warnings = []
    if trainer_kwargs.get("validation_data_loader") is None:
        warnings.append(
            "no dev set (EER_DEV_DATA is not set): training without validation, the last epoch's model is kept. "
            "To select the best epoch on held-out documents: eer-ner eer-split DATA train.jsonl dev.jsonl, then "
            "EER_TRAIN_DATA=train.jsonl EER_DEV_DATA=dev.jsonl"
        )
    steps = optimizer_steps(trainer_kwargs)
    if steps is not None and steps < FEW_STEPS:
        warnings.append(
            f"this run makes only {steps} optimizer steps ({trainer_kwargs.get('num_epochs', 20)} epochs of "
            f"{len(trainer_kwargs['data_loader'])} batches); a model trained this briefly may learn nothing (F1 0). "
            f"Fix: {FEW_STEPS_FIX}"
        )
    for warning in warnings:
        logger.warning(warning)
    return warnings


#: cuBLAS's deterministic workspace (PyTorch's reproducibility notes); set before the first cuBLAS call
CUBLAS_WORKSPACE = ":4096:8"


def make_deterministic() -> None:
    """Deterministic kernels for the rest of this process: ``torch.use_deterministic_algorithms`` (an
    operation without a deterministic kernel warns instead of failing the run), cuBLAS's fixed workspace
    (unless ``CUBLAS_WORKSPACE_CONFIG`` is set already) and no cuDNN autotuning. Slower on a GPU."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    logger.info(
        "deterministic kernels (trainer.deterministic): a GPU run repeats exactly (CUBLAS_WORKSPACE_CONFIG=%s)",
        os.environ["CUBLAS_WORKSPACE_CONFIG"],
    )


def reseed_dropout(seed: int) -> None:
    """Reseeds torch's generators (the CPU's and every GPU's) with ``seed``: called once the model is
    built, it changes what training draws from torch (dropout masks) and nothing drawn before."""
    torch.manual_seed(seed)
    logger.info("dropout drawn from a generator reseeded with %d once the model was built (trainer.dropout_seed)", seed)


def diverged_message(loss: float, epoch: int, batch: int, model, optimizer) -> str:
    """The one line for a training loss that is not finite (NaN or infinite) at ``batch`` of ``epoch`` (both from
    1): the settings that make a run diverge, their values in this run, and what to do with ``-s``."""
    rates = sorted({group["lr"] for group in getattr(optimizer, "param_groups", [])})
    weight = getattr(model, "ratio_loss_weight", None)
    return (
        f"epoch {epoch}, batch {batch}: the training loss is {loss}: the run diverged (its weights are no longer "
        f"numbers). Lower the learning rates (trainer.optimizer.lr and trainer.optimizer.parameter_groups.0.1.lr; "
        f"now {', '.join(f'{r:g}' for r in rates) or 'unknown'})"
        + (f" or model.ratio_loss_weight (now {weight:g})" if isinstance(weight, float) and weight > 0 else "")
        + ", then train again with --force or into a new directory (the checkpoints of the epochs before are kept; "
        "--recover would take the same steps again)"
    )


@Trainer.register("eer", constructor="from_partial_objects")
class EERTrainer(GradientDescentTrainer):
    def batch_outputs(self, batch, for_training: bool):
        """AllenNLP's, and a :class:`UserError` (:func:`diverged_message`) for a training loss that is not finite:
        AllenNLP stops on NaN with a traceback and trains on through an infinite loss, whose step makes every
        weight NaN (a model of NaN written as if trained)."""
        output = super().batch_outputs(batch, for_training)
        loss = output.get("loss")
        if for_training and isinstance(loss, torch.Tensor) and not bool(torch.isfinite(loss.detach()).all()):
            raise UserError(
                diverged_message(
                    float(loss.detach().float().sum()),
                    self._epochs_completed + 1,
                    self._batches_in_epoch_completed + 1,
                    self.model,
                    self.optimizer,
                )
            )
        return output

    @classmethod
    def from_partial_objects(  # type: ignore[override]
        cls, min_steps: int = 0, deterministic: bool = False, dropout_seed: Optional[int] = None, **kwargs
    ) -> Trainer:
        """``min_steps``: the least number of optimizer steps of the run (0 = epochs decide);
        ``deterministic``: deterministic kernels (:func:`make_deterministic`); ``dropout_seed``: torch
        reseeded now that the model is built (:func:`reseed_dropout`; None: the run's own stream). Each is checked
        first (:mod:`eer_plugin.runtime.setting_values`)."""
        check_arguments("trainer", locals())
        if deterministic:
            make_deterministic()
        if dropout_seed is not None:
            reseed_dropout(dropout_seed)
        apply_budget(min_steps, kwargs)
        warn_about_run(kwargs)
        return super().from_partial_objects(**kwargs)


def _signature_with_budget() -> inspect.Signature:
    """The parent constructor's signature plus ``min_steps``, ``deterministic`` and ``dropout_seed``, so that AllenNLP's
    ``FromParams`` (which reads the signature) builds every ``Lazy`` argument exactly as for ``gradient_descent``."""
    parent = inspect.signature(GradientDescentTrainer.from_partial_objects.__func__)  # (cls, model, ...)
    parameters = [p for p in parent.parameters.values() if p.kind != inspect.Parameter.VAR_KEYWORD]
    own = inspect.signature(EERTrainer.from_partial_objects.__func__).parameters  # defaults declared once, there
    ours = [
        own[name].replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for name in ("min_steps", "deterministic", "dropout_seed")
    ]
    keyword = [p for p in parameters if p.kind == inspect.Parameter.KEYWORD_ONLY]
    positional = [p for p in parameters if p.kind != inspect.Parameter.KEYWORD_ONLY]
    return parent.replace(parameters=positional + keyword + ours)


EERTrainer.from_partial_objects.__func__.__signature__ = _signature_with_budget()  # type: ignore[attr-defined]
