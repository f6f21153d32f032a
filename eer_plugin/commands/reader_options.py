"""The reader options of every command that reads a corpus (``eer-simulate``, ``eer-estimate-ratio``,
``eer-inspect``), with the names the ``eer_documents`` dataset reader and the benchmark's dataset
entries use too: ``--format``, ``--tag-scheme``, ``--sentences-per-document``, ``--tag-column`` and
``--file-encoding`` (``format``, ``tag_scheme``, ... in a config or a plan), their defaults those of
:func:`~eer_plugin.corpus.formats.read_documents`; and ``--max-length`` of the commands that chunk like the
training reader. No AllenNLP here (``--max-length`` reads the reader's default when it is added)."""

import argparse
from typing import Any, Callable, Dict

from eer_plugin.commands.defaults import add_option
from eer_plugin.core.tags import normalize_encoding
from eer_plugin.corpus import formats
from eer_plugin.corpus.formats import FORMATS
from eer_plugin.runtime.setting_values import RULES, Rule


def tag_scheme(value: str) -> str:
    """``auto`` or a tag scheme name (IOB1, BIO/IOB2, BIOUL/BILOU, BIOES/IOBES), as argparse ``type``."""
    if value == "auto":
        return value
    try:
        return normalize_encoding(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def ruled(rule: Rule, convert: Callable[[str], Any] = str) -> Callable[[str], Any]:
    """An argparse ``type``: the option's text ``convert``-ed, refused unless ``rule`` (the reader's rule of the same
    setting, :mod:`eer_plugin.runtime.setting_values`) takes it."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = text
        if not rule.takes(value):
            raise argparse.ArgumentTypeError(f"expected {rule.expected}, got {text!r}")
        return value

    return parse


def positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value}")
    return number


def add_reader_arguments(parser: argparse.ArgumentParser, what: str = "the corpus") -> argparse._ArgumentGroup:
    """Adds the reader options to ``parser`` in a group of their own; :func:`reader_options` reads them back."""
    group = parser.add_argument_group("reading the corpus")
    add_option(
        group,
        "--format",
        choices=FORMATS,
        default_from=(formats.iter_documents, "format"),
        help="format of the files (default %(default)s: from name and content)",
    )
    add_option(
        group,
        "--tag-scheme",
        "--encoding",
        dest="tag_scheme",
        type=tag_scheme,
        default_from=(formats.iter_documents, "encoding"),
        metavar="SCHEME",
        help="tag scheme of CoNLL files (default %(default)s: BIOUL if L-/U- occur, BIOES if S-/E- do, IOB1 if a "
        "chunk starts with I- after O or another type, else BIO), IOB1, BIO (alias IOB2), BIOUL or BIOES (alias "
        "IOBES) (--encoding: its old name)",
    )
    add_option(
        group,
        "--sentences-per-document",
        type=positive_int,
        default_from=(formats, "DEFAULT_SENTENCES_PER_DOCUMENT"),
        given_only=True,
        metavar="K",
        help="CoNLL files without -DOCSTART- lines: sentences per document (default %(default)s)",
    )
    add_option(
        group,
        "--tag-column",
        type=ruled(RULES["dataset_reader.tag_column"], int),
        default_from=(formats.iter_documents, "tag_column"),
        metavar="N",
        help="CoNLL files: column of the tag, 0-based (default %(default)s: the last)",
    )
    add_option(
        group,
        "--file-encoding",
        type=ruled(RULES["dataset_reader.file_encoding"]),
        default_from=(formats.iter_documents, "file_encoding"),
        metavar="CODEC",
        help=f"character encoding of {what} (default %(default)s: UTF-8; a column file that is not valid UTF-8 is "
        "read as latin-1, with a warning) or a codec name such as latin-1",
    )
    return group


def reader_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The keyword arguments of :func:`~eer_plugin.corpus.formats.read_documents` from the parsed options."""
    return dict(
        format=args.format,
        encoding=args.tag_scheme,
        sentences_per_document=args.sentences_per_document,
        tag_column=args.tag_column,
        file_encoding=args.file_encoding,
    )


def reader_parameters(args: argparse.Namespace) -> Dict[str, Any]:
    """The same options as parameters of the ``eer_documents`` dataset reader."""
    options = reader_options(args)
    options["tag_scheme"] = options.pop("encoding")
    return options


def add_max_length_argument(parser: argparse.ArgumentParser) -> None:
    """``--max-length``: the subwords per chunk of the training reader (its default, ``EER_MAX_LENGTH``'s)."""
    from eer_plugin.data.reader import MAX_LENGTH, PartialDocumentReader  # AllenNLP: only for the commands that chunk

    add_option(
        parser,
        "--max-length",
        type=ruled(MAX_LENGTH, int),
        default_from=(PartialDocumentReader, "max_length"),
        help="subwords per chunk, bookends included (EER_MAX_LENGTH; default %(default)s)",
    )
