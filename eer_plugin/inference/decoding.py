"""The one decoding path of the taggers: document chunks -> batches -> model inputs -> word spans.

Evaluation (:mod:`eer_benchmark.run.evaluation`), the predictor (:mod:`eer_plugin.predictors.tagger`),
the O-cost search (:mod:`eer_plugin.training.o_cost_search`) and the CBL rounds
(:mod:`eer_plugin.training.cbl_rounds`) decode through the public methods of the models
(``eer_tagger``: :meth:`SpanDecoder.decode`, :meth:`SpanDecoder.span_marginals`, ...; both taggers:
``chunk_word_spans``), which build on the helpers here. The subword -> word rule itself is
:func:`eer_plugin.core.spans.map_to_words`; :func:`chunks_to_word_spans` applies it to a batch.

:class:`SpanDecoder` is the CRF decoding of a tagger whose scores come from anywhere: the AllenNLP
model ``eer_tagger`` (:class:`~eer_plugin.models.tagger.EERTagger`) and the exported model
(:class:`~eer_plugin.inference.exported.ExportedTagger`, no AllenNLP) both are one, so both decode
the same way. No AllenNLP import.
"""

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

import torch
from tqdm import tqdm

from eer_plugin.core.spans import Span, map_to_words, subword_owners
from eer_plugin.core.tags import biluo_to_spans, spans_to_biluo

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


class SpanDecoder:
    """The CRF decoding of a tagger (a mixin). The class provides ``scheme``
    (:class:`~eer_plugin.core.tags.BiluoScheme`), ``crf`` (:class:`~eer_plugin.core.crf.ConstrainedCRF`),
    ``o_cost`` (``b_O``, subtracted from the ``O`` score when decoding) and ``scores(tokens)``: the
    ``(emissions (B, n, K) float32, mask (B, n) bool)`` of a batch of chunks, each with its two bookends."""

    scheme: Any
    crf: Any
    o_cost: float

    def scores(self, tokens: Any) -> Tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - provided by the tagger
        raise NotImplementedError

    @staticmethod
    def content_mask(mask: torch.Tensor) -> torch.Tensor:
        """Mask of the real subwords without the two bookend tokens (first and last position)."""
        lengths = mask.sum(-1, keepdim=True)
        positions = torch.arange(mask.shape[1], device=mask.device)
        return mask & (positions > 0) & (positions < lengths - 1)

    def bookends_outside(self, mask: torch.Tensor) -> torch.Tensor:
        """Allowed-tag mask ``(B, n, K)`` that forces ``O`` at the bookend tokens (paper: the
        [CLS]/[SEP] ends are always ``O``; with the grammar this guarantees valid output)."""
        allowed = torch.ones(*mask.shape, self.scheme.num_tags, dtype=torch.bool, device=mask.device)
        bookend = mask & ~self.content_mask(mask)
        allowed[bookend] = False
        allowed[..., self.scheme.outside_index] |= bookend
        return allowed

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor, o_cost: Optional[float] = None) -> torch.Tensor:
        """Viterbi subword tags ``(B, n)`` (scheme indices) under the BILUO grammar, bookends ``O``;
        ``o_cost`` is ``b_O`` (default: the tagger's ``o_cost``)."""
        cost = self.o_cost if o_cost is None else o_cost
        predicted, _ = self.crf.viterbi(
            emissions, mask, self.bookends_outside(mask), o_cost=cost, outside_index=self.scheme.outside_index
        )
        return predicted

    def subword_spans(self, predicted: torch.Tensor, mask: torch.Tensor) -> List[List[Span]]:
        """The entity spans ``(start, end, type)`` of every row's decoded subword tags."""
        return [
            biluo_to_spans(self.scheme.decode(row[:length]))
            for row, length in zip(predicted.tolist(), mask.sum(-1).tolist())
        ]

    def span_marginals(
        self, emissions: torch.Tensor, mask: torch.Tensor, subword_spans: List[List[Span]]
    ) -> List[List[float]]:
        """Per row, the CRF marginal probability that exactly each subword span is an entity of its
        type (:meth:`ConstrainedCRF.path_log_marginals`: one forward-backward for the batch)."""
        paths = [
            (row, start, self.scheme.encode(spans_to_biluo([(0, end - start, label)], end - start)))
            for row, spans in enumerate(subword_spans)
            for start, end, label in spans
        ]
        flat = self.crf.path_log_marginals(emissions, mask, paths, self.bookends_outside(mask)).exp().tolist()
        result, offset = [], 0
        for spans in subword_spans:
            result.append(flat[offset : offset + len(spans)])
            offset += len(spans)
        return result

    def word_entity_probabilities(
        self, emissions: torch.Tensor, mask: torch.Tensor, word_subwords
    ) -> List[List[float]]:
        """Per row, ``1 - p(O)`` of every word's first subword under the CRF marginals (CBL's relabelling)."""
        marginals = self.crf.marginals(emissions, mask, self.bookends_outside(mask))
        entity = 1.0 - marginals[..., self.scheme.outside_index]
        return [[float(entity[row, first]) for first, _ in words] for row, words in enumerate(word_subwords)]

    def word_spans(self, predicted: torch.Tensor, mask: torch.Tensor, metadata: List[Dict[str, Any]]) -> List[List]:
        """Predicted word spans per chunk (relative to the chunk's words)."""
        mapped = chunks_to_word_spans(
            self.subword_spans(predicted, mask), [meta["word_subwords"] for meta in metadata], mask.sum(-1).tolist()
        )
        return [[span for _, span in row] for row in mapped]

    def chunk_entities(self, tokens: Any, metadata: List[Dict[str, Any]]) -> List[List]:
        """Per chunk of a batch, ``(word span, probability)`` of every predicted entity (chunk word positions;
        the probability is :meth:`span_marginals` of its subword span)."""
        emissions, mask = self.scores(tokens)
        subword_spans = self.subword_spans(self.decode(emissions, mask), mask)
        probabilities = self.span_marginals(emissions, mask, subword_spans)
        mapped = chunks_to_word_spans(
            subword_spans, [meta["word_subwords"] for meta in metadata], mask.sum(-1).tolist()
        )
        return [
            [(span, row_probabilities[index]) for index, span in row]
            for row, row_probabilities in zip(mapped, probabilities)
        ]

    def chunk_entity_probabilities(self, tokens: Any, word_subwords) -> List[List[float]]:
        """Per chunk of a batch, :meth:`word_entity_probabilities` of its words (one forward, one forward-backward)."""
        emissions, mask = self.scores(tokens)
        return self.word_entity_probabilities(emissions, mask, word_subwords)

    def chunk_word_spans(self, tokens: Any, metadata: List[Dict[str, Any]]) -> List[List]:
        """Predicted word spans of every chunk of a batch (chunk word positions), decoded with the tagger's ``o_cost``."""
        emissions, mask = self.scores(tokens)
        return self.word_spans(self.decode(emissions, mask), mask, metadata)


def document_word_spans(
    model, reader, chunks: Sequence[Any], batch_size: int, cuda_device: int = -1
) -> List[List[Span]]:
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
