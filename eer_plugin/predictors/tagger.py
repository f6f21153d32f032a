"""Predictor for new documents: raw text or pre-split tokens in, entity spans out.

Input (one JSON object per line): ``{"text": "..."}`` or ``{"tokens": [...], "sentence_ends": [...]}``,
optionally with ``"id"``. Documents of any length are chunked like training data and the chunks'
predictions are stitched back into one document.

Raw text is split by a regex tokenizer (no model download): runs of letters/digits (with inner
apostrophes, hyphens, periods of abbreviations kept out) and single punctuation marks; a sentence
ends after ``.``, ``!`` or ``?``.

Output per document: ``tokens``, word ``tags`` (BILUO), and ``spans`` with ``type``, word
``start``/``end`` (exclusive), ``text``, character ``char_start``/``char_end`` (raw text only) and
``probability``: the CRF marginal probability that exactly this subword span is an entity of this
type. With ``--predictor-args '{"output_format": "conll"}'`` each document is written as CoNLL
lines ``word tag`` (BIO) with blank lines between sentences.
"""
import json
import re
from typing import Any, Dict, List, Tuple

import torch
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from eer_plugin.core.crf import observations_to_allowed
from eer_plugin.core.documents import Document
from eer_plugin.core.spans import map_to_words, subword_owners
from eer_plugin.core.tags import biluo_to_spans, spans_to_biluo

TOKEN_PATTERN = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]")
SENTENCE_FINAL = {".", "!", "?"}


def tokenize_text(text: str) -> Tuple[List[str], List[Tuple[int, int]], List[int]]:
    """Words, their character offsets and sentence ends of raw text."""
    words, offsets, ends = [], [], []
    for match in TOKEN_PATTERN.finditer(text):
        words.append(match.group())
        offsets.append(match.span())
        if match.group() in SENTENCE_FINAL:
            ends.append(len(words))
    if words and (not ends or ends[-1] != len(words)):
        ends.append(len(words))
    return words, offsets, ends


@Predictor.register("eer_tagger")
class DocumentTaggerPredictor(Predictor):
    def __init__(self, model: Model, dataset_reader: DatasetReader, output_format: str = "json") -> None:
        super().__init__(model, dataset_reader)
        if output_format not in ("json", "conll"):
            raise ValueError(f"output_format must be 'json' or 'conll', got {output_format!r}")
        self.output_format = output_format

    def load_line(self, line: str) -> JsonDict:
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"input line is not JSON ({err}): {line[:80]!r}") from err
        if not isinstance(data, dict) or ("text" not in data and "tokens" not in data):
            raise ValueError(f'each input line needs "text" or "tokens": {line[:80]!r}')
        return data

    def _json_to_document(self, inputs: JsonDict) -> Tuple[Document, List[Tuple[int, int]]]:
        offsets: List[Tuple[int, int]] = []
        if "tokens" in inputs:
            words = list(inputs["tokens"])
            ends = list(inputs.get("sentence_ends") or [len(words)])
        else:
            words, offsets, ends = tokenize_text(inputs["text"])
        if not words:
            raise ValueError(f"document {inputs.get('id', '')!r} has no tokens")
        doc = Document(id=str(inputs.get("id", "")), tokens=words, sentence_ends=ends, is_complete=False).validate()
        return doc, offsets

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        doc, _ = self._json_to_document(json_dict)
        chunks = self._dataset_reader.chunk(doc)  # type: ignore[attr-defined]
        return self._dataset_reader.chunk_to_instance(chunks[0], with_labels=False)  # type: ignore[attr-defined]

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        doc, offsets = self._json_to_document(inputs)
        reader = self._dataset_reader
        chunks = reader.chunk(doc)  # type: ignore[attr-defined]
        instances = [reader.chunk_to_instance(c, with_labels=False) for c in chunks]  # type: ignore[attr-defined]
        spans: List[Dict[str, Any]] = []
        for chunk, instance in zip(chunks, instances):
            for span in self._chunk_spans(instance):
                start, end = span["start"] + chunk.word_start, span["end"] + chunk.word_start
                span.update(start=start, end=end, text=" ".join(doc.tokens[start:end]))
                if offsets:
                    span.update(char_start=offsets[start][0], char_end=offsets[end - 1][1])
                    span["text"] = inputs["text"][span["char_start"] : span["char_end"]]
                spans.append(span)
        tags = spans_to_biluo([(s["start"], s["end"], s["type"]) for s in spans], len(doc.tokens))
        output = {"id": doc.id, "tokens": doc.tokens, "tags": tags, "spans": spans, "sentence_ends": doc.sentence_ends}
        return sanitize(output)

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return [self.predict_json(document) for document in inputs]

    def _chunk_spans(self, instance: Instance) -> List[Dict[str, Any]]:
        """Word spans of one chunk with their CRF marginal probability."""
        model = self._model
        with torch.no_grad():
            model.eval()
            batch = self._dataset_reader.tensorize([instance], model.vocab, self.cuda_device)  # type: ignore[attr-defined]
            output = model(**batch)
            emissions, mask = output["emissions"], output["mask"]
            predicted = output["predicted_tags"][0, : int(mask.sum())].tolist()
            meta = instance["metadata"].metadata  # type: ignore[attr-defined]
            owners = subword_owners(meta["word_subwords"], len(predicted))
            subword_spans = biluo_to_spans(model.scheme.decode(predicted))  # type: ignore[attr-defined]
            probabilities = self._span_probabilities(emissions, mask, subword_spans)
        return [
            {"type": label, "start": start, "end": end, "probability": probabilities[index]}
            for index, (start, end, label) in map_to_words(subword_spans, owners)
        ]

    def _span_probabilities(self, emissions, mask, subword_spans) -> List[float]:
        """p(exactly this span has this type | x) = Z(span forced) / Z, one batched CRF pass."""
        if not subword_spans:
            return []
        model = self._model
        scheme = model.scheme  # type: ignore[attr-defined]
        n = emissions.shape[1]
        observations = torch.full((len(subword_spans), n), -1, dtype=torch.long)
        for row, (s, e, label) in enumerate(subword_spans):
            observations[row, s:e] = torch.tensor(scheme.encode(spans_to_biluo([(0, e - s, label)], e - s)))
        bookends = model.bookends_outside(mask)  # type: ignore[attr-defined]
        allowed = observations_to_allowed(observations, scheme.num_tags) & bookends
        rows = len(subword_spans)
        log_z = model.crf.log_partition(emissions, mask, bookends)  # type: ignore[attr-defined]
        forced = model.crf.log_partition(emissions.expand(rows, -1, -1), mask.expand(rows, -1), allowed)  # type: ignore[attr-defined]
        return torch.exp(forced - log_z).clamp(max=1.0).tolist()

    def dump_line(self, outputs: JsonDict) -> str:
        if self.output_format == "json":
            return json.dumps(outputs, ensure_ascii=False) + "\n"
        lines, start = [], 0
        bio = []
        for tag in outputs["tags"]:
            bio.append(tag.replace("L-", "I-").replace("U-", "B-"))
        for end in outputs["sentence_ends"]:
            lines.extend(f"{w} {t}" for w, t in zip(outputs["tokens"][start:end], bio[start:end]))
            lines.append("")
            start = end
        return "\n".join(lines) + "\n"
