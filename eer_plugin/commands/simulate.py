"""``eer-ner eer-simulate`` / ``allennlp eer-simulate``: the command line of the annotation simulators
(:mod:`eer_plugin.annotation.simulators`; paper, "Simulated Annotation Scenarios"). It also runs as
``python -m eer_plugin.commands.simulate``, and imports no AllenNLP itself.

::

    eer-simulate {ee,nns,random,gold,dictionary} INPUT OUTPUT.jsonl [--budget M] [--learning-curve] [--coverage c]
        [--complete-documents D] [--max-per-document N] [--keep-probability p] [--recall r] [--precision p]
        [--max-fp-length L] [--seed S] [--variant all|short|shortest]
        [--format auto|conll|ontonotes|jsonl] [--tag-scheme auto|IOB1|BIO|BIOUL]
        [--sentences-per-document K] [--tag-column N] [--file-encoding auto|latin-1|...]

Reads INPUT (gold documents), simulates the scenario, applies the train-data variant and writes
partial-annotation JSON lines, printing the achieved recall, precision, kept spans and touched
documents. ``--learning-curve`` (EE) writes one file per budget of
:data:`~eer_plugin.annotation.simulators.learning_curve_budgets`, named OUTPUT with ``_M<budget>``
before the extension. ``--complete-documents D`` (EE) annotates D random documents completely within
the budget (``is_complete``; the EE simulator spends the rest on the others): data with which
``eer-estimate-ratio`` can measure rho and on which EER observes those documents' ``O`` tags.
``dictionary`` labels the text with a dictionary of ``--coverage`` of its distinct gold entity forms
(:mod:`eer_plugin.annotation.dictionary_scenario`; ``--complete-documents D`` works with it too).
Errors print one line and exit with status 1 (argparse's usage errors: 2).
"""

import argparse
import sys
from typing import Dict, List, Optional, Sequence

from eer_plugin.annotation import simulators
from eer_plugin.annotation.scenarios import DEFAULTS, SCENARIOS, learning_curve_path, output_paths, simulate  # noqa: F401
from eer_plugin.commands import subcommand
from eer_plugin.commands.reader_options import add_reader_arguments, reader_options
from eer_plugin.common.outputs import OutputError, check_outputs
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.formats import read_documents, write_jsonl

NAME = "eer-simulate"
DESCRIPTION = (
    "Simulate partial annotation of a gold NER corpus: ee (Exploratory Expert), nns (Non-Native "
    "Speaker), random (uniform drop), gold (complete, as given) or dictionary (a share of the gold entity forms "
    "matched over the text). Writes partial-annotation JSON lines."
)
#: options that only make sense with some scenarios
SCENARIO_OPTIONS = {
    "budget": ("ee",),
    "learning_curve": ("ee",),
    "complete_documents": ("ee", "dictionary"),
    "max_per_document": ("ee",),
    "keep_probability": ("ee", "random"),
    "recall": ("nns",),
    "precision": ("nns",),
    "max_fp_length": ("nns",),
    "coverage": ("dictionary",),
    "seed": ("ee", "nns", "random", "dictionary"),
}


class UsageError(ValueError):
    """Options that do not fit together."""


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Adds the simulator options to ``parser`` (a top-level parser or an AllenNLP subparser)."""
    parser.add_argument("scenario", choices=SCENARIOS, help="annotation scenario to simulate")
    parser.add_argument("input", help="gold corpus: CoNLL column file, OntoNotes *_conll file or directory, or .jsonl")
    parser.add_argument("output", help="output JSON-lines file")
    ee = parser.add_argument_group("ee (Exploratory Expert)")
    ee.add_argument("--budget", type=int, default=None, help=f"entity spans to annotate (default {DEFAULTS['budget']})")
    ee.add_argument(
        "--learning-curve",
        action="store_true",
        help=f"one output per budget {simulators.learning_curve_budgets}, named OUTPUT_M<budget>.jsonl",
    )
    ee.add_argument(
        "--complete-documents",
        type=int,
        default=None,
        metavar="D",
        help="annotate D random documents completely, within the budget (marked is_complete; the rest of the budget goes to EE)",
    )
    ee.add_argument(
        "--max-per-document",
        type=int,
        default=None,
        help=f"most spans annotated per document (default {DEFAULTS['max_per_document']}; with --learning-curve the "
        f"authors' cap per budget, {simulators.LEARNING_CURVE_MAX_PER_DOCUMENT})",
    )
    parser.add_argument(
        "--keep-probability",
        type=float,
        default=None,
        help=f"probability of annotating each entity (ee: default {DEFAULTS['keep_probability']}; random: required)",
    )
    nns = parser.add_argument_group("nns (Non-Native Speaker)")
    nns.add_argument("--recall", type=float, default=None, help=f"target recall (default {DEFAULTS['recall']})")
    nns.add_argument(
        "--precision", type=float, default=None, help=f"target precision (default {DEFAULTS['precision']})"
    )
    nns.add_argument(
        "--max-fp-length",
        type=int,
        default=None,
        help=f"longest false positive in words (default {DEFAULTS['max_fp_length']})",
    )
    dictionary = parser.add_argument_group("dictionary (distant supervision from a list of names)")
    dictionary.add_argument(
        "--coverage",
        type=float,
        default=None,
        help=f"share of the distinct gold entity forms in the dictionary, e.g. 0.2 (default {DEFAULTS['coverage']})",
    )
    parser.add_argument("--seed", type=int, default=None, help=f"random seed (default {DEFAULTS['seed']})")
    parser.add_argument(
        "--variant",
        choices=simulators.VARIANTS,
        default=DEFAULTS["variant"],
        help="train-data variant of the output (default %(default)s)",
    )
    add_reader_arguments(parser, "INPUT")
    return parser


def build_parser(prog: str = NAME) -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(prog=prog, description=DESCRIPTION))


def _check_options(args: argparse.Namespace) -> None:
    for option, scenarios in SCENARIO_OPTIONS.items():
        value = getattr(args, option)
        if value not in (None, False) and args.scenario not in scenarios:
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} does not apply to scenario {args.scenario!r} (only to {', '.join(scenarios)})")
    if args.scenario == "random" and args.keep_probability is None:
        raise UsageError("scenario 'random' needs --keep-probability")
    if args.learning_curve and args.budget is not None:
        raise UsageError("--learning-curve runs every budget; do not give --budget")
    if args.learning_curve and args.complete_documents is not None:
        raise UsageError("--complete-documents takes one --budget; it does not combine with --learning-curve")


def run(args: argparse.Namespace) -> List[Dict]:
    """Reads, simulates, writes and reports; returns the statistics of every output file.

    Raises :class:`~eer_plugin.corpus.documents.DocumentError` (bad input),
    :class:`~eer_plugin.annotation.simulators.SimulationError`, :class:`UsageError` or
    :class:`~eer_plugin.common.outputs.OutputError` (an output that is the input: nothing is read or written).
    """
    _check_options(args)
    check_outputs(
        [("INPUT", args.input)], [("OUTPUT", path) for path in output_paths(args.output, args.learning_curve)]
    )
    docs = read_documents(args.input, **reader_options(args))
    options = {option: getattr(args, option) for option in SCENARIO_OPTIONS}
    reports = []
    for path, output, stats in simulate(args.scenario, docs, args.output, **options):
        output = simulators.variant(output, args.variant)
        written = write_jsonl(output, path)
        stats = dict(stats, variant=args.variant, documents_written=written, output=str(path))
        print(
            f"{args.scenario}: recall {stats['recall']:.4f}  precision {stats['precision']:.4f}  "
            f"kept spans {stats['kept_spans']}/{stats['gold_spans']}  false positives {stats['false_positives']}  "
            f"documents touched {stats['documents_touched']}/{stats['documents']}  "
            + (
                f"complete {stats['complete_documents']} ({stats['complete_spans']} spans)  "
                if "complete_documents" in stats
                else ""
            )
            + f"-> {path} ({written} documents, variant {args.variant})"
        )
        reports.append(stats)
    return reports


run_or_exit, _main = subcommand.define(
    NAME,
    DESCRIPTION,
    add_arguments,
    run,
    (DocumentError, simulators.SimulationError, UsageError, OutputError, OSError),
    named_errors=True,
    register=__name__ != "__main__",
)
Simulate = run_or_exit.subcommand  # the registered AllenNLP subcommand (None without AllenNLP)


def main(argv: Optional[Sequence[str]] = None, prog: str = NAME) -> int:
    """Runs the command on ``argv``; expected errors print one line and exit with status 1."""
    return _main(None if argv is None else list(argv), prog)


if __name__ == "__main__":
    sys.exit(main(prog="python -m eer_plugin.commands.simulate"))
