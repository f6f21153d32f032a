"""Numeric precision of the pretrained encoder (``EER_PRECISION``).

``fp32`` runs the encoder in float32. ``bf16`` runs its matrix products under
``torch.autocast`` with bfloat16: on CPUs with AMX / AVX-512 BF16 a MiniLM training step is about
2x faster (measured in issue 14), on CPUs without them (AVX2 only) bfloat16 is emulated and about 5x
slower (a warning says so), and on a GPU the same setting uses CUDA autocast. Only the encoder is affected: its
output is cast back to float32 before the tag scorer, so the CRF, the losses and the marginals are
always computed in float32 or better.
"""
import contextlib
import functools
import logging
from typing import ContextManager

import torch

PRECISIONS = ("fp32", "bf16")
logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=None)
def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 matrix products natively (AVX-512 BF16 or AMX, read from
    ``/proc/cpuinfo``). Without them torch emulates bfloat16, which was 5.5x *slower* than float32
    for a MiniLM training step on a 2-core AVX2 machine (``make bench``)."""
    try:
        with open("/proc/cpuinfo") as info:
            flags = set(info.read().split())
    except OSError:
        return False
    return bool(flags & {"avx512_bf16", "amx_bf16"})


@functools.lru_cache(maxsize=None)
def _warn_emulated_bf16() -> None:
    logger.warning(
        "EER_PRECISION=bf16 on a CPU without AVX-512 BF16 or AMX: bfloat16 is emulated and slower than "
        "fp32 here (set EER_PRECISION=fp32)"
    )


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS} (EER_PRECISION), got {precision!r}")
    return precision


def encoder_autocast(precision: str, device: torch.device) -> ContextManager:
    """The context to run the encoder in: autocast to bfloat16 for ``bf16``, nothing for ``fp32``."""
    if precision == "fp32":
        return contextlib.nullcontext()
    if device.type == "cpu" and not cpu_has_native_bf16():
        _warn_emulated_bf16()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
