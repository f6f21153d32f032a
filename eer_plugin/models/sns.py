"""SNS baseline: span classification with negative sampling (Li et al. 2021), registered as
``sns_tagger``.

Every span of at most ``max_width`` words is represented from the transformer outputs at its first
word's first subword ``h_s`` and its last word's last subword ``h_e`` as
``[h_s; h_e; h_s - h_e; h_s * h_e]`` and classified into ``O`` or an entity type by a two-layer
MLP. Training uses the annotated spans as positives and ``ceil(negative_rate * n)`` spans drawn
uniformly from the unannotated spans of each ``n``-word chunk as negatives (Li et al.'s sampling;
a span that is annotated is never drawn). Decoding keeps the most probable non-overlapping entity
spans. The paper ran SNS on sentences (it is O(n^2)): use the reader with ``sentence_level: true``.
Predictions are word spans per chunk, scored by the same word-level span F1 as the tagger.
"""

import dataclasses
import random
from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import TextFieldEmbedder
from allennlp.training.metrics import Average

from eer_plugin.core.span_sampling import enumerate_spans, greedy_decode, sample_negatives
from eer_plugin.inference.precision import encoder_autocast
from eer_plugin.models.encoder_pooler import drop_unused_pooler
from eer_plugin.models.partial_metrics import PartialSpanMetric, evaluation_metrics
from eer_plugin.models.tagger import WordSpanF1, model_entity_types
from eer_plugin.runtime.setting_values import RULES, check_arguments

#: ``entity_ratio`` of the span model: rho as the CRF tagger's, or null
OPTIONAL_RATIO = dataclasses.replace(RULES["model.entity_ratio"], null="no partial-precision-estimated metric")


@Model.register("sns_tagger")
class SpanNegativeSampling(Model):
    """
    Parameters
    ----------
    text_field_embedder : TextFieldEmbedder
        The pretrained transformer.
    entity_types : List[str], optional
        Default: every type in the vocabulary's ``labels`` namespace, sorted.
    max_width : int
        Longest span (in words) considered at decoding and for negatives.
    negative_rate : float
        Negatives per word of the chunk (Li et al.'s lambda; their code defaults to 0.35, the EER
        authors' runs used 0.7).
    hidden_dim : int
        Width of the MLP's hidden layer.
    dropout : float
    seed : int
        Seed of the negative sampler.
    precision : str
        ``fp32``, ``bf16`` or ``auto`` (bf16 where native, else fp32): the precision of the encoder
        (see :mod:`eer_plugin.inference.precision`);
        the span classifier always runs in float32.
    entity_ratio : float, optional
        rho, used only by the ``partial-precision-estimated`` metric on partially annotated dev data
        (the span model has no ratio loss).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        entity_types: Optional[List[str]] = None,
        max_width: int = 10,
        negative_rate: float = 0.35,
        hidden_dim: int = 256,
        dropout: float = 0.2,
        seed: int = 0,
        precision: str = "fp32",
        entity_ratio: Optional[float] = None,
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        check_arguments("model", locals(), {"entity_ratio": OPTIONAL_RATIO})  # each refused now, not at the first batch
        # no entity type: a span classifier of O alone, a loss of 0 and a model that finds nothing
        self.entity_types = model_entity_types(vocab, label_namespace, entity_types)
        self.label_index = {label: i + 1 for i, label in enumerate(self.entity_types)}  # 0 is O
        self.text_field_embedder = text_field_embedder
        drop_unused_pooler(text_field_embedder)  # no parameter without a gradient (DDP needs that)
        dim = text_field_embedder.get_output_dim()
        self.classifier = torch.nn.Sequential(
            torch.nn.Dropout(dropout),
            torch.nn.Linear(4 * dim, hidden_dim),
            torch.nn.ReLU(),
            torch.nn.Dropout(dropout),
            torch.nn.Linear(hidden_dim, 1 + len(self.entity_types)),
        )
        self.max_width = max_width
        self.negative_rate = negative_rate
        self.rng = random.Random(seed)
        self.precision = precision  # checked above (RULES' model.precision)
        self.span_f1 = WordSpanF1(self.entity_types)
        self.partial_span = PartialSpanMetric(entity_ratio=entity_ratio)  # partially annotated dev data
        self.span_loss = Average()

    def span_scores(self, encoded: torch.Tensor, row: int, word_subwords, spans) -> torch.Tensor:
        """Label logits ``(len(spans), 1 + types)`` of word spans of chunk ``row``."""
        starts = torch.tensor([word_subwords[s][0] for s, _ in spans], device=encoded.device)
        ends = torch.tensor([word_subwords[e - 1][1] - 1 for _, e in spans], device=encoded.device)
        first, last = encoded[row, starts], encoded[row, ends]
        return self.classifier(torch.cat([first, last, first - last, first * last], -1))

    def encode(self, tokens: TextFieldTensors) -> torch.Tensor:
        """The encoder outputs ``(B, n, dim)``, in float32 whatever the encoder's precision."""
        with encoder_autocast(self.precision, self.classifier[1].weight.device):
            encoded = self.text_field_embedder(tokens)
        return encoded.float()

    @torch.no_grad()
    def decode(self, encoded: torch.Tensor, metadata: List[Dict[str, Any]]) -> List[List]:
        """Per chunk, the most probable non-overlapping entity word spans (chunk word positions)."""
        predictions = []
        for row, meta in enumerate(metadata):
            spans = enumerate_spans(len(meta["words"]), self.max_width)
            probabilities = self.span_scores(encoded, row, meta["word_subwords"], spans).softmax(-1)
            best, label = probabilities.max(-1)
            scored = [
                (p, s, e, self.entity_types[k - 1])
                for (s, e), p, k in zip(spans, best.tolist(), label.tolist())
                if k != 0
            ]
            predictions.append(greedy_decode(scored))
        return predictions

    def chunk_word_spans(self, tokens: TextFieldTensors, metadata: List[Dict[str, Any]]) -> List[List]:
        """Predicted word spans of every chunk of a batch (chunk word positions; :mod:`eer_plugin.inference.decoding`)."""
        return self.decode(self.encode(tokens), metadata)

    def forward(  # type: ignore[override]
        self,
        tokens: TextFieldTensors,
        tags: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        if metadata is None:
            raise ValueError("sns_tagger needs the reader's metadata (word/subword maps)")
        encoded = self.encode(tokens)
        output: Dict[str, Any] = {}
        if tags is not None and self.training:
            losses = []
            for row, meta in enumerate(metadata):
                annotated = [(s, e) for s, e, _ in meta["spans"]]
                negatives = sample_negatives(
                    len(meta["words"]), annotated, self.negative_rate, self.max_width, self.rng
                )
                spans = annotated + negatives
                if not spans:
                    continue
                targets = torch.tensor(
                    [self.label_index[label] for _, _, label in meta["spans"]] + [0] * len(negatives),
                    device=encoded.device,
                )
                logits = self.span_scores(encoded, row, meta["word_subwords"], spans)
                losses.append(torch.nn.functional.cross_entropy(logits, targets, reduction="sum"))
            loss = torch.stack(losses).sum() / len(metadata) if losses else encoded.sum() * 0.0
            output["loss"] = loss
            self.span_loss(float(loss.detach()))
        if not self.training:
            predictions = self.decode(encoded, metadata)
            for spans, meta in zip(predictions, metadata):
                if meta.get("gold_spans") is not None:
                    self.span_f1(spans, meta["gold_spans"])
            output["word_spans"] = predictions
            self.partial_span.update(predictions, metadata)
            if tags is not None:
                output["loss"] = encoded.new_zeros(())
        return output

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self.span_f1.get_metric(reset)
        metrics["span_loss"] = self.span_loss.get_metric(reset)
        metrics.update(evaluation_metrics(self.partial_span, self.training, reset))
        return metrics
