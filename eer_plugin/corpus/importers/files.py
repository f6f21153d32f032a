"""``eer-import``'s run: an annotation tool's export file -> partial-annotation JSON lines (the complete documents
optionally in a file of their own) and the import report as JSON. The text is split into words by the predictor's
raw-text tokenizer (:func:`eer_plugin.corpus.tokenizer.tokenize_text`), so ``predict`` on the same text yields
character offsets into the same characters. Outputs follow the output policy (:mod:`eer_plugin.common.outputs`):
checked against the inputs before anything is read, each written whole or not at all."""

from typing import Callable, Dict, List, Optional, Tuple

from eer_plugin.common.atomic import write_json
from eer_plugin.common.outputs import check_outputs
from eer_plugin.common.wording import counted
from eer_plugin.corpus.formats import PathLike, write_jsonl
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING
from eer_plugin.corpus.importers import (
    AnnotationImportError,
    ImportReport,
    UnknownIdsError,
    import_documents,
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
    ``report``). ``complete``: every document is complete; ``complete_ids``: a file of the ids of the complete
    ones. ``warn`` gets each warning of the import before anything is written. Returns ``(the report as JSON, the
    report, a line per file written)``."""
    check_outputs(
        [("INPUT", input), ("--complete-ids", complete_ids)],
        [("OUTPUT", output), ("--complete-output", complete_output), ("--report", report)],
    )
    ids = read_ids(complete_ids) if complete_ids else None
    try:
        documents, found = import_documents(
            format,
            input,
            tokenize_text,
            complete=complete,
            complete_ids=ids,
            **format_options(format, input, file_encoding, **options),
        )
    except UnknownIdsError as err:  # named by the ids file's lines
        missing = sorted(err.missing, key=lambda i: ids[i])  # type: ignore[index]
        shown = ", ".join(f"{i!r} (line {ids[i]})" for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise AnnotationImportError(
            f"{counted(len(missing), 'id')} {'names' if len(missing) == 1 else 'name'} no document of {input}: {shown}; list the export's document ids, one per "
            "line (no header)",
            complete_ids,
            ids[missing[0]],
        ) from None
    for warning in found.warnings:
        warn(warning)
    outputs: List[str] = []
    if complete_output:
        held_out = [d for d in documents if d.is_complete]
        documents = [d for d in documents if not d.is_complete]
        write_jsonl(held_out, complete_output)
        outputs.append(f"{len(held_out)} complete -> {complete_output}")
    write_jsonl(documents, output)
    outputs.insert(0, f"{len(documents)} -> {output}")
    result = found.to_json()
    result.update(input=str(input), output=str(output), complete_output=complete_output)
    if report:
        write_json(dict(result, warning_messages=found.warnings), report)
    return result, found, outputs
