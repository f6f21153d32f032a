"""``eer-ner train ... --ratio-estimate ratio.json``: AllenNLP's ``train`` plus "estimate, then bind".

The recipe for your own data: count the entity ratio on the documents you annotated completely
(``eer-ner eer-estimate-ratio DATA --output ratio.json``), then train with ``--ratio-estimate
ratio.json``. The flag reads the estimate's suggested ``entity_ratio`` (rho) and ``ratio_margin``
(gamma) into ``EER_ENTITY_RATIO`` / ``EER_RATIO_MARGIN``, the variables every config reads, and
turns on the binding control (``EER_RATIO_CONTROL=bind``) unless you set it: the numbers land in
the run's ``config.json``, nothing is copied by hand. A variable you set to a different value is a
conflict and stops the run before anything is written. Everything else is AllenNLP's ``train``.
"""
import argparse
import logging
import os

from allennlp.commands.subcommand import Subcommand
from allennlp.commands.train import Train

from eer_plugin.annotation.ratio_estimate import read_suggestion
from eer_plugin.runtime.errors import UserError

logger = logging.getLogger(__name__)

#: the setting each suggested value goes to
SETTINGS = {"entity_ratio": "EER_ENTITY_RATIO", "ratio_margin": "EER_RATIO_MARGIN"}


def apply_ratio_estimate(path: str, environ=os.environ) -> dict:
    """Sets the settings from the estimate at ``path``; returns what was set."""
    try:
        suggestion = read_suggestion(path)
    except ValueError as error:
        raise UserError(f"--ratio-estimate {error}") from None
    user_set = set(environ)  # the plugin writes no setting into the environment: what is there, you set
    chosen = {SETTINGS[key]: f"{value:g}" for key, value in suggestion.items()}
    for name, value in chosen.items():
        if name in user_set and float(environ[name]) != float(value):
            raise UserError(
                f"--ratio-estimate {path} gives {name}={value} but you set {name}={environ[name]}: unset one of them"
            )
    if "EER_RATIO_CONTROL" not in user_set:
        chosen["EER_RATIO_CONTROL"] = "bind"
    environ.update(chosen)
    logger.info("ratio from %s: %s", path, ", ".join(f"{k}={v}" for k, v in chosen.items()))
    return chosen


@Subcommand.register("train", exist_ok=True)
class TrainWithRatioEstimate(Train):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = super().add_subparser(parser)
        subparser.add_argument(
            "--ratio-estimate",
            metavar="JSON",
            help="the output of `eer-estimate-ratio --output`: its rho and gamma become EER_ENTITY_RATIO / "
            "EER_RATIO_MARGIN and the binding ratio control is on (EER_RATIO_CONTROL=bind unless set)",
        )
        train = subparser.get_default("func")

        def train_with_estimate(args: argparse.Namespace):
            if args.ratio_estimate:
                apply_ratio_estimate(args.ratio_estimate)
            return train(args)

        subparser.set_defaults(func=train_with_estimate)
        return subparser
