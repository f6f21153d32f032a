"""``eer-ner eer-split DATA --dev-fraction 0.2``: hold a dev set out of your own data, by document.

Training without ``EER_DEV_DATA`` keeps the last epoch's model (no validation); with a dev set the
best epoch on it is kept. This command writes one from your data, by a fixed rule: the documents of
DATA (any corpus format the reader takes; JSON lines written) are shuffled with ``random.Random(seed)``
and the first ``round(fraction * n)`` of them (at least 1, leaving at least 1 for training) become the
dev set; both outputs keep the input's document order. With ``--complete-only`` the dev documents
are drawn from the complete documents only (``is_complete``: their F1 is exact; partial dev documents
need ``-o '{"trainer.validation_metric": "+partial-f1"}'``). The same data, fraction and seed always give the same split.
The rule and the files: :mod:`eer_plugin.corpus.dev_split`.
"""

import argparse

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.outputs import OutputError
from eer_plugin.common.wording import counted
from eer_plugin.corpus import dev_split
from eer_plugin.corpus.documents import DocumentError

NAME = "eer-split"
DESCRIPTION = (
    "Split a dev set off your data by document (seeded, reproducible): writes TRAIN and DEV JSON lines for "
    "EER_TRAIN_DATA and EER_DEV_DATA."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("data", help="your data: partial .jsonl (eer-import), CoNLL or OntoNotes")
    parser.add_argument("train_output", metavar="TRAIN", help="JSON lines: the training documents")
    parser.add_argument("dev_output", metavar="DEV", help="JSON lines: the dev documents")
    add_option(
        parser,
        "--dev-fraction",
        type=float,
        default_from=(dev_split.split_documents, "dev_fraction"),
        help="share of the documents held out (default %(default)s)",
    )
    add_option(
        parser,
        "--seed",
        type=int,
        default_from=(dev_split.split_documents, "seed"),
        help="seed of the shuffle (default %(default)s)",
    )
    parser.add_argument(
        "--complete-only", action="store_true", help="draw the dev documents from the complete documents only"
    )
    return parser


def run(args: argparse.Namespace) -> dict:
    split = dev_split.split_file(
        args.data, args.train_output, args.dev_output, args.dev_fraction, args.seed, args.complete_only
    )
    print(
        f"{NAME}: {counted(split.documents, 'document')} -> {split.train} train ({args.train_output}), {split.dev} dev "
        f"({args.dev_output}, {split.dev_complete} complete); fraction {args.dev_fraction}, seed {args.seed}"
    )
    if split.dev_complete < split.dev:
        print(
            f"{split.dev - split.dev_complete} dev documents are partial: select checkpoints with "
            + """-o '{"trainer.validation_metric": "+partial-f1"}'"""
        )
    print(f"EER_TRAIN_DATA={args.train_output} EER_DEV_DATA={args.dev_output}")
    return {"train": split.train, "dev": split.dev, "dev_complete": split.dev_complete}


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, run, (DocumentError, OutputError))
