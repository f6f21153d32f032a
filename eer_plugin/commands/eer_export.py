"""``eer-ner eer-export FORMAT PREDICTIONS OUT``: a model's predictions -> an annotation tool's import
format, as pre-annotations for the annotator to correct (the loop partial annotation is for:
``eer-import`` -> ``train`` -> ``predict`` -> ``eer-export`` -> correct -> ``eer-import`` ...).

FORMAT is ``doccano``, ``label-studio``, ``prodigy`` or ``brat`` (writers in
:mod:`eer_plugin.corpus.exporters`); PREDICTIONS is the JSON lines output of ``eer-ner predict
--predictor eer_tagger``. The span probabilities go where the tool has a score field (Label Studio
result and prediction ``score``, Prodigy span ``score``, brat ``AnnotatorNotes``). Outputs follow
the output policy (:mod:`eer_plugin.common.outputs`): checked against the input before anything is
read, written whole or not at all; brat's OUT is a new directory. The run is
:func:`eer_plugin.corpus.exporters.files.export_file`.
"""

import argparse

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.outputs import OutputError
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.exporters import EXPORT_FORMATS, label_studio
from eer_plugin.corpus.exporters.files import ExportArgumentError, export_file

NAME = "eer-export"
DESCRIPTION = (
    "Write a model's predictions (eer-ner predict output) as pre-annotations in an annotation tool's import "
    "format (doccano, label-studio, prodigy, brat), with the span probabilities where the tool has a score field."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("format", choices=EXPORT_FORMATS, help="the tool to import OUT")
    parser.add_argument("predictions", help="JSON lines written by eer-ner predict --predictor eer_tagger")
    parser.add_argument(
        "output",
        metavar="OUT",
        help="doccano .jsonl, Label Studio tasks .json, Prodigy .jsonl, or a new brat directory (X.txt + X.ann)",
    )
    for flag, what in [
        ("--model-version", "the predictions' model_version"),
        ("--from-name", "name of the labelling config's <Labels> tag"),
        ("--to-name", "name of the labelling config's <Text> tag"),
    ]:
        option = flag[2:].replace("-", "_")
        add_option(
            parser,
            flag,
            default_from=(label_studio.write, option),
            given_only=True,
            help=f"label-studio: {what} (default %(default)s)",
        )
    return parser


def run(args: argparse.Namespace) -> dict:
    options = {"model_version": args.model_version, "from_name": args.from_name, "to_name": args.to_name}
    documents, spans, errors = export_file(args.format, args.predictions, args.output, **options)
    skipped = f" ({counted(errors, 'error record')} of predict skipped)" if errors else ""
    print(f"{NAME} {args.format}: {counted(documents, 'document')}, {counted(spans, 'span')} -> {args.output}{skipped}")
    return {"documents": documents, "spans": spans, "error_records": errors}


run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (DocumentError, OutputError, ExportArgumentError, OSError)
)
