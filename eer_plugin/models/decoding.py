"""The one decoding path of the taggers: document chunks -> batches -> model inputs -> word spans.

Evaluation (:mod:`eer_plugin.predictors.evaluation`), the predictor (:mod:`eer_plugin.predictors.tagger`),
the O-cost search (:mod:`eer_plugin.training.o_cost_search`) and the CBL rounds
(:mod:`eer_plugin.training.cbl_rounds`) decode through the public methods of the models
(``eer_tagger``: :meth:`~eer_plugin.models.tagger.EERTagger.decode`,
:meth:`~eer_plugin.models.tagger.EERTagger.span_marginals`, ...; both taggers:
``chunk_word_spans``), which build on the helpers here. The subword -> word rule itself is
:func:`eer_plugin.core.spans.map_to_words`; :func:`chunks_to_word_spans` applies it to a batch.
"""
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

from tqdm import tqdm

from eer_plugin.core.spans import Span, map_to_words, subword_owners

T = TypeVar("T")


def batches(items: Sequence[T], size: int, desc: Optional[str] = None) -> Iterator[Sequence[T]]:
    """``items`` in slices of ``size`` (a progress bar named ``desc``, if given)."""
    starts = range(0, len(items), size)
    for start in tqdm(starts, desc=desc) if desc else starts:
        yield items[start : start + size]


def tensorize_chunks(model, reader, chunks: Sequence[Any], cuda_device: int = -1) -> Dict[str, Any]:
    """The model inputs (``tokens``, ``metadata``) of document chunks, without their labels."""
    instances = [reader.chunk_to_instance(chunk, with_labels=False) for chunk in chunks]
    return reader.tensorize(instances, model.vocab, cuda_device)


def chunks_to_word_spans(
    subword_spans: Sequence[Sequence[Span]], word_subwords: Sequence[Sequence[Tuple[int, int]]], lengths: Sequence[int]
) -> List[List[Tuple[int, Span]]]:
    """Per chunk of a batch, ``(index in its subword spans, word span)`` of the subword spans that the word
    rule keeps; ``word_subwords`` are the chunks' ``[start, end)`` subword ranges of every word."""
    return [
        map_to_words(spans, subword_owners(words, length))
        for spans, words, length in zip(subword_spans, word_subwords, lengths)
    ]


def document_word_spans(model, reader, chunks: Sequence[Any], batch_size: int, cuda_device: int = -1) -> List[List[Span]]:
    """Predicted word spans of every chunk, in document word positions (the chunk's span + its ``word_start``),
    ``batch_size`` chunks per model forward; for any model with ``chunk_word_spans(tokens, metadata)``."""
    import torch

    spans: List[List[Span]] = []
    model.eval()
    with torch.no_grad():
        for part in batches(chunks, batch_size):
            batch = tensorize_chunks(model, reader, part, cuda_device)
            for chunk, chunk_spans in zip(part, model.chunk_word_spans(batch["tokens"], batch["metadata"])):
                offset = chunk.word_start
                spans.append([(start + offset, end + offset, label) for start, end, label in chunk_spans])
    return spans
