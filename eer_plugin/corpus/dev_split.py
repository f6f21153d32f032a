"""``eer-split``: a dev set held out of the user's own data, by document (the rule of
:mod:`eer_plugin.commands.split`): the documents are shuffled with ``random.Random(seed)`` and the first
``round(fraction * n)`` of them (at least 1, leaving at least 1 for training) become the dev set; both parts keep
the input's document order. No AllenNLP here."""

import dataclasses
import random
from typing import List, Sequence, Set, Tuple

from eer_plugin.common.outputs import check_outputs, spooling, writing
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import iter_documents
from eer_plugin.corpus.formats.jsonl import jsonl_line


def dev_indices(
    complete: Sequence[bool], dev_fraction: float = 0.2, seed: int = 0, complete_only: bool = False
) -> Set[int]:
    """The indices of the dev documents among documents whose completeness (``is_complete``) is ``complete``, by
    the rule of the module docstring; ``complete_only``: drawn from the complete documents only."""
    if not 0 < dev_fraction < 1:
        raise DocumentError(f"--dev-fraction must be between 0 and 1 (exclusive), got {dev_fraction}")
    documents = len(complete)
    pool = [i for i, is_complete in enumerate(complete) if is_complete or not complete_only]
    if documents < 2 or not pool:
        what = "complete documents (--complete-only)" if complete_only and documents >= 2 else "documents"
        raise DocumentError(
            f"cannot split {counted(documents, 'document')}: need at least 2 documents and 1 of the {what} for dev"
        )
    wanted = min(max(1, round(dev_fraction * documents)), len(pool), documents - 1)
    random.Random(seed).shuffle(pool)
    return set(pool[:wanted])


def split_documents(
    docs: Sequence[Document], dev_fraction: float = 0.2, seed: int = 0, complete_only: bool = False
) -> Tuple[List[Document], List[Document]]:
    """``(train, dev)`` by the rule of the module docstring (:func:`dev_indices`); ``complete_only``: the dev
    documents are drawn from the complete documents (``is_complete``) only."""
    chosen = dev_indices([d.is_complete for d in docs], dev_fraction, seed, complete_only)
    return [d for i, d in enumerate(docs) if i not in chosen], [d for i, d in enumerate(docs) if i in chosen]


@dataclasses.dataclass
class Split:
    """What :func:`split_file` wrote: the documents read, those of TRAIN and of DEV, and DEV's complete ones."""

    documents: int
    train: int
    dev: int
    dev_complete: int


def split_file(
    data: str,
    train_output: str,
    dev_output: str,
    dev_fraction: float = 0.2,
    seed: int = 0,
    complete_only: bool = False,
) -> Split:
    """Reads ``data`` (any corpus format) one document at a time, splits it (:func:`dev_indices`) and writes both
    parts as JSON lines (the outputs checked against the input first). The split needs every document's
    completeness before the first line is written: each document's output line waits in a temporary file beside
    TRAIN (:func:`~eer_plugin.common.outputs.spooling`), so memory holds one document and a byte per document, not
    the corpus; the outputs are written whole or not at all."""
    check_outputs([("DATA", data)], [("TRAIN", train_output), ("DEV", dev_output)])
    with spooling(train_output) as spool:
        complete = bytearray()
        for document in iter_documents(data):
            spool.write(jsonl_line(document).encode("utf-8"))
            complete.append(document.is_complete)
        try:
            chosen = dev_indices(complete, dev_fraction, seed, complete_only)
        except DocumentError as error:
            raise DocumentError(f"{data}: {error}") from None
        spool.seek(0)
        with writing(train_output, "wb") as train, writing(dev_output, "wb") as dev:
            for index, line in enumerate(spool):
                (dev if index in chosen else train).write(line)
    dev_complete = sum(complete[i] for i in chosen)
    return Split(len(complete), len(complete) - len(chosen), len(chosen), dev_complete)
