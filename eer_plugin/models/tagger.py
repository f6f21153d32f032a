"""The EER tagger: transformer -> dropout -> linear tag scores -> constrained BILUO CRF.

Registered as ``eer_tagger``. One model serves every CRF approach of the paper:

* **EER**: partial annotations, unmarked subwords latent, ``ratio_loss_weight > 0``;
* **Raw** / **Gold**: a reader with ``assume_complete: true`` (every tag observed) and
  ``ratio_loss_weight: 0``, which is ordinary CRF maximum likelihood;
* **Raw+CD**: a Raw model decoded with ``o_cost > 0`` (settable at evaluation time with
  ``-o '{"model.o_cost": 1.5}'``, or tuned with ``allennlp tune-o-cost``).
"""

import logging
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import util
from allennlp.training.metrics import Average, Metric

from eer_plugin.common.errors import SettingError
from eer_plugin.core.crf import LATENT, ConstrainedCRF
from eer_plugin.core.losses import eer_objective, expected_entity_ratio
from eer_plugin.core.ranges import (
    DEFAULT_ENTITY_RATIO,
    DEFAULT_PRICE_PENALTY,
    DEFAULT_PRICE_RATE,
    DEFAULT_RATIO_CONTROL,
    DEFAULT_RATIO_LOSS_WEIGHT,
    DEFAULT_RATIO_MARGIN,
)
from eer_plugin.core.ratio_control import EntityPrice, batch_ratio
from eer_plugin.core.spans import SpanCounts
from eer_plugin.core.tags import OUTSIDE, BiluoScheme
from eer_plugin.inference.chunking import LATENT_LABEL
from eer_plugin.inference.decoding import SpanDecoder
from eer_plugin.inference.precision import encoder_autocast
from eer_plugin.models.encoder_pooler import drop_unused_pooler
from eer_plugin.models.partial_metrics import PartialSpanMetric, evaluation_metrics
from eer_plugin.runtime.setting_values import Rule, check_arguments, checked

logger = logging.getLogger(__name__)

#: no entity tag in the training data's labels (``what``): the tagger would have nothing to learn
NO_ENTITY_TYPES = (
    "no entity types: {what} has no entity tag, so the training data holds no annotated entity (every document "
    "without one, or dropped by the short/shortest variant); annotate some entities, or label the text with a list "
    "of names (eer-ner eer-dictionary)"
)


class WordSpanF1(Metric):
    """Word-level span precision/recall/F1 (see :mod:`eer_plugin.core.spans`), summed over
    workers under distributed training."""

    def __init__(self, entity_types: List[str]) -> None:
        self.entity_types = list(entity_types)
        self.counts = SpanCounts()

    def __call__(self, predicted, gold):  # type: ignore[override]
        self.counts.add(predicted, gold)

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts = self.counts
        if dist.is_available() and dist.is_initialized():
            labels = self.entity_types
            table = torch.tensor(
                [[c[label] for label in labels] for c in (counts.tp, counts.fp, counts.fn)], dtype=torch.float64
            )
            dist.all_reduce(table)
            counts = SpanCounts()
            for row, counter in zip(table.tolist(), (counts.tp, counts.fp, counts.fn)):
                counter.update({label: int(v) for label, v in zip(labels, row) if v})
        metrics = counts.metrics()
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self.counts = SpanCounts()


def model_entity_types(vocab: Vocabulary, label_namespace: str, entity_types: Optional[List[str]]) -> List[str]:
    """The entity types of a model of the labels in ``vocab``'s ``label_namespace``: ``entity_types`` as given,
    distinct names holding every type of the labels (one they lacked was a ``ValueError`` of the CRF tagger's
    scheme, a ``KeyError`` at the span model's first batch), or by default every type of the labels, sorted.
    :class:`SettingError` for others, and for none at all (:data:`NO_ENTITY_TYPES`)."""
    labels = vocab.get_token_to_index_vocabulary(label_namespace)
    found = sorted({label[2:] for label in labels if label not in (OUTSIDE, LATENT_LABEL)})
    rule = Rule(
        f"a list of distinct entity types holding every type of the training data's tags ({', '.join(found)})",
        lambda v: isinstance(v, list) and all(isinstance(t, str) and t for t in v) and len(set(v)) == len(v)
        and set(found) <= set(v),
        null="those types, sorted",
    )  # fmt: skip
    types = found if checked("model.entity_types", entity_types, rule) is None else list(entity_types)
    if not types:
        raise SettingError(NO_ENTITY_TYPES.format(what=f"the vocabulary namespace {label_namespace!r}"))
    return types


@Model.register("eer_tagger")
class EERTagger(Model, SpanDecoder):
    """
    Parameters
    ----------
    vocab : Vocabulary
        Its ``labels`` namespace holds the BILUO tags seen in the data (and ``_`` for latent).
    text_field_embedder : TextFieldEmbedder
        The pretrained transformer (``eer_transformer`` or ``pretrained_transformer`` embedder),
        or word embeddings.
    encoder : Seq2SeqEncoder, optional
        Applied to the embeddings before scoring (e.g. the BiLSTM of CBL-LSTM).
    entity_types : List[str], optional
        The entity types, in the order of the tag scheme. Default: every type found in the
        vocabulary, sorted.
    dropout : float
        Dropout on the encoder output before the linear tag scorer.
    entity_ratio : float
        ``rho`` in the paper: the expected fraction of non-``O`` subword tags.
    ratio_margin : float
        ``gamma`` in the paper: no penalty while ``|rho - rho_hat| <= gamma``.
    ratio_loss_weight : float
        ``lambda_u`` in the paper: the weight of the EER loss. 0 gives plain (partial) likelihood.
    ratio_control : str
        ``fixed``: the paper's objective, ``lambda_u`` times the hinge. ``bind``: adds the augmented
        Lagrangian of ``rho - gamma <= r <= rho + gamma`` for the running training ``rho_hat`` ``r``
        (:mod:`eer_plugin.core.ratio_control`): a price per expected entity tag; the
        price after the epoch's last batch is logged as the metric ``entity_price``. Only for EER
        (``ratio_loss_weight > 0``).
    price_rate : float
        ``eta`` of ``bind``: the multipliers' dual-ascent step per unit of ratio outside the band.
    price_penalty : float
        ``c`` of ``bind``: the price's immediate slope per unit of ratio outside the band.
    per_sequence_ratio : bool
        Use the mean of per-chunk hinges instead of the hinge of the batch ratio (the paper's).
    ratio_counts_bookends : bool
        Count the two bookend tokens of every chunk in ``rho_hat`` (as the authors' code did).
        Default: they are not counted, since they are always ``O``.
    train_constraints : bool
        Apply the BILUO grammar constraints in the training loss too (default). ``False`` trains
        an unconstrained CRF and applies the constraints only when decoding, as the authors did.
    precision : str
        ``fp32``, ``bf16`` or ``auto`` (bf16 where native, else fp32): the precision of the encoder
        (see :mod:`eer_plugin.inference.precision`);
        the scorer, the CRF and the losses always run in float32.
    o_cost : float
        ``b_O``: subtracted from the ``O`` score at every position when decoding (Raw+CD).
    label_namespace : str
        Vocabulary namespace of the tags.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Optional[Seq2SeqEncoder] = None,
        entity_types: Optional[List[str]] = None,
        dropout: float = 0.2,
        entity_ratio: float = DEFAULT_ENTITY_RATIO,
        ratio_margin: float = DEFAULT_RATIO_MARGIN,
        ratio_loss_weight: float = DEFAULT_RATIO_LOSS_WEIGHT,
        ratio_control: str = DEFAULT_RATIO_CONTROL,
        price_rate: float = DEFAULT_PRICE_RATE,
        price_penalty: float = DEFAULT_PRICE_PENALTY,
        per_sequence_ratio: bool = False,
        ratio_counts_bookends: bool = False,
        train_constraints: bool = True,
        precision: str = "fp32",
        o_cost: float = 0.0,
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        check_arguments("model", locals())  # each setting refused now, not at the first batch (runtime.setting_values)
        self.label_namespace = label_namespace
        labels = vocab.get_token_to_index_vocabulary(label_namespace)
        entity_types = model_entity_types(vocab, label_namespace, entity_types)
        self.scheme = BiluoScheme(entity_types)
        # vocabulary index -> scheme index, or LATENT for "_"
        codes = torch.full((max(labels.values(), default=0) + 1,), LATENT, dtype=torch.long)  # a file may skip indices
        for label, index in labels.items():
            if label == LATENT_LABEL:
                continue
            if label not in self.scheme.index:
                raise ValueError(f"label {label!r} is not a BILUO tag of the entity types {entity_types}")
            codes[index] = self.scheme.index[label]
        self.register_buffer("_label_codes", codes, persistent=False)
        self.register_buffer("_entity_mask", self.scheme.entity_mask(), persistent=False)

        self.text_field_embedder = text_field_embedder
        drop_unused_pooler(text_field_embedder)  # no parameter without a gradient (DDP needs that)
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(dropout)
        output_dim = encoder.get_output_dim() if encoder is not None else text_field_embedder.get_output_dim()
        self.tag_scorer = torch.nn.Linear(output_dim, self.scheme.num_tags)
        self.crf = ConstrainedCRF(
            self.scheme.allowed_transitions(), self.scheme.allowed_start(), self.scheme.allowed_end()
        )
        # rho, gamma, lambda_u, the control, eta and c were checked above by the rules built from core.ranges
        if ratio_control == "bind" and not ratio_loss_weight:
            raise SettingError(
                "model.ratio_control 'bind' needs the EER loss (ratio_loss_weight > 0); use 'fixed' for Raw/Gold"
            )
        self.ratio_control = ratio_control
        #: the binding control's state (a buffer: saved in checkpoints), or None for the paper's fixed weight
        self.entity_price = (
            EntityPrice(entity_ratio, ratio_margin, price_rate, price_penalty) if ratio_control == "bind" else None
        )
        self.entity_ratio = float(entity_ratio)
        self.ratio_margin = float(ratio_margin)
        self.ratio_loss_weight = float(ratio_loss_weight)  # jsonnet writes 1e30 as an int of 31 digits
        self.per_sequence_ratio = per_sequence_ratio
        self.ratio_counts_bookends = ratio_counts_bookends
        self.train_constraints = train_constraints
        self.precision = precision  # checked above (RULES' model.precision)
        self.o_cost = float(o_cost)  # jsonnet writes 1e308 as an int of 309 digits
        #: False skips the marginals behind the ``rho_hat`` metric when no tags are given (prediction)
        self.track_rho_hat = True
        self.span_f1 = WordSpanF1(entity_types)
        self.partial_span = PartialSpanMetric(entity_ratio=entity_ratio)  # partially annotated dev data
        self.rho_hat = Average()
        self.partial_nll = Average()
        self.ratio_loss = Average()

    # ------------------------------------------------------------------ pieces
    def emissions(self, tokens: TextFieldTensors) -> torch.Tensor:
        """Tag scores ``(B, n, K)``, in float32 whatever the encoder's precision."""
        device = self.tag_scorer.weight.device
        with encoder_autocast(self.precision, device):
            embedded = self.text_field_embedder(tokens)
        embedded = embedded.float()
        if self.encoder is not None:
            embedded = self.encoder(self.dropout(embedded), util.get_text_field_mask(tokens))
        return self.tag_scorer(self.dropout(embedded))

    def ratio_mask(self, mask: torch.Tensor) -> torch.Tensor:
        """The positions counted in ``rho_hat``: the content subwords (bookends too with
        ``ratio_counts_bookends``)."""
        return mask.bool() if self.ratio_counts_bookends else self.content_mask(mask)

    def training_crf(self) -> ConstrainedCRF:
        """The CRF of the training loss: ``self.crf``, or with ``train_constraints=False`` a CRF
        without grammar constraints that shares its transition scores."""
        if self.train_constraints:
            return self.crf
        free = self.__dict__.get("_free_crf")
        transitions = self.crf.transitions
        if free is None or free.allowed_transitions.device != transitions.device:
            num_tags = self.scheme.num_tags
            free = ConstrainedCRF(torch.ones(num_tags, num_tags, dtype=torch.bool)).to(transitions.device)
            self.__dict__["_free_crf"] = free  # not a submodule: owns no parameter of its own
        free.transitions = transitions
        return free

    def observations(
        self,
        tags: torch.Tensor,
        mask: torch.Tensor,
        o_weights: Optional[torch.Tensor] = None,
        bookends: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """Allowed-tag mask from vocabulary tag indices (``_`` -> any tag). With ``o_weights``
        (CBL), a latent subword becomes soft evidence: weight ``w`` for ``O`` and ``1 - w`` for
        every entity tag (a float tensor, see :class:`ConstrainedCRF`)."""
        codes = self._label_codes[tags]
        tag_range = torch.arange(self.scheme.num_tags, device=tags.device)
        latent = codes == LATENT
        if bookends is None:
            bookends = self.bookends_outside(mask)
        allowed = ((codes.unsqueeze(-1) == tag_range) | latent.unsqueeze(-1)) & bookends
        if o_weights is None:
            return allowed
        evidence = torch.where(self._entity_mask, (1.0 - o_weights).unsqueeze(-1), o_weights.unsqueeze(-1)).clamp(
            0.0, 1.0
        )
        return torch.where(latent.unsqueeze(-1), evidence, torch.ones_like(evidence)) * allowed

    # ------------------------------------------------------------------ forward
    def forward(  # type: ignore[override]
        self,
        tokens: TextFieldTensors,
        tags: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        o_weights: Optional[torch.Tensor] = None,
    ) -> Dict[str, Any]:
        mask = util.get_text_field_mask(tokens)
        emissions = self.emissions(tokens)
        counted = self.ratio_mask(mask)
        bookends = self.bookends_outside(mask)
        output: Dict[str, Any] = {"emissions": emissions, "mask": mask}

        if tags is not None:
            allowed = self.observations(tags, mask, o_weights, bookends)
            priced = self.entity_price is not None and self.training
            result = eer_objective(
                self.training_crf() if self.training else self.crf,
                emissions,
                mask,
                allowed,
                self._entity_mask,
                ratio_mask=counted,
                entity_ratio=self.entity_ratio,
                ratio_margin=self.ratio_margin,
                ratio_loss_weight=self.ratio_loss_weight if self.training else 0.0,
                per_sequence=self.per_sequence_ratio,
                band=self.entity_price.constraint() if priced else None,
            )
            if priced and torch.is_grad_enabled():  # the running ratio and one dual step per training batch
                self.entity_price.update(batch_ratio(result.marginals, counted, self._entity_mask))
            output["loss"] = result.loss
            self.partial_nll(result.partial_nll.item())
            self.ratio_loss(float(result.ratio_loss.detach()))
            marginals = result.marginals
        else:
            marginals = None
        if marginals is not None:  # the objective computed rho_hat over the same counted positions
            self.rho_hat(float(result.rho_hat))
        elif tags is not None or self.track_rho_hat:
            with torch.no_grad():
                marginals = self.crf.marginals(emissions.detach(), mask, bookends)
            self.rho_hat(float(expected_entity_ratio(marginals, counted, self._entity_mask)))

        if not self.training or metadata is not None and any(m.get("gold_spans") is not None for m in metadata):
            predicted = self.decode(emissions.detach(), mask)
            output["predicted_tags"] = predicted
            if metadata is not None:
                output["word_spans"] = self.word_spans(predicted, mask, metadata)
                if not self.training:
                    self.partial_span.update(output["word_spans"], metadata)
                for spans, meta in zip(output["word_spans"], metadata):
                    if meta.get("gold_spans") is not None:
                        self.span_f1(spans, meta["gold_spans"])
        return output

    # ------------------------------------------------------------------ decoding (inference/decoding.py: SpanDecoder)
    def scores(self, tokens: TextFieldTensors):
        """``(emissions, mask)`` of a batch: the tag scores of :meth:`emissions` and the subword mask."""
        return self.emissions(tokens), util.get_text_field_mask(tokens)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self.span_f1.get_metric(reset)
        metrics["rho_hat"] = self.rho_hat.get_metric(reset)
        metrics["partial_nll"] = self.partial_nll.get_metric(reset)
        metrics["ratio_loss"] = self.ratio_loss.get_metric(reset)
        if self.entity_price is not None and self.training:  # after the epoch's last batch
            metrics["entity_price"] = self.entity_price.price()
        metrics.update(evaluation_metrics(self.partial_span, self.training, reset))
        return metrics

    default_predictor = "eer_tagger"
