"""``allennlp eer-import FORMAT INPUT OUTPUT.jsonl``: an annotation tool's export -> partial JSON lines.

FORMAT is ``doccano``, ``label-studio``, ``brat``, ``prodigy`` or ``spacy`` (parsing in
:mod:`eer_plugin.corpus.importers`). The text is split into words by the predictor's raw-text
tokenizer (:func:`eer_plugin.corpus.tokenizer.tokenize_text`), so ``allennlp predict`` on the same
text yields character offsets into the same characters. Prints the import report (documents,
spans, complete documents, negative spans, skipped items, warnings) and every warning; writes the
output atomically (temporary file + rename), so a failed import leaves no partial file; an output
that is an input, or two outputs that are one file, are refused before anything is read
(:mod:`eer_plugin.common.outputs`). The run is :func:`eer_plugin.corpus.importers.files.import_file`.
"""

import argparse

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.errors import print_warning
from eer_plugin.common.outputs import OutputError
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.importers import IMPORT_FORMATS, AnnotationImportError, files, label_studio, spacy_docbin

NAME = "eer-import"
DESCRIPTION = (
    "Convert an annotation tool's export (doccano, label-studio, brat, prodigy, spacy) to eer-ner's partial "
    "JSON lines: words, word spans, sentence ends, is_complete, negative_spans."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("format", choices=IMPORT_FORMATS, help="the tool that wrote INPUT")
    parser.add_argument(
        "input",
        help="doccano .jsonl, Label Studio JSON export, brat directory (X.txt + X.ann) or .ann file, "
        "Prodigy .jsonl (db-out), spaCy .spacy DocBin",
    )
    parser.add_argument("output", help="partial-annotation JSON lines to write")
    parser.add_argument(
        "--complete",
        action="store_true",
        help="every imported document is complete: the annotators marked every entity (unmarked words become O)",
    )
    parser.add_argument(
        "--complete-ids",
        metavar="FILE",
        help="file of document ids (one per line, # comments) whose annotation is complete",
    )
    parser.add_argument(
        "--complete-output",
        metavar="FILE",
        help="write the complete documents to FILE instead of OUTPUT (a held-out set for "
        "eer-estimate-ratio and for model selection)",
    )
    add_option(
        parser,
        "--annotators",
        choices=label_studio.ANNOTATORS,
        default_from=(label_studio.read, "annotators"),
        given_only=True,
        help="label-studio: keep the first non-cancelled annotation of a task or the union of all (default %(default)s)",
    )
    add_option(
        parser,
        "--text-key",
        default_from=(label_studio, "TEXT_KEY"),
        given_only=True,
        help="label-studio: the data key holding the text (default %(default)s, else the data's only string)",
    )
    add_option(
        parser,
        "--incorrect-spans-key",
        default_from=(spacy_docbin.read, "incorrect_spans_key"),
        given_only=True,
        help="spacy: doc.spans key of rejected spans (negative spans of their label; default %(default)s)",
    )
    add_option(
        parser,
        "--file-encoding",
        default_from=(files.import_file, "file_encoding"),
        help="character encoding of the input (default %(default)s: UTF-8; brat .txt files that are not UTF-8 are "
        "read as latin-1 with a warning) or a codec name such as latin-1",
    )
    parser.add_argument("--report", metavar="JSON", help="also write the import report as JSON")
    return parser


def run(args: argparse.Namespace) -> dict:
    """Imports, writes and returns the report (as JSON)."""
    result, report, outputs = files.import_file(
        args.format,
        args.input,
        args.output,
        args.complete,
        args.complete_ids,
        args.complete_output,
        args.report,
        args.file_encoding,
        warn=print_warning,
        annotators=args.annotators,
        text_key=args.text_key,
        incorrect_spans_key=args.incorrect_spans_key,
    )
    print(f"{NAME} {args.format}: {report.summary()}")
    print("wrote " + "; ".join(outputs))
    return result


# FormatError is a DocumentError
run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (AnnotationImportError, DocumentError, OutputError, OSError)
)
