"""``eer-ner serve MODEL``: a Label Studio ML backend for MODEL (the arguments; the work is :mod:`eer_plugin.serve`).

Needs the ``serve`` extra (``pip install eer-ner[serve]``: FastAPI and uvicorn); without it the command says
so in one line. Details: docs/label-studio.md.

Registered through the entry point group ``eer_ner.plugins`` (``setup.py``), which
:mod:`eer_plugin.allennlp_plugin` loads after its own registrations, not by a static import: the backend loads
models through :mod:`eer_plugin.api`, which imports the plugin's registration, so a static registration import of
this module would close an import cycle (``tests/test_import_graph.py``). ``python -m eer_plugin.serve.command`` runs it too.
"""

import argparse
import json
import os

from eer_plugin.commands import subcommand
from eer_plugin.common.errors import UserError
from eer_plugin.serve.app import HOST, PORT
from eer_plugin.serve.models import SMALL_DATA_OVERRIDES, TRAIN_CONFIG, WORK_DIR

NAME = "serve"
DESCRIPTION = (
    "Serve a model as a Label Studio ML backend: pre-annotations with span probabilities, training on the "
    "project's partial annotations (Start Training), ranking of unannotated tasks (POST /rank)."
)
API_KEY_VARIABLE = "LABEL_STUDIO_API_KEY"


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "model", help="model.tar.gz, a serialization directory or an exported model directory (eer-export-model)"
    )
    parser.add_argument("--host", default=HOST, help="address to listen on (127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=PORT, help="port to listen on")
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
    parser.add_argument(
        "--work-dir",
        metavar="DIR",
        default=WORK_DIR,
        help="trained models and the served version; a restart serves its last finished model",
    )
    parser.add_argument(
        "--train-config", metavar="CONFIG", default=TRAIN_CONFIG, help="packaged config (or path) of the trainings"
    )
    parser.add_argument(
        "--train-overrides",
        metavar="JSON",
        default="{}",
        help=f"-o overrides of the trainings, over the small-data defaults {json.dumps(SMALL_DATA_OVERRIDES)}",
    )
    parser.add_argument("--encoder", help="encoder of the trainings (unset: the served model's)")
    return parser


def run(args: argparse.Namespace) -> None:
    from eer_plugin.serve import app
    from eer_plugin.serve.backend import Backend
    from eer_plugin.serve.models import ModelStore, Trainer

    app._framework()  # the extra's message before a model loads
    try:
        overrides = json.loads(args.train_overrides)
        assert isinstance(overrides, dict)
    except (ValueError, AssertionError):
        raise UserError(f"--train-overrides is no JSON object: {args.train_overrides!r}") from None
    from eer_plugin.api import Tagger

    store = ModelStore(args.model, args.work_dir, Tagger.load)
    backend = Backend(
        store,
        Trainer(store, args.train_config, overrides, args.encoder),
        args.label_studio_url,
        args.api_key or os.environ.get(API_KEY_VARIABLE),
    )
    served = store.current
    print(
        f"serving {served.version} ({served.path}, {store.source}): types {', '.join(served.entity_types)}", flush=True
    )
    print(f"Label Studio ML backend at http://{args.host}:{args.port} (work dir {store.work_dir})", flush=True)
    app.serve(backend, args.host, args.port)


run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (UserError, OSError), register=__name__ != "__main__"
)

if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
