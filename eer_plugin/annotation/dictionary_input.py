"""The documents that dictionary labelling reads (``eer-dictionary INPUT``; no AllenNLP): JSON lines with raw
``"text"`` or with ``"tokens"`` (partial annotation kept), a folder of ``.txt`` files, or a CoNLL/OntoNotes file
whose tags are ignored. A file that cannot be used is a :class:`DictionaryError` naming the file and line, with
this command's fix (a dictionary given as INPUT, plain text in one file)."""

import dataclasses
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from eer_plugin.annotation.dictionary_files import DictionaryError, json_value, text_lines
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document, DocumentError, unknown_keys_message
from eer_plugin.corpus.formats import FormatError, decode_file, detect_format, is_ontonotes_file, read_documents
from eer_plugin.corpus.formats.files import text_files, uncompressed_name
from eer_plugin.corpus.tokenizer import tokenize_text

#: keys of a raw-text input line
TEXT_JSON_KEYS = ("id", "text")


@dataclasses.dataclass
class InputDocuments:
    """What :func:`read_input` read: the documents, the input's kind, each document's word character offsets
    (None without raw text), the ``file:line`` of each document without words (skipped: nothing to label)
    and warnings about the input."""

    documents: List[Document]
    kind: str
    offsets: List[Optional[List[Tuple[int, int]]]]
    without_words: List[str] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)


def read_text_folder(root: str) -> InputDocuments:
    """:func:`read_input` of a folder: every ``.txt`` file below it
    (:func:`~eer_plugin.corpus.formats.files.text_files`) is one raw-text document whose id is its path below the
    folder, read by :func:`~eer_plugin.corpus.formats.decode_file` (UTF-8, UTF-16/32 by a byte-order mark,
    latin-1 with a warning). Other files are left out with a warning; a folder without a ``.txt`` file is a
    :class:`~eer_plugin.corpus.formats.FormatError`."""
    texts, others = text_files(root)
    warnings = []
    if others:
        warnings.append(
            f"{root}: left out {counted(len(others), 'file')} that {'is' if len(others) == 1 else 'are'} not .txt (e.g. {others[0]})"
        )
    documents, offsets, without_words = [], [], []
    for doc_id, path in texts:
        text = decode_file(path)
        words, word_offsets, ends = tokenize_text(text)
        if not words:
            without_words.append(str(path))
            continue
        document = Document(doc_id, words, ends, text=text)
        document.source = str(path)
        documents.append(document)
        offsets.append(word_offsets)
    if not documents:
        raise DictionaryError(f"no words in any of the {len(texts)} .txt files below this folder", root)
    return InputDocuments(documents, "text folder", offsets, without_words, warnings)


def read_input(path: str) -> InputDocuments:
    """The documents of INPUT (:class:`InputDocuments`); a document without words (empty text or tokens) is
    skipped and listed.

    Kinds: ``text`` (JSON lines with raw text; :attr:`Document.text` set), ``text folder`` (a folder of
    ``.txt`` files, :func:`read_text_folder`), ``tokens`` (JSON lines with words, partial annotation kept) or
    ``conll`` (a CoNLL/OntoNotes file or folder, tags ignored). Every line of a JSON-lines file must be of
    one kind."""
    if not Path(path).exists():
        raise DictionaryError("input file not found; check the path", path)
    if Path(path).is_dir() and not any(p.is_file() and is_ontonotes_file(p) for p in Path(path).rglob("*")):
        return read_text_folder(path)
    if detect_format(path) != "jsonl":
        try:
            gold = read_documents(path)
        except FormatError as err:
            if Path(path).is_dir():
                raise
            if err.looks_like == "dictionary":
                hint = (
                    "; a dictionary of names ('surface form<TAB>TYPE' per line) given as INPUT? Give the documents as "
                    "INPUT and the dictionary with --dictionary FILE"
                )
            else:  # not read_conll's fix ("label raw text first: eer-dictionary ..."): this is the command
                hint = "; the file is plain text, not CoNLL (one word per line)" if err.looks_like == "raw text" else ""
                hint += (
                    "; read as a CoNLL file: for raw text give a folder of .txt files, one document per file, or JSON "
                    'lines with "text"'
                )
            raise DictionaryError(err.problem + hint, err.path, err.line) from None
        return InputDocuments(
            [dataclasses.replace(d, spans=[], is_complete=False, negative_spans=[]) for d in gold],
            "conll",
            [None] * len(gold),
        )
    stem = uncompressed_name(path).stem
    documents: List[Document] = []
    offsets: List[Optional[List[Tuple[int, int]]]] = []
    kinds: Dict[str, int] = {}  # the kinds of line ("text", "tokens") and the first line of each
    first_line: Dict[str, int] = {}
    without_words: List[str] = []
    for number, text in text_lines(path):
        if not text.strip():
            continue
        data = json_value(text, path, number)
        if not isinstance(data, dict):
            raise DictionaryError(
                f'expected a JSON object with "text" or "tokens", got {type(data).__name__}', path, number
            )
        if "text" not in data and "tokens" not in data:
            raise DictionaryError(
                'expected "text" (raw text) or "tokens" (words, e.g. this command\'s own output)', path, number
            )
        if "id" in data and (not isinstance(data["id"], (str, int)) or isinstance(data["id"], bool)):
            raise DictionaryError(f"'id' must be a string or an integer, got {data['id']!r}", path, number)
        doc_id = str(data.get("id", f"{stem}-{number}"))
        try:
            if "tokens" not in data:
                kinds.setdefault("text", number)
                unknown = sorted(set(data) - set(TEXT_JSON_KEYS))
                if unknown:
                    raise DocumentError(unknown_keys_message(unknown, TEXT_JSON_KEYS))
                if not isinstance(data["text"], str):
                    raise DocumentError(f"'text' must be a string, got {type(data['text']).__name__}")
                words, word_offsets, ends = tokenize_text(data["text"])
                if not words:  # an empty document of a real folder: nothing to label, nothing to learn
                    without_words.append(f"{path}:{number}")
                    continue
                document = Document(doc_id, words, ends, text=data["text"])
            else:  # words; with "text" (this command's output) the words' offsets when the text gives these words
                kinds.setdefault("tokens", number)
                if data["tokens"] == []:
                    without_words.append(f"{path}:{number}")
                    continue
                document = Document.from_json(dict(data, id=doc_id))
                word_offsets = None
                if document.text is not None:
                    words, word_offsets, _ = tokenize_text(document.text)
                    word_offsets = word_offsets if words == document.tokens else None
        except DocumentError as err:
            raise DictionaryError(str(err), path, number) from None
        if doc_id in first_line:
            raise DictionaryError(f"document id {doc_id!r} already used on line {first_line[doc_id]}", path, number)
        first_line[doc_id] = number
        document.source = f"{path}:{number}"
        documents.append(document)
        offsets.append(word_offsets)
    if not documents:
        raise DictionaryError(
            'no documents with words; expected one JSON object per line with "text" or "tokens"'
            + (f" ({counted(len(without_words), 'line')} without words)" if without_words else ""),
            path,
        )
    if len(kinds) > 1:
        (first, first_line_number), (other, other_line) = sorted(kinds.items(), key=lambda kind: kind[1])
        raise DictionaryError(
            f'a line with "{other}", after "{first}" on line {first_line_number}: lines with "text" (raw text) and '
            'lines with "tokens" (words) in one file; give one kind per file',
            path,
            other_line,
        )
    return InputDocuments(documents, next(iter(kinds)), offsets, without_words)
