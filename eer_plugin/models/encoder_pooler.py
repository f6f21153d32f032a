"""The pretrained encoder's pooler: loaded with the checkpoint, never used, so dropped.

BERT, MPNet and RoBERTa checkpoints (all-MiniLM-L6-v2, all-mpnet-base-v2, roberta-base, mBERT) load
with a *pooler*, a dense layer over the first token trained for next-sentence prediction. AllenNLP's
transformer embedder returns the last hidden states only, so the pooler's output never reaches a loss
and its weight and bias get no gradient. Under distributed training that is fatal: PyTorch's
``DistributedDataParallel`` waits for every parameter's gradient and fails in the second training
batch with "Expected to have finished reduction in the prior iteration ... Parameter indices which did
not receive grad" (issue 30). ``find_unused_parameters=True`` would work around it at the price of a
search of the autograd graph in every step; the taggers instead drop the pooler when they are built,
so the model has no parameter without a gradient and DDP needs no setting. The outputs are unchanged.

Archives saved before the pooler was dropped still load: their state dict's ``pooler.*`` entries are
discarded on loading (:func:`drop_unused_pooler` registers the hook that does it).
"""

import logging

import torch

logger = logging.getLogger(__name__)


def _discard_pooler_weights(module, state_dict, prefix, *args) -> None:
    for key in [k for k in state_dict if k.startswith(prefix + "pooler.")]:
        del state_dict[key]


def drop_unused_pooler(model: torch.nn.Module) -> int:
    """Removes the pooler of every pretrained transformer inside ``model`` (an embedder or a whole
    model); returns how many parameters were dropped. Models without a pooler are left as they are."""
    from allennlp.modules.token_embedders import PretrainedTransformerEmbedder

    dropped = 0
    for embedder in [m for m in model.modules() if isinstance(m, PretrainedTransformerEmbedder)]:
        transformer = embedder.transformer_model
        pooler = getattr(transformer, "pooler", None)
        if not isinstance(pooler, torch.nn.Module):
            continue
        dropped += sum(p.numel() for p in pooler.parameters())
        transformer.pooler = None  # the transformers models then skip it (`if self.pooler is not None`)
        transformer.register_load_state_dict_pre_hook(_discard_pooler_weights)
        logger.info("dropped the encoder's unused pooler (%d parameters)", dropped)
    return dropped
