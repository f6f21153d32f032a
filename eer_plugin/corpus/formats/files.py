"""Reading corpus files: what kind of file an input is, its bytes (decompressed), the codec its first bytes name,
and :class:`FormatError`, the error every reader raises (it names the file, the line and what was expected);
decoding a file and splitting it into lines is :mod:`eer_plugin.corpus.formats.decoding`.

Every reader gets its bytes from :func:`input_blocks`, a block at a time (memory does not grow with the file): an
input must be a regular file (a FIFO, a device such as ``/dev/zero``, a socket is refused with one line before
it is opened: a corpus is read to its end, some of it twice, and such a file may never end or never be
written), and a compressed file is recognised by its first bytes, whatever its name: gzip, bzip2 and xz are
decompressed, zstd and zip are named (decompress them first)."""

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
from typing import IO, Callable, Dict, Iterator, List, Optional, Tuple, Union

from eer_plugin.common.errors import relative_paths_hint
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.formats.office import other_program_fix, tar_fix, tar_member
from eer_plugin.corpus.text import normalise, replaced_id_note

PathLike = Union[str, "os.PathLike[str]"]
logger = logging.getLogger(__name__)


class FormatError(DocumentError):
    """A corpus file that cannot be read; ``path`` and ``line`` (1-based, or None) locate the problem.

    ``reason`` is the whole message after the location: ``problem`` and then ``hint`` (what the file looks like
    and the fix, or ""). ``looks_like`` names what the file seems to be instead (:data:`LOOKS_LIKE`, or None), so
    that a command can give its own fix without reading the message."""

    def __init__(
        self,
        message: str,
        path: PathLike,
        line: Optional[int] = None,
        *,
        hint: str = "",
        looks_like: Optional[str] = None,
    ):
        assert looks_like is None or looks_like in LOOKS_LIKE, looks_like
        self.path = str(path)
        self.line = line
        self.problem, self.hint, self.looks_like = message, hint, looks_like
        self.reason = message + hint
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {self.reason}")


#: what a file that is no corpus file seems to be: a dictionary of names ('surface form<TAB>TYPE' lines), or
#: plain text (prose, one sentence per line)
LOOKS_LIKE = ("dictionary", "raw text")


#: ``file_encoding`` value that reads UTF-8 and falls back to latin-1 for column files that are not valid UTF-8
AUTO_FILE_ENCODING = "auto"
#: what a file encoding setting (``file_encoding``, ``--file-encoding``, ``EER_FILE_ENCODING``) may be, as messages say it
FILE_ENCODINGS = f"{AUTO_FILE_ENCODING!r} or the name of a text codec such as utf-8 or latin-1"


def is_file_encoding(value) -> bool:
    """Whether ``value`` is a file encoding setting: ``auto`` or a codec that Python knows and that decodes bytes to
    text (not ``rot13``, ``hex`` or ``base64``, which it knows too)."""
    if value == AUTO_FILE_ENCODING:
        return True
    try:
        return isinstance(value, str) and getattr(codecs.lookup(value), "_is_text_encoding", True)
    except LookupError:
        return False


#: the first bytes of compressed files and what opens them as a stream (None: named, not read)
COMPRESSIONS = (
    (b"\x1f\x8b", "gzip", gzip.open),
    (b"BZh", "bzip2", bz2.open),
    (b"\xfd7zXZ\x00", "xz", lzma.open),
    (b"\x28\xb5\x2f\xfd", "zstd", None),
    (b"PK\x03\x04", "zip", None),
)


#: byte-order marks of the wide Unicode encodings and the codec that reads past them (UTF-32 LE first: its
#: mark starts with UTF-16 LE's); Windows tools write them ("Unicode Text" from Excel, PowerShell's Out-File)
WIDE_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: how many first bytes :func:`text_codec` looks at
SNIFF_BYTES = 4096
#: the least share of a file's NUL bytes on one byte of each pair that reads as UTF-16 without a mark (and, for
#: text of ASCII characters, the least share of those bytes that are NUL; the other byte's at most 1 minus it)
UTF16_NUL_SHARE = 0.9
#: fewer NUL bytes than this in a file's head (and not in every other byte) are stray characters of text,
#: for its lines to report
UTF16_MIN_NULS = 8
#: control bytes that text does not hold: C0 but for tab, line breaks and ESC (ANSI colours in a saved log), NUL
#: counted apart; a file's head with at least BINARY_MIN_CONTROLS of them, making BINARY_CONTROL_SHARE of it,
#: is binary data (random bytes: about 10%), not text with stray characters (replaced, with a warning)
_BINARY_CONTROLS = bytes(c for c in range(1, 0x20) if c not in b"\t\n\x0b\x0c\r\x1b")
BINARY_MIN_CONTROLS = 16
BINARY_CONTROL_SHARE = 0.02


def text_codec(head: bytes, path: PathLike, whole_file: bool = True) -> str:
    """The codec that reads a text file whose first bytes are ``head`` when no encoding is given: ``utf-16`` or
    ``utf-32`` when a byte-order mark names it, else ``utf-8`` (a UTF-8 mark is dropped by the readers).

    UTF-16 without a mark is a :class:`FormatError` with the command that converts it, never text read as
    garbage: a NUL in nearly every other byte (ASCII text, however short), or at least
    :data:`UTF16_MIN_NULS` NUL bytes in the first :data:`SNIFF_BYTES`, nearly all
    (:data:`UTF16_NUL_SHARE`) on the same byte of a pair (ASCII characters, newlines included, leave one NUL
    per pair; CJK text in between leaves few, e.g. U+4E00 on the other byte), and the bytes decode as UTF-16
    text. No UTF-8 or latin-1 text holds NUL bytes either, so for a ``whole_file`` (a corpus, a dictionary:
    read as one) as many NULs otherwise placed are an error too (UTF-32 without a mark, a binary file). A
    stream whose lines fail one by one (``predict``'s input) leaves a stray NUL to its line."""
    marked = marked_codec(head)
    if marked:
        return marked
    tar = tar_member(head)
    if tar is not None:
        raise FormatError(tar_fix(tar), path)
    sample = head[:SNIFF_BYTES]
    nuls = sample.count(0)
    for order, nul, other in (("le", sample[1::2], sample[0::2]), ("be", sample[0::2], sample[1::2])):
        ascii_like = (
            len(sample) >= 4
            and nul.count(0) >= UTF16_NUL_SHARE * len(nul)
            and other.count(0) <= (1 - UTF16_NUL_SHARE) * len(other)
        )
        if ascii_like or (
            nuls >= UTF16_MIN_NULS and nul.count(0) >= UTF16_NUL_SHARE * nuls and _reads_as_utf16(sample, order)
        ):
            raise FormatError(
                f"looks like UTF-16 ({order.upper()}) text without a byte-order mark (NUL bytes on the "
                f"{'second' if order == 'le' else 'first'} byte of its pairs); convert it to UTF-8: iconv -f utf-16{order} "
                f"-t utf-8 {path} > {Path(path).stem}.utf8{Path(path).suffix}",
                path,
            )
    if not whole_file:
        return "utf-8"
    if nuls >= UTF16_MIN_NULS:
        raise FormatError(
            f"holds NUL bytes ({nuls} in its first {len(sample)}), which no UTF-8 or latin-1 text has: not a text "
            f"file, or UTF-32 text without a byte-order mark (convert that: iconv -f utf-32le -t utf-8 {path}, or utf-32be)",
            path,
        )
    controls = len(sample) - len(sample.translate(None, _BINARY_CONTROLS))  # one pass over the head
    if controls >= BINARY_MIN_CONTROLS and controls >= BINARY_CONTROL_SHARE * len(sample):
        raise FormatError(
            f"holds binary data ({controls} control bytes such as SOH or BEL in its first {len(sample)}), not "
            "text: give the text file (UTF-8) that the command reads",
            path,
        )
    return "utf-8"


def _reads_as_utf16(sample: bytes, order: str) -> bool:
    """Whether ``sample`` decodes as UTF-16 in byte order ``order`` into text: no broken surrogate (but for
    the last character, which the sample may cut) and no control character but tab, newline, carriage
    return and form feed (a binary file decodes into many)."""
    text = sample[: len(sample) // 2 * 2].decode(f"utf-16-{order}", errors="replace")[:-1]
    return "\ufffd" not in text and not any(c < " " and c not in "\t\n\r\x0c" for c in text)


def marked_codec(head: bytes) -> Optional[str]:
    """``utf-16`` or ``utf-32`` when ``head`` starts with that byte-order mark, else None."""
    return next((codec for mark, codec in WIDE_BYTE_ORDER_MARKS if head.startswith(mark)), None)


def uncompressed_name(path: PathLike) -> Path:
    """``path`` without a ``.gz``, ``.bz2`` or ``.xz`` suffix (the compressions the readers decompress)."""
    return Path(path).with_suffix("") if Path(path).suffix in (".gz", ".bz2", ".xz") else Path(path)


def text_files(root: PathLike) -> Tuple[List[Tuple[str, Path]], List[str]]:
    """A folder of raw-text documents, one per file: ``(document id, path)`` of its ``.txt`` files (also
    ``.txt.gz``, ``.bz2``, ``.xz``) at any depth, sorted by path, the id being the path in the folder
    (``sub/b.txt``), and the paths in the folder of its other files; hidden files and folders (a leading
    ``.``) are left out of both. A folder without a ``.txt`` file is a :class:`FormatError` naming what it
    holds. An id is normalised as every id (:mod:`eer_plugin.corpus.text`: a name's control characters, and its bytes
    that are no UTF-8, become U+FFFD); two files of one id are a :class:`FormatError` naming both. Read by
    ``eer-dictionary`` and ``predict``, each file as :func:`~eer_plugin.corpus.formats.decoding.decode_file` reads it."""
    base = Path(root)
    files = sorted(
        p
        for p in base.rglob("*")
        # a dangling link is kept: the document it named is reported unreadable, never dropped unseen
        if (p.is_file() or p.is_symlink() and not p.exists())
        and not any(part.startswith(".") for part in p.relative_to(base).parts)
    )
    texts: List[Tuple[str, Path]] = []
    others: List[str] = []
    named: Dict[str, str] = {}  # id -> the file's name in the folder
    for p in files:
        name = p.relative_to(base).as_posix()
        if uncompressed_name(p).suffix.lower() == ".txt":
            doc_id = normalise(name)
            if doc_id in named:
                raise FormatError(
                    f"the files {named[doc_id]!r} and {name!r} are both document {doc_id!r}"
                    f"{replaced_id_note(doc_id)} (rename a file)",
                    root,
                )
            named[doc_id] = name
            texts.append((doc_id, p))
        else:
            others.append(name)
    if not texts:
        held = f" (it holds {counted(len(others), 'other file')}, e.g. {others[0]})" if others else ""
        raise FormatError(
            f"no .txt files below this folder{held}: a folder is one raw-text document per .txt file", root
        )
    return texts, others


def _refuse_other_programs(head: bytes, source, path: PathLike) -> None:
    """:class:`FormatError` with the fix for a file of another program (:func:`other_program_fix`)."""
    fix = other_program_fix(head, source, str(path))
    if fix is not None:
        raise FormatError(fix, path)


def tar_first_member(path: PathLike) -> Optional[str]:
    """The first file of the regular file ``path`` if it is a tar archive, compressed or not (a model archive's is
    its ``config.json`` or weights: :func:`~eer_plugin.corpus.formats.office.is_model_member`); None otherwise."""
    try:
        with open(path, "rb") as handle:
            row = compression_of(handle.read(8))
        opener = row[2] if row else open
        if opener is None:
            return None
        with opener(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except (ValueError,) + STREAM_ERRORS:
        return None
    return tar_member(head)


def compression_of(head: bytes):
    """The row of :data:`COMPRESSIONS` (``gzip``, ``bzip2``, ``xz``, ``zstd``, ``zip``) that a file's first
    bytes name, or None."""
    return next((row for row in COMPRESSIONS if head.startswith(row[0])), None)


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
        raise FormatError(f"no such file{relative_paths_hint(path)}", path) from None
    except OSError as err:
        raise FormatError(f"cannot read file: {err.strerror or err}", path) from None
    if stat.S_ISDIR(mode):
        raise FormatError("is a directory; give a data file", path)
    if not stat.S_ISREG(mode):
        raise FormatError(
            f"{file_kind(mode)}, not a regular file: corpus files are read to their end (some twice), and this may never end or never be "
            "written; save the data to a file first",
            path,
        )


#: the characters ``surrogateescape`` puts in place of bytes a codec cannot decode
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
#: what reading a compressed or plain stream may raise besides a decoding problem
STREAM_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)


def _unread_compression(name: str, path: PathLike) -> FormatError:
    return FormatError(f"{name}-compressed: decompress it first (eer-ner reads gzip, bzip2 and xz itself)", path)


def _stream_error(err: Exception, path: PathLike, compression: Optional[str], line: Optional[int] = None):
    if compression and not (isinstance(err, OSError) and err.strerror):
        return FormatError(
            f"{compression}-compressed but damaged ({err}); compress it again or give the uncompressed file", path, line
        )
    return FormatError(f"cannot read file: {getattr(err, 'strerror', None) or err}", path, line)


#: the bytes read at a time from an input file (a corpus is read in blocks: memory does not grow with the file)
BLOCK_BYTES = 1 << 16


def _input_opener(path: PathLike) -> Tuple[Callable[..., IO], Optional[str]]:
    """What opens the input file ``path`` (:func:`check_input_file`): ``open``, or the decompressing ``open`` of
    gzip, bzip2 or xz when its first bytes say so, and that compression's name (None: not compressed). A file of
    another program (:func:`_refuse_other_programs`), zstd or zip is a :class:`FormatError`."""
    check_input_file(path)
    try:
        with open(path, "rb") as handle:
            first = handle.read(16)
            _refuse_other_programs(first, handle, path)
    except STREAM_ERRORS as err:
        raise _stream_error(err, path, None) from None
    row = compression_of(first)
    kind, opener = (row[1], row[2]) if row else (None, open)
    if opener is None:
        raise _unread_compression(kind, path)
    return opener, kind


def compression(path: PathLike) -> Optional[str]:
    """The compression of the input file ``path`` that the readers undo (``gzip``, ``bzip2``, ``xz``), recognised
    by its first bytes, or None (:func:`_input_opener`: a file that cannot be read is a :class:`FormatError`)."""
    return _input_opener(path)[1]


def input_blocks(path: PathLike) -> Iterator[bytes]:
    """The bytes of the input file ``path`` (:func:`_input_opener`: decompressed when its first bytes say gzip,
    bzip2 or xz) in blocks of :data:`BLOCK_BYTES` (the last one shorter), so that a reader's memory does not grow
    with the file; a file that cannot be read, or a damaged compressed stream, is a :class:`FormatError`."""
    opener, kind = _input_opener(path)
    try:
        with opener(path, "rb") as handle:
            for block in iter(lambda: handle.read(BLOCK_BYTES), b""):
                yield block
    except (ValueError,) + STREAM_ERRORS as err:
        raise _stream_error(err, path, kind) from None


def _open_text(path: PathLike, whole_file: bool = True) -> Tuple[IO[str], Optional[str]]:
    opener, kind = _input_opener(path)
    try:
        with opener(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except STREAM_ERRORS as err:
        raise _stream_error(err, path, kind) from None
    codec = text_codec(head, path, whole_file)
    return opener(path, "rt", encoding="utf-8-sig" if codec == "utf-8" else codec, errors="surrogateescape"), kind


def open_text(path: PathLike, whole_file: bool = True) -> IO[str]:
    """``path`` opened to be read as text line by line (bounded memory), the streaming twin of
    :func:`~eer_plugin.corpus.formats.decoding.decode_file`: a regular file (:func:`check_input_file`), decompressed when its first bytes say gzip,
    bzip2 or xz (zstd and zip are a :class:`FormatError`), decoded by :func:`text_codec` (a UTF-8 byte-order
    mark dropped) with ``surrogateescape``: a byte the codec cannot decode comes through as one character
    U+DC80..U+DCFF, for the caller to report on its line. Universal newlines. ``whole_file``: as for
    :func:`text_codec` (False: a stream whose lines fail alone)."""
    return _open_text(path, whole_file)[0]


def stream_lines(path: PathLike) -> Iterator[Tuple[int, str]]:
    """``(line number, text without its line break)`` of :func:`open_text`; a byte the codec cannot decode, or
    a damaged compressed stream, is a :class:`FormatError` naming the line and the fix."""
    handle, kind = _open_text(path)
    number = 0
    with handle:
        try:
            for number, text in enumerate(handle, start=1):
                text = text.rstrip("\r\n")
                found = _ESCAPED_BYTE.search(text)
                if found:
                    name = handle.encoding.upper().replace("-SIG", "")
                    raise FormatError(
                        f"invalid {name} byte 0x{ord(found.group()) - 0xDC00:02x} at character {found.start() + 1} of "
                        "the line; expected UTF-8 text (or UTF-16 with a byte-order mark): convert the file, e.g. "
                        f"from latin-1: iconv -f latin1 -t utf-8 {path} > {Path(path).stem}.utf8{Path(path).suffix}",
                        path,
                        number,
                    )
                yield number, text
        except STREAM_ERRORS as err:
            raise _stream_error(err, path, kind, number + 1) from None
