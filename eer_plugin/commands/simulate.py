"""``eer-ner eer-simulate`` / ``allennlp eer-simulate``: the command line of the annotation simulators
(:mod:`eer_plugin.annotation.simulators`; paper, "Simulated Annotation Scenarios"). It also runs as
``python -m eer_plugin.commands.simulate``, and imports no AllenNLP itself.

::

    eer-simulate {ee,nns,random,gold,dictionary} INPUT OUTPUT.jsonl [--budget M] [--learning-curve] [--coverage c]
        [--complete-documents D] [--max-per-document N] [--keep-probability p] [--recall r] [--precision p]
        [--max-fp-length L] [--seed S] [--variant all|short|shortest]
        [--format auto|conll|ontonotes|jsonl] [--tag-scheme auto|IOB1|BIO|BIOUL|BIOES]
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

from eer_plugin.annotation import dictionary_scenario, simulators
from eer_plugin.annotation.scenarios import (  # noqa: F401  (UsageError, learning_curve_path: the names this module had)
    SCENARIO_OPTIONS,
    SCENARIOS,
    UsageError,
    learning_curve_path,
    simulate_file,
)
from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.commands.reader_options import add_reader_arguments, reader_options
from eer_plugin.common.outputs import OutputError
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import DocumentError

NAME = "eer-simulate"
DESCRIPTION = (
    "Simulate partial annotation of a gold NER corpus: ee (Exploratory Expert), nns (Non-Native "
    "Speaker), random (uniform drop), gold (complete, as given) or dictionary (a share of the gold entity forms "
    "matched over the text). Writes partial-annotation JSON lines."
)
EE = simulators.exploratory_expert
NNS = simulators.non_native_speaker


def _simulator_option(group, flag: str, kind: type, simulator, help: str) -> None:
    """``flag`` with the default of the same-named parameter of ``simulator``; None when not given."""
    add_option(group, flag, type=kind, default_from=(simulator, flag[2:].replace("-", "_")), given_only=True, help=help)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Adds the simulator options to ``parser`` (a top-level parser or an AllenNLP subparser). An option left out
    parses to None: the simulator applies its own default (the one ``--help`` shows)."""
    parser.add_argument("scenario", choices=SCENARIOS, help="annotation scenario to simulate")
    parser.add_argument("input", help="gold corpus: CoNLL column file, OntoNotes *_conll file or directory, or .jsonl")
    parser.add_argument("output", help="output JSON-lines file")
    ee = parser.add_argument_group("ee (Exploratory Expert)")
    _simulator_option(ee, "--budget", int, EE, "entity spans to annotate (default %(default)s)")
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
    _simulator_option(
        ee,
        "--max-per-document",
        int,
        EE,
        "most spans annotated per document (default %(default)s; with --learning-curve the "
        f"authors' cap per budget, {simulators.LEARNING_CURVE_MAX_PER_DOCUMENT})",
    )
    keep = "probability of annotating each entity (ee: default %(default)s; random: required)"
    _simulator_option(parser, "--keep-probability", float, EE, keep)
    nns = parser.add_argument_group("nns (Non-Native Speaker)")
    _simulator_option(nns, "--recall", float, NNS, "target recall (default %(default)s)")
    _simulator_option(nns, "--precision", float, NNS, "target precision (default %(default)s)")
    _simulator_option(nns, "--max-fp-length", int, NNS, "longest false positive in words (default %(default)s)")
    dictionary = parser.add_argument_group("dictionary (distant supervision from a list of names)")
    coverage = "share of the distinct gold entity forms in the dictionary, e.g. 0.2 (default %(default)s)"
    _simulator_option(dictionary, "--coverage", float, dictionary_scenario.dictionary_annotation, coverage)
    _simulator_option(parser, "--seed", int, EE, "random seed (default %(default)s)")
    add_option(
        parser,
        "--variant",
        choices=simulators.VARIANTS,
        default_from=(simulators, "DEFAULT_VARIANT"),
        help="train-data variant of the output (default %(default)s)",
    )
    add_reader_arguments(parser, "INPUT")
    return parser


def build_parser(prog: str = NAME) -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(prog=prog, description=DESCRIPTION))


def run(args: argparse.Namespace) -> List[Dict]:
    """Simulates (:func:`~eer_plugin.annotation.scenarios.simulate_file`: reads, simulates, writes) and reports;
    returns the statistics of every output file."""
    options = {option: getattr(args, option) for option in SCENARIO_OPTIONS}
    reports = []
    for stats in simulate_file(args.scenario, args.input, args.output, args.variant, reader_options(args), **options):
        print(
            f"{args.scenario}: recall {stats['recall']:.4f}  precision {stats['precision']:.4f}  "
            f"kept spans {stats['kept_spans']}/{stats['gold_spans']}  false positives {stats['false_positives']}  "
            f"documents touched {stats['documents_touched']}/{stats['documents']}  "
            + (
                f"complete {stats['complete_documents']} ({counted(stats['complete_spans'], 'span')})  "
                if "complete_documents" in stats
                else ""
            )
            + f"-> {stats['output']} ({counted(stats['documents_written'], 'document')}, variant {args.variant})"
        )
        reports.append(stats)
    return reports


run_or_exit, _main = subcommand.define(
    NAME,
    DESCRIPTION,
    add_arguments,
    run,
    (DocumentError, simulators.SimulationError, UsageError, OutputError, OSError),
    register=__name__ != "__main__",
)


def main(argv: Optional[Sequence[str]] = None, prog: str = NAME) -> int:
    """Runs the command on ``argv``; expected errors print one line and exit with status 1."""
    return _main(None if argv is None else list(argv), prog)


if __name__ == "__main__":
    sys.exit(main(prog="python -m eer_plugin.commands.simulate"))
