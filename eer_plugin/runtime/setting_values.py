"""What the settings of eer-ner's registered classes must be, each declared once, and the one check of a value.

A constructor argument that a config, an ``-o`` override or an ``EER_*`` variable gives (``dataset_reader.tag_scheme``,
``model.dropout``, ``trainer.checkpointer.keep_most_recent_by_count``, ...) is checked by the class that takes it when
it is built (:func:`checked`): a value it cannot use is a :class:`~eer_plugin.common.errors.SettingError`, one line
naming the key as the config writes it, the value and what it must be, not a failure when the first file is read or
the first batch runs. Every reading of a training config checks its values against the same :data:`RULES` before
anything is built (:mod:`eer_plugin.runtime.config_checks`); an ``EER_*`` variable that fills one of these keys is checked with
its rule before the config is evaluated (:mod:`eer_plugin.runtime.settings_environment`). The allowed sets and ranges
are those of the modules that use the values, declared there once (the tag schemes of :mod:`eer_plugin.core.tags`, the
ranges and choices of the EER objective and the binding ratio control of :mod:`eer_plugin.core.ranges`, which the maths
checks with the same words, the formats and file encodings of :mod:`eer_plugin.corpus.formats`, the variants of
:mod:`eer_plugin.annotation.simulators`); the precisions of a model's encoder (:data:`PRECISIONS`) and of a model
loaded for tagging (:data:`TAGGING_PRECISIONS`, one check with one line wherever a model is loaded for tagging:
:func:`tagging_precision_problem`) are declared here: :mod:`eer_plugin.inference.precision`, which runs them, is a
layer above."""

import dataclasses
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from eer_plugin.annotation.simulators import VARIANTS
from eer_plugin.common.errors import SettingError, shortened
from eer_plugin.core.ranges import (
    ENTITY_RATIO,
    PRICE_PENALTY,
    PRICE_RATE,
    RATIO_CONTROLS,
    RATIO_LOSS_WEIGHT,
    RATIO_MARGIN,
    Bounds,
    is_integer,
)
from eer_plugin.core.tags import SCHEME_SETTINGS, is_scheme_setting
from eer_plugin.corpus.formats import FORMATS
from eer_plugin.corpus.formats.files import FILE_ENCODINGS, is_file_encoding


@dataclasses.dataclass(frozen=True)
class Rule:
    """What one setting must be: ``expected`` (as the message says it) and the ``test`` of a value; ``null``: None
    when null is refused, else what null means (``""``: nothing to say). ``bounds`` (a number) and ``choices`` (one
    of a set) say the same for the tests that probe a rule at its edges."""

    expected: str
    test: Callable[[Any], bool]
    null: Optional[str] = None
    bounds: Optional[Bounds] = None
    choices: Tuple[Any, ...] = ()

    def takes(self, value: Any) -> bool:
        return value is None and self.null is not None or value is not None and bool(self.test(value))

    def describe(self) -> str:
        """``expected`` with what null means, where null is taken."""
        if self.null is None:
            return self.expected
        return f"{self.expected}, or null" + (f" ({self.null})" if self.null else "")

    def problem(self, key: str, value: Any) -> Optional[str]:
        """The one line for ``value`` at ``key`` (``model.dropout must be a probability in [0, 1), got 1.5``), or None
        when the rule takes it."""
        return None if self.takes(value) else f"{key} must be {self.describe()}, got {value!r}"


def ranged(bounds: Bounds, null: Optional[str] = None) -> Rule:
    """The rule of a number in the range ``bounds`` (its :attr:`~eer_plugin.core.ranges.Bounds.expected` is what the
    message says), or null when ``null`` says what null means."""
    return Rule(bounds.expected, bounds.holds, null, bounds)


def number(
    low: Optional[float] = None,
    high: Optional[float] = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    what: str = "",
    note: str = "",
    null: Optional[str] = None,
) -> Rule:
    """A number (``integer``: a whole one) in a range: ``a number in (0, 1)``, ``an integer of at least 1``, ``a
    number above 0``; ``what`` names it (``a probability``), ``note`` says what it is. The settings of the maths
    declare their ranges in :mod:`eer_plugin.core.ranges` (:func:`ranged`)."""
    return ranged(Bounds(low, high, low_open, high_open, integer, what, note=note), null)


def one_of(choices: Sequence[Any], note: str = "") -> Rule:
    """One of ``choices`` exactly (``one of all, short, shortest``)."""
    choices = tuple(choices)
    listed = ", ".join(str(c) for c in choices)
    return Rule(f"one of {listed}" + (f" ({note})" if note else ""), lambda v: type(v) is str and v in choices, None, None, choices)  # fmt: skip


#: true or false (a JSON boolean: not 1, not "false")
FLAG = Rule("true or false", lambda v: isinstance(v, bool), choices=(True, False))


def _seed(variable: str) -> Rule:
    """A seed that every generator of a run takes (numpy's: 0 to 2**32 - 1; -1 was a traceback from inside
    AllenNLP), or null; ``variable`` sets it."""
    return number(0, 2**32 - 1, integer=True, note=variable, null="")


TAG_SCHEME = Rule(f"{SCHEME_SETTINGS} (EER_TAG_SCHEME)", is_scheme_setting)
_COUNT = number(1, integer=True)

#: the precisions of a model's encoder (:mod:`eer_plugin.inference.precision` runs them; tagging alone also int8)
PRECISIONS = ("fp32", "bf16", "auto")
#: what a model loaded for tagging may run its encoder in (``Tagger.load``, ``ExportedTagger.load``, the ``eer_tagger``
#: predictor's ``precision``): :data:`PRECISIONS` and ``int8``; chosen at load, never stored in a model
TAGGING_PRECISIONS = PRECISIONS + ("int8",)
_TAGGING_MEANINGS = "fp32: float32; bf16: bfloat16; auto: bf16 where native, else fp32; int8: quantized, CPU only"
#: what a tagging precision must be, wherever a model is loaded for tagging (:func:`tagging_precision_problem`)
TAGGING_PRECISION = dataclasses.replace(one_of(TAGGING_PRECISIONS, _TAGGING_MEANINGS), null="the model's own")


def tagging_precision_problem(precision: Any, device: Any = None, key: str = "precision") -> Optional[str]:
    """The one line for a ``precision`` (the argument ``key``) that a model loaded for tagging on ``device``
    (``cpu``, ``cuda:0``, a ``torch.device``; None: not known yet) cannot run in: ``precision must be one of fp32,
    bf16, auto, int8 (fp32: float32; ...; int8: quantized, CPU only), or null (the model's own), got 'FP32'``; on a
    GPU ``int8`` is refused with the choices there. None when it can. The one check of ``Tagger.load``,
    ``ExportedTagger.load``, the ``eer_tagger`` predictor and :func:`~eer_plugin.inference.precision.set_tagging_precision`,
    each raising its own error class with its own prefix."""
    rule = TAGGING_PRECISION
    if precision == "int8" and device is not None and str(device).split(":")[0] != "cpu":
        rule = dataclasses.replace(one_of(PRECISIONS, f"on {device}: int8 runs on the CPU only"), null=rule.null)
    problem = rule.problem(key, precision)
    return None if problem is None else shortened(problem)  # a long value: its start and end


#: config key -> its rule: every setting a registered class of eer-ner checks when it is built, and the settings of
#: AllenNLP's classes that a training config is checked for before they are built (the learning rates, ``trainer.patience``, ...)
RULES: Dict[str, Rule] = {
    # the dataset reader eer_documents (dataset_reader.* and validation_dataset_reader.*); max_length: the reader's own
    "dataset_reader.model_name": Rule(
        "the name or directory of an encoder (EER_ENCODER), or words", lambda v: isinstance(v, str) and bool(v.strip())
    ),
    "dataset_reader.format": one_of(FORMATS, "auto: from each file's name and content"),
    "dataset_reader.tag_scheme": TAG_SCHEME,
    "dataset_reader.encoding": TAG_SCHEME,  # tag_scheme's old name
    "dataset_reader.sentences_per_document": number(
        1,
        integer=True,
        note="column files without -DOCSTART-: sentences per document; EER_SENTENCES_PER_DOCUMENT",
        null="the default, 10",
    ),
    "dataset_reader.tag_column": Rule(
        "an integer other than 0 (the column of the tags, 0-based, -1: the last; column 0 holds the words; "
        "EER_TAG_COLUMN)",
        lambda v: is_integer(v) and v != 0,
    ),
    "dataset_reader.variant": one_of(VARIANTS),
    "dataset_reader.assume_complete": FLAG,
    "dataset_reader.sentence_level": FLAG,
    "dataset_reader.file_encoding": Rule(f"{FILE_ENCODINGS} (EER_FILE_ENCODING)", is_file_encoding),
    # the models eer_tagger and sns_tagger; the EER objective's and the binding control's ranges are core.ranges'
    "model.entity_ratio": ranged(ENTITY_RATIO),
    "model.ratio_margin": ranged(RATIO_MARGIN),
    "model.ratio_loss_weight": ranged(RATIO_LOSS_WEIGHT),
    "model.ratio_control": one_of(RATIO_CONTROLS),  # core.ratio_control.check_ratio_control says the same
    "model.dropout": number(0, 1, high_open=True, what="a probability"),
    "model.price_rate": ranged(PRICE_RATE),
    "model.price_penalty": ranged(PRICE_PENALTY),
    "model.precision": one_of(
        PRECISIONS, "EER_PRECISION; auto: bf16 where the machine computes it natively, else fp32"
    ),
    "model.o_cost": number(what="a finite number"),
    "model.per_sequence_ratio": FLAG,
    "model.ratio_counts_bookends": FLAG,
    "model.train_constraints": FLAG,
    "model.max_width": number(1, integer=True, note="the longest span, in words"),
    "model.negative_rate": number(0, note="negatives drawn per word of a chunk"),
    "model.hidden_dim": _COUNT,
    "model.seed": number(integer=True, what="an integer", note="EER_SEED"),
    # the trainer eer, its checkpointer eer_atomic and its callback eer_ratio_init
    "trainer.num_epochs": _COUNT,
    "trainer.optimizer.lr": number(0, low_open=True, what="a learning rate"),
    "trainer.min_steps": number(0, integer=True, note="0: the epochs decide"),
    "trainer.deterministic": FLAG,
    "trainer.dropout_seed": _seed("EER_DROPOUT_SEED"),
    "trainer.patience": number(1, integer=True, null="never stop early"),
    "trainer.grad_norm": number(0, low_open=True, null="no clipping"),
    "trainer.num_gradient_accumulation_steps": number(1, integer=True, note="batches per optimizer step"),
    "trainer.checkpointer.save_completed_epochs": FLAG,
    "trainer.checkpointer.save_every_num_seconds": number(0, low_open=True, what="a number of seconds", null=""),
    "trainer.checkpointer.save_every_num_batches": number(1, integer=True, null=""),
    "trainer.checkpointer.keep_most_recent_by_count": number(
        1, integer=True, note="the run resumes from and ends with its last checkpoint", null="keep every checkpoint"
    ),
    "trainer.checkpointer.keep_most_recent_by_age": number(0, low_open=True, what="a number of seconds", null=""),
    "trainer.callbacks[eer_ratio_init].sample_chunks": number(1, integer=True, note="training chunks it calibrates on"),
    "trainer.callbacks[eer_ratio_init].tolerance": number(0, low_open=True, note="|rho_hat - rho| left after it"),
    **{seed: _seed("EER_SEED") for seed in ("random_seed", "numpy_seed", "pytorch_seed")},
    # AllenNLP's data loaders
    **{
        f"{loader}.{part}batch_size": _COUNT
        for loader in ("data_loader", "validation_data_loader")
        for part in ("", "batch_sampler.")
    },
}


def checked(key: str, value: Any, rule: Optional[Rule] = None) -> Any:
    """``value``, or :class:`SettingError` (one line naming ``key``, the value and what it must be) unless ``rule``
    (default: :data:`RULES`'s of ``key``) takes it."""
    problem = (rule or RULES[key]).problem(key, value)
    if problem is not None:
        raise SettingError(problem)
    return value


def check_arguments(part: str, arguments: Mapping[str, Any], rules: Optional[Mapping[str, Rule]] = None) -> None:
    """:func:`checked` for each of a constructor's ``arguments`` (its ``locals()`` as it starts) that has a rule: its
    own in ``rules`` (by name), else :data:`RULES`'s of ``{part}.{name}`` (``part``: ``model``,
    ``trainer.checkpointer``, ...). What a registered class calls first: a value it cannot use is refused before
    anything is built, and a rule added to :data:`RULES` is checked without a line more in the class."""
    for name, value in arguments.items():
        rule = (rules or {}).get(name) or RULES.get(f"{part}.{name}")
        if rule is not None:
            checked(f"{part}.{name}", value, rule)
