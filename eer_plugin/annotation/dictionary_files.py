"""The dictionaries of dictionary labelling (:mod:`eer_plugin.annotation.dictionary`, ``eer-dictionary``; no
AllenNLP), read and checked: dictionaries (TSV ``surface form<TAB>TYPE``, a spreadsheet's CSV, JSON lines
``{"text", "type"}``, UTF-8 or marked UTF-16/32; or an Excel workbook, its first sheet's first two columns, with
the extra ``eer-ner[xlsx]``), their ``[NAME=]FILE`` arguments, stop lists, and the warnings
about the types a dictionary lists. A file that cannot be used is a :class:`DictionaryError` naming the file and
line. The documents it labels: :mod:`eer_plugin.annotation.dictionary_input`.
"""

import csv
import itertools
import re
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from tqdm import tqdm

from eer_plugin.annotation.dictionary_matcher import Matcher
from eer_plugin.common.wording import counted
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import no_entity_type, type_problem, unknown_keys_message
from eer_plugin.corpus.formats import FormatError
from eer_plugin.corpus.formats.files import stream_lines, uncompressed_name
from eer_plugin.corpus.formats.spreadsheet import is_workbook, workbook_rows
from eer_plugin.corpus.tag_like import TagLikeTypes
from eer_plugin.corpus.text import normalise_text, normalise_value
from eer_plugin.corpus.tokenizer import tokenize_text

#: the dictionary name of the spans propagated from the input's annotation
PROPAGATE_SOURCE = "propagate"
#: keys of a JSON-lines dictionary entry
DICTIONARY_JSON_KEYS = ("text", "type")
DICTIONARY_EXAMPLE = '{"text": "New York", "type": "LOC"}'
#: one word without white space: a dictionary's name, and what a type cell looks like when a CSV delimiter is chosen
_TYPE = re.compile(r"^[^\s]+$")
#: CSV dictionaries: the delimiters tried, how many first lines choose one; a header row's type cell (CSV or TSV)
CSV_DELIMITERS = (",", ";")
CSV_SNIFF_LINES = 100
CSV_HEADER_TYPES = (
    "type",
    "types",
    "label",
    "entity type",
    "entity_type",
    "entity",
    "entities",
    "ner",
    "ner tag",
    "ner type",
    "tag",
    "category",
    "class",
    "kind",
)
#: a type listed on one line only is reported as a likely typo in dictionaries of at least this many entries
TYPO_CHECK_ENTRIES = 20
#: the most such types reported one by one (each compared with every type); the others are counted in one warning
TYPO_WARNINGS = 10


class DictionaryError(FormatError):
    """A dictionary, stop list or input file that cannot be used; names the file and line."""


def _is_header_type(cell: str) -> bool:
    """Whether a first row's type cell names the type column (``Type``, ``Entity``, ...): the sheet's header row."""
    return cell.strip().casefold() in CSV_HEADER_TYPES


def json_value(text: str, path: str, line: int):
    """The value of one JSON line, parsed by the package's one JSON parser (:mod:`eer_plugin.corpus.strict_json`:
    a repeated key, nesting too deep or a number too long is an error) and normalised; a
    :class:`DictionaryError` naming the file and line otherwise."""
    try:
        return normalise_value(strict_json.loads(text))
    except strict_json.JsonError as err:
        raise DictionaryError(err.message, path, line) from None


def text_lines(path: str) -> Iterator[Tuple[int, str]]:
    """``(line number, text)`` of a text file, read line by line (bounded memory) by
    :func:`~eer_plugin.corpus.formats.files.stream_lines`: UTF-8 (UTF-16/32 with a byte-order mark; gzip,
    bzip2 or xz); a byte that is not UTF-8 is a :class:`DictionaryError` naming its line, with the ``iconv``
    command that converts the file."""
    try:
        for number, text in stream_lines(path):
            yield number, normalise_text(text)[0]
    except FormatError as err:
        raise DictionaryError(err.reason, path, err.line) from None


def _unquoted(cell: str) -> str:
    """A spreadsheet's quoted cell (``"Apple, Inc."``, ``"Toys ""R"" Us"``: how Excel saves a cell with a
    comma or a quote) without its quotes; any other cell as it is."""
    inner = cell[1:-1]
    if len(cell) >= 2 and cell[0] == cell[-1] == '"' and '"' not in inner.replace('""', ""):
        return inner.replace('""', '"')
    return cell


def _csv_cells(text: str, delimiter: str) -> Optional[List[str]]:
    """The cells of one CSV line without its trailing empty ones (a spreadsheet pads short rows), or None
    when a quoted cell does not end on the line."""
    try:
        cells = next(csv.reader([text], delimiter=delimiter, strict=True), [])
    except csv.Error:
        return None
    while cells and not cells[-1].strip():
        cells.pop()
    return cells


def csv_delimiter(lines: Sequence[str]) -> str:
    """``,`` or ``;`` (a spreadsheet saved as CSV in a locale whose decimal mark is a comma): the one that
    splits the most of ``lines`` (the first non-blank lines) into a name and a type-like cell (no white space,
    no delimiter), then into two cells, then the one with the fewest distinct types (a wrong split makes a
    "type" of every name's tail)."""

    def score(delimiter: str):
        rows = [_csv_cells(line, delimiter) for line in lines]
        types = [row[1].strip() for row in rows if row is not None and len(row) == 2]
        typelike = [t for t in types if _TYPE.match(t) and not any(d in t for d in CSV_DELIMITERS)]
        return (len(typelike), len(types), -len(set(types)))

    return max(CSV_DELIMITERS, key=score)


def dictionary_lines(path: str, notes: Optional[List[str]] = None) -> Iterator[Tuple[int, str, str]]:
    """``(line, surface form, type)`` of every entry of a TSV, CSV, JSON-lines or Excel dictionary (module
    docstring; a workbook's line is its row). ``notes``: gets a warning for a workbook's other sheets."""
    entries = _sheet_entries(path, notes) if is_workbook(path) else _text_entries(path)
    for number, form, label in entries:
        form, label = form.strip(), label.strip()
        if not form:
            raise DictionaryError(f"empty surface form (type {label!r}): expected a name before its type", path, number)
        if no_entity_type(label):
            raise DictionaryError(
                f"bad type {label!r} for {form!r}: expected an entity type name, not 'O'", path, number
            )
        problem = type_problem(label)  # the one rule of every reader: a plain space inside is kept (Product Name)
        if problem:
            raise DictionaryError(f"bad type for {form!r}: {problem}", path, number)
        yield number, form, label


def _sheet_entries(path: str, notes: Optional[List[str]]) -> Iterator[Tuple[int, str, str]]:
    """The rows of a workbook's first sheet: a surface form and its type in the first two columns, an optional
    header row, empty rows and rows whose first cell starts with ``#`` skipped."""
    try:
        book = workbook_rows(path)
    except FormatError as err:
        raise DictionaryError(err.reason, path) from None
    others = book.other_sheets
    if others and notes is not None:
        shown = ", ".join(map(repr, others[:3])) + (", ..." if len(others) > 3 else "")
        notes.append(
            f"{path}: read the first sheet {book.sheet!r} only; {counted(len(others), 'other sheet')} ({shown}) "
            f"{'holds' if len(others) == 1 else 'hold'} cells too: move their rows into the first sheet, or save "
            "each as a CSV file and give it as another --dictionary"
        )
    first = True
    try:
        for number, cells in book.rows:
            if not any(c.strip() for c in cells) or cells[0].strip().startswith("#"):
                continue
            where = f"row {number} of sheet {book.sheet!r}"
            if len(cells) != 2:
                raise DictionaryError(
                    f"{counted(len(cells), 'cell')} in {where} ({cells[:4]!r}): expected two, a surface form and "
                    "its TYPE in the first two columns",
                    path,
                    number,
                )
            if first and _is_header_type(cells[1]):
                first = False
                continue  # the header row
            first = False
            if not cells[0].strip():
                raise DictionaryError(
                    f"empty surface form (type {cells[1].strip()!r}) in {where}: an empty cell, or a formula that "
                    "Excel never computed (open the workbook in Excel and save it)",
                    path,
                    number,
                )
            yield number, cells[0], cells[1]
    except FormatError as err:
        raise DictionaryError(err.reason, path, err.line) from None


def _text_entries(path: str) -> Iterator[Tuple[int, str, str]]:
    """The entries of a TSV, CSV or JSON-lines dictionary, before the checks every dictionary gets."""
    suffix = uncompressed_name(path).suffix.lower()
    as_json, as_csv = suffix in (".jsonl", ".json"), suffix == ".csv"
    lines = text_lines(path)
    if as_csv:  # the delimiter from the first lines, then every line
        head = list(itertools.islice(lines, CSV_SNIFF_LINES))
        delimiter = csv_delimiter([t for _, t in head if t.strip() and not t.strip().startswith("#")])
        lines = itertools.chain(head, lines)
    first = True
    for number, text in lines:
        stripped = text.strip()
        if not stripped or (stripped.startswith("#") and not as_json):
            continue
        if first:
            as_json = as_json or (stripped.startswith("{") and not as_csv)
        if as_json:
            data = json_value(text, path, number)
            if not isinstance(data, dict):
                raise DictionaryError(
                    f'expected a JSON object {{"text": ..., "type": ...}}, got {type(data).__name__}', path, number
                )
            unknown = sorted(set(data) - set(DICTIONARY_JSON_KEYS))
            if "type" not in data and ("text" in data or "tokens" in data):  # documents given as --dictionary?
                raise DictionaryError(
                    f'no "type": an entry is {DICTIONARY_EXAMPLE} (documents go to INPUT)', path, number
                )
            if unknown:
                raise DictionaryError(unknown_keys_message(unknown, DICTIONARY_JSON_KEYS), path, number)
            form, label = data.get("text"), data.get("type")
            if not isinstance(form, str) or not isinstance(label, str):
                raise DictionaryError(f'expected "text" and "type" strings, e.g. {DICTIONARY_EXAMPLE}', path, number)
        elif as_csv:
            cells = _csv_cells(text, delimiter)
            if cells is None and len(text) > csv.field_size_limit():  # the csv module's limit, not a quote
                raise DictionaryError(
                    f"a line of {len(text):,} characters, more than a CSV cell may hold ({csv.field_size_limit():,}): "
                    f"expected 'surface form{delimiter}TYPE' per line (a list of names, not documents: those go to INPUT)",
                    path,
                    number,
                )
            if cells is None:
                raise DictionaryError(
                    f"a quoted cell does not end on this line in {text[:60]!r}: expected 'surface form{delimiter}TYPE' "
                    '(a cell with a quote is written "Toys ""R"" Us")',
                    path,
                    number,
                )
            if len(cells) != 2:
                raise DictionaryError(
                    f"{counted(len(cells), 'cell')} in {text[:60]!r}: expected two, 'surface form{delimiter}TYPE' (CSV, "
                    f"delimiter {delimiter!r}; quote a name with a {delimiter!r} in it)",
                    path,
                    number,
                )
            if first and _is_header_type(cells[1]):
                first = False
                continue  # the header row of a spreadsheet
            form, label = cells
        else:
            if "\t" not in text:
                comma = " (a CSV file? name it .csv)" if "," in text or ";" in text else ""
                raise DictionaryError(f"no TAB in {text[:60]!r}: expected 'surface form<TAB>TYPE'{comma}", path, number)
            if text.count("\t") > 1:
                raise DictionaryError(
                    f"{text.count(chr(9))} TABs in {text[:60]!r}: expected exactly one, 'surface form<TAB>TYPE'",
                    path,
                    number,
                )
            form, label = text.split("\t")
            if '"' in text:
                form, label = _unquoted(form.strip()), _unquoted(label.strip())
            if first and _is_header_type(label):
                first = False
                continue  # the header row of a spreadsheet saved as tab-delimited text
        first = False
        yield number, form, label


def read_stop_list(path: str) -> List[List[str]]:
    """The forms of a stop list: one surface form per line (``#`` comments, blank lines skipped), or per row of an
    Excel workbook's first sheet, in its first column; a line with a TAB or a row with two cells (a dictionary given
    as the stop list, whose lines would never match), and a stop list without any form, are a
    :class:`DictionaryError`."""
    forms = []
    for number, text in _sheet_forms(path) if is_workbook(path) else text_lines(path):
        if "\t" in text.strip():
            raise DictionaryError(f"a TAB in {text[:60]!r}: a stop list holds one surface form per line", path, number)
        if text.strip() and not text.strip().startswith("#"):
            forms.append(tokenize_text(text.strip())[0])
    forms = [form for form in forms if form]
    if not forms:  # the wrong file, or one saved empty: a stop list that stops nothing is never what was meant
        raise DictionaryError(
            "empty stop list: no surface forms; expected one surface form per line (or leave out --stop-list)", path
        )
    return forms


def _sheet_forms(path: str) -> Iterator[Tuple[int, str]]:
    """``(row, form)`` of a workbook stop list: the one cell of each row of its first sheet."""
    try:
        book = workbook_rows(path)
        for number, cells in book.rows:
            if len(cells) > 1:
                raise DictionaryError(
                    f"{counted(len(cells), 'cell')} in row {number} of sheet {book.sheet!r} ({cells[:4]!r}): a stop list "
                    "holds one surface form per row, in the first column (a dictionary given as the stop list?)",
                    path,
                    number,
                )
            yield number, cells[0] if cells else ""
    except FormatError as err:
        raise DictionaryError(err.reason, path, err.line) from None


def dictionary_specs(arguments: Sequence[str]) -> List[Tuple[str, str]]:
    """``(name, path)`` of each ``--dictionary`` argument: ``FILE`` (named by its stem) or ``NAME=FILE``."""
    specs = []
    for argument in arguments:
        if "=" in argument and not Path(argument).exists():
            name, path = argument.split("=", 1)
        else:  # the file's stem, without a compression suffix, white space as "_" ("Company list.tsv.gz")
            name, path = re.sub(r"\s+", "_", uncompressed_name(argument).stem.strip()), argument
        if not name or not _TYPE.match(name):
            raise DictionaryError(
                f"bad dictionary name {name!r}: give NAME=FILE with a name without white space", argument
            )
        if name in (n for n, _ in specs) or name == PROPAGATE_SOURCE:
            raise DictionaryError(
                f"two dictionaries are named {name!r} (or it is the reserved {PROPAGATE_SOURCE!r}); name them with NAME=FILE",
                path,
            )
        specs.append((name, path))
    return specs


def load_dictionary(matcher: Matcher, name: str, path: str, progress: bool = False) -> Dict[str, object]:
    """Adds the entries of one dictionary file to ``matcher``; returns its counts (entries, per type,
    ``first_line`` per type). An empty dictionary is a :class:`DictionaryError`. ``progress``: a progress bar on
    stderr when it is a terminal."""
    source = matcher.add_source(name, str(path))
    per_type: Counter = Counter()
    first_line: Dict[str, int] = {}
    notes: List[str] = []
    lines = dictionary_lines(str(path), notes)
    shown = tqdm(lines, desc=f"eer-dictionary: reading {name}", unit=" entries", disable=None if progress else True)
    for number, form, label in shown:
        tokens = tokenize_text(form)[0]
        matcher.add(tokens, label, source, number)
        per_type[label] += 1
        first_line.setdefault(label, number)
    if not per_type:
        raise DictionaryError(
            "empty dictionary: no entries; expected one 'surface form<TAB>TYPE' per line (or JSON lines)", path
        )
    return {
        "name": name,
        "path": str(path),
        "entries": sum(per_type.values()),
        "per_type": dict(sorted(per_type.items())),
        "first_line": first_line,
        "notes": notes,
    }


def type_warnings(dictionaries: Sequence[Dict[str, object]], corpus_types: Sequence[str] = ()) -> List[str]:
    """Warnings for types named like tags (``B-PER``, once each: :mod:`eer_plugin.corpus.tag_like`), for types listed
    on one line only (likely typos; dictionaries of :data:`TYPO_CHECK_ENTRIES` or more: the first
    :data:`TYPO_WARNINGS` one by one, with the closest other type, the rest counted in one warning, so that a column
    of ids read as types costs linear time), and for dictionary types that the input's own annotation
    (``corpus_types``) does not use."""
    import difflib

    totals: Counter = Counter()
    for d in dictionaries:
        totals.update(d["per_type"])  # type: ignore[arg-type]
    check_typos = sum(totals.values()) >= TYPO_CHECK_ENTRIES
    corpus, used = set(corpus_types), ", ".join(corpus_types)
    warnings, typos, more, tag_like = [], 0, [], TagLikeTypes()
    for d in dictionaries:
        first_entry = min(d["first_line"].values(), default=0)  # type: ignore[union-attr]
        for label in d["per_type"]:  # type: ignore[union-attr]
            where = f"{d['path']}:{d['first_line'][label]}"  # type: ignore[index]
            warnings += filter(None, [tag_like.check(label, where)])  # B-PER: a tag pasted as a type?
            if totals[label] == 1 and check_typos and typos == TYPO_WARNINGS:
                more.append(repr(label))
            elif totals[label] == 1 and check_typos:
                typos += 1
                close = difflib.get_close_matches(label, [t for t in totals if t != label], n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                if d["first_line"][label] == first_entry:  # type: ignore[index]
                    hint += f" (a header row? name its type column {CSV_HEADER_TYPES[0]!r}, or remove the row)"
                warnings.append(
                    f"{where}: type {label!r} is listed on this line only, the other types on many{hint}; "
                    "check it is not a typo"
                )
            if corpus and label not in corpus:
                warnings.append(
                    f"{where}: type {label!r} is not used by the input's annotation ({used}); "
                    "the model will learn it as a new type"
                )
    if more:
        warnings.append(
            f"{counted(len(more), 'more type')} listed on one line only ({', '.join(more[:3])}"
            f"{', ...' if len(more) > 3 else ''}): so many are rarely typos; is the second column the type?"
        )
    return warnings
