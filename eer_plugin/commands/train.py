"""``eer-ner train ... --ratio-estimate ratio.json``: AllenNLP's ``train`` plus "estimate, then bind".

The recipe for your own data: count the entity ratio on the documents you annotated completely
(``eer-ner eer-estimate-ratio DATA --output ratio.json``), then train with ``--ratio-estimate
ratio.json``. The flag adds the estimate's suggested ``entity_ratio`` (rho) and ``ratio_margin``
(gamma) to the run's ``-o`` overrides (``model.entity_ratio``, ``model.ratio_margin``) and turns on
the binding control (``model.ratio_control: bind``) unless your ``-o`` sets it: the numbers land in the
run's ``config.json``, nothing is copied by hand. An ``-o`` of yours with a different rho or gamma is a
conflict and stops the run before anything is written. Everything else is AllenNLP's ``train``.
"""

import argparse
import json
import logging
from typing import Any, Dict, Tuple

from allennlp.commands.subcommand import Subcommand
from allennlp.commands.train import Train
from allennlp.common.params import parse_overrides

from eer_plugin.annotation.ratio_estimate import read_suggestion
from eer_plugin.common.errors import UserError
from eer_plugin.runtime.settings import BY_NAME, config_approach
from eer_plugin.training.settings_checks import check_training_arguments

logger = logging.getLogger(__name__)

#: the setting each suggested value goes to
SETTINGS = {"entity_ratio": "EER_ENTITY_RATIO", "ratio_margin": "EER_RATIO_MARGIN"}


def _lookup(overrides: Dict[str, Any], path: str) -> Tuple[Dict[str, Any], str]:
    """The object of ``overrides`` that holds ``path`` (a nested ``{"model": {...}}`` or the dotted key) and
    the key in it."""
    parts = path.split(".")
    for i in range(1, len(parts)):
        head = ".".join(parts[:i])
        if isinstance(overrides.get(head), dict):
            return _lookup(overrides[head], ".".join(parts[i:]))
    return overrides, path


def apply_ratio_estimate(path: str, overrides: str, config: str) -> str:
    """The ``-o`` overrides ``overrides`` (JSON(net) text) with the estimate at ``path`` added for ``config``:
    rho, gamma and the binding control (unless ``overrides`` sets one); a :class:`UserError` for a bad
    estimate or an override that sets another rho or gamma."""
    try:
        suggestion = read_suggestion(path)
    except ValueError as error:
        raise UserError(f"--ratio-estimate {error}") from None
    try:
        merged = parse_overrides(overrides) if overrides else {}
    except Exception as error:  # noqa: BLE001 - jsonnet's and json's errors alike
        raise UserError(f"-o/--overrides is no JSON(net) object: {error}") from None
    approach, _ = config_approach(config)
    chosen: Dict[str, Any] = {}
    for key, value in suggestion.items():
        setting = BY_NAME[SETTINGS[key]]
        target = setting.path_for(approach)
        if target is None:
            continue
        holder, name = _lookup(merged, target)
        if name in holder and float(holder[name]) != float(value):
            raise UserError(
                f"--ratio-estimate {path} gives {target}={value:g} but your -o sets {target}={holder[name]}: drop one of them"
            )
        holder[name] = chosen[target] = value
    control = BY_NAME["EER_RATIO_CONTROL"].path_for(approach)
    if control is not None:
        holder, name = _lookup(merged, control)
        if name not in holder:
            holder[name] = chosen[control] = "bind"
    logger.info("ratio from %s: %s", path, ", ".join(f"{k}={v}" for k, v in chosen.items()))
    return json.dumps(merged)


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
            if args.ratio_estimate:
                args.overrides = apply_ratio_estimate(args.ratio_estimate, args.overrides, args.param_path)
            check_training_arguments(args.param_path, args.overrides, args.serialization_dir, args.recover, args.force)
            return train(args)

        subparser.set_defaults(func=train_with_estimate)
        return subparser
