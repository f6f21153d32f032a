"""Predictor for new documents: raw text or pre-split tokens in, entity spans out.

Input (one JSON object per line), exactly one of:

* ``{"text": "..."}``: a non-empty string, split by :mod:`eer_plugin.predictors.tokenizer`
  (documented rules, exact character offsets);
* ``{"tokens": [...], "sentence_ends": [...]}``: a list of non-empty strings without white space,
  and optionally the sentence ends, a strictly increasing list of integers ending at the number of
  tokens (default: one sentence);

optionally with ``"id"`` (a string, an integer or null). Wrong types are errors, never coerced
(``"tokens": "Merkel"`` is not six one-letter tokens, ``"sentence_ends": [2.9, 4]`` is not
truncated). Documents of any length are chunked like training data and the chunks' predictions
are stitched back into one document.

Output per document: ``id``, ``tokens``, word ``tags`` (BILUO), ``sentence_ends``, ``text`` (raw text
input only: the normalised text that the character offsets index) and ``spans`` with
``type``, word ``start``/``end`` (exclusive), ``text``, character ``char_start``/``char_end`` (raw
text only) and ``probability``: the CRF marginal probability that exactly this subword span is an
entity of this type (:meth:`ConstrainedCRF.path_log_marginals`, exact, from the one
forward-backward pass of its chunk). With ``--predictor-args '{"output_format": "conll"}'`` each
document is written as CoNLL lines ``word tag`` (BIO) with blank lines between sentences.

**Text** is normalised as everywhere in eer-ner (:mod:`eer_plugin.corpus.text`): lone surrogates
(``"\\ud800"``) and control characters become U+FFFD, one for one, so offsets still index the input.

**Bad lines.** A line that is not a JSON object of the form above, or on which anything else fails
(reading, tokenizing, tagging: any exception), gives an error record instead of a document,
``{"line": 7, "id": "doc7", "error": "..."}`` (``"id"`` null when unknown; in CoNLL output a line
``# error: line 7, id 'doc7': ...``), and the same message on stderr; the other lines are tagged
as usual. Under ``allennlp predict`` (:class:`LineReportingPredictManager`) ``line`` is
the line number in the input file (blank lines are skipped but counted) and the exit status is 1
when any line failed, 0 otherwise.

**Batching.** ``predict_batch_json`` (``allennlp predict --batch-size N``) tags the chunks of all
its documents together, ``chunk_batch_size`` chunks per model forward (default: as many as there
are documents in the call, at least 1), longest first; the model skips the ``rho_hat`` marginals
(``track_rho_hat = False``) and the span probabilities of a batch come from one forward-backward.
"""
import json
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from eer_plugin.core.tags import spans_to_biluo
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.text import normalise_value
from eer_plugin.models.decoding import tensorize_chunks
from eer_plugin.predictors.manager import ERROR_KEY, LINE_KEY
from eer_plugin.predictors.tokenizer import SENTENCE_FINAL, tokenize_text  # noqa: F401  (public here too)
from eer_plugin.runtime.errors import UserError

OUTPUT_FORMATS = ("json", "conll")
#: characters that some JSON-lines readers (Python's ``str.splitlines``) take for line ends: escaped in the output
_LINE_SEPARATORS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


class InputError(ValueError):
    """A predict input that cannot be tagged; reported as an error record for its line."""


class PredictorArgumentError(UserError, ValueError):
    """A ``--predictor-args`` value the predictor cannot use."""


def check_predictor_args(output_format: str = "json", chunk_batch_size: Optional[int] = None, **unknown: Any) -> None:
    """:class:`PredictorArgumentError` unless these are valid ``eer_tagger`` arguments."""
    if unknown:
        raise PredictorArgumentError(
            f"unknown argument(s) {', '.join(map(repr, sorted(unknown)))}; the eer_tagger predictor takes "
            "output_format ('json' or 'conll') and chunk_batch_size (an integer, at least 1)"
        )
    if output_format not in OUTPUT_FORMATS:
        raise PredictorArgumentError(f"output_format must be 'json' or 'conll', got {_describe(output_format)}")
    if chunk_batch_size is not None and (
        isinstance(chunk_batch_size, bool) or not isinstance(chunk_batch_size, int) or chunk_batch_size < 1
    ):
        raise PredictorArgumentError(f"chunk_batch_size must be an integer of at least 1, got {_describe(chunk_batch_size)}")


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _reason(error: Exception) -> str:
    """The message of an error record: the text of an expected error, else its class too."""
    if isinstance(error, InputError):
        return str(error)
    return f"{type(error).__name__}: {str(error)[:200]}"


def parse_input(data: Any) -> Tuple[Document, List[Tuple[int, int]], Optional[str]]:
    """``(document, character offsets of its words (raw text only), text)`` of one input object,
    or :class:`InputError` saying what is wrong with it."""
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {_describe(data)}")
    if ("text" in data) == ("tokens" in data):
        raise InputError('needs exactly one of "text" (a string) or "tokens" (a list of strings)')
    doc_id = data.get("id")
    doc_id = "" if doc_id is None else doc_id
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        raise InputError(f'"id" must be a string or an integer, got {_describe(doc_id)}')
    offsets: List[Tuple[int, int]] = []
    text = None
    if "text" in data:
        text = data["text"]
        if not isinstance(text, str):
            raise InputError(f'"text" must be a string, got {_describe(text)}')
        if "sentence_ends" in data:
            raise InputError('"sentence_ends" goes with "tokens"; raw "text" is split into sentences by the tokenizer')
        words, offsets, ends = tokenize_text(text)
        if not words:
            raise InputError('"text" is empty or only white space')
    else:
        words = data["tokens"]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise InputError(f'"tokens" must be a list of strings, got {_describe(words)}')
        if not words:
            raise InputError('"tokens" is empty')
        bad = [i for i, w in enumerate(words) if not w or any(c.isspace() for c in w)]
        if bad:
            raise InputError(f'"tokens"[{bad[0]}] is {_describe(words[bad[0]])}: tokens must be non-empty, without white space')
        ends = data.get("sentence_ends", [len(words)])
        if not isinstance(ends, list) or not all(isinstance(e, int) and not isinstance(e, bool) for e in ends):
            raise InputError(f'"sentence_ends" must be a list of integers, got {_describe(ends)}')
        if not ends or ends[-1] != len(words) or any(b <= a for a, b in zip([0] + ends, ends)):
            raise InputError(
                f'"sentence_ends" must increase strictly from above 0 and end at {len(words)} (the number of tokens), '
                f"got {_describe(ends)}"
            )
    try:
        doc = Document(id=str(doc_id), tokens=list(words), sentence_ends=list(ends), is_complete=False).validate()
    except DocumentError as err:
        raise InputError(str(err)) from err
    return doc, offsets, text


@Predictor.register("eer_tagger")
class DocumentTaggerPredictor(Predictor):
    """See the module docstring. ``chunk_batch_size``: chunks per model forward in
    :meth:`predict_batch_json` (default: the number of documents in the call)."""

    #: tells :class:`LineReportingPredictManager` to number the lines and set the exit status
    reports_bad_lines = True

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        output_format: str = "json",
        chunk_batch_size: Optional[int] = None,
    ) -> None:
        check_predictor_args(output_format, chunk_batch_size)
        super().__init__(model, dataset_reader)
        self.output_format = output_format
        self.chunk_batch_size = chunk_batch_size
        #: line numbers (or None) of the inputs that gave error records
        self.failed_lines: List[Optional[int]] = []
        if hasattr(model, "track_rho_hat"):
            setattr(model, "track_rho_hat", False)  # prediction never reports rho_hat

    # ------------------------------------------------------------------ input
    def load_line(self, line: str) -> JsonDict:
        """The line's JSON object, its strings normalised (:mod:`eer_plugin.corpus.text`: lone
        surrogates and control characters become U+FFFD); a line that is not JSON becomes an error
        marker (never raises)."""
        try:
            data = normalise_value(json.loads(line))
        except (json.JSONDecodeError, RecursionError) as err:
            reason = f"{err.msg} at column {err.colno}" if isinstance(err, json.JSONDecodeError) else "nested too deeply"
            return {ERROR_KEY: f"not JSON ({reason}): {normalise_value(line.strip()[:60])!r}"}
        return data if isinstance(data, dict) else {ERROR_KEY: f"expected a JSON object, got {_describe(data)}"}

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        doc, _, _ = parse_input(json_dict)
        chunks = self._dataset_reader.chunk(doc)  # type: ignore[attr-defined]
        return self._dataset_reader.chunk_to_instance(chunks[0], with_labels=False)  # type: ignore[attr-defined]

    def _error_record(self, inputs: Any, reason: str) -> JsonDict:
        inputs = inputs if isinstance(inputs, dict) else {}
        line = inputs.get(LINE_KEY)
        doc_id = inputs.get("id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            doc_id = None
        self.failed_lines.append(line)
        where = f"line {line}" if line is not None else "input"
        print(f"eer_tagger: {where}, id {doc_id!r}: {reason}", file=sys.stderr, flush=True)
        return {"line": line, "id": doc_id, "error": reason}

    # ------------------------------------------------------------------ prediction
    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        """One output per input, in order: the tagged document, or the error record of an input
        that could not be read, tokenized or tagged (any exception; the others are still tagged)."""
        results: List[Optional[JsonDict]] = [None] * len(inputs)
        documents = []  # (index, doc, offsets, text, chunks)
        for index, data in enumerate(inputs):
            try:
                if isinstance(data, dict) and ERROR_KEY in data:
                    raise InputError(data[ERROR_KEY])
                fields = {k: v for k, v in data.items() if k != LINE_KEY} if isinstance(data, dict) else data
                doc, offsets, text = parse_input(fields)
                chunks = self._dataset_reader.chunk(doc)  # type: ignore[attr-defined]
            except Exception as err:  # noqa: BLE001  (one bad input never ends the batch)
                results[index] = self._error_record(data, _reason(err))
                continue
            documents.append((index, doc, offsets, text, chunks))
        try:
            outputs = self._tag_documents(documents, self.chunk_batch_size or max(len(inputs), 1))
        except Exception:  # noqa: BLE001  (find the document that fails: tag them one by one)
            outputs = []
            for document in documents:
                try:
                    outputs.extend(self._tag_documents([document], self.chunk_batch_size or 1))
                except Exception as err:  # noqa: BLE001
                    outputs.append(self._error_record(inputs[document[0]], f"tagging failed: {_reason(err)}"))
        for (index, *_), output in zip(documents, outputs):
            results[index] = output
        return results  # type: ignore[return-value]

    def _tag_documents(self, documents: List[Tuple], size: int) -> List[JsonDict]:
        """The outputs of ``documents`` (``(index, doc, offsets, text, chunks)``), their chunks tagged
        ``size`` per model forward, longest first."""
        items = [(d, chunk) for d, (_, _, _, _, chunks) in enumerate(documents) for chunk in chunks]
        order = sorted(range(len(items)), key=lambda i: -len(items[i][1].subword_ids))
        spans_of: List[List[Tuple[int, Dict[str, Any]]]] = [[] for _ in documents]  # (chunk order, span)
        for first in range(0, len(order), size):
            batch = [items[i] for i in order[first : first + size]]
            for (d, chunk), chunk_spans in zip(batch, self._tag_chunks([chunk for _, chunk in batch])):
                spans_of[d].extend((chunk.index, span) for span in chunk_spans)
        return [
            self._document_output(doc, offsets, text, [s for _, s in sorted(spans_of[d], key=lambda x: x[0])])
            for d, (_, doc, offsets, text, _) in enumerate(documents)
        ]

    def _document_output(self, doc: Document, offsets, text: Optional[str], chunk_spans: List[Dict[str, Any]]) -> JsonDict:
        spans = []
        for span in chunk_spans:
            start, end = span["start"], span["end"]
            span["text"] = " ".join(doc.tokens[start:end])
            if offsets:
                span.update(char_start=offsets[start][0], char_end=offsets[end - 1][1])
                span["text"] = text[span["char_start"] : span["char_end"]]  # type: ignore[index]
            spans.append(span)
        tags = spans_to_biluo([(s["start"], s["end"], s["type"]) for s in spans], len(doc.tokens))
        output = {"id": doc.id, "tokens": doc.tokens, "tags": tags, "spans": spans, "sentence_ends": doc.sentence_ends}
        if text is not None:  # raw text: the characters the offsets index (eer-export writes them to the annotation tools)
            output["text"] = text
        return sanitize(output)

    def _tag_chunks(self, chunks: Sequence[Any]) -> List[List[Dict[str, Any]]]:
        """Word spans (document word indices) with probabilities, per chunk: one model forward
        (Viterbi) and one forward-backward for all the chunks' span probabilities
        (:meth:`~eer_plugin.models.tagger.EERTagger.chunk_entities`)."""
        model = self._model
        with torch.no_grad():
            model.eval()
            batch = tensorize_chunks(model, self._dataset_reader, chunks, self.cuda_device)
            entities = model.chunk_entities(batch["tokens"], batch["metadata"])  # type: ignore[attr-defined]
        return [
            [
                {"type": label, "start": start + chunk.word_start, "end": end + chunk.word_start, "probability": probability}
                for (start, end, label), probability in chunk_entities
            ]
            for chunk, chunk_entities in zip(chunks, entities)
        ]

    # ------------------------------------------------------------------ output
    def dump_line(self, outputs: JsonDict) -> str:
        if self.output_format == "json":
            return json.dumps(outputs, ensure_ascii=False).translate(_LINE_SEPARATORS) + "\n"
        if "error" in outputs:
            return f"# error: line {outputs['line']}, id {outputs['id']!r}: {outputs['error']}\n\n"
        lines, start = [], 0
        bio = [tag.replace("L-", "I-").replace("U-", "B-") for tag in outputs["tags"]]
        for end in outputs["sentence_ends"]:
            lines.extend(f"{w} {t}" for w, t in zip(outputs["tokens"][start:end], bio[start:end]))
            lines.append("")
            start = end
        return "\n".join(lines) + "\n"

