"""Use a trained model from Python: load it once, tag strings, token lists or a stream of documents.

::

    from eer_plugin import Tagger

    tagger = Tagger.load("runs/eer_short/model.tar.gz")
    tagger("Fischler met Loyola de Palacio in Brussels.")        # raw text
    tagger(["Fischler", "met", "Loyola", "de", "Palacio", "."])  # pre-split tokens
    for tagged in tagger.pipe(texts, batch_size=16):             # a stream (lazy, batched)
        ...

A document is a string (raw text, split into words and sentences by the predictor's tokenizer,
:mod:`eer_plugin.corpus.tokenizer`), a list of token strings (one sentence), or a dict in the
form of a line of ``eer-ner predict`` input (``{"id": ..., "text": ...}`` or ``{"id": ...,
"tokens": [...], "sentence_ends": [...]}``). Text is normalised as everywhere in eer-ner (lone
surrogates and control characters become U+FFFD, one for one, so character offsets index the input).

Each result is exactly what ``eer-ner predict --predictor eer_tagger`` writes for that document
(:mod:`eer_plugin.inference.documents`): ``id``, ``tokens``, word ``tags`` (BILUO),
``sentence_ends``, ``spans`` (each with ``type``, word ``start``/``end`` (end exclusive), ``text``,
``probability``: the CRF marginal probability of exactly this span, and ``char_start``/``char_end``
for raw text) and, for raw text, the ``text`` itself. :meth:`Tagger.pipe` tags ``batch_size``
documents per call, their chunks together, as ``predict --batch-size`` does.

A document that is not one of these forms (``None``, a number, an empty string or list, a token
with white space, ...) raises :class:`TaggerInputError`, one line naming the document and what was
expected; a model path that is missing or no model archive raises
:class:`eer_plugin.common.errors.ArchiveError`.

This module imports no AllenNLP (``from eer_plugin import Tagger`` is lazy, see
``eer_plugin/__init__.py``): :meth:`Tagger.load` imports it when it loads an archive, not when it
loads an exported model (``eer-ner eer-export-model``, :mod:`eer_plugin.inference.exported`), which
needs torch, transformers and safetensors only. Both tag through :mod:`eer_plugin.inference.documents`.
"""

import itertools
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from eer_plugin.corpus.text import normalise_value
from eer_plugin.inference.documents import InputError, ParsedDocument, parse_input, tag_documents, uncertain_entity_tags

#: one document: raw text, a token list, or a dict like a line of ``eer-ner predict`` input
DocumentInput = Union[str, Sequence[str], Dict[str, Any]]
EXPECTED = 'a string (raw text), a list of token strings, or a dict like a predict input line ({"text": ...} or {"tokens": [...]})'


class TaggerInputError(ValueError):
    """A document the tagger cannot read; the message names the document and what was expected."""


class TaggingError(RuntimeError):
    """The model failed on a document that was read correctly (not the input's fault)."""


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def as_predict_input(document: Any, where: str) -> Dict[str, Any]:
    """The predictor's input dict of one document (text normalised), or :class:`TaggerInputError`."""
    if isinstance(document, str):
        data: Dict[str, Any] = {"text": document}
    elif isinstance(document, (list, tuple)):
        data = {"tokens": list(document)}
    elif isinstance(document, dict):
        data = dict(document)
    else:
        raise TaggerInputError(f"{where}: expected {EXPECTED}, got {_shown(document)}{_type_hint(document)}")
    return normalise_value(data)


def _type_hint(document: Any) -> str:
    """The fix for a document of a type that is no document: bytes to decode, an iterable (a generator, a pandas
    Series, an array) meant as several documents or as one document's tokens; "" when none is known."""
    if isinstance(document, (bytes, bytearray, memoryview)):
        return '; decode it to a string first (data.decode("utf-8"))'
    if hasattr(document, "__iter__"):
        return (
            f"; {type(document).__name__} is no document: tag several documents with tagger.pipe(documents), "
            "or give one document's tokens as a list (list(tokens))"
        )
    return ""


def _list_hint(document: Any) -> str:
    """The fix when a list that is not one document's tokens was given as a document (several texts or dicts)."""
    if isinstance(document, (list, tuple)) and any(
        isinstance(item, (dict, list, tuple)) or isinstance(item, str) and any(c.isspace() for c in item)
        for item in document
    ):
        return "; a list is the tokens of one document: tag several documents with tagger.pipe(documents)"
    return ""


def _document_stream(documents: Any, batch_size: Any, message: str, hint: str = "") -> Iterator[DocumentInput]:
    """An iterator over ``documents`` (not a single document) for :meth:`Tagger.pipe` / :meth:`Tagger.rank`,
    with ``batch_size`` checked: :class:`TaggerInputError` otherwise (``message``, what was given, ``hint``)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise TaggerInputError(f"batch_size must be an integer of at least 1, got {_shown(batch_size)}")
    if not isinstance(documents, (str, dict)):
        try:
            return iter(documents)
        except TypeError:
            pass
    raise TaggerInputError(f"{message}, got {_shown(documents)}{hint}")


def _batches(stream: Iterator[DocumentInput], batch_size: int) -> Iterator[Tuple[int, List[DocumentInput]]]:
    """``(first, batch)``: ``batch_size`` documents at a time, ``first`` the stream position of the batch's first."""
    first = 0
    while True:
        batch = list(itertools.islice(stream, batch_size))
        if not batch:
            return
        yield first, batch
        first += len(batch)


class _TakingTurns:
    """The tagger of chunks ``model`` with each model call (:data:`MODEL_CALLS`) holding ``lock`` for that call
    only (:meth:`Tagger.taking_turns`); everything else is ``model``'s."""

    #: the methods that run the tokenizer or the model
    MODEL_CALLS = ("chunk", "tag_chunks", "entity_probabilities")

    def __init__(self, model: Any, lock: Any) -> None:
        self._inner = model
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if name not in self.MODEL_CALLS:
            return found

        def holding(*args: Any) -> Any:
            with self._lock:
                return found(*args)

        return holding


class Tagger:
    """A loaded model; see the module docstring. Build it with :meth:`Tagger.load`."""

    def __init__(self, model: Any, path: str = "") -> None:
        #: what tags: the AllenNLP predictor or an :class:`~eer_plugin.inference.exported.ExportedTagger`; each
        #: has ``chunk(doc)`` and ``tag_chunks(chunks)`` (:mod:`eer_plugin.inference.documents`)
        self._model = model
        #: the path it was loaded from
        self.path = path

    @classmethod
    def load(cls, path: Any, cuda_device: int = -1, precision: Optional[str] = None) -> "Tagger":
        """Loads a model once: an exported model's directory (``eer-ner eer-export-model``; torch,
        transformers and safetensors only: :mod:`eer_plugin.inference.exported`), or a model archive
        (``model.tar.gz``) or serialization directory (with AllenNLP; checked extraction,
        weights-only loading: :mod:`eer_plugin.runtime.archive`). ``cuda_device``: -1 for the CPU,
        else the GPU's index. ``precision``: the encoder's precision for tagging, ``fp32``, ``bf16``,
        ``auto`` or ``int8`` (dynamic quantization of its linear layers, CPU only; speed and F1 in
        docs/speed.md), see :mod:`eer_plugin.inference.precision`; None: the model's own."""
        import os

        from eer_plugin.inference.exported import ExportedTagger, check_not_a_transformers_model, is_export

        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise TypeError(
                f"Tagger.load: expected the path of a model (model.tar.gz, a serialization directory or an exported "
                f"model's directory), got {_shown(path)}"
            )
        if isinstance(cuda_device, bool) or not isinstance(cuda_device, int):
            raise TypeError(f"Tagger.load: cuda_device must be an integer (-1: the CPU), got {_shown(cuda_device)}")
        from eer_plugin.common.errors import SettingError
        from eer_plugin.runtime.setting_values import tagging_precision_problem

        problem = tagging_precision_problem(precision, "cpu" if cuda_device < 0 else f"cuda:{cuda_device}")
        if problem is not None:  # before anything loads (int8 on a GPU too)
            raise SettingError(f"Tagger.load: {problem}")
        check_not_a_transformers_model(path)
        if is_export(path):
            return cls(
                ExportedTagger.load(path, "cpu" if cuda_device < 0 else f"cuda:{cuda_device}", precision), str(path)
            )
        import importlib.util

        from eer_plugin.common.errors import ArchiveError

        if importlib.util.find_spec("allennlp") is None:
            raise ArchiveError(
                f"{path}: not an exported model directory, and a model archive needs AllenNLP to load; export it "
                "where AllenNLP is installed (eer-ner eer-export-model model.tar.gz DIR) and load DIR"
            )
        from eer_plugin import allennlp_plugin  # noqa: F401  (the model, reader and predictor classes)
        from eer_plugin.predictors.tagger import DocumentTaggerPredictor
        from eer_plugin.runtime.archive import load_model_archive

        archive = load_model_archive(path, cuda_device=cuda_device)
        return cls(
            DocumentTaggerPredictor(archive.model, archive.validation_dataset_reader, precision=precision), str(path)
        )

    def taking_turns(self, lock: Any) -> "Tagger":
        """This model, as a tagger whose every model call (chunking one document, tagging one batch of chunks,
        their marginals) holds ``lock`` (a context manager) for that call only: threads that share the model take
        turns call by call, so a long :meth:`pipe` lets the others in between its calls (with a first-come,
        first-served lock such as :class:`eer_plugin.serve.turns.TurnLock`). The outputs are this tagger's."""
        return Tagger(_TakingTurns(self._model, lock), self.path)

    @property
    def entity_types(self) -> List[str]:
        """The entity types the model predicts (``["LOC", "MISC", "ORG", "PER"]``)."""
        scheme = getattr(self._model, "scheme", None) or self._model._model.scheme
        return list(scheme.entity_types)

    def __call__(self, document: DocumentInput) -> Dict[str, Any]:
        """The tagged document (see the module docstring)."""
        return self._tag([document], None)[0]

    def pipe(self, documents: Iterable[DocumentInput], batch_size: int = 8) -> Iterator[Dict[str, Any]]:
        """Tags a stream of documents lazily, ``batch_size`` per model call, yielding one result
        per document in order (the input is read one batch ahead of what was yielded)."""
        stream = _document_stream(
            documents, batch_size, "pipe() takes an iterable of documents", "; tag one document with tagger(document)"
        )
        return self._stream(stream, batch_size)

    def _stream(self, documents: Iterator[DocumentInput], batch_size: int) -> Iterator[Dict[str, Any]]:
        for first, batch in _batches(documents, batch_size):
            yield from self._tag(batch, first)

    def rank(self, documents: Iterable[DocumentInput], batch_size: int = 8) -> List[Dict[str, Any]]:
        """Which documents to annotate next: every document's ``index`` (its position in ``documents``), ``id``,
        ``words`` and ``uncertain_tags``, the expected number of uncertain entity tags (the sum over its words
        of ``min(p, 1 - p)``, ``p`` the CRF marginal probability that the word is part of an entity:
        :func:`eer_plugin.inference.documents.uncertain_entity_tags`), most uncertain first (ties: in input order).
        The chunks of ``batch_size`` documents go through the model together."""
        ranked: List[Dict[str, Any]] = []
        for first, batch in _batches(
            _document_stream(documents, batch_size, "rank() takes an iterable of documents"), batch_size
        ):
            parsed = self._parse(batch, first)
            scores = uncertain_entity_tags(parsed, len(parsed), self._model.entity_probabilities)
            ranked.extend(
                {"index": index, "id": document.doc.id, "words": len(document.doc.tokens), "uncertain_tags": score}
                for index, (document, score) in enumerate(zip(parsed, scores), start=first)
            )
        return sorted(ranked, key=lambda row: (-row["uncertain_tags"], row["index"]))

    def _parse(self, documents: List[Any], first: Optional[int]) -> List[ParsedDocument]:
        """The documents read and chunked, the ``first``-th of a stream onwards (None: one document)."""
        start = first or 0
        places = [
            "document" if first is None else f"document {i} of the stream" for i in range(start, start + len(documents))
        ]
        parsed = []
        for document, where in zip(documents, places):
            try:
                doc, offsets, text = parse_input(as_predict_input(document, where))
            except InputError as error:
                raise TaggerInputError(f"{where}: {error}{_list_hint(document)}") from None
            try:
                parsed.append(ParsedDocument(doc, offsets, text, self._model.chunk(doc)))
            except Exception as error:  # noqa: BLE001  (not the input's fault: the tokenizer failed)
                raise TaggingError(f"{where}: chunking failed: {type(error).__name__}: {error}") from error
        return parsed

    def _tag(self, documents: List[Any], first: Optional[int]) -> List[Dict[str, Any]]:
        """The outputs of ``documents``, the ``first``-th of a stream onwards (None: one document): their
        chunks tagged together, as many per model call as there are documents (``predict --batch-size``)."""
        parsed = self._parse(documents, first)
        try:
            return tag_documents(parsed, len(parsed), self._model.tag_chunks)
        except Exception as error:  # noqa: BLE001
            where = "document" if first is None else f"documents {first}-{first + len(parsed) - 1} of the stream"
            raise TaggingError(f"{where}: tagging failed: {type(error).__name__}: {error}") from error
