"""Files that are documents of other programs, not text: a spreadsheet, a word processor's document, a PDF, a
tar archive (a model archive, ``model.tar.gz``, given where data is expected), a model's weights (a checkpoint's
``.th``, ``model.safetensors``), an image (a scanned page).

A user with a spreadsheet of names gives ``names.xlsx`` to ``--dictionary``; one with reports gives
``report.pdf`` or ``report.docx`` as the documents to label or tag. Read as text these are zip archives or
binary bytes: "decompress it first" or a column error on ``%PDF-1.4`` would be the wrong fix.
:func:`office_document` names what such a file is from its first bytes (and, for the zip-based formats,
its member names), and :func:`office_fix` says how to save it as what eer-ner reads.
"""

import io
import tarfile
import zipfile
from typing import BinaryIO, Optional, Union

#: the zip-based formats: a member name (or the ``mimetype`` member's text) -> (what it is, a spreadsheet?)
_OOXML = (("xl/", "an Excel workbook (.xlsx)", True), ("word/", "a Word document (.docx)", False),
          ("ppt/", "a PowerPoint presentation (.pptx)", False))  # fmt: skip
_OPENDOCUMENT = (("spreadsheet", "an OpenDocument spreadsheet (.ods)", True),
                 ("text", "an OpenDocument text (.odt)", False),
                 ("presentation", "an OpenDocument presentation (.odp)", False))  # fmt: skip
#: the zip-based formats by name, for one whose member names cannot be read (a download cut short)
_SUFFIXES = tuple((what.rsplit("(", 1)[1].rstrip(")"), (what, sheet)) for _, what, sheet in _OOXML + _OPENDOCUMENT) + (
    (".xlsm", ("an Excel workbook (.xlsx)", True)),
)
#: first bytes of the other formats -> (what it is, a spreadsheet?)
_SIGNATURES = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office file (.xls, .doc or .ppt)", True),
    (b"%PDF", "a PDF document", False),
    (b"{\\rtf", "an RTF document", False),
)


def office_document(head: bytes, source: Union[str, bytes, BinaryIO], name: str = "") -> Optional[tuple]:
    """``(what it is, whether it is a spreadsheet)`` for a file of another program, from its first bytes ``head``
    (and, for a zip archive, the member names of ``source``: a path, the whole bytes or a binary file; for an old
    Office file, the suffix of its ``name``); None for anything else (a zip archive of other files too)."""
    for signature, what, sheet in _SIGNATURES:
        if head.startswith(signature):
            if signature == _SIGNATURES[0][0] and name.lower().endswith((".doc", ".ppt", ".pps")):
                return f"an old Office document (.{name.rsplit('.', 1)[1].lower()})", False
            return what, sheet
    if not head.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as archive:
            names = archive.namelist()
            mimetype = archive.read("mimetype").decode("ascii", "replace") if "mimetype" in names else ""
    except (zipfile.BadZipFile, OSError, KeyError, EOFError):  # a zip whose directory is missing: cut short?
        damaged = next((row for suffix, row in _SUFFIXES if name.lower().endswith(suffix)), None)
        return (f"{damaged[0]}, damaged or incomplete (copy or download it again)", damaged[1]) if damaged else None
    if "[Content_Types].xml" in names:
        for prefix, what, sheet in _OOXML:
            if any(name.startswith(prefix) for name in names):
                return what, sheet
    if mimetype.startswith("application/vnd.oasis.opendocument."):
        for kind, what, sheet in _OPENDOCUMENT:
            if mimetype.endswith("." + kind):
                return what, sheet
    return None


def office_fix(what: str, sheet: bool) -> str:
    """The message for a file that :func:`office_document` recognised: what it is and how to save it as text."""
    if sheet:
        return (
            f"{what}, not a text file: save the sheet as 'CSV UTF-8' or 'Unicode Text' (File > Save As; a dictionary: "
            "one column of names, one of types) and give that file"
        )
    return (
        f"{what}, not a text file: save or export its text as plain text (.txt, UTF-8) and give that file (several "
        "documents: a folder of .txt files, one per document)"
    )


_TORCH_WEIGHTS = "PyTorch weights (a .th or .pt file: a checkpoint or a model's weights)"


def weights_file(head: bytes, source: Union[str, bytes, BinaryIO]) -> Optional[str]:
    """What a model's weights file is (a PyTorch checkpoint or weights file, safetensors), from its first 16
    bytes ``head`` and, for a zip archive, the member names of ``source``; None for anything else."""
    size = int.from_bytes(head[:8], "little") if len(head) >= 10 else 0
    if 2 <= size <= 1 << 30 and head[8:10] in (b'{"', b"{}"):  # safetensors: a header's length, then its JSON
        return "safetensors weights (model.safetensors: an encoder's or an exported model's)"
    if head.startswith(b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19"):  # torch.save's legacy pickled magic number
        return _TORCH_WEIGHTS
    if not head.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, KeyError, EOFError):
        return None
    if any(name == "data.pkl" or name.endswith("/data.pkl") for name in names):  # torch.save's zip format
        return _TORCH_WEIGHTS
    return None


def weights_fix(what: str) -> str:
    """The message for a weights file given as data (:func:`weights_file`)."""
    return (
        f"{what}, not data: a model goes where a MODEL is asked (model.tar.gz, or an exported model's directory: "
        "eer-ner predict MODEL INPUT ...), and the data as a text file"
    )


#: first bytes of image formats -> their name (a scan or a photo of a page given as the text)
_IMAGES = ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"\xff\xd8\xff", "JPEG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"),
           (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"))  # fmt: skip


def image_file(head: bytes) -> Optional[str]:
    """What image a file is from its first bytes ``head`` (PNG, JPEG, GIF, TIFF, WebP), or None."""
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "an image (WebP)"
    return next((f"an image ({name})" for signature, name in _IMAGES if head.startswith(signature)), None)


def other_program_fix(head: bytes, source: Union[str, bytes, BinaryIO], name: str = "") -> Optional[str]:
    """The message for a file of another program given as data (a document: :func:`office_document`; an image:
    :func:`image_file`; a model's weights: :func:`weights_file`), from its first 16 bytes ``head``; None for
    anything else."""
    office = office_document(head, source, name)
    if office is not None:
        return office_fix(*office)
    image = image_file(head)
    if image is not None:
        return (
            f"{image}, not a text file: the text of a scanned or photographed page needs OCR first (e.g. "
            "tesseract IMAGE OUT writes OUT.txt); give the text file (UTF-8)"
        )
    weights = weights_file(head, source)
    return weights_fix(weights) if weights is not None else None


#: the first member names of a model archive (``allennlp train``'s ``model.tar.gz``, eer-ner's archives)
_MODEL_ARCHIVE_MEMBERS = ("config.json", "weights.th", "vocabulary", "files_to_archive.json", "meta.json")


def tar_member(head: bytes) -> Optional[str]:
    """The first member name of a tar archive whose (decompressed) first bytes are ``head``; None for other files."""
    if head[257:262] != b"ustar":
        return None
    try:  # the first member's name (after a pax header), read from the first bytes only
        with tarfile.open(fileobj=io.BytesIO(head), mode="r:") as archive:
            first = archive.next()
        if first is not None:
            return first.name
    except (tarfile.TarError, EOFError, OSError):
        pass
    return head[:100].split(b"\0", 1)[0].decode("utf-8", "replace")


def is_model_member(member: str) -> bool:
    """Whether ``member``, a tar archive's first file, is that of a model archive."""
    return member.split("/", 1)[0].lstrip("./") in _MODEL_ARCHIVE_MEMBERS


def tar_fix(member: str) -> str:
    """The message for a tar archive given as data: a model archive says so (it goes where MODEL is asked)."""
    if is_model_member(member):
        return (
            "a model archive (model.tar.gz: config.json, weights), not data: give it where a MODEL is asked "
            "(eer-ner predict MODEL INPUT ...), and the data as a text file"
        )
    return f"a tar archive (first file: {member}), not a text file: unpack it (tar xf) and give the data file"
