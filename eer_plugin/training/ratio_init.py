"""``ratio_init``: start every CRF tagger at the prior entity ratio (trainer callback).

Registered as the trainer callback ``eer_ratio_init``. Before the first optimizer step it runs the
untrained model (evaluation mode, no dropout) over a sample of the training batches, then shifts
the ``O`` entry of the tag scorer's bias so that the sample's expected entity ratio ``rho_hat``
equals the model's ``entity_ratio`` (``rho``) within ``tolerance``
(:func:`eer_plugin.core.calibration.calibrate_outside_shift`). The random number generators are
restored afterwards, so the run sees the same batches and dropout masks as without calibration.
A run resumed from a checkpoint is not calibrated again.
"""

import json
import logging
import os
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist
from allennlp.nn import util as nn_util
from allennlp.training.callbacks import TrainerCallback

from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.errors import SettingError
from eer_plugin.core.calibration import Calibration, RatioBatch, calibrate_outside_shift
from eer_plugin.runtime.setting_values import check_arguments
from eer_plugin.training.rng_states import rng_states, set_rng_states

logger = logging.getLogger(__name__)


def calibrate_tagger(model, batches: List[Dict[str, Any]], tolerance: float = 1e-3) -> Calibration:
    """Calibrates an ``eer_tagger`` in place on tensorized ``batches`` (its ``O`` bias moves by the
    shift found); returns the :class:`Calibration` (shift, ratio before and after)."""
    was_training = model.training
    model.eval()
    sample = []
    with torch.no_grad():
        for batch in batches:
            mask = nn_util.get_text_field_mask(batch["tokens"])
            sample.append(RatioBatch(model.emissions(batch["tokens"]), mask.bool(), model.ratio_mask(mask)))
    outside = model.scheme.outside_index
    result = calibrate_outside_shift(
        model.crf, sample, model._entity_mask, outside, model.entity_ratio, tolerance=tolerance
    )
    with torch.no_grad():
        model.tag_scorer.bias[outside] += result.outside_shift
    model.train(was_training)
    return result


@TrainerCallback.register("eer_ratio_init")
class RatioInitCallback(TrainerCallback):
    """
    Parameters
    ----------
    serialization_dir : str
        Passed by the trainer; ``ratio_init.json`` (the shift and the ratios) is written there.
    sample_chunks : int
        At most this many training chunks (whole batches, in the data loader's order) form the
        calibration sample.
    tolerance : float
        ``|rho_hat - rho|`` allowed on the sample after calibration.
    """

    def __init__(self, serialization_dir: str, sample_chunks: int = 128, tolerance: float = 1e-3) -> None:
        super().__init__(serialization_dir)
        check_arguments("trainer.callbacks[eer_ratio_init]", locals())
        self.sample_chunks = sample_chunks
        self.tolerance = tolerance
        self.result: Optional[Calibration] = None

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        super().on_start(trainer, is_primary, **kwargs)
        if trainer._start_after_epochs_completed or trainer._start_after_batches_in_epoch_completed:
            logger.info("ratio_init: resumed run, the O bias stays as restored from the checkpoint")
            return
        model = trainer.model
        if not hasattr(model, "tag_scorer") or not hasattr(model, "entity_ratio"):
            raise SettingError(
                f"trainer.callbacks: eer_ratio_init needs a CRF tagger (eer_tagger), the model is {type(model).__name__}; "
                "remove it with -o '{\"trainer.callbacks\": []}'"
            )
        state = rng_states(trainer)  # every generator the run draws from, the loader's own included
        batches, chunks = [], 0
        for batch in trainer.data_loader:
            batches.append(nn_util.move_to_device(batch, trainer.cuda_device))
            chunks += nn_util.get_text_field_mask(batch["tokens"]).shape[0]
            if chunks >= self.sample_chunks:
                break
        set_rng_states(state, trainer)
        self.result = calibrate_tagger(model, batches, self.tolerance)
        if dist.is_available() and dist.is_initialized():  # every worker starts from rank 0's bias
            dist.broadcast(model.tag_scorer.bias.data, 0)
        if is_primary:
            record = {**self.result._asdict(), "chunks": chunks, "entity_ratio": model.entity_ratio}
            atomic_write_text(
                os.path.join(self.serialization_dir, "ratio_init.json"), json.dumps(record, indent=2) + "\n"
            )
        logger.info(
            "ratio_init: O bias %+.4f on %d chunks (%d positions): rho_hat %.4f -> %.4f (rho %.3f)",
            self.result.outside_shift,
            chunks,
            self.result.positions,
            self.result.ratio_before,
            self.result.ratio_after,
            model.entity_ratio,
        )
