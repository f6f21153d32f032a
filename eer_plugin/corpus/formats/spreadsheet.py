"""An Excel workbook's rows, read as they are (``eer-dictionary --dictionary names.xlsx``).

A user with a spreadsheet of names gives the workbook itself. :func:`workbook_rows` streams the rows of its
first sheet (openpyxl's read-only mode: bounded memory for a million rows) as the texts of their cells, a
number as Excel shows it (``1984``, not ``1984.0``), a date as ``2020-01-02``, a formula as the value Excel
last computed. openpyxl is the optional extra ``eer-ner[xlsx]``; without it, or for other spreadsheets
(``.ods``, ``.xls``: :mod:`~eer_plugin.corpus.formats.office`), the error says how to save the sheet as CSV.
"""

import datetime
import os
from typing import Iterator, List, NamedTuple, Tuple

from eer_plugin.corpus.formats.files import FormatError, PathLike
from eer_plugin.corpus.formats.office import office_document, office_fix

#: what :func:`~eer_plugin.corpus.formats.office.office_document` calls a workbook this module reads
EXCEL_WORKBOOK = "an Excel workbook (.xlsx)"
#: the command that installs the reader of workbooks
XLSX_EXTRA = "pip install 'eer-ner[xlsx]'"


class Workbook(NamedTuple):
    """The first sheet of a workbook: its title, its rows ``(row number, cell texts)`` (trailing empty cells
    dropped, empty rows kept as ``[]``), and the titles of the other sheets that hold a cell."""

    sheet: str
    rows: Iterator[Tuple[int, List[str]]]
    other_sheets: List[str]


def is_workbook(path: PathLike) -> bool:
    """Whether the file ``path`` is an Excel workbook (by its content, whatever its name); False for anything but a
    regular file (a FIFO would block the read: the reader's own check names it)."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
            found = office_document(head, handle, str(path)) if head.startswith(b"PK\x03\x04") else None
    except OSError:
        return False
    return found is not None and found[0] == EXCEL_WORKBOOK


def cell_text(value) -> str:
    """A cell's value as text, as Excel shows it: ``""`` for an empty cell, an integral number without
    ``.0``, a date without its midnight time, ``TRUE``/``FALSE``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime):
        return value.date().isoformat() if value.time() == datetime.time() else value.isoformat(sep=" ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def _unreadable(path: PathLike, err: Exception) -> FormatError:
    return FormatError(
        f"{EXCEL_WORKBOOK} that cannot be read ({type(err).__name__}: {err}): open it in Excel and save it again, or "
        + office_fix(EXCEL_WORKBOOK, True).split(": ", 1)[1],
        path,
    )


def workbook_rows(path: PathLike) -> Workbook:
    """The first sheet of the Excel workbook ``path`` (:class:`Workbook`). Without openpyxl, or for a workbook
    it cannot read, a :class:`FormatError` with the fix."""
    try:
        import openpyxl
    except ImportError:
        fix = office_fix(EXCEL_WORKBOOK, True)
        raise FormatError(f"{fix}; or install the workbook reader ({XLSX_EXTRA}) and give the workbook", path) from None
    handle = open(path, "rb")
    try:  # a file object, not the path: openpyxl would refuse a workbook whose name does not end in .xlsx
        book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        if not book.worksheets:
            raise ValueError("the workbook has no sheet")
        first, *rest = book.worksheets
        others = [s.title for s in rest if _holds_a_cell(s)]
    except Exception as err:  # openpyxl's InvalidFileException, a damaged zip, the XML parser's errors, no sheet
        handle.close()
        raise _unreadable(path, err) from None
    return Workbook(first.title, _rows(first, book, handle, path), others)


def _holds_a_cell(sheet) -> bool:
    return any(value is not None for row in sheet.iter_rows(max_row=50, values_only=True) for value in row) or (
        (sheet.max_row or 0) > 50
    )


def _rows(sheet, book, handle, path: PathLike) -> Iterator[Tuple[int, List[str]]]:
    try:
        for number, values in enumerate(sheet.iter_rows(min_row=1, min_col=sheet.min_column, values_only=True), 1):
            cells = [cell_text(v) for v in values]
            while cells and not cells[-1].strip():
                cells.pop()
            yield number, cells
    except Exception as err:  # a damaged sheet, found part way through
        raise _unreadable(path, err) from None
    finally:
        book.close()
        handle.close()
