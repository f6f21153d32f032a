"""The lines of a CoNLL column file (:mod:`eer_plugin.corpus.formats.conll`): its sentences, ``-DOCSTART-`` lines
and the two comment lines of ``eer-ner predict``'s CoNLL output (a document's ``# id = ...``, an error record) in
file order, each token line checked (the same number of columns as the first, a tag in the tag column), and what a
first line that is no CoNLL line seems to be (a dictionary of names, plain text), with the fix.

A document's id travels on a comment line after its ``-DOCSTART-`` line and before its first token (blank lines
may come between), as ``eer-ner predict`` writes each document::

    -DOCSTART- O
    # id = report-17

    Angela B-PER

The id stands as it is, or as a JSON string where it would not read back as it is (:func:`id_comment`); the
writer's rule and the reader's (:func:`comment_id`) are both here. Only there is ``# id =`` a comment. The writer
of a whole document (:func:`document_lines`) and of an error record (:func:`error_record`) is here too, with what
a column file cannot hold (:func:`token_problem`: a token ``-DOCSTART-``, which every reader takes for the start of
a document; CoNLL has no escape): ``eer-ner predict`` makes such a document an error record."""

import re
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from eer_plugin.core.tags import TAG_PREFIXES, Span, spans_to_tags
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import RAW_TEXT_FIX
from eer_plugin.corpus.formats.files import FormatError, PathLike

DOCSTART = "-DOCSTART-"
#: the line that opens each document of ``eer-ner predict``'s CoNLL output: ``-DOCSTART-`` and the tag ``O``, in
#: the two columns of its token lines (CoNLL-2003 writes ``-DOCSTART- -X- -X- O`` in its four)
DOCSTART_LINE = f"{DOCSTART} O"
#: what starts the comment line that names a document's id (``# id = d1``)
ID_COMMENT = "# id ="
_ID_LINE = re.compile(r"[ \t]*# id =(.*)")
#: an error record of ``eer-ner predict``'s CoNLL output: an input line it could not tag (no document: skipped)
ERROR_RECORD = re.compile(r"[ \t]*# error: line (?:\d+|None), id ")
#: every line break of any reader (``str.splitlines``'s), escaped in an error record's reason
_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def token_problem(tokens: Sequence[str]) -> str:
    """Why token lines cannot hold ``tokens`` so that a reader gives them back ("" when they can): a token
    ``-DOCSTART-`` (every reader, eer-ner's too, starts a document at a line whose first column is it, and a
    column file has no escape), an empty one or one holding white space (no column, or several)."""
    for index, token in enumerate(tokens):
        if token == DOCSTART:
            return (
                f'"tokens"[{index}] is {DOCSTART!r}, which CoNLL output cannot hold (a reader starts a new document '
                'there): tag this line with JSON output ("output_format": "json"), or give the token another spelling'
            )
        if not token or token != "".join(token.split()):
            return f'"tokens"[{index}] is {token!r}: a CoNLL token is one column, non-empty, without white space'
    return ""


def document_lines(
    doc_id: object,
    tokens: Sequence[str],
    sentence_ends: Sequence[int],
    spans: Iterable[Span],
    tag_scheme: str,
    types: Optional[Dict[str, str]] = None,
) -> str:
    """``eer-ner predict``'s CoNLL output of one document: :data:`DOCSTART_LINE`, its id's line
    (:func:`id_comment`) unless ``doc_id`` is None or "", a blank line, then ``word tag`` lines in ``tag_scheme``
    with a blank line after each sentence; a span across a sentence end is one entity in each sentence, so every
    sentence reads back in its scheme. ``types``: how a type is written (one word). :class:`ValueError` when
    :func:`token_problem` finds a token that would not read back."""
    problem = token_problem(tokens)
    if problem:
        raise ValueError(problem)
    lines = [DOCSTART_LINE] + ([id_comment(str(doc_id))] if doc_id not in (None, "") else []) + [""]
    spans, types, start = list(spans), types or {}, 0
    for end in sentence_ends:  # each sentence's tags from the spans cut at its ends
        inside = [
            (max(b, start) - start, min(e, end) - start, types.get(t, t)) for b, e, t in spans if b < end and e > start
        ]
        tags = spans_to_tags(inside, end - start, tag_scheme)
        lines.extend(f"{w} {t}" for w, t in zip(tokens[start:end], tags))
        lines.append("")
        start = end
    return "\n".join(lines) + "\n"


def error_record(line: Optional[int], doc_id: object, reason: str) -> str:
    """The error record of an input line ``eer-ner predict`` could not tag (:data:`ERROR_RECORD`), one comment line
    and a blank line: the id as Python writes it (``repr``), a line break in ``reason`` escaped (``\\u2028``)."""
    return f"# error: line {line}, id {doc_id!r}: {reason.translate(_LINE_BREAKS)}\n\n"


def id_comment(doc_id: str) -> str:
    """The comment line (without its line end) that names the document ``doc_id``: ``# id = d1``, the id as it is,
    or as a JSON string (``# id = " d1"``) where it would not read back as it is: empty, with white space at its
    ends, holding a line break of any reader (``str.splitlines``'s), or starting with ``"``."""
    text = str(doc_id)
    if text and text == text.strip() and not text.startswith('"') and len(text.splitlines()) == 1:
        return f"{ID_COMMENT} {text}"
    return f"{ID_COMMENT} " + strict_json.dumps(text)


def comment_id(value: str, path: PathLike, line: int) -> str:
    """The id that a ``# id =`` line names (``value``: the rest of the line), read as :func:`id_comment` writes
    it; nothing, or a ``"`` that starts no JSON string, is a :class:`FormatError` naming the line."""
    value = value.strip()
    if not value:
        raise FormatError("'# id =' names no id: write the document's id after it, or delete the line", path, line)
    if not value.startswith('"'):
        return value
    try:
        parsed = strict_json.loads(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, str):
        raise FormatError(
            f"'# id =' gives {value[:60]}, no JSON string: an id in double quotes is one, as eer-ner predict writes an "
            "id with white space at its ends or a line break; fix its quotes, or write the id without them",
            path,
            line,
        )
    return parsed


class Sentence:
    """Tokens, tags and source line numbers of one sentence of a column file."""

    __slots__ = ("tokens", "tags", "lines")

    def __init__(self) -> None:
        self.tokens: List[str] = []
        self.tags: List[str] = []
        self.lines: List[int] = []


class IdComment:
    """A ``# id = ...`` line after a ``-DOCSTART-`` line: the id of the document that line opens."""

    __slots__ = ("line", "value")

    def __init__(self, line: int, value: str) -> None:
        self.line, self.value = line, value


class ErrorRecord:
    """An error record of ``eer-ner predict``'s CoNLL output (:data:`ERROR_RECORD`): an input line it could not tag."""

    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        self.line = line


#: what :func:`column_parts` yields: a ``-DOCSTART-`` line (its number), a sentence, an id, an error record
Part = Union[int, Sentence, IdComment, ErrorRecord]


_TAG_PATTERN = re.compile(rf"^(O|[{TAG_PREFIXES}]-\S+)$")
#: what a tag names in an error: the forms the schemes write (IOB1, BIO, BIOUL, BIOES)
TAG_FORMS = "'O' or B-/I-/L-/U-/S-/E-TYPE"
#: a first token line of at least this many columns whose last is no tag reads as a line of plain text
PROSE_WORDS = 5
#: ... as does a shorter one whose "tag" is a word that ends a sentence ("Angela Merkel visited Paris.")
_SENTENCE_END = re.compile(r"\w[.!?]$")


#: a first line ``surface form<TAB>TYPE`` (or ``,``/``;``: a spreadsheet's CSV): a dictionary of names, not CoNLL.
#: The form: cells' text with a character that is no white space (the first one found where it is, never guessed at
#: each place: a long line without a separator took quadratic time) or with one ``,``/``;`` in it
_DICTIONARY_ENTRY = re.compile(r"(?:[^\S\t]*[^\s,;][^\t,;]*|[^\t,;]*[,;][^\t,;]*)[\t,;][ \t]*[\w-]+[ \t]*")
DICTIONARY_FIX = (
    "if the file is a dictionary of names ('surface form<TAB>TYPE' per line), it labels documents, it is no "
    "training data: `eer-ner eer-dictionary DOCUMENTS labelled.jsonl --dictionary FILE`"
)


def _looks_like(text: str, fields: List[str], prose: str, tag: Optional[str] = None) -> Tuple[Optional[str], str]:
    """What a file's first token line that is no CoNLL line seems to be (a :data:`LOOKS_LIKE` kind, or None), and
    what was seen (``prose`` for plain text): a dictionary entry, a line of plain text (a tag column that ends a
    sentence or a line of :data:`PROSE_WORDS` words or more; with no ``tag``: a line that ends a sentence)."""
    if _DICTIONARY_ENTRY.fullmatch(text.strip("\r\n")):
        return "dictionary", ""
    if tag is None and _SENTENCE_END.search(text):
        return "raw text", prose
    if tag is not None and (len(fields) >= PROSE_WORDS or _SENTENCE_END.search(tag)):
        return "raw text", prose
    return None, ""


def _hint(looks_like: Optional[str], seen: str) -> str:
    """The fix that ``read_conll`` gives for what a file looks like (training data expected)."""
    if looks_like == "dictionary":
        return f"; {DICTIONARY_FIX}"
    return f"; {seen}. {RAW_TEXT_FIX}" if looks_like == "raw text" else ""


def _space_hint(text: str) -> str:
    """The fix when a line's columns were cut at a white-space character other than a space or a tab (a no-break
    space in a token, U+0085 from a Windows-1252 ellipsis read as latin-1, an ideographic space), which Python
    splits at as at a space: "" when the line has none."""
    for position, char in enumerate(text):
        if char.isspace() and char not in " \t\r\n":
            return (
                f"; character {position + 1} is U+{ord(char):04X}, white space that separates columns as a space "
                "does (a token holds none): replace it in the file"
            )
    return ""


_JOINED = re.compile(rf"[{TAG_PREFIXES}M][_:.=]\S")  # M: BMES's middle
_LOWER_PREFIX = re.compile(rf"[{TAG_PREFIXES.lower()}m]-\S")
_TYPE_FIRST = re.compile(rf"\S+[-_][{TAG_PREFIXES}]")
_BARE_TYPE = re.compile(r"[A-Za-z][\w.]*")


def _tag_hint(tag: str, fields: List[str], tag_column: int, first_line: bool) -> str:
    """The fix for a tag column value that no scheme reads: on the file's first token line (later, the lines
    before held tags in that column), another column of the line that holds a tag; and the tag written in
    another shape (the prefix joined with ``_``, lower case, after the type; BMES's ``M-``; a bare type, IO
    tagging; the digit 0 for ``O``); "" when neither is recognised."""
    chosen = tag_column % len(fields)
    others = [j for j, f in enumerate(fields) if first_line and j not in (0, chosen) and _TAG_PATTERN.match(f)]
    fixes = []
    if others:
        fixes.append(f"if column {others[-1] + 1} holds the tags, read it with tag_column / --tag-column {others[-1]}")
    if len(tag) == 2 and tag[0] in TAG_PREFIXES and tag[1] == "-":
        fixes.append(f"{tag} names no entity type after its prefix")
    elif tag == "0":
        fixes.append("that is the digit zero: outside tags are the letter O")
    elif tag.startswith("M-"):
        fixes.append("M- is BMES's middle tag, I- in BIOES: replace M- with I- and the file reads as BIOES")
    elif _JOINED.fullmatch(tag[:3]):
        fixes.append(f"the prefix is joined to the type by {tag[1]!r}: write {tag[0]}-{tag[2:]} in the file")
    elif _LOWER_PREFIX.fullmatch(tag[:3]):
        fixes.append(f"the prefix is lower case: write {tag[0].upper()}-{tag[2:]} in the file")
    elif _TYPE_FIRST.fullmatch(tag):
        fixes.append(f"the prefix follows the type: write {tag[-1]}-{tag[:-2]} in the file")
    elif _BARE_TYPE.fullmatch(tag):
        fixes.append(
            "a type without a prefix (IO tagging, 'PER PER O') reads as IOB1 once each such tag is written "
            f"I-TYPE (I-{tag}): one entity per run of a type"
        )
    return "".join(f"; {'or ' if i else ''}{fix}" for i, fix in enumerate(fixes))


def _column_name(column: int, count: int) -> str:
    """``--tag-column`` as a reader counts: ``column 4 of 4 (the last)``."""
    number = column + 1 if column >= 0 else count + column + 1
    return f"column {number} of {count}" + (" (the last)" if number == count else "")


def column_parts(lines: Iterable[Tuple[int, str]], path: PathLike, tag_column: int) -> Iterator[Part]:
    """The ``-DOCSTART-`` lines (their numbers), the sentences, the ``# id =`` lines after a ``-DOCSTART-`` line
    (:class:`IdComment`) and ``eer-ner predict``'s error records (:class:`ErrorRecord`) of a column file, in file
    order, checking columns and tag shapes. A ``# id =`` line elsewhere, which no token line it could be, is an
    error saying where it belongs, as is a second one for a document."""
    sentence: Optional[Sentence] = None
    columns: Optional[Tuple[int, int]] = None  # (column count, line that set it)
    header: Optional[int] = None  # the -DOCSTART- line while its document has no token yet
    named: Optional[int] = None  # ... and the line of its id
    for number, text in lines:
        fields = text.split()
        record = bool(fields) and fields[0] == "#" and ERROR_RECORD.match(text) is not None
        if not fields or fields[0] == DOCSTART or record:
            if sentence is not None:
                yield sentence
            sentence = None
            if record:
                yield ErrorRecord(number)
            elif fields:
                header, named = number, None
                yield number
            continue
        found = _ID_LINE.match(text) if fields[0] == "#" else None
        if found and not (header is None and _token_line(fields, columns, tag_column)):
            if header is None or named is not None:
                raise FormatError(
                    f"a second '# id =' line for the document of line {header} (the first is line {named})"
                    if header is not None
                    else f"'# id =' names the document that a {DOCSTART} line opens: put it after that line, before "
                    "the document's first token",
                    path,
                    number,
                )
            named = number
            yield IdComment(number, comment_id(found.group(1), path, number))
            continue
        header = None
        if columns is None:
            columns = _first_columns(text, fields, tag_column, path, number)
        elif len(fields) != columns[0]:
            raise FormatError(
                f"expected {columns[0]} columns (as on line {columns[1]}), got {len(fields)}: {text!r}",
                path,
                number,
                hint=_space_hint(text),
            )
        tag = fields[tag_column]
        if not _TAG_PATTERN.match(tag):
            seen = f"a line of {len(fields)} words is plain text, not CoNLL (one word per line)"
            looks_like, seen = _looks_like(text, fields, seen, tag) if number == columns[1] else (None, "")
            raise FormatError(
                f"expected a tag {TAG_FORMS} in {_column_name(tag_column, len(fields))}, got {tag!r}",
                path,
                number,
                hint=_hint(looks_like, seen) or _tag_hint(tag, fields, tag_column, number == columns[1]),
                looks_like=looks_like,
            )
        if sentence is None:
            sentence = Sentence()
        sentence.tokens.append(fields[0])
        sentence.tags.append(tag)
        sentence.lines.append(number)
    if sentence is not None:
        yield sentence


def _token_line(fields: List[str], columns: Optional[Tuple[int, int]], tag_column: int) -> bool:
    """Whether ``fields`` make a token line of a file whose token lines have ``columns`` (None: none read yet)."""
    return (
        columns is not None
        and len(fields) == columns[0]
        and -len(fields) <= tag_column < len(fields)
        and _TAG_PATTERN.match(fields[tag_column]) is not None
    )


def _first_columns(text: str, fields: List[str], tag_column: int, path: PathLike, number: int) -> Tuple[int, int]:
    """``(column count, line)`` of the first token line, which sets the columns of every other."""
    if len(fields) < 2:
        looks_like, seen = _looks_like(text, fields, "a sentence is plain text, not CoNLL")
        raise FormatError(
            f"expected at least 2 columns (token and tag), got {len(fields)}: {text!r}",
            path,
            number,
            hint=_hint(looks_like, seen),
            looks_like=looks_like,
        )
    if not -len(fields) <= tag_column < len(fields):
        raise FormatError(f"tag column {tag_column} does not exist in a line of {len(fields)} columns", path, number)
    return len(fields), number
