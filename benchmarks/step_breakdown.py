"""Where a training step's time goes, how many sequential operations the CRF issues, and int8 tagging (issue 52).

Parts of the speed report (:mod:`speed_report`, ``--parts ops,breakdown,int8``), each a function
returning a JSON-ready dict:

* :func:`sequential_ops`: the ATen operations (each a kernel launch on a GPU) that one training step's
  CRF work issues at ``n = 512`` (4 rows, 17 BILUO tags): the EER loss forward + backward (partial NLL =
  two ``log Z``, the marginals for ``rho_hat``, the ratio hinge) and the Viterbi decoding of the same
  batch, counted by a ``TorchDispatchMode`` (every operation that reaches a kernel, the backward's
  included), on the sequential path (``before``) and on the parallel scan (``after``,
  :mod:`eer_plugin.core.scan`). On a GPU, where each costs a launch of a few microseconds whatever
  its size, this count bounds the CRF's time per step from below.
* :func:`step_breakdown`: one EER training step of an encoder at 4 x 512 subwords split into the encoder
  forward+backward alone, the EER loss (CRF on the tag scores: partial NLL, marginals, ratio term,
  forward+backward) alone, the optimizer step (AdamW), and a dev-pass batch split into the encoder
  forward and the decoding + metrics (Viterbi of the batch and the span counts), each as a share.
* :func:`int8_tagging`: a trained model tagging CoNLL-2003 test through ``Tagger.load(...,
  precision=...)`` in fp32, int8 (dynamic quantization of the encoder's linear layers,
  :mod:`eer_plugin.inference.precision`) and, where the CPU computes it natively, bf16: words per
  second (interleaved rounds, medians) and span F1.
"""
import statistics
import time
from pathlib import Path
from typing import Callable, Dict

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class _OpCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn: Callable[[], object]) -> int:
    """The ATen operations that reach a kernel while ``fn`` runs (its backward included)."""
    counter = _OpCounter()
    with counter:
        fn()
    return counter.count


def _crf_batch(batch, n, k, seed=0):
    from eer_plugin.core.crf import LATENT, observations_to_allowed
    from eer_plugin.core.tags import BiluoScheme

    types = ["PER", "LOC", "ORG", "MISC"][: (k - 1) // 4]
    scheme = BiluoScheme(types)
    gen = torch.Generator().manual_seed(seed)
    emissions = torch.randn(batch, n, k, generator=gen)
    mask = torch.ones(batch, n, dtype=torch.bool)
    observations = torch.where(torch.rand(batch, n, generator=gen) < 0.1, 0, LATENT)
    return scheme, emissions, mask, observations_to_allowed(observations, k)


def sequential_ops(n: int = 512, batch: int = 4, k: int = 17) -> Dict:
    """ATen operations of one step's CRF work (loss forward+backward, Viterbi), sequential path vs. scan."""
    from eer_plugin.core.crf import ConstrainedCRF
    from eer_plugin.core.losses import eer_objective

    scheme, emissions, mask, allowed = _crf_batch(batch, n, k)
    result = {"n": n, "batch": batch, "tags": k}
    for name, path in (("before", "sequential"), ("after", "scan")):
        crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end(), path=path)

        def loss():
            scores = emissions.clone().requires_grad_()
            eer_objective(crf, scores, mask, allowed, scheme.entity_mask()).loss.backward()

        def decode():
            crf.viterbi(emissions, mask)

        loss(), decode()  # warm caches (step constants)
        counts = {"loss": count_ops(loss), "decoding": count_ops(decode)}
        result[name] = counts["loss"] + counts["decoding"]
        result[f"{name}_loss"], result[f"{name}_decoding"] = counts["loss"], counts["decoding"]
    result["ratio"] = result["before"] / result["after"]
    return result


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
