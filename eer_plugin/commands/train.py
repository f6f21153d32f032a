"""``eer-ner train ... --ratio-estimate ratio.json``: AllenNLP's ``train`` plus "estimate, then bind".

The recipe for your own data: count the entity ratio on the documents you annotated completely
(``eer-ner eer-estimate-ratio DATA --output ratio.json``), then train with ``--ratio-estimate
ratio.json``. The flag adds the estimate's suggested ``entity_ratio`` (rho) and ``ratio_margin``
(gamma) to the run's ``-o`` overrides (``model.entity_ratio``, ``model.ratio_margin``) and turns on
the binding control (``model.ratio_control: bind``) unless your ``-o`` sets it: the numbers land in the
run's ``config.json``, nothing is copied by hand. An ``-o`` of yours with a different rho or gamma is a
conflict and stops the run before anything is written (:mod:`eer_plugin.training.ratio_overrides`).
Everything else is AllenNLP's ``train``.
"""

import argparse

from allennlp.commands.subcommand import Subcommand
from allennlp.commands.train import Train

from eer_plugin.commands.overrides import check_overrides
from eer_plugin.runtime.config_overrides import TRAINING_EXAMPLE
from eer_plugin.training.ratio_overrides import apply_ratio_estimate
from eer_plugin.training.settings_checks import check_serialization_dir


@Subcommand.register("train", exist_ok=True)
class TrainWithRatioEstimate(Train):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = super().add_subparser(parser)
        subparser.add_argument(
            "--ratio-estimate",
            metavar="JSON",
            help="the output of `eer-estimate-ratio --output`: its rho and gamma become the overrides "
            "model.entity_ratio / model.ratio_margin and the binding ratio control is on "
            "(model.ratio_control bind, unless your -o sets it)",
        )
        train = subparser.get_default("func")

        def train_with_estimate(args: argparse.Namespace):
            # -o read once, here: the estimate, the checks and AllenNLP's Params.from_file take it as it is
            args.overrides = check_overrides(args.overrides, example=TRAINING_EXAMPLE)
            if args.ratio_estimate:
                args.overrides = apply_ratio_estimate(args.ratio_estimate, args.overrides, args.param_path)
            check_serialization_dir(args.serialization_dir, args.recover, args.force)
            # the config's own checks run where AllenNLP's train reads it, once (runtime.config_checks)
            return train(args)

        subparser.set_defaults(func=train_with_estimate)
        return subparser
