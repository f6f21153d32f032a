"""``eer-ner eer-dictionary INPUT OUTPUT --dictionary FILE [--dictionary FILE2 ...]``: label text with lists
of names and write the partial-annotation JSON lines ``train`` reads (the rules:
:mod:`eer_plugin.annotation.dictionary`). This module only parses the arguments and prints the summary."""

import argparse

from eer_plugin.annotation import dictionary
from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.errors import print_warning
from eer_plugin.common.outputs import OutputError
from eer_plugin.corpus.documents import DocumentError

NAME = "eer-dictionary"
DESCRIPTION = (
    "Label documents with dictionaries (gazetteers: 'surface form<TAB>TYPE' per line, a spreadsheet's CSV, or JSON "
    "lines): longest "
    "matches on word boundaries become partial-annotation JSON lines for train, each span with its dictionary."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "input",
        help='documents: JSON lines with "text" (raw) or "tokens", a folder of .txt files (one document per file, '
        "named by its path), or a CoNLL file (its tags are ignored)",
    )
    parser.add_argument("output", help="output JSON lines (partial annotation, read by train)")
    parser.add_argument(
        "--dictionary",
        action="append",
        default=[],
        metavar="[NAME=]FILE",
        help="a dictionary (TSV 'surface form<TAB>TYPE', '#' comments; .csv 'surface form,TYPE' or ';', a header "
        'row allowed; .jsonl {"text", "type"}; or an Excel .xlsx, its first sheet\'s first two columns, with '
        "pip install 'eer-ner[xlsx]'); repeat for several; "
        "NAME (default: the file stem) is the source kept with every span it labels",
    )
    parser.add_argument("--case-insensitive", action="store_true", help="match case-folded forms (default: exact case)")
    parser.add_argument(
        "--stop-list",
        metavar="FILE",
        help="forms never matched, one per line (or per row of an Excel workbook's first column)",
    )
    add_option(
        parser,
        "--ambiguous",
        choices=dictionary.AMBIGUOUS_RULES,
        default_from=(dictionary.label_file, "ambiguous"),
        help="a form listed under two types: skip it, or keep the first listing with a warning; counted either way "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--propagate",
        action="store_true",
        help=f"also use the input's annotated spans as a dictionary ('{dictionary.PROPAGATE_SOURCE}') on every document "
        "that is not complete; annotated spans are never changed",
    )
    parser.add_argument("--report", metavar="FILE", help="also write the summary as JSON")
    return parser


def run(args: argparse.Namespace) -> dictionary.Summary:
    summary = dictionary.label_file(
        args.input,
        args.output,
        args.dictionary,
        args.case_insensitive,
        args.stop_list,
        args.ambiguous,
        args.propagate,
        args.report,
        progress=True,
    )
    for warning in summary.warnings:
        print_warning(warning)
    print("\n".join(summary.lines()))
    return summary


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, run, (DocumentError, OutputError))
