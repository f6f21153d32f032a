"""An Excel workbook as a dictionary (``eer-dictionary --dictionary names.xlsx``, the extra ``eer-ner[xlsx]``):
real workbooks written by openpyxl, read as the sheet shows them (numbers without ``.0``, dates as dates), its
header row, empty rows and ``#`` rows skipped; a bad row is one line naming the file, the row and the sheet;
other sheets get a warning; without openpyxl the error says how to install it or save the sheet as CSV."""

import datetime
import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

openpyxl = pytest.importorskip("openpyxl")

from eer_plugin.annotation.dictionary import label_file  # noqa: E402
from eer_plugin.annotation.dictionary_files import DictionaryError, dictionary_lines  # noqa: E402
from eer_plugin.commands import dictionary as command  # noqa: E402
from eer_plugin.corpus.formats.spreadsheet import cell_text, is_workbook  # noqa: E402


def workbook(path: Path, rows, sheets=(), start="A1") -> Path:
    """A workbook whose first sheet holds ``rows`` from the cell ``start``; ``sheets``: (title, rows) of others."""
    book = openpyxl.Workbook()
    first = book.active
    first.title = "Names"
    column, row = openpyxl.utils.cell.coordinate_from_string(start)
    column = openpyxl.utils.cell.column_index_from_string(column)
    for r, values in enumerate(rows):
        for c, value in enumerate(values):
            if value is not None:
                first.cell(row=row + r, column=column + c, value=value)
    for title, other_rows in sheets:
        sheet = book.create_sheet(title)
        for values in other_rows:
            sheet.append(list(values))
    book.save(path)
    return path


FORM = st.text(alphabet=st.sampled_from(list("ab C,;\"'.-&\t") + ["é", "東"]), min_size=1, max_size=12).filter(
    lambda form: form.strip() and not form.strip().startswith(("#", "="))
)


@given(
    st.lists(st.tuples(st.one_of(FORM, st.integers(0, 3000)), st.sampled_from(["PER", "LOC", "ORG"])), min_size=1),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["A1", "B3"]),
)
@settings(max_examples=40, deadline=None)
def test_a_workbook_reads_as_its_rows(tmp_path_factory, entries, header, gaps, start):
    """Any forms (commas, quotes, TABs, numbers), an optional header row, empty rows between entries, the table
    anywhere on the sheet: the entries, each on its row number."""
    rows = [("Name", "Type")] if header else []
    expected = []
    for form, label in entries:
        if gaps:
            rows.append((None, None))
        rows.append((form, label))
        first_row = int(start[1:])
        expected.append((first_row + len(rows) - 1, str(form).strip(), label))
    path = workbook(tmp_path_factory.mktemp("book") / "names.xlsx", rows, start=start)
    assert list(dictionary_lines(str(path))) == expected


def test_cells_read_as_the_sheet_shows_them():
    assert [cell_text(v) for v in (None, 1984, 1984.0, 2.5, True, "x ")] == ["", "1984", "1984", "2.5", "TRUE", "x "]
    assert cell_text(datetime.datetime(2020, 1, 2)) == "2020-01-02"
    assert cell_text(datetime.datetime(2020, 1, 2, 9, 30)) == "2020-01-02 09:30:00"


def test_label_file_with_a_workbook_named_anything(tmp_path):
    """The workbook is found by its content (``names.dat`` too), named by its stem; the output is what a TSV of the
    same entries gives; the other sheets that hold cells are named in a warning, an empty one is not."""
    rows = [("Name", "Entity type"), ("Angela Merkel", "PER"), ("# a comment row", None), ("Berlin", "LOC")]
    book = workbook(tmp_path / "names.dat", rows, sheets=[("Notes", [("to check",)]), ("Empty", [])])
    assert is_workbook(book) and not is_workbook(tmp_path / "missing.xlsx")
    tsv = tmp_path / "names.tsv"
    tsv.write_text("Angela Merkel\tPER\nBerlin\tLOC\n")
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d1", "text": "Angela Merkel flew to Berlin."}) + "\n")
    summary = label_file(str(docs), str(tmp_path / "from_book.jsonl"), [str(book)])
    label_file(str(docs), str(tmp_path / "from_tsv.jsonl"), [str(tsv)])
    assert (tmp_path / "from_book.jsonl").read_text() == (tmp_path / "from_tsv.jsonl").read_text()
    assert summary.matches_per_dictionary == {"names": 2} and summary.dictionaries[0]["entries"] == 2
    assert summary.warnings == [
        f"{book}: read the first sheet 'Names' only; 1 other sheet ('Notes') holds cells too: move their rows into "
        "the first sheet, or save each as a CSV file and give it as another --dictionary"
    ]


BAD_ROWS = [
    ([("Paris", "LOC", "FR")], r"names\.xlsx:1: 3 cells in row 1 of sheet 'Names' \(\['Paris', 'LOC', 'FR'\]\)"),
    ([("Paris", "LOC"), ("Rome",)], r"names\.xlsx:2: 1 cell in row 2 of sheet 'Names' \(\['Rome'\]\): expected two"),
    ([("Paris", "LOC"), (None, "LOC")], r"names\.xlsx:2: empty surface form \(type 'LOC'\) in row 2 of sheet 'Names'"),
    ([('=CONCAT("Pa", "ris")', "LOC")], r"names\.xlsx:1: empty surface form .*a formula that Excel never computed"),
    ([("Paris", "O")], r"names\.xlsx:1: bad type 'O' for 'Paris'"),
    ([("Paris", "Capital\u00a0city")], r"names\.xlsx:1: bad type for 'Paris': .* \(U\+00A0 NO-BREAK SPACE\)"),
    ([("Name", "Type")], r"names\.xlsx: empty dictionary"),
    ([], r"names\.xlsx: empty dictionary"),
]


@pytest.mark.parametrize("rows, message", BAD_ROWS, ids=[m.split(": ", 1)[-1][:30] for _, m in BAD_ROWS])
def test_a_bad_row_is_one_line_naming_the_row_and_nothing_is_written(rows, message, tmp_path, capsys):
    book = workbook(tmp_path / "names.xlsx", rows)
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"text": "Paris"}\n')
    output = tmp_path / "out.jsonl"
    output.write_text("previous output\n")
    with pytest.raises(SystemExit) as exit:
        command.main([str(docs), str(output), "--dictionary", str(book)])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 1 and len(err.splitlines()) == 1 and err.startswith("eer-dictionary: error: ")
    assert re.search(message, err), err
    assert output.read_text() == "previous output\n"


def test_a_damaged_workbook_says_what_to_do(tmp_path):
    """Cut short (a download that stopped), or a zip that openpyxl cannot read as a workbook."""
    data = workbook(tmp_path / "whole.xlsx", [("Paris", "LOC")]).read_bytes()
    cut = tmp_path / "names.xlsx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(DictionaryError) as raised:
        list(dictionary_lines(str(cut)))
    assert str(raised.value).startswith(
        f"{cut}: an Excel workbook (.xlsx), damaged or incomplete (copy or download it again), not a text file: "
        "save the sheet as 'CSV UTF-8'"
    )
    hollow = tmp_path / "hollow.xlsx"
    with __import__("zipfile").ZipFile(hollow, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DictionaryError) as raised:
        list(dictionary_lines(str(hollow)))
    assert str(raised.value).startswith(f"{hollow}: an Excel workbook (.xlsx) that cannot be read (")
    assert "open it in Excel and save it again, or save the sheet as 'CSV UTF-8'" in str(raised.value)


def test_without_openpyxl_the_error_says_how_to_install_it_or_save_as_csv(tmp_path, monkeypatch):
    book = workbook(tmp_path / "names.xlsx", [("Paris", "LOC")])
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # import openpyxl raises ImportError
    with pytest.raises(DictionaryError) as raised:
        list(dictionary_lines(str(book)))
    message = str(raised.value)
    assert message.startswith(f"{book}: an Excel workbook (.xlsx), not a text file: save the sheet as 'CSV UTF-8'")
    assert message.endswith("; or install the workbook reader (pip install 'eer-ner[xlsx]') and give the workbook")


def test_the_warning_names_up_to_three_other_sheets(tmp_path):
    others = [(title, [("x",)]) for title in ("B", "C", "D", "E")]
    book = workbook(tmp_path / "names.xlsx", [("Paris", "LOC")], sheets=others + [("Empty", [])])
    notes = []
    assert list(dictionary_lines(str(book), notes)) == [(1, "Paris", "LOC")]
    assert notes == [
        f"{book}: read the first sheet 'Names' only; 4 other sheets ('B', 'C', 'D', ...) hold cells too: move their "
        "rows into the first sheet, or save each as a CSV file and give it as another --dictionary"
    ]


def test_a_workbook_stop_list(tmp_path):
    """A stop list kept in Excel: one form per row of the first column, ``#`` rows and empty rows skipped; a row
    with two cells (a dictionary given as the stop list) is one line naming the row."""
    from eer_plugin.annotation.dictionary_files import read_stop_list

    stop = workbook(tmp_path / "stop.xlsx", [("# months",), ("may",), (), ("June",), (1984,)])
    assert read_stop_list(str(stop)) == [["may"], ["June"], ["1984"]]
    names = tmp_path / "names.tsv"
    names.write_text("Apple\tORG\nMay\tPER\n1984\tMISC\n", encoding="utf-8")
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"text": "Apple sold apples in May 1984."}) + "\n", encoding="utf-8")
    label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names)], case_insensitive=True, stop_list=str(stop))
    [record] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert record["spans"] == [[0, 1, "ORG"]]
    two = workbook(tmp_path / "names-as-stop.xlsx", [("Apple", "ORG"), ("May", "PER")])
    with pytest.raises(DictionaryError) as raised:
        read_stop_list(str(two))
    assert str(raised.value).startswith(f"{two}:1: 2 cells in row 1 of sheet 'Names'")
    assert "one surface form per row" in str(raised.value)
