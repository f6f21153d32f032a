"""Numeric precision of the pretrained encoder (``EER_PRECISION``).

``fp32`` runs the encoder in float32. ``bf16`` runs its matrix products under
``torch.autocast`` with bfloat16: on CPUs with AMX / AVX-512 BF16 a MiniLM training step is about
2x faster (measured in issue 14), on CPUs without them (AVX2 only) bfloat16 is emulated and about 5x
slower (a warning says so), and on a GPU the same setting uses CUDA autocast. ``auto`` chooses per
machine, each time a model runs (training, evaluation, prediction): ``bf16`` where the hardware
computes bfloat16 natively (AMX / AVX-512 BF16 CPUs, GPUs that support it), ``fp32`` elsewhere, so
an archive trained on one machine is not slowed down on another. Only the encoder is affected: its
output is cast back to float32 before the tag scorer, so the CRF, the losses and the marginals are
always computed in float32 or better.

For tagging only (not training) there is also ``int8``
(:data:`~eer_plugin.runtime.setting_values.TAGGING_PRECISIONS`, :func:`set_tagging_precision`): dynamic
quantization of the encoder's linear layers (``torch.ao.quantization.quantize_dynamic``: int8 weights with one
scale per output channel, activations quantized per batch, over the full 8 bits where the CPU's int8 dot product
cannot overflow: :func:`cpu_has_vnni`), on the CPU; the tag scorer and the CRF stay in float32. It is chosen when a
model is loaded for tagging (``Tagger.load(path, precision="int8")``, ``ExportedTagger.load``, the ``eer_tagger``
predictor's ``precision`` argument) and never stored in a model.
"""

import contextlib
import functools
import logging
from typing import ContextManager, Optional

import torch
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from eer_plugin.common.errors import SettingError
from eer_plugin.runtime.setting_values import RULES, checked, tagging_precision_problem

#: what a model's ``precision`` must be: the rule of the settings table (the models check it with their other
#: settings, ``eer-ner train`` before it builds them)
PRECISION = RULES["model.precision"]
logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=None)
def _cpu_flags() -> frozenset:
    """The CPU's feature flags (``/proc/cpuinfo``; empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as info:
            return frozenset(info.read().split())
    except OSError:
        return frozenset()


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 matrix products natively (AVX-512 BF16 or AMX, read from
    ``/proc/cpuinfo``). Without them torch emulates bfloat16, which was 5.5x *slower* than float32
    for a MiniLM training step on a 2-core AVX2 machine (``make bench``)."""
    return bool(_cpu_flags() & {"avx512_bf16", "amx_bf16"})


def cpu_has_vnni() -> bool:
    """Whether this CPU has an int8 dot product that accumulates in 32 bits (AVX-512 VNNI, AVX-VNNI or AMX).
    Without one, int8 matrix products sum pairs of uint8 x int8 products in saturating 16 bits, so torch
    quantizes activations to 7 bits (``reduce_range``) to stay clear of overflow; with one, the full 8 bits
    are exact (:class:`FullRangeDynamicLinear`)."""
    return bool(_cpu_flags() & {"avx512_vnni", "avx_vnni", "amx_int8"})


@functools.lru_cache(maxsize=None)
def _warn_emulated_bf16() -> None:
    logger.warning(
        "EER_PRECISION=bf16 on a CPU without AVX-512 BF16 or AMX: bfloat16 is emulated and slower than "
        "fp32 here (set EER_PRECISION=fp32)"
    )


def has_native_bf16(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 matrix products natively (not emulated)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and cpu_has_native_bf16()


@functools.lru_cache(maxsize=None)
def _log_auto_choice(device_type: str, chosen: str) -> None:
    reason = "it computes bfloat16 natively" if chosen == "bf16" else "bfloat16 would be emulated (slower) there"
    logger.info("EER_PRECISION=auto: the encoder runs in %s on %s (%s)", chosen, device_type, reason)


def resolve_precision(precision: str, device: torch.device) -> str:
    """``fp32`` or ``bf16``: ``precision`` itself, or for ``auto`` what this device runs fastest."""
    if precision != "auto":
        return precision
    chosen = "bf16" if has_native_bf16(device) else "fp32"
    _log_auto_choice(device.type, chosen)
    return chosen


def check_precision(precision: str, key: str = "precision") -> str:
    """``precision``, or a :class:`SettingError` naming ``key`` (``model.precision``) unless :data:`PRECISION` takes
    it."""
    return checked(key, precision, PRECISION)


def encoder_autocast(precision: str, device: torch.device) -> ContextManager:
    """The context to run the encoder in: autocast to bfloat16 for ``bf16``, nothing for ``fp32``
    (``auto``: whichever :func:`resolve_precision` chooses for ``device``)."""
    precision = resolve_precision(precision, device)
    if precision == "fp32":
        return contextlib.nullcontext()
    if device.type == "cpu" and not cpu_has_native_bf16():
        _warn_emulated_bf16()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


class FullRangeDynamicLinear(DynamicLinear):
    """A dynamically quantized linear layer whose activations use the full uint8 range (0-255) instead of
    torch's 7 bits (its ``Linear`` always passes ``reduce_range=True``): half the rounding step. Only for
    CPUs with VNNI (:func:`cpu_has_vnni`), where the int8 dot product cannot overflow."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        packed = self._packed_params._packed_params
        return torch.ops.quantized.linear_dynamic(x, packed, reduce_range=False).to(x.dtype)

    def _get_name(self) -> str:
        return "FullRangeDynamicQuantizedLinear"


def quantize_encoder(encoder: torch.nn.Module, full_range: Optional[bool] = None) -> torch.nn.Module:
    """``encoder`` with its ``torch.nn.Linear`` layers replaced, in place, by dynamically quantized int8
    ones: weights int8 with one scale per output channel (symmetric), activations quantized per batch
    (float32 in and out); over the full 8 bits when ``full_range`` (None: where :func:`cpu_has_vnni`),
    else over torch's default 7. Span F1 on CoNLL-2003 test of the MiniLM tagger of docs/speed.md (fp32
    73.60; 2-core AMD EPYC with AVX-512 VNNI, torch 2.13): torch's default (per-tensor weights, 7-bit
    activations) 69.82, per-channel weights alone 72.70, 8-bit activations alone 70.67, both 73.48, at
    the same speed."""
    import warnings

    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():  # torch marks its eager quantization API deprecated (torchao's replaces it)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*", category=UserWarning)
        quantize_dynamic(encoder, {torch.nn.Linear: per_channel_dynamic_qconfig}, inplace=True)
    if cpu_has_vnni() if full_range is None else full_range:
        for module in encoder.modules():
            if type(module) is DynamicLinear:
                # the same packed weights: only forward's activation range differs
                module.__class__ = FullRangeDynamicLinear
    return encoder


def set_tagging_precision(
    model: torch.nn.Module, encoder: torch.nn.Module, precision: Optional[str], device: torch.device
) -> None:
    """Sets the precision a loaded ``model`` (with a ``precision`` attribute and the module ``encoder``)
    tags in: one of :data:`~eer_plugin.runtime.setting_values.TAGGING_PRECISIONS` (None: the model's own, left as it
    is), checked by the one check of every entry point
    (:func:`~eer_plugin.runtime.setting_values.tagging_precision_problem`, a :class:`SettingError`).
    ``int8`` quantizes ``encoder`` (:func:`quantize_encoder`) and runs it without autocast; it needs the CPU."""
    problem = tagging_precision_problem(precision, device)
    if problem is not None:
        raise SettingError(problem)
    if precision is None:
        return
    if precision != "int8":
        model.precision = precision
        return
    quantize_encoder(encoder)
    model.precision = "fp32"
