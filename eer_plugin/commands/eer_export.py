"""``eer-ner eer-export FORMAT PREDICTIONS OUT``: a model's predictions -> an annotation tool's import
format, as pre-annotations for the annotator to correct (the loop partial annotation is for:
``eer-import`` -> ``train`` -> ``predict`` -> ``eer-export`` -> correct -> ``eer-import`` ...).

FORMAT is ``doccano``, ``label-studio``, ``prodigy`` or ``brat`` (writers in
:mod:`eer_plugin.corpus.exporters`); PREDICTIONS is the JSON lines output of ``eer-ner predict
--predictor eer_tagger``. The span probabilities go where the tool has a score field (Label Studio
result and prediction ``score``, Prodigy span ``score``, brat ``AnnotatorNotes``). Outputs follow
the output policy (:mod:`eer_plugin.common.outputs`): checked against the input before anything is
read, written whole or not at all; brat's OUT is a new directory.
"""

import argparse

from eer_plugin.commands import subcommand
from eer_plugin.common.outputs import OutputError, check_outputs
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.exporters import EXPORT_FORMATS, export
from eer_plugin.corpus.exporters.brat import check_output_directory

NAME = "eer-export"
DESCRIPTION = (
    "Write a model's predictions (eer-ner predict output) as pre-annotations in an annotation tool's import "
    "format (doccano, label-studio, prodigy, brat), with the span probabilities where the tool has a score field."
)


class ExportArgumentError(ValueError):
    """An option that does not belong to the chosen format."""


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("format", choices=EXPORT_FORMATS, help="the tool to import OUT")
    parser.add_argument("predictions", help="JSON lines written by eer-ner predict --predictor eer_tagger")
    parser.add_argument(
        "output",
        metavar="OUT",
        help="doccano .jsonl, Label Studio tasks .json, Prodigy .jsonl, or a new brat directory (X.txt + X.ann)",
    )
    parser.add_argument("--model-version", help="label-studio: the predictions' model_version (default: eer-ner)")
    parser.add_argument(
        "--from-name", help="label-studio: name of the labelling config's <Labels> tag (default: label)"
    )
    parser.add_argument("--to-name", help="label-studio: name of the labelling config's <Text> tag (default: text)")
    return parser


def run(args: argparse.Namespace) -> dict:
    if args.format == "brat":
        check_output_directory(args.output)
    else:
        check_outputs([("PREDICTIONS", args.predictions)], [("OUT", args.output)])
    given = {"model_version": args.model_version, "from_name": args.from_name, "to_name": args.to_name}
    options = {key: value for key, value in given.items() if value is not None}
    if options and args.format != "label-studio":
        flags = ", ".join("--" + key.replace("_", "-") for key in options)
        raise ExportArgumentError(f"{flags}: option(s) of the label-studio format, not of {args.format}")
    documents, spans, errors = export(args.format, args.predictions, args.output, **options)
    skipped = f" ({errors} error record{'s' * (errors != 1)} of predict skipped)" if errors else ""
    print(f"{NAME} {args.format}: {documents} documents, {spans} spans -> {args.output}{skipped}")
    return {"documents": documents, "spans": spans, "error_records": errors}


run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (DocumentError, OutputError, ExportArgumentError, OSError)
)
