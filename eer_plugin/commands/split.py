"""``eer-ner eer-split DATA --dev-fraction 0.2``: hold a dev set out of your own data, by document.

Training without ``EER_DEV_DATA`` keeps the last epoch's model (no validation); with a dev set the
best epoch on it is kept. This command writes one from your data, by a fixed rule: the documents of
DATA (any corpus format the reader takes; JSON lines written) are shuffled with ``random.Random(seed)``
and the first ``round(fraction * n)`` of them (at least 1, leaving at least 1 for training) become the
dev set; both outputs keep the input's document order. With ``--complete-only`` the dev documents
are drawn from the complete documents only (``is_complete``: their F1 is exact; partial dev documents
need ``-o '{"trainer.validation_metric": "+partial-f1"}'``). The same data, fraction and seed always give the same split.
"""

import argparse
import random
from typing import List, Sequence, Tuple

from eer_plugin.commands import subcommand
from eer_plugin.common.outputs import OutputError, check_outputs
from eer_plugin.corpus.documents import Document, DocumentError

NAME = "eer-split"
DESCRIPTION = (
    "Split a dev set off your data by document (seeded, reproducible): writes TRAIN and DEV JSON lines for "
    "EER_TRAIN_DATA and EER_DEV_DATA."
)


def split_documents(
    docs: Sequence[Document], dev_fraction: float, seed: int = 0, complete_only: bool = False
) -> Tuple[List[Document], List[Document]]:
    """``(train, dev)`` by the rule of the module docstring."""
    if not 0 < dev_fraction < 1:
        raise DocumentError(f"--dev-fraction must be between 0 and 1 (exclusive), got {dev_fraction}")
    pool = [i for i, d in enumerate(docs) if d.is_complete or not complete_only]
    if len(docs) < 2 or not pool:
        what = "complete documents (--complete-only)" if complete_only and len(docs) >= 2 else "documents"
        raise DocumentError(
            f"cannot split {len(docs)} documents: need at least 2 documents and 1 of the {what} for dev"
        )
    wanted = min(max(1, round(dev_fraction * len(docs))), len(pool), len(docs) - 1)
    random.Random(seed).shuffle(pool)
    chosen = set(pool[:wanted])
    return [d for i, d in enumerate(docs) if i not in chosen], [d for i, d in enumerate(docs) if i in chosen]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("data", help="your data: partial .jsonl (eer-import), CoNLL or OntoNotes")
    parser.add_argument("train_output", metavar="TRAIN", help="JSON lines: the training documents")
    parser.add_argument("dev_output", metavar="DEV", help="JSON lines: the dev documents")
    parser.add_argument("--dev-fraction", type=float, default=0.2, help="share of the documents held out (default 0.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffle (default 0)")
    parser.add_argument(
        "--complete-only", action="store_true", help="draw the dev documents from the complete documents only"
    )
    return parser


def run(args: argparse.Namespace) -> dict:
    from eer_plugin.corpus.formats import read_documents, write_jsonl

    check_outputs([("DATA", args.data)], [("TRAIN", args.train_output), ("DEV", args.dev_output)])
    docs = list(read_documents(args.data))
    try:
        train, dev = split_documents(docs, args.dev_fraction, args.seed, args.complete_only)
    except DocumentError as error:
        raise DocumentError(f"{args.data}: {error}") from None
    write_jsonl(train, args.train_output)
    write_jsonl(dev, args.dev_output)
    complete = sum(d.is_complete for d in dev)
    print(
        f"{NAME}: {len(docs)} documents -> {len(train)} train ({args.train_output}), {len(dev)} dev ({args.dev_output}, "
        f"{complete} complete); fraction {args.dev_fraction}, seed {args.seed}"
    )
    if complete < len(dev):
        print(
            f"{len(dev) - complete} dev documents are partial: select checkpoints with "
            + """-o '{"trainer.validation_metric": "+partial-f1"}'"""
        )
    print(f"EER_TRAIN_DATA={args.train_output} EER_DEV_DATA={args.dev_output}")
    return {"train": len(train), "dev": len(dev), "dev_complete": complete}


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, run, (DocumentError, OutputError))
