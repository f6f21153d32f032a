"""Words -> subword chunks -> model inputs with the encoder's fast tokenizer (no AllenNLP import).

:class:`SubwordTokenizer` is the one way text reaches an encoder: the reader ``eer_documents``
(:mod:`eer_plugin.data.reader`, training, evaluation, ``predict``) and the exported model
(:mod:`eer_plugin.inference.exported`) both tokenize and chunk through it, so an exported model sees
exactly the subwords the AllenNLP model saw. Each word is tokenized on its own (``is_split_into_words``,
no special tokens); a word the tokenizer drops gets the unknown token; the document is cut into chunks
of at most ``max_length`` subwords with the tokenizer's two bookend tokens
(:func:`~eer_plugin.inference.chunking.chunk_document`). :meth:`SubwordTokenizer.tensorize` builds
what AllenNLP's ``pretrained_transformer`` indexer builds for such chunks: ``token_ids`` padded with
the tokenizer's pad id and a boolean ``mask``.
"""

from typing import Dict, List, Optional, Sequence

import torch

from eer_plugin.common.errors import SettingError
from eer_plugin.corpus.documents import Document
from eer_plugin.inference.chunking import MIN_CHUNK_LENGTH, Chunk, chunk_document
from eer_plugin.runtime.encoders import load_tokenizer


class SubwordTokenizer:
    """The fast tokenizer of the encoder at ``path`` (a local directory or a model name), named
    ``name`` in errors; ``max_length``: subwords per chunk with the bookends, at most the tokenizer's
    ``model_max_length``."""

    def __init__(self, path: str, name: str = "", max_length: int = 512) -> None:
        name = name or path
        self.tokenizer = load_tokenizer(path, name)
        if not self.tokenizer.is_fast:
            raise SettingError(f"{name}: a fast tokenizer is needed (word alignment); give an encoder that has one")
        bookends = self.tokenizer.build_inputs_with_special_tokens([])
        if len(bookends) != 2 or not all(isinstance(i, int) for i in bookends):
            raise SettingError(f"{name}: expected one start and one end special token, got {bookends}")
        self.bookends = (bookends[0], bookends[1])
        self.max_length = min(max_length, self.tokenizer.model_max_length)
        if self.max_length < MIN_CHUNK_LENGTH:  # two bookends and a word; else every document fails when chunked
            raise SettingError(
                f"{name}: chunks of at most {self.max_length} subwords (max_length {max_length}, the tokenizer's "
                f"model_max_length {self.tokenizer.model_max_length}); a chunk needs at least {MIN_CHUNK_LENGTH}: set EER_MAX_LENGTH "
                f"(subwords per chunk, bookends included) to {MIN_CHUNK_LENGTH} or more, 512 for BERT-sized encoders"
            )
        pad = self.tokenizer.pad_token_id
        #: the padding id of :meth:`tensorize` (0 for a tokenizer without a padding token, as in AllenNLP)
        self.pad_id = 0 if pad is None else pad
        try:  # a tokenizer that cannot split pre-split words fails here, not on every document
            self.tokenize_words(["a"])
        except Exception as error:  # noqa: BLE001  (transformers' errors of tokenizers set up otherwise)
            raise SettingError(f"{name}: the tokenizer cannot split words ({type(error).__name__}: {error})") from None

    def mismatch(self, encoder: torch.nn.Module) -> Optional[str]:
        """Why this tokenizer's subwords cannot go through the transformer ``encoder`` (its ids beyond the encoder's
        embeddings, chunks longer than its positions: the tokenizer of another encoder), or None when they can."""
        embeddings = encoder.get_input_embeddings()
        rows = getattr(embeddings, "num_embeddings", None)
        if rows is not None and len(self.tokenizer) > rows:
            return f"its tokenizer has {len(self.tokenizer)} subwords, its encoder embeds {rows}"
        positions = getattr(getattr(encoder, "config", None), "max_position_embeddings", None)
        if isinstance(positions, int) and self.max_length > positions:
            return f"its chunks have up to {self.max_length} subwords, its encoder has {positions} positions"
        return None

    def tokenize_words(self, words: List[str]) -> List[List[int]]:
        """The subword ids of every word (none empty)."""
        encoded = self.tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
        pieces: List[List[int]] = [[] for _ in words]
        for position, word in enumerate(encoded.word_ids()):
            if word is not None:
                pieces[word].append(encoded["input_ids"][position])
        unk = self.tokenizer.unk_token_id
        return [p if p else [unk] for p in pieces]  # a word the tokenizer drops still gets a subword

    def chunk(self, doc: Document, sentence_level: bool = False) -> List[Chunk]:
        """``doc`` cut into chunks (:func:`~eer_plugin.inference.chunking.chunk_document`)."""
        return chunk_document(
            doc,
            self.tokenize_words,
            self.tokenizer.convert_ids_to_tokens,
            self.bookends,
            self.max_length,
            sentence_level=sentence_level,
        )

    def tensorize(self, chunks: Sequence[Chunk], device: torch.device) -> Dict[str, torch.Tensor]:
        """``token_ids`` ``(B, n)`` (padded with :attr:`pad_id`) and ``mask`` ``(B, n)`` of a batch of chunks."""
        width = max(len(chunk.subword_ids) for chunk in chunks)
        ids = torch.full((len(chunks), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(chunks), width), dtype=torch.bool)
        for row, chunk in enumerate(chunks):
            ids[row, : len(chunk.subword_ids)] = torch.tensor(chunk.subword_ids, dtype=torch.long)
            mask[row, : len(chunk.subword_ids)] = True
        return {"token_ids": ids.to(device), "mask": mask.to(device)}
