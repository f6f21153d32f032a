"""Decoding a whole corpus file into text and lines: the file encoding given or detected (UTF-8, a byte-order
mark's UTF-16/32, latin-1 for a column file that is not valid UTF-8), control characters replaced, and the line
breaks of column files and of JSON lines. The bytes come from
:func:`~eer_plugin.corpus.formats.files.read_input_bytes`."""

import codecs
import logging
import re
from typing import Iterator, List, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.formats.files import (
    AUTO_FILE_ENCODING,
    FormatError,
    PathLike,
    marked_codec,
    read_input_bytes,
    text_codec,
)
from eer_plugin.corpus.text import normalise_text

logger = logging.getLogger(__name__)

#: line breaks of column files: LF, CRLF, CR alone (old Mac files) and the Unicode line/paragraph separators
LINE_BREAKS = re.compile("\r\n|\r|\n|\u2028|\u2029")
#: line breaks of JSON lines files (U+2028 may stand unescaped inside a JSON string, a raw CR may not)
_JSONLINE_BREAKS = re.compile("\r\n|\r|\n")


def _line_of_byte(data: bytes, offset: int) -> Tuple[int, int]:
    """(1-based line number, byte offset within that line) of a byte offset, lines split at LF/CR."""
    line_start = max(data.rfind(b"\n", 0, offset), data.rfind(b"\r", 0, offset)) + 1
    line = 1 + len(re.findall(rb"\r\n|\r|\n", data[:line_start]))
    return line, offset - line_start


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
    fallback = fallback and not json
    data = read_input_bytes(path)
    codec = text_codec(data, path) if file_encoding == AUTO_FILE_ENCODING else file_encoding
    try:
        codecs.lookup(codec)
    except LookupError:
        raise FormatError(
            f"unknown file encoding {file_encoding!r}; expected 'auto' or a codec name such as utf-8 or latin-1", path
        ) from None
    overridden = None  # the encoding given for a JSON file that is read as UTF-8 instead
    if file_encoding != AUTO_FILE_ENCODING and _reads_utf8_wrongly(data, codec):
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
        text = data.decode(codec)
    except UnicodeDecodeError as err:
        line, column = _line_of_byte(data, err.start)
        if file_encoding == AUTO_FILE_ENCODING and fallback and codec == "utf-8":
            logger.warning(
                "%s is not valid UTF-8 (byte 0x%02x on line %d); reading it as latin-1 "
                "(set file_encoding / --file-encoding to choose another encoding)",
                path,
                data[err.start],
                line,
            )
            return (
                _normalised(data.decode("latin-1"), path),
                "latin-1",
                f"auto: not valid UTF-8 (byte 0x{data[err.start]:02x} on line {line})",
            )
        name = {"utf-8": "UTF-8", "utf-16": "UTF-16", "utf-32": "UTF-32"}.get(codecs.lookup(codec).name, codec)
        marked = marked_codec(data)
        if marked and codecs.lookup(codec).name != marked:
            hint = f" (the file starts with a {marked.upper()} byte-order mark: leave --file-encoding at auto, or give {marked})"
        elif file_encoding == AUTO_FILE_ENCODING and (fallback or codec != "utf-8"):
            hint = ""
        else:
            hint = " (set file_encoding / --file-encoding, e.g. latin-1)"
        raise FormatError(
            f"invalid {name} byte 0x{data[err.start]:02x} at byte {column} of the line "
            f"(byte {err.start} of the file); expected {name} text{hint}",
            path,
            line,
        ) from None
    if overridden:
        why = f"valid UTF-8 JSON, not the given {overridden}"
    elif file_encoding != AUTO_FILE_ENCODING:
        why = "given"
    elif codec != "utf-8":
        why = f"auto: {codec.upper()} (byte-order mark)"
        logger.info("%s: %s text (by its byte-order mark)", path, codec.upper())
    else:
        why = "auto: valid UTF-8"
    if text.startswith("\ufeff"):
        return _normalised(text[1:], path), codec, why + " (byte-order mark dropped)"
    return _normalised(text, path), codec, why


def _reads_utf8_wrongly(data: bytes, codec: str) -> bool:
    """Whether ``codec`` (not a Unicode codec) would misread ``data``, valid UTF-8 with non-ASCII bytes."""
    if codecs.lookup(codec).name.startswith("utf") or data.isascii():
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _normalised(text: str, path: PathLike) -> str:
    text, replaced = normalise_text(text)
    if replaced:
        logger.warning("%s: %s replaced by U+FFFD", path, counted(replaced, "control character"))
    return text


def read_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False
) -> Iterator[Tuple[int, str]]:
    """Yields ``(line number, text without the line break)`` of the whole decoded file (see
    :func:`decode_file`; JSON lines files are UTF-8, or UTF-16/32 by a byte-order mark, and get no latin-1
    fallback; a given ``file_encoding`` applies to one that is not valid UTF-8). Lines end at LF, CRLF, a lone CR,
    and in column files also at U+2028 / U+2029."""
    yield from decoded_lines(path, file_encoding, json_lines)[0]


def decoded_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False
) -> Tuple[List[Tuple[int, str]], Tuple[str, str]]:
    """The lines of :func:`read_lines` and ``(codec used, why)`` (see :func:`decode_file_as`)."""
    text, codec, why = decode_file_as(path, file_encoding, json=json_lines)
    breaks = _JSONLINE_BREAKS if json_lines else LINE_BREAKS
    lines = breaks.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return list(enumerate(lines, start=1)), (codec, why)
