"""Which implementation runs the CRF's forward-backward and Viterbi (:attr:`ConstrainedCRF.path`), and what
``auto`` takes on a device (measured: ``docs/speed.md``)."""

from typing import Optional

import torch

from eer_plugin.core.fused import fused_unavailable_reason

#: ``sequential`` (one step per position, :mod:`eer_plugin.core.forward_backward`), ``scan`` (a parallel scan in
#: ``O(log n)`` steps, :mod:`eer_plugin.core.scan`), ``fused`` (one Triton kernel per recursion on CUDA devices,
#: :mod:`eer_plugin.core.fused`) or ``auto`` (:func:`resolve_crf_path`).
CRF_PATHS = ("auto", "scan", "sequential", "fused")
DEFAULT_CRF_PATH = "auto"

#: the most tags for which ``auto`` takes the fused kernels: each program holds a ``K x K`` tile (rounded up to
#: 32 x 32 here) in registers, measured at CoNLL's 17 tags; larger tag sets (OntoNotes' 73) take the scan
FUSED_AUTO_MAX_TAGS = 32


def check_crf_path(path: str) -> str:
    if path not in CRF_PATHS:
        raise ValueError(f"crf path must be one of {CRF_PATHS}, got {path!r}")
    return path


def resolve_crf_path(path: str, device: torch.device, num_tags: Optional[int] = None) -> str:
    """``path`` itself, or for ``auto``: on CUDA devices the fused kernels where Triton runs them and the tag
    set has at most :data:`FUSED_AUTO_MAX_TAGS` tags, else the scan; on other devices the sequential
    recursion (the fastest on a CPU)."""
    check_crf_path(path)
    if path != "auto":
        return path
    if device.type != "cuda":
        return "sequential"
    if num_tags is not None and num_tags > FUSED_AUTO_MAX_TAGS:
        return "scan"
    return "fused" if fused_unavailable_reason(device) is None else "scan"
