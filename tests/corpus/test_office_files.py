"""Files of other programs given as data, as a class: a spreadsheet (``names.xlsx``, ``.ods``, ``.xls``), a word
processor's document (``.docx``, ``.odt``, ``.doc``, RTF) or a PDF, given to every reader (training data, a
dictionary, eer-dictionary's INPUT, predict's input, an annotation tool's export, a stop list) is one line that
says what the file is and how to save it as text (a dictionary or a stop list may be an Excel workbook: one that
cannot be read says so, with the same fix); a zip archive of anything else keeps "decompress it first"."""

import io
import zipfile

import pytest

from eer_plugin.corpus.formats import FormatError


def _zip(members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members:
            archive.writestr(name, text)
    return buffer.getvalue()


OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
#: name -> (bytes, what the message calls it, is a spreadsheet)
FILES = {
    "names.xlsx": (_zip([("[Content_Types].xml", "<Types/>"), ("xl/workbook.xml", "<workbook/>")]),
                   "an Excel workbook (.xlsx)", True),
    "report.docx": (_zip([("[Content_Types].xml", "<Types/>"), ("word/document.xml", "<document/>")]),
                    "a Word document (.docx)", False),
    "names.ods": (_zip([("mimetype", "application/vnd.oasis.opendocument.spreadsheet"), ("content.xml", "<x/>")]),
                  "an OpenDocument spreadsheet (.ods)", True),
    "report.odt": (_zip([("mimetype", "application/vnd.oasis.opendocument.text"), ("content.xml", "<x/>")]),
                   "an OpenDocument text (.odt)", False),
    "names.xls": (OLE2, "an old Office file (.xls, .doc or .ppt)", True),
    "report.doc": (OLE2, "an old Office document (.doc)", False),
    "report.pdf": (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "a PDF document", False),
    "report.rtf": (b"{\\rtf1\\ansi Angela Merkel visited Paris.}", "an RTF document", False),
}  # fmt: skip


def _readers(tmp_path):
    """Every reader of a user's file, as ``(name, call(path))``."""
    from eer_plugin.annotation.dictionary_files import dictionary_lines, read_stop_list
    from eer_plugin.annotation.dictionary_input import read_input
    from eer_plugin.corpus.formats import read_documents
    from eer_plugin.corpus.formats.files import open_text
    from eer_plugin.corpus.importers import IMPORT_FORMATS, import_documents
    from eer_plugin.corpus.tokenizer import tokenize_text

    exports = [
        (f"{f} export", lambda p, f=f: import_documents(f, p, tokenize_text)) for f in IMPORT_FORMATS if f != "brat"
    ]  # brat: a folder or .ann
    return exports + [
        ("training data", lambda p: read_documents(p)),
        ("dictionary", lambda p: list(dictionary_lines(p))),
        ("stop list", lambda p: read_stop_list(p)),
        ("eer-dictionary INPUT", lambda p: list(read_input(p))),
        ("predict input", lambda p: open_text(p, whole_file=False)),
    ]


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_file_of_another_program_is_named_with_how_to_save_it_as_text(name, tmp_path):
    data, what, sheet = FILES[name]
    path = tmp_path / name
    path.write_bytes(data)
    for reader, read in _readers(tmp_path):
        with pytest.raises(FormatError) as raised:
            read(str(path))
        message = str(raised.value)
        if reader in ("dictionary", "stop list") and name == "names.xlsx":  # read as a workbook; this one is damaged
            assert message.startswith(f"{path}: {what} that cannot be read ("), message
        else:
            assert message.startswith(f"{path}: {what}, not a text file: "), (reader, message)
        fix = "save the sheet as 'CSV UTF-8' or 'Unicode Text'" if sheet else "export its text as plain text (.txt"
        assert fix in message and "\n" not in message and "decompress" not in message, (reader, message)


@pytest.mark.parametrize("name", [n for n in sorted(FILES) if FILES[n][0].startswith(b"PK")])
def test_a_zip_based_document_cut_short_is_named_by_its_suffix(name, tmp_path):
    """Without its zip directory (a download that stopped) its members cannot be listed: the name says what it
    was meant to be, and that it is damaged, in every reader."""
    data, what, sheet = FILES[name]
    path = tmp_path / name
    path.write_bytes(data[: len(data) // 2])
    for reader, read in _readers(tmp_path):
        with pytest.raises(FormatError) as raised:
            read(str(path))
        message = str(raised.value)
        assert message.startswith(f"{path}: {what}, damaged or incomplete (copy or download it again), not a text"), (
            reader,
            message,
        )


def test_a_zip_archive_of_other_files_still_says_decompress_it(tmp_path):
    from eer_plugin.corpus.formats import read_documents

    path = tmp_path / "train.zip"
    path.write_bytes(_zip([("train.txt", "Paris B-LOC\n")]))
    with pytest.raises(FormatError, match="zip-compressed: decompress it first"):
        read_documents(str(path))


def test_a_model_archive_given_as_data_says_where_it_goes(archive, tmp_path):
    """model.tar.gz given where data is expected (every reader) says it is a model and where a model goes; an
    unpacked tar archive of data says to unpack it; predict with its two arguments swapped says so before loading."""
    import tarfile

    from eer_plugin.common.errors import UserError
    from eer_plugin.predictors.predict_manager import check_arguments

    data = tmp_path / "data.tar"
    with tarfile.open(data, "w") as target:
        target.add(archive, arcname="train/notes.txt")
    for reader, read in _readers(tmp_path):
        with pytest.raises(FormatError) as raised:
            read(str(archive))
        assert str(raised.value).startswith(f"{archive}: a model archive (model.tar.gz: config.json, weights), not "), (
            reader
        )
        with pytest.raises(FormatError) as raised:
            read(str(data))
        assert "a tar archive (first file: train/notes.txt), not a text file: unpack it" in str(raised.value), reader
    documents = tmp_path / "docs.jsonl"
    documents.write_text('{"text": "Paris ."}\n')
    with pytest.raises(
        UserError, match=f"the model comes first, then the documents: eer-ner predict {archive} {documents}"
    ):
        check_arguments(str(archive), str(tmp_path / "out.jsonl"), 8, str(documents))
    check_arguments(str(documents), str(tmp_path / "out.jsonl"), 8, str(archive))  # the right order passes


def _weights(kind: str, path) -> None:
    import torch

    state = {"scorer.weight": torch.zeros(3, 2), "scorer.bias": torch.ones(3)}
    if kind == "safetensors":
        from safetensors.torch import save_file

        save_file(state, str(path))
    else:
        torch.save(state, str(path), _use_new_zipfile_serialization=kind == "torch zip")


@pytest.mark.parametrize(
    "kind,name,what",
    [
        ("torch zip", "best.th", "PyTorch weights (a .th or .pt file"),
        ("torch legacy", "model.pt", "PyTorch weights (a .th or .pt file"),
        ("safetensors", "model.safetensors", "safetensors weights (model.safetensors"),
    ],
)
def test_a_weights_file_given_as_data_says_where_a_model_goes(kind, name, what, tmp_path):
    """A checkpoint's .th (torch.save's zip format, or its legacy pickle) or an encoder's model.safetensors given
    to every reader is one line that names it and where a model goes: never "decompress it first" (a zip), a
    mixed-encodings verdict or a column error on its bytes."""
    path = tmp_path / name
    _weights(kind, path)
    for reader, read in _readers(tmp_path):
        with pytest.raises(FormatError) as raised:
            read(str(path))
        message = str(raised.value)
        assert message.startswith(f"{path}: {what}"), (reader, message)
        assert "not data: a model goes where a MODEL is asked" in message, (reader, message)


IMAGES = {
    "scan.png": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10", "PNG"),
    "scan.jpg": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01", "JPEG"),
    "scan.gif": (b"GIF89a\x10\x00\x10\x00\x80\x00\x00", "GIF"),
    "scan.tif": (b"II*\x00\x08\x00\x00\x00\x0e\x00", "TIFF"),
    "scan.webp": (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "WebP"),
}


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_an_image_given_as_data_says_it_needs_ocr(name, tmp_path):
    """A scanned page (a short image file has too few control bytes to be called binary data) given to every
    reader is named as an image with the OCR step: never a column error on its bytes."""
    head, kind = IMAGES[name]
    path = tmp_path / name
    path.write_bytes(head + b"\x00\x01" * 20)
    for reader, read in _readers(tmp_path):
        with pytest.raises(FormatError) as raised:
            read(str(path))
        assert str(raised.value).startswith(f"{path}: an image ({kind}), not a text file: the text of a "), reader
        assert "needs OCR first" in str(raised.value), reader
