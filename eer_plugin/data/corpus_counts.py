"""What ``eer-estimate-ratio`` and ``eer-inspect`` count on a corpus, on the training reader's chunks
(:class:`~eer_plugin.data.reader.PartialDocumentReader`: the encoder's tokenizer, the same chunking): each
document's subword and entity positions as EER's ratio loss counts them, the entity ratio estimate of the
complete documents (maths in :mod:`eer_plugin.annotation.ratio_estimate`) and the per-file inspection reports
(:mod:`eer_plugin.corpus.inspection`) with their subword statistics."""

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from eer_plugin.annotation import ratio_estimate
from eer_plugin.annotation.simulators import DEFAULT_VARIANT, variant
from eer_plugin.common.atomic import write_json
from eer_plugin.common.errors import shortened
from eer_plugin.common.outputs import check_outputs
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import FormatError
from eer_plugin.corpus.inspection import SubwordCounts, inspect_file
from eer_plugin.data.reader import PartialDocumentReader
from eer_plugin.runtime.encoders import default_encoder


def document_counts(reader, doc: Document, count_bookends: bool, latent_is_entity: bool) -> ratio_estimate.RatioCounts:
    """A document's subword and entity positions on the training reader's chunks, as the ratio loss counts them."""
    return ratio_estimate.chunk_counts(doc.id, (c.labels for c in reader.chunk(doc)), count_bookends, latent_is_entity)


def _add(total: ratio_estimate.RatioCounts, counts: ratio_estimate.RatioCounts) -> None:
    """Adds a document's positions to ``total`` (their ratio is that of the documents' summed counts)."""
    total.subwords += counts.subwords
    total.entities.update(counts.entities)


class _Annotated:
    """The annotated positions of partial documents in a training-data variant, summed one document at a time
    (their ratio is that of the summed counts)."""

    def __init__(self, reader, variant_name: str, count_bookends: bool) -> None:
        self.reader, self.variant, self.count_bookends = reader, variant_name, count_bookends
        self.total, self.documents = ratio_estimate.RatioCounts("partial documents"), 0

    def add(self, doc: Document) -> None:
        for kept in variant([doc], self.variant):  # the variant keeps or cuts each document alone
            _add(self.total, document_counts(self.reader, kept, self.count_bookends, False))
            self.documents += 1


def _reader(encoder: str, max_length: Optional[int], **options: Any) -> PartialDocumentReader:
    if max_length is not None:
        options["max_length"] = max_length
    return PartialDocumentReader(model_name=encoder, **options)


def estimate_ratio(
    data: str,
    encoder: Optional[str] = None,
    partial: Sequence[str] = (),
    partial_variant: str = DEFAULT_VARIANT,
    max_length: Optional[int] = None,
    count_bookends: bool = False,
    confidence: float = ratio_estimate.DEFAULT_CONFIDENCE,
    resamples: int = ratio_estimate.DEFAULT_RESAMPLES,
    seed: int = 0,
    min_margin: float = ratio_estimate.DEFAULT_MIN_MARGIN,
    output: Optional[str] = None,
    reader_parameters: Optional[Dict[str, Any]] = None,
    announce: Callable[[str], None] = lambda line: None,
) -> Dict[str, Any]:
    """``eer-estimate-ratio``: the entity ratio of the complete documents of ``data`` as the training reader
    (``encoder``, ``max_length`` subwords per chunk: the reader's default when None; ``reader_parameters``) chunks
    them, with a bootstrap interval (``resamples``, ``confidence``, ``seed``), the suggested ``entity_ratio`` and
    ``ratio_margin`` (at least ``min_margin``), and the annotated ratio of the partial documents of ``data`` and of
    the ``partial`` files (in ``partial_variant``) with the warnings they call for; written to ``output`` as JSON
    when given. Without ``encoder`` the default one is used and ``announce`` gets a line that names it."""
    check_outputs([("DATA", data), *(("--partial", path) for path in partial)], [("--output", output)])
    ratio_estimate.check_options(confidence, resamples, min_margin)
    if encoder is None:
        encoder, source = default_encoder()
        announce(f"encoder: {encoder} ({source}; choose another with --encoder)")
    reader = _reader(encoder, max_length, **(reader_parameters or {}))
    complete: List[ratio_estimate.RatioCounts] = []  # each complete document's: the bootstrap draws documents
    annotated = _Annotated(reader, partial_variant, count_bookends)
    for doc in reader.iter_documents(data):  # one document at a time: what stays is its counts
        if doc.is_complete:
            complete.append(document_counts(reader, doc, count_bookends, True))
        else:
            annotated.add(doc)
    for path in partial:
        for doc in reader.iter_documents(path):
            if not doc.is_complete:
                annotated.add(doc)
    if not complete:
        raise DocumentError(
            f"{data}: no complete document (is_complete: true) to count; mark checked documents with "
            "eer-import --complete-ids, or pass a gold corpus"
        )
    result = ratio_estimate.estimate(complete, resamples, confidence, seed)
    suggestion = ratio_estimate.suggest(result["low"], result["high"], min_margin)
    partial_ratio = ratio_estimate.ratio([annotated.total]) if annotated.documents else None
    messages = ratio_estimate.warnings(result, suggestion, partial_ratio, annotated.documents)
    result.update(
        data=str(data),
        encoder=encoder,
        count_bookends=count_bookends,
        suggested=suggestion,
        partial_documents=annotated.documents,
        partial_variant=partial_variant,
        partial_annotated_ratio=partial_ratio,
        warnings=messages,
    )
    if output:
        write_json(result, output)
    return result


def inspect_files(
    files: Sequence[str],
    encoder: Optional[str] = None,
    subwords: bool = True,
    max_length: Optional[int] = None,
    reader_options: Optional[Dict[str, Any]] = None,
) -> Iterator[Tuple[str, Dict[str, Any], Optional[Exception]]]:
    """``eer-inspect``: ``(file, report, None)`` per file (:func:`~eer_plugin.corpus.inspection.inspect_file`), with the
    subword statistics and the subword entity ratio of its complete documents under ``encoder``'s tokenizer (the
    default encoder when None) unless ``subwords`` is False; ``(file, {"file", "line", "error"}, the error)`` for a
    file that does not parse."""
    reader = None
    if subwords:
        encoder, source = (encoder, "--encoder") if encoder else default_encoder()
        reader = _reader(encoder, max_length)
    for path in files:
        counting = _SubwordReport(reader, encoder, source) if reader is not None else None
        try:
            report = inspect_file(path, **(reader_options or {}), each=counting.add if counting else None)
        except (FormatError, DocumentError) as err:
            error = {
                "file": str(getattr(err, "path", path)),
                "line": getattr(err, "line", None),
                "error": shortened(getattr(err, "reason", str(err))),
            }
            yield path, error, err
            continue
        if counting is not None:
            report.update(counting.result(report["complete_documents"]))
            report["warnings"].extend(counting.subwords.warnings(encoder))
        yield path, report, None


class _SubwordReport:
    """What ``eer-inspect`` reports of a file on the reader's chunks, counted one document at a time
    (:meth:`add`): the longest sentence and document in subwords (:class:`SubwordCounts`) and the subword
    entity ratio of the complete documents (their positions summed)."""

    def __init__(self, reader: PartialDocumentReader, encoder: str, source: str) -> None:
        self.reader, self.encoder = reader, {"name": encoder, "from": source}
        unknown = reader.tokenizer.unk_token_id if reader.subwords is not None else None
        self.subwords = SubwordCounts(reader.tokenize_words, reader.max_length, unknown)
        self.complete = ratio_estimate.RatioCounts("complete documents")

    def add(self, doc: Document) -> None:
        self.subwords.add(doc)
        if doc.is_complete:
            _add(self.complete, document_counts(self.reader, doc, False, True))

    def result(self, complete_documents: int) -> Dict[str, Any]:
        ratio = ratio_estimate.ratio([self.complete]) if complete_documents else None
        return {"encoder": self.encoder, **self.subwords.result(), "subword_entity_ratio": ratio}
