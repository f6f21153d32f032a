"""The ``EER_*`` settings of the training configs: one table, the single source of every default.

The configs (``eer_plugin/training_configs/*.jsonnet``) read each setting with ``std.extVar``. A
setting comes from the environment variable of its name when that is set, else from :data:`SETTINGS`:
the plugin hands the defaults to jsonnet as external variables when AllenNLP reads a config
(:mod:`eer_plugin.runtime.config_files`), so importing the plugin writes nothing into ``os.environ``.

Everything else is generated from the table: :func:`config_defaults` (the benchmark's plans start from
it), the listing of ``eer-ner train --help`` and ``eer-ner eer-settings`` (:func:`settings_help`), and a
test checks that the header comment of ``training_configs/common.libsonnet`` names every setting and
that the configs read no other. To add a setting, add one :class:`Setting` line below and use it in
``common.libsonnet`` (and name it in its header).

Data paths have no default on purpose: training data is required, and without ``EER_DEV_DATA`` a run
trains without validation (it says so), without ``EER_TEST_DATA`` it evaluates on no test set. The
bundled fixtures are never used unless you name them (``scripts/demo.sh`` and the tests do).
"""
import dataclasses
import os
import textwrap
from typing import Dict, Mapping, Optional, Tuple


@dataclasses.dataclass(frozen=True)
class Setting:
    name: str
    #: the value used when the environment variable is not set ("" = empty, see ``meaning``)
    default: str
    #: one short sentence for the help listing
    meaning: str
    group: str


DATA, MODEL, TRAINING, BASELINES = "data", "model and loss", "training", "baselines (CBL-LSTM, CBL)"

#: every setting the training configs read, in the order of the help listing
SETTINGS: Tuple[Setting, ...] = (
    Setting("EER_TRAIN_DATA", "", "training data: partial .jsonl (eer-import), CoNLL or OntoNotes; required", DATA),
    Setting("EER_DEV_DATA", "", "validation data that selects the best epoch; empty: no validation, the last epoch is kept (eer-ner eer-split holds a dev set out)", DATA),
    Setting("EER_TEST_DATA", "", "test data evaluated after training; empty: no test evaluation", DATA),
    Setting("EER_GOLD_TRAIN_DATA", "", "fully annotated training data of gold.jsonnet / gold_sns.jsonnet", DATA),
    Setting("EER_TAG_SCHEME", "auto", "tag scheme of column files: auto, IOB1, IOB2 or BIOUL (eer-inspect shows what auto picks)", DATA),
    Setting("EER_FILE_ENCODING", "auto", "character encoding of the data files: auto (UTF-8, latin-1 fallback for column files) or a codec", DATA),
    Setting("EER_SENTENCES_PER_DOCUMENT", "", "column files without -DOCSTART-: sentences grouped per document; empty: 10", DATA),
    Setting("EER_TAG_COLUMN", "-1", "column of the tags in column files (-1: the last)", DATA),
    Setting("EER_ENCODER", "all-MiniLM-L6-v2", "Hugging Face name or local directory; all-MiniLM-L6-v2 is the packaged offline copy", MODEL),
    Setting("EER_MAX_LENGTH", "512", "subwords per chunk, bookends included", MODEL),
    Setting("EER_ENTITY_RATIO", "0.15", "rho: expected share of entity subwords (eer-estimate-ratio measures it)", MODEL),
    Setting("EER_RATIO_MARGIN", "0.05", "gamma: the ratio hinge's tolerance around rho", MODEL),
    Setting("EER_RATIO_LOSS_WEIGHT", "10", "lambda_u: weight of the ratio term (0: plain partial likelihood)", MODEL),
    Setting("EER_RATIO_CONTROL", "fixed", "fixed: the paper's weight lambda_u alone; bind: the band [rho - gamma, rho + gamma] held as a constraint (train --ratio-estimate turns it on)", MODEL),
    Setting("EER_RATIO_INIT", "eer", "ratio-calibrated start: eer (the EER configs), all (every CRF tagger) or none", MODEL),
    Setting("EER_TRAIN_CONSTRAINTS", "true", "BILUO grammar constraints in the training loss", MODEL),
    Setting("EER_RATIO_BOOKENDS", "false", "count the bookend tokens in rho_hat", MODEL),
    Setting("EER_PER_SEQUENCE_RATIO", "false", "mean of per-chunk hinges instead of the batch hinge", MODEL),
    Setting("EER_PRECISION", "auto", "the encoder's precision: auto (bf16 where native, else fp32), fp32 or bf16", MODEL),
    Setting("EER_EPOCHS", "", "training epochs; empty: the paper's 20 (all) / 50 (short, shortest)", TRAINING),
    Setting("EER_BATCH_SIZE", "4", "chunks per batch", TRAINING),
    Setting("EER_LEARNING_RATE", "2e-5", "peak learning rate of the pretrained encoder (slanted triangular schedule)", TRAINING),
    Setting("EER_HEAD_LEARNING_RATE", "1e-3", "peak learning rate of every freshly initialised part (scorer, CRF, span classifier)", TRAINING),
    Setting("EER_MIN_STEPS", "0", "least number of optimizer steps (0: the epochs decide); small data get longer epochs", TRAINING),
    Setting("EER_VALIDATION_METRIC", "+f1-measure-overall", "checkpoint selection; +partial-f1 for a partially annotated dev set", TRAINING),
    Setting("EER_SEED", "0", "random, numpy and torch seed", TRAINING),
    Setting("EER_CUDA_DEVICE", "-1", "GPU index, -1 for the CPU", TRAINING),
    Setting("EER_CBL_ROUND_EPOCHS", "5", "epochs of each CBL binary round", BASELINES),
    Setting("EER_WORD_VECTORS", "", "CBL-LSTM: optional GloVe/fastText text file", BASELINES),
    Setting("EER_WORD_DIM", "100", "CBL-LSTM: word embedding size (must match EER_WORD_VECTORS)", BASELINES),
)

BY_NAME: Dict[str, Setting] = {s.name: s for s in SETTINGS}
assert len(BY_NAME) == len(SETTINGS), "a setting is listed twice"


def config_defaults() -> Dict[str, str]:
    """Name -> default of every setting."""
    return {s.name: s.default for s in SETTINGS}


def unset_defaults(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The defaults of the settings that ``environ`` (default ``os.environ``) does not set."""
    environ = os.environ if environ is None else environ
    return {name: value for name, value in config_defaults().items() if name not in environ}


def settings_help(environ: Optional[Mapping[str, str]] = None, width: int = 100) -> str:
    """Every setting with its default and meaning, by group (and the value set here, where
    ``environ`` sets one), as shown by ``eer-ner train --help`` and ``eer-ner eer-settings``."""
    lines = [
        "settings (environment variables read by the packaged configs; NAME=value before the command sets one):"
    ]
    for group in dict.fromkeys(s.group for s in SETTINGS):
        lines.append(f"  {group}:")
        for s in (s for s in SETTINGS if s.group == group):
            default = repr(s.default) if s.default == "" else s.default
            current = f"; set here: {environ[s.name]}" if environ is not None and s.name in environ else ""
            head = f"    {s.name} (default {default}{current}): "
            lines.extend(textwrap.wrap(head + s.meaning, width, subsequent_indent=" " * 6))
    return "\n".join(lines)
