"""``eer-import``'s run: an annotation tool's export file -> partial-annotation JSON lines (the complete documents
optionally in a file of their own) and the import report as JSON. The text is split into words by the predictor's
raw-text tokenizer (:func:`eer_plugin.corpus.tokenizer.tokenize_text`), so ``predict`` on the same text yields
character offsets into the same characters. Outputs follow the output policy (:mod:`eer_plugin.common.outputs`):
checked against the inputs before anything is read, each written whole or not at all."""

from contextlib import ExitStack
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from eer_plugin.common.atomic import write_json
from eer_plugin.common.outputs import check_outputs, writing
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import PathLike
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING
from eer_plugin.corpus.formats.jsonl import jsonl_line
from eer_plugin.corpus.importers import (
    AnnotationImportError,
    ImportReport,
    UnknownIdsError,
    imported_documents,
    read_ids,
)
from eer_plugin.corpus.tokenizer import tokenize_text

#: the options that belong to one format only, and that format
FORMAT_OF_OPTION = {"annotators": "label-studio", "text_key": "label-studio", "incorrect_spans_key": "spacy"}


def format_options(format: str, path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, **given) -> Dict:
    """The options of ``format``'s reader from ``given`` (:data:`FORMAT_OF_OPTION`; None: not given, the
    reader's own default); one given for another format is an :class:`AnnotationImportError` naming its flag."""
    for option, value in given.items():
        owner = FORMAT_OF_OPTION[option]
        if value is not None and owner != format:
            flag = "--" + option.replace("_", "-")
            raise AnnotationImportError(f"{flag} is an option of the {owner} format, not of {format}", path)
    options = {option: value for option, value in given.items() if value is not None}
    if format != "spacy":
        options["file_encoding"] = file_encoding
    return options


def import_file(
    format: str,
    input: PathLike,
    output: PathLike,
    complete: bool = False,
    complete_ids: Optional[PathLike] = None,
    complete_output: Optional[PathLike] = None,
    report: Optional[PathLike] = None,
    file_encoding: str = AUTO_FILE_ENCODING,
    warn: Callable[[str], None] = lambda message: None,
    **options,
) -> Tuple[Dict, ImportReport, List[str]]:
    """Imports ``input`` (an export of ``format``; ``options``: see :func:`format_options`) and writes ``output``
    (and the complete documents to ``complete_output`` instead, when given; the import report as JSON to
    ``report``), one document at a time (:func:`~eer_plugin.corpus.importers.imported_documents`): memory does not
    grow with the export, where its format can be read in parts. ``complete``: every document is complete;
    ``complete_ids``: a file of the ids of the complete ones. ``warn`` gets each warning of the import before the
    outputs appear (they are written whole or not at all). Returns ``(the report as JSON, the report, a line per
    file written)``."""
    check_outputs(
        [("INPUT", input), ("--complete-ids", complete_ids)],
        [("OUTPUT", output), ("--complete-output", complete_output), ("--report", report)],
    )
    ids = read_ids(complete_ids) if complete_ids else None
    found = ImportReport(format)
    documents = imported_documents(
        format,
        input,
        tokenize_text,
        found,
        complete=complete,
        complete_ids=ids,
        **format_options(format, input, file_encoding, **options),
    )
    try:
        written = _write(documents, output, complete_output, found, warn)
    except UnknownIdsError as err:  # named by the ids file's lines
        missing = sorted(err.missing, key=lambda i: ids[i])  # type: ignore[index]
        shown = ", ".join(f"{i!r} (line {ids[i]})" for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise AnnotationImportError(
            f"{counted(len(missing), 'id')} {'names' if len(missing) == 1 else 'name'} no document of {input}: {shown}; list the export's document ids, one per "
            "line (no header)",
            complete_ids,
            ids[missing[0]],
        ) from None
    outputs = [f"{written[False]} -> {output}"]
    if complete_output:
        outputs.append(f"{written[True]} complete -> {complete_output}")
    result = found.to_json()
    result.update(input=str(input), output=str(output), complete_output=complete_output)
    if report:
        write_json(dict(result, warning_messages=found.warnings), report)
    return result, found, outputs


def _write(
    documents: Iterable[Document],
    output: PathLike,
    complete_output: Optional[PathLike],
    found: ImportReport,
    warn: Callable[[str], None],
) -> Dict[bool, int]:
    """Writes ``documents`` to ``output``, the complete ones to ``complete_output`` instead when given, each
    file whole or not at all; ``warn`` gets each warning of the report ``found`` when every document is written,
    before the files appear. Returns how many documents each got (``True``: ``complete_output``)."""
    written = {False: 0, True: 0}
    with ExitStack() as stack:
        files = {False: stack.enter_context(writing(output))}
        if complete_output:
            files[True] = stack.enter_context(writing(complete_output))
        for document in documents:
            held_out = bool(complete_output) and document.is_complete
            files[held_out].write(jsonl_line(document))
            written[held_out] += 1
        for warning in found.warnings:
            warn(warning)
    return written
