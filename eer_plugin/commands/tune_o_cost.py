"""``allennlp tune-o-cost`` / ``eer-ner tune-o-cost``: the Raw+CD baseline's cost-aware decoding.

The arguments only; the search and the archive rewriting are :mod:`eer_plugin.training.o_cost_search`.
"""

import argparse
from typing import Dict

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option

NAME = "tune-o-cost"
DESCRIPTION = "Tune the decoding O-cost of a trained (Raw) model on dev F1 (the Raw+CD baseline)."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("archive_file", help="trained model archive (model.tar.gz)")
    parser.add_argument("dev_file", help="gold dev data (any format the model's reader reads)")
    parser.add_argument("--test-file", help="gold test data: report test metrics with the tuned cost")
    from eer_plugin.training.o_cost_search import tune_o_cost as search  # here: the command imports no torch

    add_option(
        parser,
        "--n-calls",
        type=int,
        default_from=(search, "n_calls"),
        help="evaluations of the GP search (default %(default)s)",
    )
    add_option(
        parser, "--low", type=float, default_from=(search, "low"), help="smallest cost searched (default %(default)s)"
    )
    add_option(
        parser, "--high", type=float, default_from=(search, "high"), help="largest cost searched (default %(default)s)"
    )
    add_option(
        parser, "--seed", type=int, default_from=(search, "seed"), help="seed of the search (default %(default)s)"
    )
    add_option(
        parser,
        "--batch-size",
        type=int,
        default_from=(search, "batch_size"),
        help="evaluation batch size (default %(default)s)",
    )
    add_option(
        parser,
        "--cuda-device",
        type=int,
        default_from=(search, "cuda_device"),
        help="GPU to evaluate on (default %(default)s: the CPU)",
    )
    parser.add_argument("--output-archive", help="where to write the archive with the tuned cost")
    return parser


def tune_o_cost(args: argparse.Namespace) -> Dict:
    from eer_plugin.training import o_cost_search

    report, report_path, output = o_cost_search.tune_o_cost(
        args.archive_file,
        args.dev_file,
        args.test_file,
        args.n_calls,
        args.low,
        args.high,
        args.seed,
        args.batch_size,
        args.cuda_device,
        args.output_archive,
    )
    print(
        f"best O-cost {report['o_cost']:.4g}: dev F1 {report['dev_f1']:.4f} (without cost {report['dev_f1_without_cost']:.4f})"
    )
    if "test" in report:
        print(
            f"test F1 {report['test']['f1-measure-overall']:.4f} (without cost {report['test_without_cost']['f1-measure-overall']:.4f})"
        )
    print(f"wrote {report_path} and {output}")
    return report


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, tune_o_cost)
