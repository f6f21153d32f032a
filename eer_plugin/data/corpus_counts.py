"""What ``eer-estimate-ratio`` and ``eer-inspect`` count on a corpus, on the training reader's chunks
(:class:`~eer_plugin.data.reader.PartialDocumentReader`: the encoder's tokenizer, the same chunking): each
document's subword and entity positions as EER's ratio loss counts them, the entity ratio estimate of the
complete documents (maths in :mod:`eer_plugin.annotation.ratio_estimate`) and the per-file inspection reports
(:mod:`eer_plugin.corpus.inspection`) with their subword statistics."""

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from eer_plugin.annotation import ratio_estimate
from eer_plugin.annotation.simulators import DEFAULT_VARIANT, variant
from eer_plugin.common.atomic import write_json
from eer_plugin.common.outputs import check_outputs
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import FormatError
from eer_plugin.corpus.inspection import inspect_file, subword_statistics
from eer_plugin.data.reader import PartialDocumentReader
from eer_plugin.runtime.encoders import default_encoder


def document_counts(
    reader, docs: List[Document], count_bookends: bool, latent_is_entity: bool
) -> List[ratio_estimate.RatioCounts]:
    """Each document's subword and entity positions on the training reader's chunks, as the ratio loss counts them."""
    return [
        ratio_estimate.chunk_counts(doc.id, (c.labels for c in reader.chunk(doc)), count_bookends, latent_is_entity)
        for doc in docs
    ]


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
    docs = reader.read_documents(data)
    complete = [d for d in docs if d.is_complete]
    partial_docs = [d for d in docs if not d.is_complete]
    for path in partial:
        partial_docs.extend(d for d in reader.read_documents(path) if not d.is_complete)
    if not complete:
        raise DocumentError(
            f"{data}: no complete document (is_complete: true) to count; mark checked documents with "
            "eer-import --complete-ids, or pass a gold corpus"
        )
    result = ratio_estimate.estimate(
        document_counts(reader, complete, count_bookends, True), resamples, confidence, seed
    )
    suggestion = ratio_estimate.suggest(result["low"], result["high"], min_margin)
    partial_docs = variant(partial_docs, partial_variant)
    partial_ratio = (
        ratio_estimate.ratio(document_counts(reader, partial_docs, count_bookends, False)) if partial_docs else None
    )
    messages = ratio_estimate.warnings(result, suggestion, partial_ratio, len(partial_docs))
    result.update(
        data=str(data),
        encoder=encoder,
        count_bookends=count_bookends,
        suggested=suggestion,
        partial_documents=len(partial_docs),
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
        try:
            report, docs = inspect_file(path, **(reader_options or {}))
        except (FormatError, DocumentError) as err:
            error = {
                "file": str(getattr(err, "path", path)),
                "line": getattr(err, "line", None),
                "error": getattr(err, "reason", str(err)),
            }
            yield path, error, err
            continue
        if reader is not None:
            report["encoder"] = {"name": encoder, "from": source}
            report.update(subword_statistics(docs, reader.tokenize_words, reader.max_length))
            complete = [d for d in docs if d.is_complete]
            counts = document_counts(reader, complete, False, True)
            report["subword_entity_ratio"] = ratio_estimate.ratio(counts) if complete else None
        yield path, report, None
