"""Decoding a corpus file into text and lines: the file encoding given or detected (UTF-8, a byte-order
mark's UTF-16/32, latin-1 for a column file that is not valid UTF-8), control characters replaced, and the line
breaks of column files and of JSON lines. The bytes come from
:func:`~eer_plugin.corpus.formats.files.input_blocks`, a block at a time: :func:`decoding_of` reads the file once
to decide the codec (an undecodable byte is an error, or the latin-1 fallback, before any line is read), then
:func:`read_lines` decodes it again line by line, so memory does not grow with the file; :func:`decode_file`
is the whole text, for the readers of one document per file."""

import codecs
import dataclasses
import logging
import re
import sys
from typing import Iterable, Iterator, List, Optional, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.formats.files import (
    AUTO_FILE_ENCODING,
    FILE_ENCODINGS,
    SNIFF_BYTES,
    FormatError,
    PathLike,
    compression,
    input_blocks,
    is_file_encoding,
    marked_codec,
    text_codec,
)
from eer_plugin.corpus.text import BAD_CHARACTERS, normalise

logger = logging.getLogger(__name__)

#: line breaks of column files: LF, CRLF, CR alone (old Mac files) and the Unicode line/paragraph separators
LINE_BREAKS = re.compile("\r\n|\r|\n|\u2028|\u2029")
#: line breaks of JSON lines files (U+2028 may stand unescaped inside a JSON string, a raw CR may not)
_JSONLINE_BREAKS = re.compile("\r\n|\r|\n")
_BYTE_LINE_BREAKS = re.compile(rb"\r\n|\r|\n")


@dataclasses.dataclass
class Decoding:
    """How a file is decoded, as :func:`decoding_of` decided it: the codec and why (``("utf-8", "auto: valid
    UTF-8")``), and whether its text starts with a byte-order mark (dropped)."""

    codec: str
    why: str
    marked: bool = False


class _Undecodable(Exception):
    """A byte that ``codec`` cannot decode: its offset in the (decompressed) file and its value."""

    def __init__(self, offset: int, value: int) -> None:
        self.offset, self.value = offset, value


def _decoded_blocks(path: PathLike, codec: str, errors: str = "strict") -> Iterator[str]:
    """The text of ``path`` decoded with ``codec``, a block at a time (a character cut by a block's end comes
    with the next block); with ``errors="strict"`` the first byte that ``codec`` cannot decode raises
    :class:`_Undecodable`."""
    decoder = codecs.getincrementaldecoder(_unmarked_codec(path, codec))(errors)
    read = 0  # the bytes given to the decoder so far
    for block in _with_end(input_blocks(path)):
        pending = _pending_bytes(decoder)
        try:
            text = decoder.decode(block, final=block == b"")
        except UnicodeDecodeError as err:  # err.object: the bytes held back from the block before, then this one
            raise _Undecodable(read - pending + err.start, err.object[err.start]) from None
        read += len(block)
        yield text


def _unmarked_codec(path: PathLike, codec: str) -> str:
    """``codec``, or for UTF-16/32 text without a byte-order mark its twin of the machine's byte order: what
    ``bytes.decode`` reads such text as (the incremental decoder of ``utf-16`` refuses it)."""
    name = codecs.lookup(codec).name
    marks = {"utf-16": (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE), "utf-32": (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)}
    if name not in marks or _first_block(path).startswith(marks[name]):
        return codec
    return f"{name}-{'le' if sys.byteorder == 'little' else 'be'}"


def _with_end(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """``blocks`` and then an empty block, which ends the decoding (a character cut short is an error there)."""
    yield from blocks
    yield b""


def _pending_bytes(decoder: codecs.IncrementalDecoder) -> int:
    """How many bytes ``decoder`` holds back (the start of a character cut by a block's end)."""
    try:
        return len(decoder.getstate()[0])
    except (AttributeError, TypeError, ValueError):  # pragma: no cover - a codec without that state
        return 0


def _scan(path: PathLike, codec: str, kept: Optional[List[str]]) -> Tuple[int, bool]:
    """``(control characters to replace, whether the text starts with a byte-order mark)`` of ``path`` decoded
    with ``codec``, read once; an undecodable byte raises :class:`_Undecodable`. ``kept``: a list that gets the
    decoded blocks (the whole text, for the readers of one document per file), or None."""
    replaced, first = 0, None
    for text in _decoded_blocks(path, codec):
        if first is None and text:
            first = text[0]
        replaced += sum(1 for _ in BAD_CHARACTERS.finditer(text))
        if kept is not None:
            kept.append(text)
    return replaced, first == "\ufeff"


def _place_of_byte(path: PathLike, offset: int) -> Tuple[int, int]:
    """(1-based line number, byte offset within that line) of a byte offset of the (decompressed) file, lines
    split at LF/CR."""
    line, line_start, read, cr_before = 1, 0, 0, False
    for block in input_blocks(path):
        head = block[: offset - read]
        line += len(_BYTE_LINE_BREAKS.findall(head)) - (cr_before and head[:1] == b"\n")
        last = max(head.rfind(b"\n"), head.rfind(b"\r"))
        if last >= 0:
            line_start = read + last + 1
        cr_before = head[-1:] == b"\r"
        read += len(block)
        if read >= offset:
            break
    return line, offset - line_start


def _is_utf8_beyond_ascii(path: PathLike) -> bool:
    """Whether ``path`` is valid UTF-8 holding a byte beyond ASCII (text that a codec that is not a Unicode one
    would misread)."""
    beyond_ascii = False
    try:
        for text in _decoded_blocks(path, "utf-8"):
            beyond_ascii = beyond_ascii or not text.isascii()
    except _Undecodable:
        return False
    return beyond_ascii


def codec_of(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> str:
    """The codec that reads ``path``: the given ``file_encoding``, or for ``auto`` the one its first bytes name
    (:func:`~eer_plugin.corpus.formats.files.text_codec`); an unknown codec is a :class:`FormatError`."""
    if not is_file_encoding(file_encoding):
        raise FormatError(f"unknown file encoding {file_encoding!r}; expected {FILE_ENCODINGS}", path)
    return text_codec(_first_block(path), path) if file_encoding == AUTO_FILE_ENCODING else file_encoding


def _first_block(path: PathLike) -> bytes:
    """The file's first :data:`~eer_plugin.corpus.formats.files.SNIFF_BYTES` (or all of a shorter file): what names
    its codec."""
    head = b""
    for block in input_blocks(path):
        head += block
        if len(head) >= SNIFF_BYTES:
            break
    return head


def decoding_of(
    path: PathLike,
    file_encoding: str = AUTO_FILE_ENCODING,
    fallback: bool = True,
    json: bool = False,
    kept: Optional[List[str]] = None,
) -> Decoding:
    """How :func:`decode_file` decodes ``path`` (its rules there), decided by reading the file once, a block at a
    time: an undecodable byte is a :class:`FormatError` naming its line (or, with the fallback, the latin-1
    reading, with a warning), and the control characters to replace are counted (a warning), before any line is
    read. ``kept``: a list that gets the decoded text's blocks as they were read (:func:`decode_file_as`)."""
    fallback = fallback and not json
    kind = compression(path)
    if kind:
        logger.info("%s: %s-compressed (recognised by its first bytes), decompressed", path, kind)
    codec = codec_of(path, file_encoding)
    overridden = None  # the encoding given for a JSON file that is read as UTF-8 instead
    if file_encoding != AUTO_FILE_ENCODING and _reads_utf8_wrongly(path, codec):
        if json:
            logger.info(
                "%s: read as UTF-8, not as the given %s: the file is valid UTF-8, and JSON text is UTF-8 "
                "(the given encoding applies to the files that are not)",
                path,
                file_encoding,
            )
            overridden, codec = file_encoding, "utf-8"
        else:
            logger.warning(
                "%s is valid UTF-8 but is read as the given %s, so its non-ASCII characters become others "
                "('é' reads as 'Ã©'); if the file is UTF-8, leave the file encoding at auto",
                path,
                file_encoding,
            )
    try:
        replaced, marked = _scan(path, codec, kept)
    except _Undecodable as err:
        line, column = _place_of_byte(path, err.offset)
        if file_encoding == AUTO_FILE_ENCODING and fallback and codec == "utf-8":
            _refuse_mixed_utf8(path, err, line, column)
            logger.warning(
                "%s is not valid UTF-8 (byte 0x%02x on line %d); reading it as latin-1 "
                "(set file_encoding / --file-encoding to choose another encoding)",
                path,
                err.value,
                line,
            )
            if kept is not None:
                kept.clear()
            replaced, _ = _scan(path, "latin-1", kept)
            _log_replaced(replaced, path)
            return Decoding("latin-1", f"auto: not valid UTF-8 (byte 0x{err.value:02x} on line {line})")
        raise _undecodable_error(err, line, column, codec, file_encoding, fallback, path) from None
    if overridden:
        why = f"valid UTF-8 JSON, not the given {overridden}"
    elif file_encoding != AUTO_FILE_ENCODING:
        why = "given"
    elif codec != "utf-8":
        why = f"auto: {codec.upper()} (byte-order mark)"
        logger.info("%s: %s text (by its byte-order mark)", path, codec.upper())
    else:
        why = "auto: valid UTF-8"
    _log_replaced(replaced, path)
    return Decoding(codec, why + " (byte-order mark dropped)" if marked else why, marked)


def _refuse_mixed_utf8(path: PathLike, err: _Undecodable, line: int, column: int) -> None:
    """A :class:`FormatError` if ``path``, not valid UTF-8 (``err`` at ``line``), still holds valid UTF-8 characters
    beyond ASCII, at least one for every 20 bytes that are not (fewer: pairs that latin-1 text makes by chance, as
    ``Ó`` before a no-break space): a file of mixed encodings, which the latin-1 fallback would read garbling every
    UTF-8 character (``é`` as ``Ã©``) with no error."""
    valid = invalid = read = 0
    first = None  # (byte offset, character) of the first valid UTF-8 character beyond ASCII
    for text in _decoded_blocks(path, "utf-8", errors="surrogateescape"):
        wide = [c for c in text if c > "\x7f"]
        bad = sum(1 for c in wide if "\udc80" <= c <= "\udcff")
        valid, invalid = valid + len(wide) - bad, invalid + bad
        if first is None and len(wide) > bad:
            index = next(i for i, c in enumerate(text) if c > "\x7f" and not "\udc80" <= c <= "\udcff")
            first = (read + len(text[:index].encode("utf-8", "surrogateescape")), text[index])
        read += len(text.encode("utf-8", "surrogateescape"))
    if first is None or valid * 20 < invalid:
        return
    raise FormatError(
        f"byte 0x{err.value:02x} (byte {column} of the line) is not UTF-8, but the file holds "
        f"{counted(valid, 'UTF-8 character')} beyond ASCII (the first, {first[1]!r}, on line "
        f"{_place_of_byte(path, first[0])[0]}): a file of mixed encodings, which no one encoding reads (as latin-1 "
        f"every UTF-8 character would become others, 'é' as 'Ã©'); save line {line} as UTF-8, or set file_encoding / "
        "--file-encoding latin-1 to read it all as latin-1",
        path,
        line,
    )


def _undecodable_error(
    err: _Undecodable, line: int, column: int, codec: str, file_encoding: str, fallback: bool, path: PathLike
) -> FormatError:
    """The :class:`FormatError` of a byte that ``codec`` cannot decode, with the fix."""
    name = {"utf-8": "UTF-8", "utf-16": "UTF-16", "utf-32": "UTF-32"}.get(codecs.lookup(codec).name, codec)
    marked = marked_codec(_first_block(path))
    if marked and codecs.lookup(codec).name != marked:
        hint = f" (the file starts with a {marked.upper()} byte-order mark: leave --file-encoding at auto, or give {marked})"
    elif file_encoding == AUTO_FILE_ENCODING and (fallback or codec != "utf-8"):
        hint = ""
    else:
        hint = " (set file_encoding / --file-encoding, e.g. latin-1)"
    return FormatError(
        f"invalid {name} byte 0x{err.value:02x} at byte {column} of the line "
        f"(byte {err.offset} of the file); expected {name} text{hint}",
        path,
        line,
    )


def _reads_utf8_wrongly(path: PathLike, codec: str) -> bool:
    """Whether ``codec`` (not a Unicode codec) would misread ``path``, valid UTF-8 with non-ASCII bytes."""
    return not codecs.lookup(codec).name.startswith("utf") and _is_utf8_beyond_ascii(path)


def _log_replaced(replaced: int, path: PathLike) -> None:
    if replaced:
        logger.warning("%s: %s replaced by U+FFFD", path, counted(replaced, "control character"))


def text_blocks(path: PathLike, decoding: Decoding, decoded: Optional[Iterable[str]] = None) -> Iterator[str]:
    """The text of ``path`` as ``decoding`` reads it, a block at a time: control characters replaced
    (:mod:`eer_plugin.corpus.text`), a leading byte-order mark dropped. ``decoded``: its blocks as
    :func:`decoding_of` kept them (None: the file is decoded again)."""
    mark = decoding.marked
    for text in _decoded_blocks(path, decoding.codec) if decoded is None else decoded:
        if mark and text:
            text, mark = text[1:], False
        yield normalise(text)


def decode_file(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, fallback: bool = True, json: bool = False
) -> str:
    """The text of ``path`` decoded with ``file_encoding`` (any Python codec name, e.g. ``latin-1``).

    ``auto`` reads UTF-8 (a leading byte-order mark is dropped), or UTF-16/UTF-32 where a byte-order mark says
    so; UTF-16 without a mark is an error (:func:`text_codec`); when the bytes are not valid UTF-8
    and ``fallback`` is true, the file is read as latin-1 (ISO-8859-1, the encoding of the CoNLL-2002
    Spanish/Dutch distribution) and a warning says so. Without the fallback, or with an explicit
    encoding, an undecodable byte raises :class:`FormatError` naming its line and offset. Control
    characters that are not white space become U+FFFD (:mod:`eer_plugin.corpus.text`).

    A ``json`` file gets no latin-1 fallback (JSON text is UTF-8). A given encoding that is not a Unicode one meets
    a file that is valid UTF-8 with non-ASCII bytes (``é`` would read as ``Ã©``): a ``json`` file is read as UTF-8
    all the same (JSON text is UTF-8, and one setting
    often names the encoding of a run's CoNLL files and of the JSON lines written from them), any other file
    as given, with a warning.
    """
    return decode_file_as(path, file_encoding, fallback, json)[0]


def decode_file_as(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, fallback: bool = True, json: bool = False
) -> Tuple[str, str, str]:
    """``(text, codec used, why)`` of :func:`decode_file`: ``("...", "utf-8", "auto: valid UTF-8")``,
    ``("...", "latin-1", "auto: not valid UTF-8 (byte 0xe9 on line 3)")``, ``(..., codec, "given")`` or
    ``(..., "utf-8", "valid UTF-8 JSON, not the given latin-1")``."""
    decoded: List[str] = []
    decoding = decoding_of(path, file_encoding, fallback, json, decoded)
    return "".join(text_blocks(path, decoding, decoded)), decoding.codec, decoding.why


def split_lines(blocks: Iterable[str], breaks: "re.Pattern[str]" = LINE_BREAKS) -> Iterator[str]:
    """The lines of the text that ``blocks`` make, without their line breaks (``breaks``), as ``breaks.split`` of
    the whole text gives them but for a last empty one (the text's final line break); a CR at a block's end waits
    for the next block, which may start with its LF. Memory holds a block and the line that runs past it."""
    held: List[str] = []  # the text after the last line break so far
    for text in blocks:
        if breaks.search(text, 0, len(text) - text.endswith("\r")) is None:
            held.append(text)
            continue
        text = "".join(held) + text
        start = 0
        for found in breaks.finditer(text, 0, len(text) - text.endswith("\r")):
            yield text[start : found.start()]
            start = found.end()
        held = [text[start:]]
    pieces = breaks.split("".join(held))
    if pieces[-1] == "":
        pieces.pop()
    yield from pieces


def read_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False
) -> Iterator[Tuple[int, str]]:
    """Yields ``(line number, text without the line break)`` of the decoded file (see :func:`decode_file`; JSON
    lines files are UTF-8, or UTF-16/32 by a byte-order mark, and get no latin-1 fallback; a given
    ``file_encoding`` applies to one that is not valid UTF-8), one line at a time. Lines end at LF, CRLF, a lone
    CR, and in column files also at U+2028 / U+2029."""
    yield from decoded_lines(path, file_encoding, json_lines)[0]


@dataclasses.dataclass
class DecodedLines:
    """The lines of a file as :func:`read_lines` gives them, read from the file's start each time they are
    iterated (a reader's second pass decodes the file again, as :func:`decoding_of` decided once)."""

    path: PathLike
    decoding: Decoding
    breaks: "re.Pattern[str]" = LINE_BREAKS

    def __iter__(self) -> Iterator[Tuple[int, str]]:
        return enumerate(split_lines(text_blocks(self.path, self.decoding), self.breaks), start=1)


def decoded_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False
) -> Tuple[DecodedLines, Tuple[str, str]]:
    """The lines of :func:`read_lines`, read as they are iterated (:class:`DecodedLines`), and ``(codec used,
    why)``, decided first (:func:`decoding_of`: an undecodable byte raises here)."""
    decoding = decoding_of(path, file_encoding, json=json_lines)
    lines = DecodedLines(path, decoding, _JSONLINE_BREAKS if json_lines else LINE_BREAKS)
    return lines, (decoding.codec, decoding.why)


def text_start(path: PathLike, codec: str, length: int) -> str:
    """The first ``length`` characters of ``path``'s first line that is not blank, from its first character that
    is no white space (byte-order marks at the text's start dropped first), decoded with ``codec`` and undecodable
    bytes replaced (a sniff: the reader reports them); read only as far as they go."""
    start = ""
    at_mark = True  # still at the text's start, where byte-order marks are dropped
    for text in _decoded_blocks(path, codec, errors="replace"):
        if at_mark:
            text = text.lstrip("\ufeff")
            at_mark = not text
        start = (start + text).lstrip()
        if len(start) >= length:
            break
    return start[:length]
