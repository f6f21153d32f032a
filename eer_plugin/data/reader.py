"""AllenNLP reader: documents (CoNLL, OntoNotes or partial JSON lines) -> subword chunk instances."""

import logging
import os
from typing import Dict, Iterable, Iterator, List, Optional

import torch
from allennlp.data import Batch, DatasetReader, Instance, Token
from allennlp.data.fields import MetadataField, SequenceLabelField, TensorField, TextField
from allennlp.data.token_indexers import PretrainedTransformerIndexer, TokenIndexer
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder, TokenEmbedder
from allennlp.nn import util

from eer_plugin.annotation.simulators import variant as apply_variant
from eer_plugin.common.errors import SettingError, relative_paths_hint
from eer_plugin.core.tags import AUTO_SCHEME, normalize_encoding
from eer_plugin.corpus.documents import DataFileError, Document
from eer_plugin.corpus.formats import FormatError, iter_documents
from eer_plugin.inference.chunking import MIN_CHUNK_LENGTH, Chunk, chunk_document
from eer_plugin.inference.subwords import SubwordTokenizer
from eer_plugin.runtime.encoders import WORDS, check_encoder, loading_error
from eer_plugin.runtime.setting_values import check_arguments, number

logger = logging.getLogger(__name__)

#: text of the bookend positions in word-level mode
BOOKEND = "@@bookend@@"
#: what ``max_length`` must be (the encoder's tokenizer may allow fewer subwords: :class:`SubwordTokenizer` says so)
MAX_LENGTH = number(MIN_CHUNK_LENGTH, integer=True, note="subwords per chunk, bookends included; EER_MAX_LENGTH")


@TokenIndexer.register("eer_transformer")
class EncoderIndexer(PretrainedTransformerIndexer):
    """``pretrained_transformer`` indexer that also accepts the packaged-encoder aliases
    (``all-MiniLM-L6-v2``), so configs and archives name the encoder, not a site-packages path."""

    def __init__(self, model_name: str, **kwargs) -> None:
        path = check_encoder(model_name, ())
        try:
            super().__init__(path, **kwargs)
        except (OSError, ValueError) as error:  # transformers' refusal of the tokenizer's files
            raise loading_error(model_name, path, error, "tokenizer") from None


@TokenEmbedder.register("eer_transformer")
class EncoderEmbedder(PretrainedTransformerEmbedder):
    """``pretrained_transformer`` embedder with the same aliases as :class:`EncoderIndexer`; an encoder directory
    without its config or weights is one :class:`~eer_plugin.runtime.encoders.EncoderError` line."""

    def __init__(self, model_name: str, **kwargs) -> None:
        parts = ("config", "weights") if kwargs.get("load_weights", True) else ("config",)
        path = check_encoder(model_name, parts)
        try:
            super().__init__(path, **kwargs)
        except (OSError, ValueError) as error:  # transformers' refusal of the files (damaged weights, ...)
            raise loading_error(model_name, path, error, "model") from None


@DatasetReader.register("eer_documents")
class PartialDocumentReader(DatasetReader):
    """Reads whole documents and yields one instance per chunk of at most ``max_length`` subwords.

    Registered as ``eer_documents``. Every setting is checked when the reader is built: a value it cannot use (a tag
    scheme or file encoding that does not exist, a format, variant or number out of its set) is one
    :class:`SettingError` line naming ``dataset_reader.<setting>`` and what it must be
    (:mod:`eer_plugin.runtime.setting_values`), not an error when the first file is read.

    Parameters
    ----------
    model_name : str
        Hugging Face model name or local directory of the encoder (fast tokenizer), or
        ``all-MiniLM-L6-v2`` for the packaged copy; ``words`` for no subword tokenization (one
        position per word, for word-embedding encoders such as CBL-LSTM's BiLSTM).
    format : str
        ``auto`` (by file name/content), ``conll``, ``ontonotes`` or ``jsonl`` (partial annotations).
    tag_scheme : str
        Tag scheme of CoNLL files: ``auto``, ``IOB1``, ``BIO``/``IOB2``, ``BIOUL`` or ``BIOES`` (``encoding`` is
        its old name, still accepted). The reader logs the scheme, character encoding and documents it
        settles on for every file it reads (see :func:`~eer_plugin.corpus.formats.read_conll`).
    sentences_per_document : int, optional
        For CoNLL files without ``-DOCSTART-``: how many sentences make a document (default 10).
    tag_column : int
        For CoNLL files: the column of the tag, 0-based (default -1: the last).
    variant : str
        ``all``, ``short`` (drop documents without annotation) or ``shortest`` (also drop the
        sentences after each document's last annotation), as in the paper.
    assume_complete : bool
        Treat every unmarked word as observed ``O`` (the Gold and Raw baselines, and evaluation
        data). Otherwise unmarked words are latent unless their document says ``is_complete``.
    max_length : int
        Subwords per chunk including the two bookend tokens (512 for BERT/RoBERTa).
    sentence_level : bool
        One sentence per chunk instead of packing whole sentences (the SNS baseline's input).
    token_indexers : Dict[str, TokenIndexer], optional
        Default: the encoder's ``eer_transformer`` indexer under the key ``tokens``; with
        ``model_name: words`` e.g. ``{"tokens": {"type": "single_id", "lowercase_tokens": true}}``.
    file_encoding : str
        Character encoding of the data files: ``auto`` (UTF-8; a column file that is not valid
        UTF-8 is read as latin-1, with a warning in the log) or a codec name such as ``latin-1``.
    """

    def __init__(
        self,
        model_name: str = "all-MiniLM-L6-v2",
        format: str = "auto",
        encoding: str = "auto",
        sentences_per_document: Optional[int] = None,
        variant: str = "all",
        assume_complete: bool = False,
        max_length: int = 512,
        sentence_level: bool = False,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        file_encoding: str = "auto",
        tag_scheme: str = "auto",
        tag_column: int = -1,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        # each setting refused now, not when the first file is read (runtime.setting_values)
        check_arguments("dataset_reader", locals(), {"max_length": MAX_LENGTH})
        self.model_name = model_name
        if AUTO_SCHEME not in (encoding, tag_scheme) and normalize_encoding(encoding) != normalize_encoding(tag_scheme):
            raise SettingError(
                f"dataset_reader.tag_scheme {tag_scheme!r} and its old name dataset_reader.encoding {encoding!r} "
                "disagree; give tag_scheme only"
            )
        self.format = format
        self.tag_scheme = tag_scheme if tag_scheme != AUTO_SCHEME else encoding
        self.tag_column = tag_column
        self.sentences_per_document = sentences_per_document
        self.variant = variant
        self.assume_complete = assume_complete
        self.max_length = max_length
        self.sentence_level = sentence_level
        self.file_encoding = file_encoding
        self.word_level = model_name == WORDS
        if self.word_level:
            if token_indexers is None:
                raise SettingError(
                    "dataset_reader.model_name 'words' needs dataset_reader.token_indexers (e.g. a single_id indexer)"
                )
            self.subwords = None
            self.tokenizer = None
            self.bookends = (0, 0)
        else:  # the one subword tokenization, shared with the exported model (eer_plugin.inference)
            self.subwords = SubwordTokenizer(check_encoder(model_name, ()), model_name, max_length)
            self.tokenizer = self.subwords.tokenizer
            self.bookends = self.subwords.bookends
            self.max_length = self.subwords.max_length
        self._token_indexers = token_indexers or {"tokens": EncoderIndexer(model_name)}

    # -------------------------------------------------------------- documents
    def format_options(self) -> Dict[str, object]:
        """The keyword arguments of :func:`~eer_plugin.corpus.formats.read_documents` this reader reads with."""
        return dict(
            format=self.format,
            encoding=self.tag_scheme,
            sentences_per_document=self.sentences_per_document,
            tag_column=self.tag_column,
            file_encoding=self.file_encoding,
        )

    def read_documents(self, file_path: str) -> List[Document]:
        return list(self.iter_documents(file_path))

    def iter_documents(self, file_path: str) -> Iterator[Document]:
        """The documents of :meth:`read_documents`, read one at a time
        (:func:`~eer_plugin.corpus.formats.iter_documents`), each in the reader's variant."""
        if not os.path.exists(file_path):
            raise DataFileError(
                f"data file {file_path!r} not found{relative_paths_hint(file_path)}; check the path, "
                "or the EER_TRAIN_DATA / EER_DEV_DATA / EER_TEST_DATA setting that names it"
            )
        try:
            for document in iter_documents(file_path, **self.format_options()):
                # the variant first, from the annotation as given: marked complete before it, every document of a
                # Raw run would count as annotated and its short/shortest data would be the whole corpus
                for doc in apply_variant([document], self.variant):
                    doc.is_complete = doc.is_complete or self.assume_complete
                    yield doc
        except FormatError as error:  # names the file, the line and what was expected
            raise DataFileError(str(error)) from None

    def tokenize_words(self, words: List[str]) -> List[List[int]]:
        if self.subwords is None:
            return [[0] for _ in words]
        return self.subwords.tokenize_words(words)

    def chunk(self, doc: Document) -> List[Chunk]:
        if self.subwords is not None:
            return self.subwords.chunk(doc, sentence_level=self.sentence_level)
        chunks = chunk_document(
            doc,
            self.tokenize_words,
            lambda ids: [BOOKEND] * len(ids),
            self.bookends,
            self.max_length,
            sentence_level=self.sentence_level,
        )
        for chunk in chunks:  # one position per word: the tokens are the words themselves
            chunk.subword_tokens = [BOOKEND] + chunk.words + [BOOKEND]
        return chunks

    # -------------------------------------------------------------- instances
    def _read(self, file_path: str) -> Iterable[Instance]:
        docs = self.read_documents(file_path)
        for doc in self.shard_iterable(docs):
            for chunk in self.chunk(doc):
                yield self.chunk_to_instance(chunk)

    def text_to_instance(self, chunk: Chunk, with_labels: bool = True) -> Instance:  # type: ignore[override]
        return self.chunk_to_instance(chunk, with_labels)

    def chunk_to_instance(self, chunk: Chunk, with_labels: bool = True) -> Instance:
        tokens = [Token(text=t, text_id=i, type_id=0) for t, i in zip(chunk.subword_tokens, chunk.subword_ids)]
        text_field = TextField(tokens)
        fields: Dict[str, object] = {"tokens": text_field}
        metadata = {
            "doc_id": chunk.doc_id,
            "chunk_index": chunk.index,
            "word_start": chunk.word_start,
            "words": chunk.words,
            "word_subwords": chunk.word_subwords,
            "sentence_ends": chunk.sentence_ends,
            "is_complete": chunk.is_complete,
            "spans": chunk.spans,  # annotated (partial) word spans of the chunk
            "negative_spans": chunk.negative_spans,  # word spans known to hold no entity (or not one type)
            "gold_spans": chunk.spans if chunk.is_complete else None,
        }
        if with_labels:
            fields["tags"] = SequenceLabelField(chunk.labels, text_field, label_namespace="labels")
            if chunk.o_weights is not None:
                fields["o_weights"] = TensorField(torch.tensor(chunk.o_weights, dtype=torch.float32))
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)  # type: ignore[arg-type]

    def tensorize(self, instances: List[Instance], vocab, device: int = -1) -> Dict[str, object]:
        """The model's input tensors for ``instances`` (a batch), on ``device``."""
        for instance in instances:
            self.apply_token_indexers(instance)
        batch = Batch(instances)
        batch.index_instances(vocab)
        return util.move_to_device(batch.as_tensor_dict(), device)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance["tokens"].token_indexers = self._token_indexers  # type: ignore[attr-defined]
