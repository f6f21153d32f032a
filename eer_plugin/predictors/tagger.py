"""Predictor for new documents: raw text or pre-split tokens in, entity spans out.

Input (one JSON object per line), exactly one of:

* ``{"text": "..."}``: a non-empty string, split by :mod:`eer_plugin.corpus.tokenizer`
  (documented rules, exact character offsets);
* ``{"tokens": [...], "sentence_ends": [...]}``: a list of non-empty strings without white space,
  and optionally the sentence ends, a strictly increasing list of integers ending at the number of
  tokens (default: one sentence);

optionally with ``"id"`` (a string, an integer or null). A line in the training format (eer-dictionary's
output, say) is tagged by its ``tokens``, its annotations ignored, keeping its raw ``text`` and the spans'
character offsets where the tokens are that text's words. Any other key is an error naming it and the
allowed ones (a misspelt ``"sentence_end"`` is never ignored), as is a key repeated in one object
(:mod:`eer_plugin.corpus.strict_json`). Wrong types are errors, never coerced
(``"tokens": "Merkel"`` is not six one-letter tokens, ``"sentence_ends": [2.9, 4]`` is not
truncated). Documents of any length are chunked like training data and the chunks' predictions
are stitched back into one document.

Output per document: ``id``, ``tokens``, word ``tags`` (BILUO), ``sentence_ends``, ``text`` (raw text
input only: the normalised text that the character offsets index) and ``spans`` with
``type``, word ``start``/``end`` (exclusive), ``text``, character ``char_start``/``char_end`` (raw
text only) and ``probability``: the CRF marginal probability that exactly this subword span is an
entity of this type (:meth:`ConstrainedCRF.path_log_marginals`, exact, from the one
forward-backward pass of its chunk). With ``--predictor-args '{"output_format": "conll"}'`` each
document is written as CoNLL lines: ``-DOCSTART- O``, its id on a comment line ``# id = ...`` when it has one
(:mod:`eer_plugin.corpus.formats.columns`: as it is, or as a JSON string where it would not read back so), a blank
line, then ``word tag`` lines with a blank line after each sentence, in BIO or the ``tag_scheme`` given
(``'{"output_format": "conll", "tag_scheme": "BIOES"}'``: IOB1, BIO, BIOUL, BIOES or an alias); an entity
that crosses a sentence end is written as one entity in each sentence, so every sentence reads back in its
scheme, and eer-ner's CoNLL reader reads back the documents, their boundaries and ids.

**Text** is normalised as everywhere in eer-ner (:mod:`eer_plugin.corpus.text`): lone surrogates
(``"\\ud800"``) and control characters become U+FFFD, one for one, so offsets still index the input.

**Bad lines.** A line that is not a JSON object of the form above, or on which anything else fails
(reading, tokenizing, tagging: any exception), gives an error record instead of a document,
``{"line": 7, "id": "doc7", "error": "..."}`` (``"id"`` null when unknown; in CoNLL output a line
``# error: line 7, id 'doc7': ...``), and the same message on stderr; the other lines are tagged
as usual. In CoNLL output a document holding a token ``-DOCSTART-`` is an error record too, before it is tagged
(:func:`~eer_plugin.corpus.formats.columns.token_problem`: a column reader would start a document there). Under ``allennlp predict`` (:class:`LineReportingPredictManager`) ``line`` is
the line number in the input file (blank lines are skipped but counted) and the exit status is 1
when any line failed, 0 otherwise.

**Batching.** ``predict_batch_json`` (``allennlp predict --batch-size N``) tags the chunks of all
its documents together, ``chunk_batch_size`` chunks per model forward (default: as many as there
are documents in the call, at least 1), longest first; the model skips the ``rho_hat`` marginals
(``track_rho_hat = False``) and the span probabilities of a batch come from one forward-backward.
The input rules, the batching and the output are :mod:`eer_plugin.inference.documents`, which the
Python API and the exported model (no AllenNLP) tag through too.
"""

import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from eer_plugin.common.errors import UserError, one_line, printable, shortened
from eer_plugin.core.tags import SCHEME_NAMES, biluo_to_spans, normalize_encoding, one_word_type
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.formats.columns import document_lines, error_record, token_problem
from eer_plugin.corpus.text import normalise_value
from eer_plugin.corpus.tokenizer import SENTENCE_FINAL, tokenize_text  # noqa: F401  (public here too)
from eer_plugin.inference.decoding import tensorize_chunks
from eer_plugin.inference.documents import (  # noqa: F401
    ERROR_KEY,
    LINE_KEY,
    InputError,
    ParsedDocument,
    describe,
    parse_input,
    tag_documents,
)
from eer_plugin.inference.precision import set_tagging_precision
from eer_plugin.runtime.setting_values import TAGGING_PRECISION, tagging_precision_problem

OUTPUT_FORMATS = ("json", "conll")
#: the tag scheme of CoNLL output unless ``tag_scheme`` says otherwise (JSON output's ``tags`` are BILUO)
CONLL_TAG_SCHEME = "BIO"


class PredictorArgumentError(UserError, ValueError):
    """A ``--predictor-args`` value the predictor cannot use."""


def check_predictor_args(
    output_format: str = "json",
    chunk_batch_size: Optional[int] = None,
    precision: Optional[str] = None,
    tag_scheme: Optional[str] = None,
    **unknown: Any,
) -> None:
    """:class:`PredictorArgumentError` unless these are valid ``eer_tagger`` arguments."""
    if unknown:
        raise PredictorArgumentError(
            f"unknown argument(s) {', '.join(map(repr, sorted(unknown)))}; the eer_tagger predictor takes "
            f"output_format ('json' or 'conll'), tag_scheme (of CoNLL output, default {CONLL_TAG_SCHEME}), "
            f"chunk_batch_size (an integer, at least 1) and precision ({TAGGING_PRECISION.describe()})"
        )
    if tag_scheme is not None:
        if output_format != "conll":
            raise PredictorArgumentError(
                f'tag_scheme {describe(tag_scheme)} is the tag scheme of CoNLL output: add "output_format": '
                '"conll" (JSON output\'s tags are BILUO, and its spans need no scheme)'
            )
        try:
            normalize_encoding(tag_scheme)
        except ValueError:
            raise PredictorArgumentError(
                f"tag_scheme {describe(tag_scheme)} is not a tag scheme; expected one of {SCHEME_NAMES}"
            ) from None
    problem = tagging_precision_problem(precision)  # the device's part: set_tagging_precision, once it is known
    if problem is not None:
        raise PredictorArgumentError(problem)
    if output_format not in OUTPUT_FORMATS:
        raise PredictorArgumentError(f"output_format must be 'json' or 'conll', got {describe(output_format)}")
    if chunk_batch_size is not None and (
        isinstance(chunk_batch_size, bool) or not isinstance(chunk_batch_size, int) or chunk_batch_size < 1
    ):
        raise PredictorArgumentError(
            f"chunk_batch_size must be an integer of at least 1, got {describe(chunk_batch_size)}"
        )


def column_types(types: Sequence[str]) -> Dict[str, str]:
    """``{type: one word}`` for the entity types that hold spaces (:func:`~eer_plugin.core.tags.one_word_type`),
    said once on stderr; :class:`UserError` when two types would be written alike."""
    written = {label: one_word_type(label) for label in types}
    alike = [(a, b) for a in types for b in types if a < b and written[a] == written[b]]
    if alike:
        raise UserError(
            f"the model's entity types {alike[0][0]!r} and {alike[0][1]!r} would both be {written[alike[0][0]]!r} in "
            "CoNLL output, whose tags are one word (spaces become _): use JSON output"
        )
    renamed = {label: word for label, word in written.items() if word != label}
    if renamed:
        shown = ", ".join(f"{label!r} is written {word!r}" for label, word in renamed.items())
        print(f"eer_tagger: CoNLL tags are one word, so entity type {shown}", file=sys.stderr, flush=True)
    return renamed


def check_encoder_fits(model: Model, dataset_reader: DatasetReader) -> None:
    """:class:`UserError` when the reader's subwords cannot go through the model's transformer (a ``config.json``
    whose reader names another encoder than the model's): refused at load, not as an ``IndexError`` per document."""
    subwords = getattr(dataset_reader, "subwords", None)
    transformer = next((m.transformer_model for m in model.modules() if hasattr(m, "transformer_model")), None)
    problem = subwords.mismatch(transformer) if subwords is not None and transformer is not None else None
    if problem is not None:
        raise UserError(
            f"the model's dataset reader tokenizes for another encoder ({dataset_reader.model_name!r}; {problem}): "
            "an archive whose config.json was edited; use the model.tar.gz that eer-ner train wrote"
        )


def _reason(error: Exception) -> str:
    """The message of an error record, one line (a CoNLL ``# error:`` line stays one comment line): the text of an
    expected error, else its class too."""
    if isinstance(error, InputError):
        return str(error)
    return f"{type(error).__name__}: {one_line(error)[:200]}"


@Predictor.register("eer_tagger")
class DocumentTaggerPredictor(Predictor):
    """See the module docstring. ``chunk_batch_size``: chunks per model forward in
    :meth:`predict_batch_json` (default: the number of documents in the call). ``precision``: the
    encoder's precision for tagging (:data:`~eer_plugin.runtime.setting_values.TAGGING_PRECISIONS`;
    ``int8`` quantizes it, CPU only); None keeps the model's."""

    #: tells :class:`LineReportingPredictManager` to number the lines and set the exit status
    reports_bad_lines = True
    #: ``allennlp predict`` checks ``--predictor-args`` with this before it loads the model (commands/predict.py)
    check_predictor_args = staticmethod(check_predictor_args)

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        output_format: str = "json",
        chunk_batch_size: Optional[int] = None,
        precision: Optional[str] = None,
        tag_scheme: Optional[str] = None,
    ) -> None:
        check_predictor_args(output_format, chunk_batch_size, precision, tag_scheme)
        if not hasattr(model, "chunk_entities") or not hasattr(dataset_reader, "chunk"):
            raise UserError(
                f"the eer_tagger predictor tags with an eer-ner tagger (model eer_tagger, reader eer_documents); this "
                f"archive holds a {type(model).__name__} with a {type(dataset_reader).__name__}: use that model's own "
                "predictor, or an archive eer-ner trained"
            )
        check_encoder_fits(model, dataset_reader)
        super().__init__(model, dataset_reader)
        if precision is not None:  # e.g. --predictor-args '{"precision": "int8"}'
            set_tagging_precision(model, model.text_field_embedder, precision, next(model.parameters()).device)
        self.output_format = output_format
        self.tag_scheme = normalize_encoding(tag_scheme or CONLL_TAG_SCHEME)
        #: type -> how CoNLL output writes it (one word)
        self.column_types = column_types(model.scheme.entity_types) if output_format == "conll" else {}
        self.chunk_batch_size = chunk_batch_size
        #: line numbers (or None) of the inputs that gave error records
        self.failed_lines: List[Optional[int]] = []
        #: what precedes a bad line's number in its stderr message ("docs.jsonl line", "<stdin> line",
        #: "folder notes document"); set by :class:`~eer_plugin.predictors.predict_manager.LineReportingPredictManager`
        self.line_label = "line"
        if hasattr(model, "track_rho_hat"):
            model.track_rho_hat = False  # prediction never reports rho_hat

    # ------------------------------------------------------------------ input
    def load_line(self, line: str) -> JsonDict:
        """The line's JSON object, its strings normalised (:mod:`eer_plugin.corpus.text`: lone
        surrogates and control characters become U+FFFD); a line that is not JSON, repeats a key or nests
        too deeply (:mod:`eer_plugin.corpus.strict_json`) becomes an error marker (never raises)."""
        try:
            data = normalise_value(strict_json.loads(line))
        except strict_json.JsonError as err:
            return {ERROR_KEY: f"not JSON ({err}): {normalise_value(line.strip()[:60])!r}"}
        return data if isinstance(data, dict) else {ERROR_KEY: f"expected a JSON object, got {describe(data)}"}

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
        reason = shortened(reason)  # a message quoting a 1 MB key or word stays one readable line, in both places
        where = f"{self.line_label} {line}" if line is not None else "input"
        print(printable(f"eer_tagger: {where}, id {doc_id!r}: {reason}"), file=sys.stderr, flush=True)
        return {"line": line, "id": doc_id, "error": reason}

    # ------------------------------------------------------------------ prediction
    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        """One output per input, in order: the tagged document, or the error record of an input
        that could not be read, tokenized or tagged (any exception; the others are still tagged)."""
        results: List[Optional[JsonDict]] = [None] * len(inputs)
        indices, documents = [], []  # the inputs' positions, ParsedDocument
        for index, data in enumerate(inputs):
            try:
                if isinstance(data, dict) and ERROR_KEY in data:
                    raise InputError(data[ERROR_KEY])
                fields = {k: v for k, v in data.items() if k != LINE_KEY} if isinstance(data, dict) else data
                doc, offsets, text = parse_input(fields)
                problem = token_problem(doc.tokens) if self.output_format == "conll" else ""
                if problem:  # before any tagging
                    raise InputError(problem)
                chunks = self.chunk(doc)
            except Exception as err:  # noqa: BLE001  (one bad input never ends the batch)
                results[index] = self._error_record(data, _reason(err))
                continue
            indices.append(index)
            documents.append(ParsedDocument(doc, offsets, text, chunks))
        try:
            outputs = tag_documents(documents, self.chunk_batch_size or max(len(inputs), 1), self.tag_chunks)
        except Exception:  # noqa: BLE001  (find the document that fails: tag them one by one)
            outputs = []
            for index, document in zip(indices, documents):
                try:
                    outputs.extend(tag_documents([document], self.chunk_batch_size or 1, self.tag_chunks))
                except Exception as err:  # noqa: BLE001
                    outputs.append(self._error_record(inputs[index], f"tagging failed: {_reason(err)}"))
        for index, output in zip(indices, outputs):
            results[index] = output
        return results  # type: ignore[return-value]

    def chunk(self, doc: Any) -> List[Any]:
        """``doc`` cut into the model's chunks (the reader's :meth:`~eer_plugin.data.reader.PartialDocumentReader.chunk`)."""
        return self._dataset_reader.chunk(doc)  # type: ignore[attr-defined]

    def tag_chunks(self, chunks: Sequence[Any]) -> List[List[Tuple[Any, float]]]:
        """Per chunk, ``((start, end, type), probability)`` of its entities (chunk word positions): one model
        forward (Viterbi) and one forward-backward for all the chunks' span probabilities
        (:meth:`~eer_plugin.inference.decoding.SpanDecoder.chunk_entities`)."""
        model = self._model
        with torch.inference_mode():
            model.eval()
            batch = tensorize_chunks(model, self._dataset_reader, chunks, self.cuda_device)
            return model.chunk_entities(batch["tokens"], batch["metadata"])  # type: ignore[attr-defined]

    def entity_probabilities(self, chunks: Sequence[Any]) -> List[List[float]]:
        """Per chunk, the CRF marginal probability that each word's first subword has an entity tag
        (:meth:`~eer_plugin.inference.decoding.SpanDecoder.chunk_entity_probabilities`)."""
        model = self._model
        with torch.inference_mode():
            model.eval()
            batch = tensorize_chunks(model, self._dataset_reader, chunks, self.cuda_device)
            return model.chunk_entity_probabilities(batch["tokens"], [chunk.word_subwords for chunk in chunks])  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ output
    def dump_line(self, outputs: JsonDict) -> str:
        if self.output_format == "json":
            return strict_json.dumps(outputs) + "\n"
        if "error" in outputs:
            return error_record(outputs["line"], outputs["id"], outputs["error"])
        tokens, ends, spans = outputs["tokens"], outputs["sentence_ends"], biluo_to_spans(outputs["tags"])
        return document_lines(outputs.get("id"), tokens, ends, spans, self.tag_scheme, self.column_types)
