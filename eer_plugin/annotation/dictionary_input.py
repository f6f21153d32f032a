"""The documents that dictionary labelling reads (``eer-ner eer-dictionary INPUT``; no AllenNLP): JSON lines with raw
``"text"`` or with ``"tokens"`` (partial annotation kept), a folder of ``.txt`` files, or a CoNLL/OntoNotes file
whose tags are ignored. Every kind is read one document at a time (memory bounded by the largest document, not the
corpus). A file that cannot be used is a :class:`DictionaryError` naming the file and line,
with this command's fix (a dictionary given as INPUT, plain text in one file)."""

import dataclasses
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from eer_plugin.annotation.dictionary_files import DictionaryError, json_value, text_lines
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document, DocumentError, unknown_keys_message
from eer_plugin.corpus.formats import FormatError, decode_file, detect_format, is_ontonotes_file, iter_documents
from eer_plugin.corpus.formats.files import STREAM_ERRORS, open_text, text_files, uncompressed_name
from eer_plugin.corpus.text import replaced_id_note
from eer_plugin.corpus.tokenizer import tokenize_text

#: keys of a raw-text input line
TEXT_JSON_KEYS = ("id", "text")

#: one document read and its words' character offsets into its text (None without raw text)
Read = Tuple[Document, Optional[List[Tuple[int, int]]]]


@dataclasses.dataclass
class InputDocuments:
    """INPUT of :func:`read_input`. Iterating reads it (again, from the start, at each iteration) one document
    at a time as :data:`Read` pairs, and raises the first bad line's :class:`DictionaryError`, or, at the end,
    the error of an input without words. ``kind`` is known once the first document is read; ``without_words``
    (the ``file:line`` or file of each document without words: skipped, nothing to label) and ``warnings``
    are complete after a whole iteration."""

    path: str
    #: how INPUT is read, decided once by :func:`read_input`: ``text folder``, ``conll`` or ``jsonl``
    form: str
    kind: str = ""
    without_words: List[str] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)

    def __iter__(self) -> Iterator[Read]:
        return self.documents()

    def documents(self, offsets: bool = True) -> Iterator[Read]:
        """The documents read from the start (iterating is ``documents()``). ``offsets=False`` (the annotated
        spans' pass of ``--propagate``) leaves a words document's offsets out, so its text is not tokenized again
        to find them; raw text is tokenized either way (its words are its offsets)."""
        self.without_words, self.warnings = [], []
        if self.form == "jsonl":
            return self._json_lines(offsets)
        return self._text_folder() if self.form == "text folder" else self._conll()

    def documents_at_most(self) -> Optional[int]:
        """An upper bound on the documents (for a progress bar) where one is cheap: a folder's ``.txt`` files, a
        JSON-lines file's lines; None for CoNLL input, or a file that cannot be read (iterating says why)."""
        try:
            if self.form == "text folder":
                return len(text_files(self.path)[0])
            if self.form == "conll":
                return None
            with open_text(self.path, whole_file=False) as handle:
                return sum(1 for _ in handle)
        except (FormatError, UnicodeError, ValueError) + STREAM_ERRORS:
            return None

    def _text_folder(self) -> Iterator[Read]:
        """Every ``.txt`` file below the folder (:func:`~eer_plugin.corpus.formats.files.text_files`) is one
        raw-text document whose id is its path below the folder, read by
        :func:`~eer_plugin.corpus.formats.decode_file` (UTF-8, UTF-16/32 by a byte-order mark, latin-1 with a
        warning). Other files are left out with a warning; a folder without a ``.txt`` file is a
        :class:`~eer_plugin.corpus.formats.FormatError`."""
        root = self.path
        texts, others = text_files(root)
        self.kind = "text folder"
        if others:
            self.warnings.append(
                f"{root}: left out {counted(len(others), 'file')} that {'is' if len(others) == 1 else 'are'} not .txt (e.g. {others[0]})"
            )
        read = 0
        for doc_id, path in texts:
            text = decode_file(path)
            words, word_offsets, ends = tokenize_text(text)
            if not words:
                self.without_words.append(str(path))
                continue
            document = Document(doc_id, words, ends, text=text)
            document.source = str(path)
            read += 1
            yield document, word_offsets
        if not read:
            raise DictionaryError(f"no words in any of the {len(texts)} .txt files below this folder", root)

    def _conll(self) -> Iterator[Read]:
        """A CoNLL/OntoNotes file or folder, its tags ignored, read one document at a time
        (:func:`~eer_plugin.corpus.formats.iter_documents`)."""
        path = self.path
        try:
            for document in iter_documents(path):
                self.kind = "conll"
                yield dataclasses.replace(document, spans=[], is_complete=False, negative_spans=[]), None
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

    def _json_lines(self, offsets: bool) -> Iterator[Read]:
        """JSON lines, every line of one kind: ``text`` (raw text; :attr:`Document.text` set) or ``tokens``
        (words, partial annotation kept)."""
        path = self.path
        stem = uncompressed_name(path).stem
        kind_line: Dict[str, int] = {}  # the kinds of line ("text", "tokens") and the first line of each
        first_line: Dict[str, int] = {}
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
            kind = "text" if "tokens" not in data else "tokens"
            kind_line.setdefault(kind, number)
            if len(kind_line) > 1:
                (first, first_number), _ = sorted(kind_line.items(), key=lambda item: item[1])
                raise DictionaryError(
                    f'a line with "{kind}", after "{first}" on line {first_number}: lines with "text" (raw text) and '
                    'lines with "tokens" (words) in one file; give one kind per file',
                    path,
                    number,
                )
            if "id" in data and (not isinstance(data["id"], (str, int)) or isinstance(data["id"], bool)):
                raise DictionaryError(f"'id' must be a string or an integer, got {data['id']!r}", path, number)
            doc_id = str(data.get("id", f"{stem}-{number}"))
            try:
                read = _json_document(data, doc_id, offsets)
            except DocumentError as err:
                raise DictionaryError(str(err), path, number) from None
            if read is None:  # an empty document of a real folder: nothing to label, nothing to learn
                self.without_words.append(f"{path}:{number}")
                continue
            if doc_id in first_line:
                first, note = first_line[doc_id], replaced_id_note(doc_id)
                raise DictionaryError(f"document id {doc_id!r} already used on line {first}{note}", path, number)
            first_line[doc_id] = number
            self.kind = kind
            read[0].source = f"{path}:{number}"
            yield read
        if not first_line:
            raise DictionaryError(
                'no documents with words; expected one JSON object per line with "text" or "tokens"'
                + (f" ({counted(len(self.without_words), 'line')} without words)" if self.without_words else ""),
                path,
            )


def _json_document(data: dict, doc_id: str, offsets: bool = True) -> Optional[Read]:
    """The document of one JSON line (``"text"`` or ``"tokens"``; ``offsets``: a words document's offsets into its
    text), None without words; bad values raise :class:`DocumentError`."""
    if "tokens" not in data:
        unknown = sorted(set(data) - set(TEXT_JSON_KEYS))
        if unknown:
            raise DocumentError(unknown_keys_message(unknown, TEXT_JSON_KEYS))
        if not isinstance(data["text"], str):
            raise DocumentError(f"'text' must be a string, got {type(data['text']).__name__}")
        words, word_offsets, ends = tokenize_text(data["text"])
        return (Document(doc_id, words, ends, text=data["text"]), word_offsets) if words else None
    if data["tokens"] == []:
        return None
    document = Document.from_json(dict(data, id=doc_id))
    word_offsets = None  # with "text" (this command's output): the words' offsets when the text gives these words
    if offsets and document.text is not None:
        words, word_offsets, _ = tokenize_text(document.text)
        word_offsets = word_offsets if words == document.tokens else None
    return document, word_offsets


def read_input(path: str) -> InputDocuments:
    """INPUT (:class:`InputDocuments`, read when iterated); a document without words (empty text or tokens) is
    skipped and listed.

    Kinds: ``text`` (JSON lines with raw text; :attr:`Document.text` set), ``text folder`` (a folder of
    ``.txt`` files), ``tokens`` (JSON lines with words, partial annotation kept) or ``conll`` (a
    CoNLL/OntoNotes file or folder, tags ignored). Every line of a JSON-lines file must be of one kind. A path
    that does not exist, or a file of another program, is an error here."""
    if not Path(path).exists():
        raise DictionaryError("input file not found; check the path", path)
    if Path(path).is_dir() and not any(p.is_file() and is_ontonotes_file(p) for p in Path(path).rglob("*")):
        return InputDocuments(path, "text folder")
    return InputDocuments(path, "jsonl" if detect_format(path) == "jsonl" else "conll")
