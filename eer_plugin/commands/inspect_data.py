"""``eer-ner eer-inspect FILE [FILE ...]``: what the readers make of a corpus, before any training.

For every file (CoNLL columns, OntoNotes, partial JSON lines) it prints the character encoding and
tag scheme used and why, the documents (from ``-DOCSTART-`` lines or grouped sentences), sentences,
tokens, entity spans per type (conlleval's rule), chunks that start with ``I-`` after ``O`` or
another type, the longest sentence and document in words and in the encoder's subword tokens beside
the chunk size, the words the encoder sees only as its unknown subword, and the subword entity ratio of
the complete documents (the number EER's ``entity_ratio`` band is about), then warnings with the option
that changes what they are about.
``--json`` prints one JSON object per file instead. A file that does not parse prints its file,
line and reason, one ``eer-ner eer-inspect: error: FILE:LINE: ...`` line (``--json``: its object); the command then
exits with status 1 after the other files.
The counting is in :mod:`eer_plugin.corpus.inspection`.
"""

import argparse
import json
import sys
from typing import Any, Dict

from eer_plugin.commands import reader_options, subcommand
from eer_plugin.common.errors import print_error, printable
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.runtime.encoders import DEFAULT_ENCODER

NAME = "eer-inspect"
DESCRIPTION = (
    "Show what the readers make of corpus files: encoding, tag scheme, documents, sentences, tokens, entity spans "
    "per type, I- chunk starts, lengths in subwords and the subword entity ratio, and what deserves a look."
)
#: ``--encoder`` value that skips the subword statistics
NO_ENCODER = "none"


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="corpus files: CoNLL columns, OntoNotes *_conll (or a directory), partial .jsonl",
    )
    parser.add_argument(
        "--encoder",
        help="encoder whose tokenizer counts subwords (default: EER_ENCODER if set, else "
        f"{DEFAULT_ENCODER}, the packaged one; "
        f"'{NO_ENCODER}': no subword statistics)",
    )
    reader_options.add_max_length_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object per file (JSON lines)")
    reader_options.add_reader_arguments(parser, "the files")
    return parser


def run(args: argparse.Namespace) -> list:
    from eer_plugin.data import corpus_counts  # here: importing the command imports no AllenNLP

    reports, failed = [], 0
    files = corpus_counts.inspect_files(
        args.files, args.encoder, args.encoder != NO_ENCODER, args.max_length, reader_options.reader_options(args)
    )
    for _, report, error in files:
        if error is not None:
            failed += 1
            if args.json:
                print(json.dumps(report))
            else:  # the error names the file and line: one line of the command's form, as its other errors
                print_error(error, getattr(args, "prog", NAME))
        else:
            print(json.dumps(report) if args.json else describe(report))
        reports.append(report)
    if failed:
        sys.exit(1)
    return reports


def describe(report: Dict[str, Any]) -> str:
    """The report as text, one fact a line."""
    lines = [f"== {report['file']} ==", f"format              {report['format']}"]
    lines.append(f"character encoding  {report['file_encoding']} ({report['file_encoding_reason']})")
    lines.append(f"tag scheme          {report['tag_scheme'] or 'none'} ({report['tag_scheme_reason']})")
    origin = {
        "docstart": "from -DOCSTART- lines",
        "grouped": f"groups of {report['group_size']} sentences, no -DOCSTART- line",
        "json_lines": "one per JSON line",
        "begin_document": "from '#begin document' parts",
    }[report["documents_from"]]
    if report.get("named_documents"):
        origin += f", {report['named_documents']} named by '# id =' lines"
    lines.append(f"documents           {report['documents']} ({origin}; {report['complete_documents']} complete)")
    lines.append(f"sentences           {report['sentences']}")
    lines.append(f"tokens              {report['tokens']}")
    per_type = ", ".join(f"{t} {n}" for t, n in report["spans"].items())
    kind = "annotated spans " if report["format"] == "jsonl" else "entity spans    "
    lines.append(f"{kind}    {report['spans_total']}" + (f" ({per_type})" if per_type else ""))
    if "negative_spans" in report:
        lines.append(f"negative spans      {report['negative_spans']}")
    if "i_starts" in report:
        shown = ", ".join(f"line {s['line']} ({s['tag']} after {s['after']})" for s in report["i_start_lines"])
        lines.append(
            f"I- chunk starts     {report['i_starts']} (chunks that start with I- after O or another type)"
            + (f": {shown}" if shown else "")
        )
    for key in ("sentence", "document"):
        text = f"longest {key:<9}   {_longest(report[f'longest_{key}_words'], 'words')}"
        if "encoder" in report:
            text += (
                f"; {_longest(report[f'longest_{key}_subwords'], 'subwords')} of a chunk's {report['chunk_subwords']}"
            )
        lines.append(text)
    if report.get("sentences_over_chunk"):
        lines.append(
            f"sentences over a chunk  {report['sentences_over_chunk']} (the reader cuts them at word boundaries)"
        )
    if "encoder" in report:
        ratio, complete = report["subword_entity_ratio"], report["complete_documents"]
        encoder = f"{report['encoder']['name']}, {report['encoder']['from']}"
        lines.append(
            f"subword entity ratio {ratio:.3f} of the {complete} complete documents ({encoder}; bookends excluded)"
            if ratio is not None
            else f"subword entity ratio n/a: no complete document ({encoder})"
        )
    lines.extend(f"warning: {message}" for message in report["warnings"])
    return "\n".join(printable(line) for line in lines)  # a file name or type with a line break stays on its line


def _longest(item: Dict[str, Any], unit: str) -> str:
    return f"{item[unit]} {unit} (document {item['document']}, {item['source']})"


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, run, (DocumentError, ValueError))
