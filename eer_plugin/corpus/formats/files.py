"""Reading corpus files as text: character encodings, line breaks, and :class:`FormatError`, the
error every reader raises (it names the file, the line and what was expected).

Every reader gets its bytes from :func:`read_input_bytes`: an input must be a regular file (a FIFO, a
device such as ``/dev/zero``, a socket is refused with one line before it is opened: a corpus is read
whole and such a file may never end or never be written), and a compressed file is recognised by its
first bytes, whatever its name: gzip, bzip2 and xz are decompressed, zstd and zip are named (decompress
them first)."""

import bz2
import codecs
import gzip
import logging
import lzma
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Iterator, List, Optional, Tuple, Union

from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.text import normalise_text

PathLike = Union[str, "os.PathLike[str]"]
logger = logging.getLogger(__name__)


class FormatError(DocumentError):
    """A corpus file that cannot be read; ``path`` and ``line`` (1-based, or None) locate the problem."""

    def __init__(self, message: str, path: PathLike, line: Optional[int] = None):
        self.path = str(path)
        self.line = line
        self.reason = message
        super().__init__(f"{self.path}:{line}: {message}" if line is not None else f"{self.path}: {message}")


#: ``file_encoding`` value that reads UTF-8 and falls back to latin-1 for column files that are not valid UTF-8
AUTO_FILE_ENCODING = "auto"
#: line breaks of column files: LF, CRLF, CR alone (old Mac files) and the Unicode line/paragraph separators
LINE_BREAKS = re.compile("\r\n|\r|\n|\u2028|\u2029")
#: line breaks of JSON lines files (U+2028 may stand unescaped inside a JSON string, a raw CR may not)
_JSONLINE_BREAKS = re.compile("\r\n|\r|\n")


#: the first bytes of compressed files, and what reads them (None: named, not read)
COMPRESSIONS = (
    (b"\x1f\x8b", "gzip", gzip.decompress),
    (b"BZh", "bzip2", bz2.decompress),
    (b"\xfd7zXZ\x00", "xz", lzma.decompress),
    (b"\x28\xb5\x2f\xfd", "zstd", None),
    (b"PK\x03\x04", "zip", None),
)


def compression_of(head: bytes) -> Optional[str]:
    """``gzip``, ``bzip2``, ``xz``, ``zstd``, ``zip`` from a file's first bytes, or None."""
    return next((name for magic, name, _ in COMPRESSIONS if head.startswith(magic)), None)


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a directory" if stat.S_ISDIR(mode) else "not a regular file"


def check_input_file(path: PathLike) -> None:
    """:class:`FormatError` unless ``path`` is a regular file (links followed): no such file, a directory, or a
    FIFO, device or socket, which a reader would wait on forever or read without end."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FormatError(f"no such file (relative paths start in {os.getcwd()})", path) from None
    except OSError as err:
        raise FormatError(f"cannot read file: {err.strerror or err}", path) from None
    if stat.S_ISDIR(mode):
        raise FormatError("is a directory; give a data file", path)
    if not stat.S_ISREG(mode):
        raise FormatError(
            f"{file_kind(mode)}, not a regular file: corpus files are read whole, and this may never end or never be "
            "written; save the data to a file first",
            path,
        )


def read_input_bytes(path: PathLike) -> bytes:
    """The bytes of the input file ``path`` (:func:`check_input_file`), decompressed when its first bytes say
    gzip, bzip2 or xz; a zstd or zip file is a :class:`FormatError` naming the compression."""
    check_input_file(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise FormatError(f"cannot read file: {err.strerror or err}", path) from None
    for magic, name, decompress in COMPRESSIONS:
        if data.startswith(magic):
            if decompress is None:
                raise FormatError(
                    f"{name}-compressed: decompress it first (eer-ner reads gzip, bzip2 and xz itself)", path
                )
            try:
                data = decompress(data)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as err:
                raise FormatError(
                    f"{name}-compressed but damaged ({err}); compress it again or give the uncompressed file", path
                ) from None
            logger.info("%s: %s-compressed (recognised by its first bytes), decompressed", path, name)
            return data
    return data


def _line_of_byte(data: bytes, offset: int) -> Tuple[int, int]:
    """(1-based line number, byte offset within that line) of a byte offset, lines split at LF/CR."""
    line_start = max(data.rfind(b"\n", 0, offset), data.rfind(b"\r", 0, offset)) + 1
    line = 1 + len(re.findall(rb"\r\n|\r|\n", data[:line_start]))
    return line, offset - line_start


def decode_file(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, fallback: bool = True) -> str:
    """The text of ``path`` decoded with ``file_encoding`` (any Python codec name, e.g. ``latin-1``).

    ``auto`` reads UTF-8 (a leading byte-order mark is dropped); when the bytes are not valid UTF-8
    and ``fallback`` is true, the file is read as latin-1 (ISO-8859-1, the encoding of the CoNLL-2002
    Spanish/Dutch distribution) and a warning says so. Without the fallback, or with an explicit
    encoding, an undecodable byte raises :class:`FormatError` naming its line and offset. Control
    characters that are not white space become U+FFFD (:mod:`eer_plugin.corpus.text`).
    """
    return decode_file_as(path, file_encoding, fallback)[0]


def decode_file_as(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, fallback: bool = True
) -> Tuple[str, str, str]:
    """``(text, codec used, why)`` of :func:`decode_file`: ``("...", "utf-8", "auto: valid UTF-8")``,
    ``("...", "latin-1", "auto: not valid UTF-8 (byte 0xe9 on line 3)")`` or ``(..., codec, "given")``."""
    data = read_input_bytes(path)
    codec = "utf-8" if file_encoding == AUTO_FILE_ENCODING else file_encoding
    try:
        codecs.lookup(codec)
    except LookupError:
        raise FormatError(
            f"unknown file encoding {file_encoding!r}; expected 'auto' or a codec name such as utf-8 or latin-1", path
        ) from None
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as err:
        line, column = _line_of_byte(data, err.start)
        if file_encoding == AUTO_FILE_ENCODING and fallback:
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
        name = "UTF-8" if codecs.lookup(codec).name == "utf-8" else codec
        hint = (
            ""
            if file_encoding == AUTO_FILE_ENCODING and fallback
            else " (set file_encoding / --file-encoding, e.g. latin-1)"
        )
        raise FormatError(
            f"invalid {name} byte 0x{data[err.start]:02x} at byte {column} of the line "
            f"(byte {err.start} of the file); expected {name} text{hint}",
            path,
            line,
        ) from None
    why = "auto: valid UTF-8" if file_encoding == AUTO_FILE_ENCODING else "given"
    if text.startswith("\ufeff"):
        return _normalised(text[1:], path), codec, why + " (byte-order mark dropped)"
    return _normalised(text, path), codec, why


def _normalised(text: str, path: PathLike) -> str:
    text, replaced = normalise_text(text)
    if replaced:
        logger.warning("%s: %d control character(s) replaced by U+FFFD", path, replaced)
    return text


def read_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False
) -> Iterator[Tuple[int, str]]:
    """Yields ``(line number, text without the line break)`` of the whole decoded file (see
    :func:`decode_file`; JSON lines files must be UTF-8 unless ``file_encoding`` says otherwise,
    so they get no latin-1 fallback). Lines end at LF, CRLF, a lone CR, and in column files also at
    U+2028 / U+2029."""
    yield from decoded_lines(path, file_encoding, json_lines)[0]


def decoded_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False
) -> Tuple[List[Tuple[int, str]], Tuple[str, str]]:
    """The lines of :func:`read_lines` and ``(codec used, why)`` (see :func:`decode_file_as`)."""
    text, codec, why = decode_file_as(path, file_encoding, fallback=not json_lines)
    breaks = _JSONLINE_BREAKS if json_lines else LINE_BREAKS
    lines = breaks.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return list(enumerate(lines, start=1)), (codec, why)
