"""``allennlp cbl`` / ``eer-ner cbl``: the Constrained Binary Learning baseline (Mayhew et al. 2019) from a config.

    allennlp cbl training_configs/cbl_bert_shortest.jsonnet -s runs/cbl --include-package eer_plugin
    allennlp cbl training_configs/cbl_bert_shortest.jsonnet -s runs/cbl --recover --include-package eer_plugin  # after an interruption

The arguments only; the rounds are :func:`eer_plugin.training.cbl_rounds.run_cbl_file`.
"""

import argparse

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.commands.overrides import check_overrides

NAME = "cbl"
DESCRIPTION = "Train the CBL baseline (Mayhew et al. 2019): binary relabelling rounds, then the final tagger."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from eer_plugin.annotation.cbl import DEFAULTS, MAX_ROUNDS, RANGES
    from eer_plugin.training.cbl_rounds import run_cbl_file  # here: importing the command imports no torch

    parser.add_argument("param_path", help="a cbl_*.jsonnet config (training config + a 'cbl' block)")
    parser.epilog = (
        "The settings of the config's cbl block (checked before anything is written): "
        + "; ".join(f"cbl.{key}: {bounds.expected}, default {DEFAULTS[key]}" for key, bounds in RANGES.items())
        + f". A run plans at most {MAX_ROUNDS} rounds (a smaller cbl.step is refused, with the step that fits)."
    )
    parser.add_argument("-s", "--serialization-dir", required=True, help="directory for the rounds and the final model")
    add_option(
        parser,
        "-o",
        "--overrides",
        default_from=(run_cbl_file, "overrides"),
        help="JSON overrides of the config (default: none)",
    )
    parser.add_argument(
        "-r",
        "--recover",
        action="store_true",
        help="continue the interrupted run in the serialization directory (its finished rounds are kept)",
    )
    parser.add_argument("-f", "--force", action="store_true", help="replace what the serialization directory holds")
    return parser


def cbl_from_args(args: argparse.Namespace) -> dict:
    from eer_plugin.training.cbl_rounds import run_cbl_file

    return run_cbl_file(
        args.param_path,
        args.serialization_dir,
        check_overrides(args.overrides),  # read once: Params.from_file takes it as it is
        getattr(args, "include_package", None) or [],
        recover=args.recover,
        force=args.force,
    )


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, cbl_from_args)
