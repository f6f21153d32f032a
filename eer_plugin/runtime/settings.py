"""The ``EER_*`` settings of the training configs: one table, the single source of every default.

Two kinds of setting (as allennlp-models: the environment for what belongs to the machine and the
data, overrides for the hyperparameters):

* **environment settings** (data paths and how the data files are read, the encoder, the seed, the
  device, the encoder's precision): the configs read them with ``std.extVar``; one comes from the
  environment variable of its name when that is set, else from :data:`SETTINGS`. The plugin hands
  those defaults to jsonnet as external variables (:mod:`eer_plugin.runtime.config_files`), so
  importing the plugin writes nothing into ``os.environ``. The precision is one of them because it is
  a property of the machine (``auto`` picks bf16 where the hardware computes it natively).
* **hyperparameters**: literals in ``training_configs/common.libsonnet`` at the config key
  :attr:`Setting.path`, changed for one run with AllenNLP's ``-o '{"model.ratio_loss_weight": 100}'``.
  Each keeps its ``EER_*`` name: the benchmark's plans and run records name settings by it, and the
  runner turns a run's values into overrides (:func:`overrides`). Set as an environment variable, a
  hyperparameter is refused with the ``-o`` that replaces it (:func:`eer_plugin.runtime.settings_environment.environment_hyperparameters_error`).

The defaults of the EER objective's hyperparameters (rho, gamma, lambda_u, the ratio control) are not written here
but read from the maths' one declaration of them (:mod:`eer_plugin.core.ranges`), which the tagger's constructor
takes too; CBL's epochs per round from CBL's (:data:`eer_plugin.annotation.cbl.DEFAULTS`), which ``allennlp cbl``
takes too. Generated from the table: the ext-var defaults (:func:`unset_defaults`), the overrides of a benchmark
run, the listing of ``eer-ner train --help`` and ``eer-ner eer-settings`` (:func:`eer_plugin.runtime.settings_help.settings_help`) and
the table of ``docs/configs.md`` (checked by ``tests/test_docs.py``). A test evaluates every packaged
config and checks that each hyperparameter's literal sits at its path with the table's default, and
that the configs read no ``std.extVar`` but the environment settings. To add a hyperparameter, add a
:class:`Setting` with its ``path`` below and write its default at that path in ``common.libsonnet``.

Data paths have no default on purpose: training data is required, and without ``EER_DEV_DATA`` a run
trains without validation (it says so), without ``EER_TEST_DATA`` it evaluates on no test set. The
bundled fixtures are never used unless you name them (``scripts/demo.sh`` and the tests do).
"""

import dataclasses
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from eer_plugin.annotation import cbl
from eer_plugin.core.ranges import (
    DEFAULT_ENTITY_RATIO,
    DEFAULT_RATIO_CONTROL,
    DEFAULT_RATIO_LOSS_WEIGHT,
    DEFAULT_RATIO_MARGIN,
)
from eer_plugin.corpus import strict_json

#: the approaches of ``common.libsonnet``'s ``experiment(approach, variant)``
APPROACHES = ("eer", "raw", "gold", "cbl", "cbl_lstm", "sns", "gold_sns")
#: the approaches whose model is the CRF tagger over the encoder (``tagger(partial)``)
TAGGERS = ("eer", "raw", "gold", "cbl")
#: config file names (without ``.jsonnet``) whose approach is not the part before the variant
_CONFIG_APPROACHES = {"cbl_bert": "cbl"}


@dataclasses.dataclass(frozen=True)
class Setting:
    name: str
    #: the value when nothing sets it, as text ("" = empty, see ``meaning``)
    default: str
    #: one short sentence for the help listing
    meaning: str
    group: str
    #: a hyperparameter's config key (what ``-o`` sets); "" for an environment setting
    path: str = ""
    #: how a hyperparameter's text becomes its config value: int, seed (int, "" none), number, flag, text, epochs,
    #: ratio_init; what an environment setting's text must be (:func:`eer_plugin.runtime.settings_environment.environment_values_error`): int, count
    #: (a whole number of at least 1; "" where that is the default), tag_scheme, seconds (a JSON number of seconds above
    #: 0, or ""), text
    kind: str = "text"
    #: the approaches whose configs hold the hyperparameter (the others do not read it)
    approaches: Tuple[str, ...] = APPROACHES
    #: (approach, key) where the key differs from ``path``
    other_paths: Tuple[Tuple[str, str], ...] = ()

    @property
    def is_hyperparameter(self) -> bool:
        return bool(self.path)

    def path_for(self, approach: str) -> Optional[str]:
        """The config key of this hyperparameter in ``approach``'s configs; None where they do not hold it."""
        if approach not in self.approaches:
            return None
        return dict(self.other_paths).get(approach, self.path)

    def value(self, text: str, approach: str, variant: str) -> Any:
        """The config value of ``text`` (the ``EER_*`` form) in the config of ``approach`` and ``variant``;
        a :class:`ValueError` naming the setting when ``text`` is no such value."""
        text = str(text)
        try:
            if self.kind == "seed" and text == "":
                return None
            if self.kind in ("int", "seed") or (self.kind == "epochs" and text != ""):
                return int(text)
            if self.kind == "epochs":  # the paper: 20 epochs (all), 50 (short, shortest); CBL-LSTM Mayhew et al.'s 45
                return 45 if approach == "cbl_lstm" else 20 if variant == "all" else 50
            if self.kind == "number":
                number = strict_json.loads(text)
                if isinstance(number, bool) or not isinstance(number, (int, float)):
                    raise ValueError(text)
                return number
        except ValueError:
            raise ValueError(
                f"{self.name} must be {'an integer' if self.kind != 'number' else 'a number'}, got {text!r}"
            ) from None
        if self.kind == "flag":
            if text.lower() not in ("true", "false"):
                raise ValueError(f"{self.name} must be true or false, got {text!r}")
            return text.lower() == "true"
        if self.kind == "ratio_init":
            on = {"eer": approach == "eer", "all": approach not in ("sns", "gold_sns"), "none": False}.get(text)
            if on is None:
                raise ValueError(f"{self.name} must be eer, all or none, got {text!r}")
            return [{"type": "eer_ratio_init"}] if on else []
        return text


DATA, MODEL, TRAINING, BASELINES = "data", "model and loss", "training", "baselines (CBL-LSTM, CBL)"
_H = Setting  # a hyperparameter row names its path

#: every setting, in the order of the help listing
SETTINGS: Tuple[Setting, ...] = (
    Setting("EER_TRAIN_DATA", "", "training data: partial .jsonl (eer-import), CoNLL or OntoNotes; required", DATA),
    Setting(
        "EER_DEV_DATA",
        "",
        "validation data that selects the best epoch; empty: no validation, the last epoch is kept (eer-ner eer-split holds a dev set out)",
        DATA,
    ),
    Setting("EER_TEST_DATA", "", "test data evaluated after training; empty: no test evaluation", DATA),
    Setting("EER_GOLD_TRAIN_DATA", "", "fully annotated training data of gold.jsonnet / gold_sns.jsonnet", DATA),
    Setting(
        "EER_TAG_SCHEME",
        "auto",
        "tag scheme of column files: auto, IOB1, IOB2, BIOUL or BIOES (eer-inspect shows what auto picks)",
        DATA,
        kind="tag_scheme",
    ),
    Setting(
        "EER_FILE_ENCODING",
        "auto",
        "character encoding of the data files: auto (UTF-8, latin-1 fallback for column files) or a codec",
        DATA,
    ),
    Setting(
        "EER_SENTENCES_PER_DOCUMENT",
        "",
        "column files without -DOCSTART-: sentences grouped per document; empty: 10",
        DATA,
        kind="count",
    ),
    Setting("EER_TAG_COLUMN", "-1", "column of the tags in column files (-1: the last)", DATA, kind="int"),
    Setting(
        "EER_ENCODER",
        "all-MiniLM-L6-v2",
        "Hugging Face name or local directory; all-MiniLM-L6-v2 is the packaged offline copy",
        MODEL,
    ),
    Setting(
        "EER_MAX_LENGTH",
        "512",
        "subwords per chunk, bookends included (the encoder's input length; both readers)",
        MODEL,
        kind="int",
    ),
    Setting(
        "EER_PRECISION",
        "auto",
        "the encoder's precision on this machine: auto (bf16 where native, else fp32), fp32 or bf16",
        MODEL,
    ),
    _H(
        "EER_ENTITY_RATIO",
        f"{DEFAULT_ENTITY_RATIO:g}",  # the maths' default (core.ranges)
        "rho: expected share of entity subwords (eer-estimate-ratio measures it)",
        MODEL,
        "model.entity_ratio",
        "number",
        tuple(a for a in APPROACHES if a != "cbl_lstm"),
    ),
    _H(
        "EER_RATIO_MARGIN",
        f"{DEFAULT_RATIO_MARGIN:g}",  # the maths' default (core.ranges)
        "gamma: the ratio hinge's tolerance around rho",
        MODEL,
        "model.ratio_margin",
        "number",
        TAGGERS,
    ),
    _H(
        "EER_RATIO_LOSS_WEIGHT",
        f"{DEFAULT_RATIO_LOSS_WEIGHT:g}",  # the maths' default (core.ranges)
        "lambda_u: weight of the ratio term (0: plain partial likelihood)",
        MODEL,
        "model.ratio_loss_weight",
        "number",
        ("eer",),
    ),
    _H(
        "EER_RATIO_CONTROL",
        DEFAULT_RATIO_CONTROL,
        "fixed: the paper's weight lambda_u alone; bind: the band [rho - gamma, rho + gamma] held as a constraint (train --ratio-estimate turns it on)",
        MODEL,
        "model.ratio_control",
        "text",
        ("eer",),
    ),
    _H(
        "EER_RATIO_INIT",
        "eer",
        "ratio-calibrated start: eer (the EER configs start with the eer_ratio_init callback), all (every CRF tagger) or none (-o '{\"trainer.callbacks\": []}')",
        MODEL,
        "trainer.callbacks",
        "ratio_init",
    ),
    _H(
        "EER_TRAIN_CONSTRAINTS",
        "true",
        "BILUO grammar constraints in the training loss",
        MODEL,
        "model.train_constraints",
        "flag",
        TAGGERS,
    ),
    _H(
        "EER_RATIO_BOOKENDS",
        "false",
        "count the bookend tokens in rho_hat",
        MODEL,
        "model.ratio_counts_bookends",
        "flag",
        TAGGERS,
    ),
    _H(
        "EER_PER_SEQUENCE_RATIO",
        "false",
        "mean of per-chunk hinges instead of the batch hinge",
        MODEL,
        "model.per_sequence_ratio",
        "flag",
        TAGGERS,
    ),
    _H(
        "EER_EPOCHS",
        "",
        "training epochs; empty: the paper's 20 (all) / 50 (short, shortest), CBL-LSTM 45",
        TRAINING,
        "trainer.num_epochs",
        "epochs",
    ),
    _H("EER_BATCH_SIZE", "4", "chunks per batch", TRAINING, "data_loader.batch_sampler.batch_size", "int"),
    _H(
        "EER_LEARNING_RATE",
        "2e-5",
        "peak learning rate of the pretrained encoder (slanted triangular schedule)",
        TRAINING,
        "trainer.optimizer.lr",
        "number",
        tuple(a for a in APPROACHES if a != "cbl_lstm"),
    ),
    _H(
        "EER_HEAD_LEARNING_RATE",
        "1e-3",
        "peak learning rate of every freshly initialised part (scorer, CRF, span classifier; all of CBL-LSTM)",
        TRAINING,
        "trainer.optimizer.parameter_groups.0.1.lr",
        "number",
        other_paths=(("cbl_lstm", "trainer.optimizer.lr"),),
    ),
    _H(
        "EER_MIN_STEPS",
        "0",
        "least number of optimizer steps (0: the epochs decide); small data get longer epochs",
        TRAINING,
        "trainer.min_steps",
        "int",
    ),
    _H(
        "EER_VALIDATION_METRIC",
        "+f1-measure-overall",
        "checkpoint selection; +partial-f1 for a partially annotated dev set",
        TRAINING,
        "trainer.validation_metric",
    ),
    _H(
        "EER_DETERMINISTIC",
        "false",
        "deterministic kernels: a GPU run repeats exactly (slower there; CPU runs repeat anyway)",
        TRAINING,
        "trainer.deterministic",
        "flag",
    ),
    _H(
        "EER_DROPOUT_SEED",
        "",
        "reseeds torch once the model is built: dropout draws anew, same initial weights and batches",
        TRAINING,
        "trainer.dropout_seed",
        "seed",
    ),
    Setting("EER_SEED", "0", "random, numpy and torch seed", TRAINING, kind="int"),
    Setting("EER_CUDA_DEVICE", "-1", "GPU index, -1 for the CPU", TRAINING, kind="int"),
    Setting(
        "EER_CHECKPOINT_SECONDS",
        "",
        "also checkpoint inside an epoch, at most this many seconds apart (empty: at each epoch's end only)",
        TRAINING,
        kind="seconds",
    ),
    _H(
        "EER_CBL_ROUND_EPOCHS",
        str(cbl.DEFAULTS["round_epochs"]),  # CBL's default (annotation.cbl)
        "epochs of each CBL binary round",
        BASELINES,
        "cbl.round_epochs",
        "int",
        ("cbl", "cbl_lstm"),
    ),
    Setting("EER_WORD_VECTORS", "", "CBL-LSTM: optional GloVe/fastText text file", BASELINES),
    Setting(
        "EER_WORD_DIM",
        "100",
        "CBL-LSTM: word embedding size (a property of the EER_WORD_VECTORS file: they must match)",
        BASELINES,
        kind="count",
    ),
)

BY_NAME: Dict[str, Setting] = {s.name: s for s in SETTINGS}
assert len(BY_NAME) == len(SETTINGS), "a setting is listed twice"
#: the EER_* variables that are not settings: where things are on this machine and how errors show; they
#: never change how a run trains (eer-benchmark passes them from the shell to its runs)
MACHINE_VARIABLES: Tuple[str, ...] = ("EER_MODEL_CACHE", "EER_TRACEBACK")
#: the settings that change no result, only how a run can be stopped and resumed (a resumed run is the
#: uninterrupted run): eer-benchmark passes them from the shell to its runs, and never records them
RESULT_NEUTRAL: Tuple[str, ...] = ("EER_CHECKPOINT_SECONDS",)
ENVIRONMENT: Tuple[Setting, ...] = tuple(s for s in SETTINGS if not s.is_hyperparameter)
HYPERPARAMETERS: Tuple[Setting, ...] = tuple(s for s in SETTINGS if s.is_hyperparameter)


def config_defaults() -> Dict[str, str]:
    """Name -> default of every setting (environment settings and hyperparameters)."""
    return {s.name: s.default for s in SETTINGS}


def unset_defaults(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The defaults of the environment settings that ``environ`` (default ``os.environ``) does not set:
    the external variables the configs read."""
    environ = os.environ if environ is None else environ
    return {s.name: s.default for s in ENVIRONMENT if s.name not in environ}


def config_approach(config: str) -> Tuple[str, str]:
    """``(approach, variant)`` of a packaged config's file name (``cbl_bert_short.jsonnet`` ->
    ``("cbl", "short")``, ``gold.jsonnet`` -> ``("gold", "all")``): the configs are
    ``<approach>_<variant>.jsonnet`` and call ``experiment(approach, variant)``."""
    stem = Path(str(config)).name.split(".")[0]
    if stem in ("gold", "gold_sns"):
        return stem, "all"
    name, _, variant = stem.rpartition("_")
    return _CONFIG_APPROACHES.get(name, name), variant


def overrides(values: Mapping[str, str], approach: str, variant: str) -> Dict[str, Any]:
    """The ``-o`` of the hyperparameters in ``values`` (name -> text) that the configs of ``approach`` and
    ``variant`` hold: dotted config key -> value (a ``ValueError`` for a bad value)."""
    result: Dict[str, Any] = {}
    for setting in HYPERPARAMETERS:
        path = setting.path_for(approach)
        if path is not None and setting.name in values:
            result[path] = setting.value(values[setting.name], approach, variant)
    return result
