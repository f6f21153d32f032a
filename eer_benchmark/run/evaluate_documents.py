"""The per-document evaluation of an archived model, as a command for ``allennlp eer-benchmark``'s
subprocess per run (the library is :mod:`eer_benchmark.run.evaluation`)::

    python -m eer_benchmark.run.evaluate_documents ARCHIVE TEST_DATA -o doc_counts.json [--o-cost C]
        [--train TRAIN_DATA --gold-train GOLD_TRAIN_DATA]
"""

import argparse
import sys
import time
from typing import Optional, Sequence

from eer_benchmark.run.evaluation import (
    BATCH_SIZE,
    counts_per_document,
    gold_entity_ratio,
    load_model,
    predict_document_spans,
    summarize,
    training_reader,
)
from eer_plugin.common.atomic import write_json
from eer_plugin.runtime.errors import check_entity_types


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eer_benchmark.run.evaluate_documents",
        description="Per-document tp/fp/fn of an archived model on gold data (and the gold subword ratio of its training data).",
    )
    parser.add_argument("archive", help="model.tar.gz")
    parser.add_argument("data", help="gold evaluation data")
    parser.add_argument("-o", "--output", required=True, help="output JSON")
    parser.add_argument("--o-cost", type=float, default=None, help="decoding O-cost (Raw+CD)")
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--train", help="the run's training data: also compute rho* (needs --gold-train)")
    parser.add_argument("--gold-train", help="the gold corpus the training data was simulated from")
    args = parser.parse_args(argv)
    import eer_plugin.allennlp_plugin  # noqa: F401  (registers the reader and models)

    started = time.time()
    model, reader, archive = load_model(args.archive, args.o_cost, args.cuda_device)
    docs = reader.read_documents(args.data)
    check_entity_types(model, docs, args.data)
    counts = counts_per_document(docs, predict_document_spans(model, reader, docs, args.batch_size, args.cuda_device))
    result = {
        "archive": args.archive,
        "data": args.data,
        "o_cost": args.o_cost,
        "counts": counts,
        "summary": summarize(counts),
    }
    if args.train:
        if not args.gold_train:
            parser.error("--train needs --gold-train")
        result["ratio"] = gold_entity_ratio(training_reader(archive), args.train, args.gold_train)
    result["seconds"] = time.time() - started
    write_json(result, args.output)
    summary = result["summary"]
    print(
        f"{len(counts)} documents: P {summary['precision']:.4f} R {summary['recall']:.4f} F1 {summary['f1']:.4f} -> {args.output}"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
