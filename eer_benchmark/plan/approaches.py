"""The approaches the benchmark compares, in one table (:data:`FAMILIES`): for each family its label,
its row in the paper, the command and packaged config that train it, and what it supports. The runner,
the attempt, the resume, the plan's units, the report and the paper's numbers read this table instead of
testing family names.

An approach is a family and a training-data variant (``eer_short``: family ``eer``, variant ``short``);
the gold families have the one variant ``all`` and their approach is the family's name (``gold``).

=========  ==========  ===========  ============================  =====  =======  ====  ===========
family     label       command      config                        ratio  O-cost   CBL   distributed
=========  ==========  ===========  ============================  =====  =======  ====  ===========
gold       Gold        train        gold.jsonnet                  no     no       no    yes
gold_sns   Gold-SNS    train        gold_sns.jsonnet              no     no       no    yes
raw        Raw         train        raw_<variant>.jsonnet         no     no       no    yes
raw_cd     Raw+CD      tune-o-cost  raw_<variant>.jsonnet (Raw)   no     yes      no    no
cbl_lstm   CBL-LSTM    cbl          cbl_lstm_<variant>.jsonnet    no     no       yes   no
cbl_bert   CBL-BERT    cbl          cbl_bert_<variant>.jsonnet    no     no       yes   no
sns        SNS         train        sns_<variant>.jsonnet         no     no       no    yes
eer        EER         train        eer_<variant>.jsonnet         yes    no       no    yes
=========  ==========  ===========  ============================  =====  =======  ====  ===========
"""

import dataclasses
from pathlib import Path
from typing import Dict, Optional, Tuple

from eer_plugin.runtime.config_files import CONFIG_DIR  # the packaged training configs

VARIANTS = ("all", "short", "shortest")


@dataclasses.dataclass(frozen=True)
class Family:
    """One family of approaches and what it supports.

    Attributes:
        name: the family (``raw_cd``); the approaches are ``<name>_<variant>`` (a gold family: ``<name>``).
        label: the report's name (``Raw+CD``; rows ``Raw+CD-shortest``).
        paper: the family's name in the paper's benchmark table (``CBL`` for our ``cbl_bert``).
        command: the ``allennlp`` subcommand of its long step: ``train`` (one training into the run
            directory), ``cbl`` (CBL's rounds; the final model in ``<run>/final``) or ``tune-o-cost`` (the
            decoding-cost search on a model of the family ``tunes``).
        config: the packaged config that trains it, ``{variant}`` standing for the variant (for ``tune-o-cost``:
            the config of the run it tunes, trained by the run itself when the plan has no such run).
        ratio: trained with the expected entity ratio: rho_hat and rho* are reported, the ratio grid, the
            ratio estimate and the convergence analysis apply, the evaluation computes rho*.
        gold: trained on the complete annotation: it ignores the scenario and runs on the plan's seeds.
        tunes: the family whose run a ``tune-o-cost`` family tunes (they run as one unit, that run first).
        paper_encoder: the paper's row label names the encoder (``EER-BERT-short``; not ``CBL-LSTM-short``).
    """

    name: str
    label: str
    paper: str
    command: str
    config: str
    ratio: bool = False
    gold: bool = False
    tunes: Optional[str] = None
    paper_encoder: bool = True

    @property
    def variants(self) -> Tuple[str, ...]:
        return ("all",) if self.gold else VARIANTS

    @property
    def approaches(self) -> Tuple[str, ...]:
        return (self.name,) if self.gold else tuple(f"{self.name}_{variant}" for variant in VARIANTS)

    @property
    def tunes_o_cost(self) -> bool:
        """Its run searches the decoding cost of the O tag (``o_cost.json``)."""
        return self.command == "tune-o-cost"

    @property
    def cbl_rounds(self) -> bool:
        """Its run trains CBL's rounds (``cbl_rounds.json``, the final model in ``<run>/final``)."""
        return self.command == "cbl"

    @property
    def resumable(self) -> bool:
        """An interrupted run continues with ``--recover``: its long step is a training into its own
        directory (``allennlp train``), CBL's rounds (``allennlp cbl`` keeps the finished ones) or Raw+CD's
        own Raw training (then the O-cost search, which is short, runs again)."""
        return self.command in ("train", "cbl", "tune-o-cost")

    @property
    def distributed(self) -> bool:
        """AllenNLP's distributed training applies (one ``allennlp train``; the benchmark itself runs each
        run in one process)."""
        return self.command == "train"

    def config_file(self, variant: str) -> Path:
        """The packaged config of one variant."""
        return CONFIG_DIR / self.config.format(variant=variant)


#: every family, in the report's order (gold first); the approaches of the benchmark table
FAMILIES: Dict[str, Family] = {
    family.name: family
    for family in (
        Family("gold", "Gold", "Gold", "train", "gold.jsonnet", gold=True),
        Family("gold_sns", "Gold-SNS", "Gold-SNS", "train", "gold_sns.jsonnet", gold=True),
        Family("raw", "Raw", "Raw", "train", "raw_{variant}.jsonnet"),
        Family("raw_cd", "Raw+CD", "Raw+CD", "tune-o-cost", "raw_{variant}.jsonnet", tunes="raw"),
        Family("cbl_lstm", "CBL-LSTM", "CBL-LSTM", "cbl", "cbl_lstm_{variant}.jsonnet", paper_encoder=False),
        Family("cbl_bert", "CBL-BERT", "CBL", "cbl", "cbl_bert_{variant}.jsonnet"),
        Family("sns", "SNS", "SNS", "train", "sns_{variant}.jsonnet"),
        Family("eer", "EER", "EER", "train", "eer_{variant}.jsonnet", ratio=True),
    )
}
#: approaches trained on the complete annotation; they ignore the scenario (directory ``gold``) and use
#: the plan's seeds: Gold (the CRF tagger) and Gold-SNS (the SNS span model, the paper's Gold-SNS-BERT row)
GOLD_APPROACHES = tuple(name for name, family in FAMILIES.items() if family.gold)
KNOWN_APPROACHES = tuple(approach for family in FAMILIES.values() for approach in family.approaches)
#: the approaches trained with the expected entity ratio (the ratio grid's, the ratio estimate's)
RATIO_APPROACHES = tuple(approach for family in FAMILIES.values() if family.ratio for approach in family.approaches)


def split_approach(approach: str) -> Tuple[str, str]:
    """``raw_cd_shortest`` -> ``("raw_cd", "shortest")``; ``gold`` -> ``("gold", "all")``; ``gold_sns`` -> ``("gold_sns", "all")``."""
    if approach in GOLD_APPROACHES:
        return approach, "all"
    family, _, variant = approach.rpartition("_")
    return family, variant


def family_of(approach: str) -> Family:
    """The registry's entry of an approach's family (``eer_short`` -> the ``eer`` family)."""
    return FAMILIES[split_approach(approach)[0]]


def approach_label(approach: str) -> str:
    """``raw_cd_shortest`` -> ``Raw+CD-shortest``."""
    family, variant = split_approach(approach)
    return f"{FAMILIES[family].label}-{variant}"
