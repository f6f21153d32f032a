"""The machine a run trained on, as its result record keeps it (``result.json``'s ``machine``): the CPU,
the GPU when the run used one, and the torch and CUDA versions, so that a report can say where each run's
numbers and hours come from. Records written before runs kept it have no ``machine``; the report then
names the machine it was rendered on (:func:`machine_text` of None)."""

import os
import platform
from typing import Any, Dict, Optional


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere what :mod:`platform` knows)."""
    try:
        with open("/proc/cpuinfo") as handle:
            return next(
                (line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")),
                platform.processor(),
            )
    except OSError:
        return platform.processor() or "unknown CPU"


def memory_gib() -> float:
    """The machine's memory in GiB (``/proc/meminfo``; 0 where it cannot be read)."""
    try:
        with open("/proc/meminfo") as handle:
            return next((int(line.split()[1]) for line in handle if line.startswith("MemTotal")), 0) / 2**20
    except OSError:
        return 0.0


def machine(cuda_device: Any = -1) -> Dict[str, Any]:
    """``{cpu, cores, torch, cuda, gpu}`` of this machine; ``gpu`` is the name of the GPU ``cuda_device``
    (``EER_CUDA_DEVICE``) when it is one (an index >= 0 of an available CUDA device), else None."""
    import torch

    try:
        index = int(cuda_device)
    except (TypeError, ValueError):
        index = -1
    gpu = torch.cuda.get_device_name(index) if index >= 0 and torch.cuda.is_available() else None
    return {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": gpu,
    }


def machine_text(recorded: Optional[Dict[str, Any]]) -> str:
    """``'GPU NVIDIA H100 (torch 2.4.0, CUDA 12.1)'``, ``'CPU AMD EPYC, 2 cores (torch 2.13.0+cpu)'``, or
    ``'not recorded'`` for a record from before runs kept their machine."""
    if not recorded:
        return "not recorded"
    if recorded.get("gpu"):
        return f"GPU {recorded['gpu']} (torch {recorded.get('torch')}, CUDA {recorded.get('cuda')})"
    return f"CPU {recorded.get('cpu')}, {recorded.get('cores')} cores (torch {recorded.get('torch')})"
