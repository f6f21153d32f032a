"""``allennlp eer-import FORMAT INPUT OUTPUT.jsonl``: an annotation tool's export -> partial JSON lines.

FORMAT is ``doccano``, ``label-studio``, ``brat``, ``prodigy`` or ``spacy`` (parsing in
:mod:`eer_plugin.corpus.importers`). The text is split into words by the predictor's raw-text
tokenizer (:func:`eer_plugin.corpus.tokenizer.tokenize_text`), so ``allennlp predict`` on the same
text yields character offsets into the same characters. Prints the import report (documents,
spans, complete documents, negative spans, skipped items, warnings) and every warning; writes the
output atomically (temporary file + rename), so a failed import leaves no partial file; an output
that is an input, or two outputs that are one file, are refused before anything is read
(:mod:`eer_plugin.common.outputs`).
"""

import argparse
import sys
from typing import List

from eer_plugin.commands import subcommand
from eer_plugin.common.outputs import OutputError, check_outputs
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.formats import write_jsonl
from eer_plugin.corpus.importers import IMPORT_FORMATS, AnnotationImportError, import_documents, read_ids

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
    parser.add_argument(
        "--annotators",
        choices=("first", "union"),
        default=None,
        help="label-studio: keep the first non-cancelled annotation of a task (default) or the union of all",
    )
    parser.add_argument(
        "--text-key", default=None, help="label-studio: the data key holding the text (default: 'text')"
    )
    parser.add_argument(
        "--incorrect-spans-key",
        default=None,
        help="spacy: doc.spans key of rejected spans (negative spans of their label; default 'incorrect_spans')",
    )
    parser.add_argument(
        "--file-encoding",
        default="auto",
        help="character encoding of the input: auto (UTF-8; brat .txt files that are not UTF-8 are read as "
        "latin-1 with a warning) or a codec name such as latin-1",
    )
    parser.add_argument("--report", metavar="JSON", help="also write the import report as JSON")
    return parser


def _format_options(args: argparse.Namespace) -> dict:
    options = {}
    given = {
        "--annotators": args.annotators,
        "--text-key": args.text_key,
        "--incorrect-spans-key": args.incorrect_spans_key,
    }
    owner = {"--annotators": "label-studio", "--text-key": "label-studio", "--incorrect-spans-key": "spacy"}
    for flag, value in given.items():
        if value is not None and owner[flag] != args.format:
            raise AnnotationImportError(
                f"{flag} is an option of the {owner[flag]} format, not of {args.format}", args.input
            )
    if args.format == "label-studio":
        options.update(annotators=args.annotators or "first", text_key=args.text_key)
    if args.format == "spacy" and args.incorrect_spans_key is not None:
        options["incorrect_spans_key"] = args.incorrect_spans_key
    if args.format != "spacy":
        options["file_encoding"] = args.file_encoding
    return options


def run(args: argparse.Namespace) -> dict:
    """Imports, writes and returns the report (as JSON)."""
    from eer_plugin.corpus.tokenizer import tokenize_text  # the predictor's raw-text tokenizer (pure Python)

    check_outputs(
        [("INPUT", args.input), ("--complete-ids", args.complete_ids)],
        [("OUTPUT", args.output), ("--complete-output", args.complete_output), ("--report", args.report)],
    )
    complete_ids = read_ids(args.complete_ids) if args.complete_ids else None
    documents, report = import_documents(
        args.format,
        args.input,
        tokenize_text,
        complete=args.complete,
        complete_ids=complete_ids,
        **_format_options(args),
    )
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    outputs: List[str] = []
    if args.complete_output:
        held_out = [d for d in documents if d.is_complete]
        documents = [d for d in documents if not d.is_complete]
        write_jsonl(held_out, args.complete_output)
        outputs.append(f"{len(held_out)} complete -> {args.complete_output}")
    write_jsonl(documents, args.output)
    outputs.insert(0, f"{len(documents)} -> {args.output}")
    result = report.to_json()
    result.update(input=str(args.input), output=str(args.output), complete_output=args.complete_output)
    if args.report:
        from eer_plugin.common.atomic import write_json

        write_json(dict(result, warning_messages=report.warnings), args.report)
    print(f"{NAME} {args.format}: {report.summary()}")
    print("wrote " + "; ".join(outputs))
    return result


# FormatError is a DocumentError
run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (AnnotationImportError, DocumentError, OutputError, OSError)
)
