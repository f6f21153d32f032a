"""``allennlp eer-estimate-ratio DATA [--encoder NAME]``: the entity ratio rho, measured instead of guessed.

Reads DATA with the training reader (``eer_documents``: any corpus format, the encoder's tokenizer,
the same chunking; the reader options of :mod:`eer_plugin.commands.reader_options`; without
``--encoder``, ``EER_ENCODER`` or the package's default encoder, named in the output) and counts, on its *complete* documents (every document of a gold CoNLL /
OntoNotes file; ``is_complete`` ones of partial JSON lines), the share of entity subword tags as
EER's ratio loss counts it (bookends excluded unless ``--count-bookends``), overall and per type,
with a bootstrap interval over documents (maths in :mod:`eer_plugin.annotation.ratio_estimate`). Prints
the suggested ``entity_ratio`` / ``ratio_margin`` as JSON and as the ``-o`` of a training
(``model.entity_ratio``, ``model.ratio_margin``; ``train --ratio-estimate`` reads ``--output``), and warns when fewer than 20 complete documents make the interval wide
or when the partial data's annotated entities alone exceed rho + gamma (the partial documents of
DATA and of ``--partial`` files, in the training ``--variant``).
"""

import argparse
import json
import sys
from typing import List

from eer_plugin.annotation import ratio_estimate
from eer_plugin.annotation.simulators import VARIANTS, variant
from eer_plugin.commands import reader_options, subcommand
from eer_plugin.common.outputs import check_outputs
from eer_plugin.corpus.documents import Document, DocumentError

NAME = "eer-estimate-ratio"
DESCRIPTION = (
    "Estimate EER's entity_ratio (rho) and ratio_margin (gamma) from completely annotated documents: the share "
    "of entity subword tags under the encoder's tokenizer, with a bootstrap interval over documents."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "data",
        help="corpus whose complete documents are counted: partial .jsonl (is_complete), or gold CoNLL/OntoNotes",
    )
    parser.add_argument(
        "--encoder",
        help="Hugging Face name or directory of the encoder you train with (default: EER_ENCODER if set, else all-MiniLM-L6-v2, the packaged one)",
    )
    parser.add_argument(
        "--partial",
        action="append",
        default=[],
        metavar="FILE",
        help="partial training data to check the estimate against (repeatable)",
    )
    parser.add_argument(
        "--variant",
        choices=VARIANTS,
        default="all",
        help="training-data variant applied to the partial documents (default all)",
    )
    parser.add_argument(
        "--max-length", type=int, default=512, help="subwords per chunk, bookends included (EER_MAX_LENGTH)"
    )
    parser.add_argument(
        "--count-bookends",
        action="store_true",
        help="count the two bookend tokens of every chunk (EER_RATIO_BOOKENDS=true)",
    )
    parser.add_argument(
        "--confidence", type=float, default=ratio_estimate.DEFAULT_CONFIDENCE, help="interval level (default 0.95)"
    )
    parser.add_argument(
        "--resamples", type=int, default=ratio_estimate.DEFAULT_RESAMPLES, help="bootstrap resamples (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument(
        "--min-margin",
        type=float,
        default=ratio_estimate.DEFAULT_MIN_MARGIN,
        help="smallest suggested ratio_margin (default 0.01)",
    )
    parser.add_argument("--output", metavar="JSON", help="also write the whole estimate as JSON")
    reader_options.add_reader_arguments(parser, "the data files")
    return parser


def document_counts(
    reader, docs: List[Document], count_bookends: bool, latent_is_entity: bool
) -> List[ratio_estimate.RatioCounts]:
    """Each document's subword and entity positions on the training reader's chunks, as the ratio loss counts them."""
    return [
        ratio_estimate.chunk_counts(doc.id, (c.labels for c in reader.chunk(doc)), count_bookends, latent_is_entity)
        for doc in docs
    ]


def run(args: argparse.Namespace) -> dict:
    from eer_plugin.data.reader import PartialDocumentReader
    from eer_plugin.runtime.encoders import default_encoder

    check_outputs([("DATA", args.data), *(("--partial", path) for path in args.partial)], [("--output", args.output)])
    if args.encoder is None:
        args.encoder, source = default_encoder()
        print(f"encoder: {args.encoder} ({source}; choose another with --encoder)")
    reader = PartialDocumentReader(
        model_name=args.encoder, max_length=args.max_length, **reader_options.reader_parameters(args)
    )
    docs = reader.read_documents(args.data)
    complete = [d for d in docs if d.is_complete]
    partial = [d for d in docs if not d.is_complete]
    for path in args.partial:
        partial.extend(d for d in reader.read_documents(path) if not d.is_complete)
    if not complete:
        raise DocumentError(
            f"{args.data}: no complete document (is_complete: true) to count; mark checked documents with "
            "eer-import --complete-ids, or pass a gold corpus"
        )
    result = ratio_estimate.estimate(
        document_counts(reader, complete, args.count_bookends, True), args.resamples, args.confidence, args.seed
    )
    suggestion = ratio_estimate.suggest(result["low"], result["high"], args.min_margin)
    partial = variant(partial, args.variant)
    partial_ratio = (
        ratio_estimate.ratio(document_counts(reader, partial, args.count_bookends, False)) if partial else None
    )
    messages = ratio_estimate.warnings(result, suggestion, partial_ratio, len(partial))
    result.update(
        data=str(args.data),
        encoder=args.encoder,
        count_bookends=args.count_bookends,
        suggested=suggestion,
        partial_documents=len(partial),
        partial_variant=args.variant,
        partial_annotated_ratio=partial_ratio,
        warnings=messages,
    )

    level = f"{100 * args.confidence:g}%"
    print(
        f"{result['documents']} complete documents, {result['subwords']} subwords ({args.encoder}, bookends {'counted' if args.count_bookends else 'excluded'})"
    )
    print(
        f"entity subword ratio {result['ratio']:.3f}  {level} interval [{result['low']:.3f}, {result['high']:.3f}]  ({args.resamples} bootstrap resamples over documents)"
    )
    for entity_type, values in result["per_type"].items():
        print(f"  {entity_type:<10} {values['ratio']:.3f}  [{values['low']:.3f}, {values['high']:.3f}]")
    if partial_ratio is not None:
        print(
            f"{len(partial)} partial documents ({args.variant}): annotated entity ratio {partial_ratio:.3f} (a lower bound of theirs)"
        )
    print("suggested: " + json.dumps(suggestion))
    print(
        "-o '"
        + json.dumps(
            {"model.entity_ratio": suggestion["entity_ratio"], "model.ratio_margin": suggestion["ratio_margin"]}
        )
        + "'"
    )
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    if args.output:
        from eer_plugin.common.atomic import write_json

        write_json(result, args.output)
    return result


# FormatError is a DocumentError
run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (DocumentError, ValueError, OSError)
)  # OutputError is a ValueError
