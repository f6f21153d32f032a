"""spaCy v3 ``.spacy`` files (``DocBin``, the training corpus format of ``spacy train``).

Per ``Doc``: the text is ``doc.text`` (re-tokenized by eer-ner's word tokenizer, so that the
predictor maps back to the same characters); the entity spans are ``doc.ents``; the entity
annotation of each token is read from ``Token.ent_iob``:

* ``0`` (missing, e.g. ``doc.set_ents(..., default="missing")`` or ``-`` in BILUO): **latent**;
* ``2`` (``O``) in a document that also has missing tokens: each run of ``O`` tokens becomes a
  negative span (observed "no entity");
* a document without any missing token is **complete** (spaCy's own
  ``doc.has_annotation("ENT_IOB", require_complete=True)``).

Spans in ``doc.spans[incorrect_spans_key]`` (spaCy's ``ner`` component option
``incorrect_spans_key``; default key ``incorrect_spans``) are negative spans of their label (not an
entity of this type here). Document ids: ``doc.user_data["id"]`` when set, else
``<file stem>-<index>``. Needs spaCy (imported only here).
"""

from pathlib import Path
from typing import Callable, Iterable, Iterator

from eer_plugin.corpus.formats import FormatError, PathLike
from eer_plugin.corpus.formats.files import check_input_file, tar_first_member
from eer_plugin.corpus.formats.office import other_program_fix, tar_fix
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, RawDocument, RawSpan
from eer_plugin.corpus.importers.values import as_id

#: the ``incorrect_spans_key`` looked up by default
INCORRECT_SPANS_KEY = "incorrect_spans"
#: ``Token.ent_iob`` values
MISSING, INSIDE, OUTSIDE, BEGIN = 0, 1, 2, 3


def read(
    path: PathLike, report: ImportReport, file_encoding: str = "auto", incorrect_spans_key: str = INCORRECT_SPANS_KEY
) -> Iterator[RawDocument]:
    """The documents of the DocBin, one ``Doc`` at a time (the file's bytes are read whole: a DocBin is one
    msgpack value)."""
    try:
        from spacy.tokens import DocBin
        from spacy.vocab import Vocab
    except ImportError:  # pragma: no cover (spaCy is in the venv)
        raise AnnotationImportError("reading .spacy files needs spaCy: pip install 'spacy>=3'", path) from None
    try:
        check_input_file(path)
    except FormatError as err:
        raise AnnotationImportError(err.reason, path) from None
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise AnnotationImportError(f"cannot read file: {err.strerror or err}", path) from None
    fix = other_program_fix(data[:16], data, str(path))
    if fix is not None:
        raise AnnotationImportError(fix, path)
    member = tar_first_member(path)  # a model.tar.gz (a DocBin is gzip-compressed too)
    if member is not None:
        raise AnnotationImportError(tar_fix(member), path)
    stem = Path(path).name.split(".")[0] or "spacy"
    index = -1
    for index, doc in enumerate(_docs(lambda: DocBin().from_bytes(data).get_docs(Vocab()), path)):
        doc_id = as_id(doc.user_data.get("id") if isinstance(doc.user_data, dict) else None, f"{stem}-{index}", path)
        missing = [token.ent_iob == MISSING for token in doc]
        raw = RawDocument(
            doc_id,
            doc.text,
            complete=bool(len(doc)) and not any(missing),
            source=f"{path}: doc {index}",
            path=str(path),
        )
        for position, ent in enumerate(doc.ents):
            raw.spans.append(RawSpan(ent.start_char, ent.end_char, ent.label_, f"doc.ents[{position}]"))
        if not raw.complete:
            run_start = None
            for token in list(doc) + [None]:
                outside = token is not None and token.ent_iob == OUTSIDE
                if outside and run_start is None:
                    run_start = token
                elif not outside and run_start is not None:
                    last = doc[(token.i if token is not None else len(doc)) - 1]
                    raw.spans.append(
                        RawSpan(
                            run_start.idx,
                            last.idx + len(last.text),
                            None,
                            f"O tokens {run_start.i}-{last.i + 1}",
                            negative=True,
                        )
                    )
                    run_start = None
        if incorrect_spans_key in doc.spans:
            for position, span in enumerate(doc.spans[incorrect_spans_key]):
                raw.spans.append(
                    RawSpan(
                        span.start_char,
                        span.end_char,
                        span.label_ or None,
                        f"doc.spans[{incorrect_spans_key!r}][{position}]",
                        negative=True,
                    )
                )
        yield raw
    if index < 0:
        raise AnnotationImportError("the DocBin holds no documents", path)


def _docs(docs: Callable[[], Iterable], path: PathLike) -> Iterator:
    """The ``Doc`` objects that ``docs()`` gives one at a time; an error of a file that is not a DocBin (msgpack,
    zlib) is an :class:`AnnotationImportError`."""
    try:
        yield from docs()
    except Exception as err:
        raise AnnotationImportError(f"not a spaCy DocBin (.spacy) file: {type(err).__name__}: {err}", path) from None
