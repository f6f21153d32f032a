"""``eer-ner serve MODEL``: a Label Studio ML backend for MODEL (the arguments; the work is
:func:`eer_plugin.serve.launch.launch`).

Needs the ``serve`` extra (``pip install eer-ner[serve]``: FastAPI and uvicorn); without it the command says
so in one line. Details: docs/label-studio.md.

Registered through the entry point group ``eer_ner.plugins`` (``setup.py``), which
:mod:`eer_plugin.allennlp_plugin` loads after its own registrations, not by a static import: the backend loads
models through :mod:`eer_plugin.api`, which imports the plugin's registration, so a static registration import of
this module would close an import cycle (``tests/test_import_graph.py``). ``python -m eer_plugin.serve.command`` runs it too.
"""

import argparse
import json

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.errors import UserError
from eer_plugin.serve.launch import API_KEY_VARIABLE, launch
from eer_plugin.serve.models import SMALL_DATA_OVERRIDES

NAME = "serve"
DESCRIPTION = (
    "Serve a model as a Label Studio ML backend: pre-annotations with span probabilities, training on the "
    "project's partial annotations (Start Training), ranking of unannotated tasks (POST /rank)."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "model", help="model.tar.gz, a serialization directory or an exported model directory (eer-export-model)"
    )
    add_option(
        parser,
        "--host",
        default_from=(launch, "host"),
        help="address to listen on (default %(default)s: this machine only)",
    )
    add_option(
        parser, "--port", type=int, default_from=(launch, "port"), help="port to listen on (default %(default)s)"
    )
    parser.add_argument(
        "--label-studio-url",
        metavar="URL",
        help="Label Studio's address, for training and ranking (unset: the one Label Studio sends at setup)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"Label Studio API key (unset: ${API_KEY_VARIABLE}, else the project owner's token that Label Studio sends at setup)",
    )
    add_option(
        parser,
        "--work-dir",
        metavar="DIR",
        default_from=(launch, "work_dir"),
        help="trained models and the served version; a restart serves its last finished model (default %(default)s)",
    )
    add_option(
        parser,
        "--train-config",
        metavar="CONFIG",
        default_from=(launch, "train_config"),
        help="packaged config (or path) of the trainings (default %(default)s)",
    )
    add_option(
        parser,
        "--train-overrides",
        metavar="JSON",
        default_from=(launch, "train_overrides"),
        help=f"-o overrides of the trainings, over the small-data defaults {json.dumps(SMALL_DATA_OVERRIDES)} "
        "(default %(default)s)",
    )
    parser.add_argument("--encoder", help="encoder of the trainings (unset: the served model's)")
    add_option(
        parser,
        "--max-body-mb",
        type=float,
        default_from=(launch, "max_body_mb"),
        help="the largest request body read, in MB; a larger one is answered 413 (default %(default)s)",
    )
    add_option(
        parser,
        "--max-words",
        type=int,
        default_from=(launch, "max_words"),
        help="the most words (separated by white space) of one /predict request, all its tasks together; a "
        "larger one is answered 413 naming the limit (default %(default)s: about 80 s of a 2-core CPU with "
        "MiniLM, within Label Studio's 100 s ML_TIMEOUT_PREDICT)",
    )
    return parser


def run(args: argparse.Namespace) -> None:
    launch(
        args.model,
        args.host,
        args.port,
        args.label_studio_url,
        args.api_key,
        args.work_dir,
        args.train_config,
        args.train_overrides,
        args.encoder,
        announce=lambda line: print(line, flush=True),
        max_body_mb=args.max_body_mb,
        max_words=args.max_words,
    )


run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (UserError, OSError), register=__name__ != "__main__"
)

if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(prog="python -m eer_plugin.serve.command"))
