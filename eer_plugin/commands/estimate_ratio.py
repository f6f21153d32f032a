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

from eer_plugin.annotation.simulators import VARIANTS
from eer_plugin.commands import reader_options, subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.errors import print_warning
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.runtime.encoders import DEFAULT_ENCODER

NAME = "eer-estimate-ratio"
DESCRIPTION = (
    "Estimate EER's entity_ratio (rho) and ratio_margin (gamma) from completely annotated documents: the share "
    "of entity subword tags under the encoder's tokenizer, with a bootstrap interval over documents."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from eer_plugin.data.corpus_counts import estimate_ratio as estimate  # here: the command imports no AllenNLP

    parser.add_argument(
        "data",
        help="corpus whose complete documents are counted: partial .jsonl (is_complete), or gold CoNLL/OntoNotes",
    )
    parser.add_argument(
        "--encoder",
        help="Hugging Face name or directory of the encoder you train with (default: EER_ENCODER if set, else "
        f"{DEFAULT_ENCODER}, the packaged one)",
    )
    parser.add_argument(
        "--partial",
        action="append",
        default=[],
        metavar="FILE",
        help="partial training data to check the estimate against (repeatable)",
    )
    add_option(
        parser,
        "--variant",
        choices=VARIANTS,
        default_from=(estimate, "partial_variant"),
        help="training-data variant applied to the partial documents (default %(default)s)",
    )
    reader_options.add_max_length_argument(parser)
    parser.add_argument(
        "--count-bookends",
        action="store_true",
        help="count the two bookend tokens of every chunk (EER_RATIO_BOOKENDS=true)",
    )
    add_option(
        parser,
        "--confidence",
        type=float,
        default_from=(estimate, "confidence"),
        help="interval level (default %(default)s)",
    )
    add_option(
        parser,
        "--resamples",
        type=int,
        default_from=(estimate, "resamples"),
        help="bootstrap resamples (default %(default)s)",
    )
    add_option(parser, "--seed", type=int, default_from=(estimate, "seed"), help="bootstrap seed (default %(default)s)")
    add_option(
        parser,
        "--min-margin",
        type=float,
        default_from=(estimate, "min_margin"),
        help="smallest suggested ratio_margin (default %(default)s)",
    )
    parser.add_argument("--output", metavar="JSON", help="also write the whole estimate as JSON")
    reader_options.add_reader_arguments(parser, "the data files")
    return parser


def run(args: argparse.Namespace) -> dict:
    from eer_plugin.data import corpus_counts

    result = corpus_counts.estimate_ratio(
        args.data,
        args.encoder,
        args.partial,
        args.variant,
        args.max_length,
        args.count_bookends,
        args.confidence,
        args.resamples,
        args.seed,
        args.min_margin,
        args.output,
        reader_options.reader_parameters(args),
        announce=print,
    )
    suggestion, partial_ratio, messages = result["suggested"], result["partial_annotated_ratio"], result["warnings"]

    level = f"{100 * args.confidence:g}%"
    print(
        f"{result['documents']} complete documents, {result['subwords']} subwords ({result['encoder']}, bookends {'counted' if args.count_bookends else 'excluded'})"
    )
    print(
        f"entity subword ratio {result['ratio']:.3f}  {level} interval [{result['low']:.3f}, {result['high']:.3f}]  ({args.resamples} bootstrap resamples over documents)"
    )
    for entity_type, values in result["per_type"].items():
        print(f"  {entity_type:<10} {values['ratio']:.3f}  [{values['low']:.3f}, {values['high']:.3f}]")
    if partial_ratio is not None:
        print(
            f"{result['partial_documents']} partial documents ({args.variant}): annotated entity ratio {partial_ratio:.3f} (a lower bound of theirs)"
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
        print_warning(message)
    return result


# FormatError is a DocumentError
run_or_exit, main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (DocumentError, ValueError, OSError)
)  # OutputError is a ValueError
