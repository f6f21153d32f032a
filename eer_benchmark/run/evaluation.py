"""Per-document evaluation of archived models (the input of the paired bootstrap) and the gold
subword entity ratio of training data (the convergence analysis).

:func:`document_counts` runs an archived ``eer_tagger`` or ``sns_tagger`` on gold data with the
archive's validation reader, maps every chunk's predicted word spans to document positions
(chunk-relative span + the chunk's ``word_start``) and compares them with the gold spans of the
whole document, exactly as the word-level span F1 of training does (conlleval-equivalent exact
match on ``(start, end, type)``). The sum over documents gives the data set's micro P/R/F1.
(Only an entity cut by a chunk boundary, which chunking avoids except inside sentences longer than
the encoder's limit, is scored differently: here it is a false negative of its document; the
chunk-level metric of ``allennlp evaluate`` ignores it.)

Its command line, used by ``allennlp eer-benchmark`` in a subprocess per run, is
:mod:`eer_benchmark.run.evaluate_documents`.
"""

import logging
from typing import Dict, List, Optional, Sequence

from eer_plugin.core.spans import SpanCounts
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_documents
from eer_plugin.inference.decoding import document_word_spans
from eer_plugin.runtime.errors import check_entity_types

logger = logging.getLogger(__name__)

Counts = Dict[str, List[int]]

#: chunks per forward pass at evaluation, taken across documents (a document's last chunk shares its batch
#: with the next document's first)
BATCH_SIZE = 8


def predict_document_spans(
    model, reader, docs: Sequence[Document], batch_size: int = BATCH_SIZE, cuda_device: int = -1
) -> Dict[str, set]:
    """Predicted word spans of every document (document positions), keyed by document id."""
    chunks = [chunk for doc in docs for chunk in reader.chunk(doc)]
    predicted: Dict[str, set] = {doc.id: set() for doc in docs}
    for chunk, spans in zip(chunks, document_word_spans(model, reader, chunks, batch_size, cuda_device)):
        predicted[chunk.doc_id].update(spans)
    return predicted


def counts_per_document(docs: Sequence[Document], predicted: Dict[str, set]) -> Counts:
    """``{doc_id: [tp, fp, fn]}`` in document order."""
    counts: Counts = {}
    for doc in docs:
        if doc.id in counts:
            raise ValueError(f"document id {doc.id!r} occurs twice; per-document counts need unique ids")
        gold, guess = set(doc.spans), predicted.get(doc.id, set())
        counts[doc.id] = [len(gold & guess), len(guess - gold), len(gold - guess)]
    return counts


def load_model(archive_path: str, o_cost: Optional[float] = None, cuda_device: int = -1):
    """``(model, validation reader)`` of an archive; ``o_cost`` sets the tagger's decoding O-cost.

    The archive is opened by :func:`eer_plugin.runtime.archive.load_model_archive` (checked extraction,
    weights-only loading, one clear error for a missing or broken archive)."""
    from eer_plugin.runtime.archive import load_model_archive

    archive = load_model_archive(archive_path, cuda_device=cuda_device)
    model = archive.model
    if o_cost is not None:
        if not hasattr(model, "o_cost"):
            raise ValueError(f"{archive_path}: the model ({type(model).__name__}) has no decoding O-cost")
        model.o_cost = float(o_cost)
    return model, archive.validation_dataset_reader, archive


def document_counts(
    archive_path: str,
    data_path: str,
    o_cost: Optional[float] = None,
    batch_size: int = BATCH_SIZE,
    cuda_device: int = -1,
) -> Counts:
    """Per-document ``[tp, fp, fn]`` of an archived model on gold data (see the module docstring)."""
    model, reader, _ = load_model(archive_path, o_cost, cuda_device)
    docs = reader.read_documents(data_path)
    check_entity_types(model, docs, data_path)
    return counts_per_document(docs, predict_document_spans(model, reader, docs, batch_size, cuda_device))


def summarize(counts: Counts) -> Dict[str, float]:
    """Micro ``precision``, ``recall``, ``f1`` and the summed ``tp``, ``fp``, ``fn``."""
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    precision, recall, f1 = SpanCounts.prf(tp, fp, fn)
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn, "documents": len(counts)}


def gold_entity_ratio(reader, train_path: str, gold_path: str) -> Dict[str, float]:
    """``rho*``: the share of entity (non-``O``) subword tags of the *gold* annotation of the
    documents a run trains on, tokenized by the run's reader.

    The training documents are read with the run's training reader (so its variant applies:
    ``short`` keeps the annotated documents, ``shortest`` cuts them after the last annotation) and
    matched by id to the gold corpus; the bookend tokens are not counted, as for ``rho_hat``.
    Also returns the word-level ratio.
    """
    gold_by_id = {doc.id: doc for doc in read_documents(gold_path, **reader.format_options())}
    train_docs = reader.read_documents(train_path)
    subwords = entity_subwords = words = entity_words = 0
    for doc in train_docs:
        if doc.id not in gold_by_id:
            raise ValueError(f"training document {doc.id!r} of {train_path} is not in the gold corpus {gold_path}")
        gold = gold_by_id[doc.id]
        n = len(doc.tokens)
        if gold.tokens[:n] != doc.tokens:
            raise ValueError(f"training document {doc.id!r} has other words than the gold document of that id")
        pieces = [len(p) for p in reader.tokenize_words(gold.tokens[:n])]
        subwords += sum(pieces)
        words += n
        for start, end, _ in gold.spans:
            if end <= n:
                entity_subwords += sum(pieces[start:end])
                entity_words += end - start
    return {
        "rho_star": entity_subwords / subwords if subwords else 0.0,
        "rho_star_words": entity_words / words if words else 0.0,
        "train_documents": len(train_docs),
        "train_subwords": subwords,
    }


def training_reader(archive):
    """The training dataset reader of a loaded archive."""
    return archive.dataset_reader
