"""``eer-split``: a dev set held out of the user's own data, by document (the rule of
:mod:`eer_plugin.commands.split`): the documents are shuffled with ``random.Random(seed)`` and the first
``round(fraction * n)`` of them (at least 1, leaving at least 1 for training) become the dev set; both parts keep
the input's document order. No AllenNLP here."""

import random
from typing import List, Sequence, Tuple

from eer_plugin.common.outputs import check_outputs
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import read_documents, write_jsonl


def split_documents(
    docs: Sequence[Document], dev_fraction: float = 0.2, seed: int = 0, complete_only: bool = False
) -> Tuple[List[Document], List[Document]]:
    """``(train, dev)`` by the rule of the module docstring; ``complete_only``: the dev documents are drawn from
    the complete documents (``is_complete``) only."""
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


def split_file(
    data: str,
    train_output: str,
    dev_output: str,
    dev_fraction: float = 0.2,
    seed: int = 0,
    complete_only: bool = False,
) -> Tuple[int, List[Document], List[Document]]:
    """Reads ``data`` (any corpus format), splits it (:func:`split_documents`) and writes both parts as JSON lines
    (the outputs checked against the input first); returns ``(documents read, train, dev)``."""
    check_outputs([("DATA", data)], [("TRAIN", train_output), ("DEV", dev_output)])
    docs = list(read_documents(data))
    try:
        train, dev = split_documents(docs, dev_fraction, seed, complete_only)
    except DocumentError as error:
        raise DocumentError(f"{data}: {error}") from None
    write_jsonl(train, train_output)
    write_jsonl(dev, dev_output)
    return len(docs), train, dev
