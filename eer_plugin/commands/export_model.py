"""``eer-ner eer-export-model model.tar.gz DIR``: a trained model -> a directory that tags without AllenNLP
(torch, transformers and safetensors only: ``Tagger.load(DIR)``). The work is in
:mod:`eer_plugin.models.export`; the format in :mod:`eer_plugin.inference.exported`."""

import argparse

from eer_plugin.commands import subcommand
from eer_plugin.common.errors import UserError

NAME = "eer-export-model"
DESCRIPTION = (
    "Export a trained eer_tagger (model.tar.gz) to a directory that tags without AllenNLP: safetensors weights, "
    "the tag set, CRF constraints and decoding cost, the encoder's config and tokenizer (load it with Tagger.load(DIR))."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("archive", help="the model archive (model.tar.gz) or serialization directory of a training run")
    parser.add_argument("directory", metavar="DIR", help="the export directory (new or empty; see --force)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace DIR if it exists and is not empty (never the directory that holds the model)",
    )
    return parser


def run(args: argparse.Namespace) -> dict:
    from eer_plugin.models.export import export_model

    settings = export_model(args.archive, args.directory, force=args.force)
    print(
        f"{NAME}: {args.archive} -> {args.directory} ({', '.join(settings['entity_types'])}; encoder {settings['encoder']}, "
        f"o_cost {settings['o_cost']}); load it with Tagger.load({str(args.directory)!r})"
    )
    return settings


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, run, (UserError, OSError))
