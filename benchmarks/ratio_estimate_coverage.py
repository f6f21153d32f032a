"""How many complete documents does ``allennlp eer-estimate-ratio`` need?

Counts every document of a gold corpus exactly as the estimate does (the training reader's chunks under
the encoder's tokenizer, bookends excluded; :mod:`eer_plugin.annotation.ratio_estimate`), takes the corpus's
own ratio as the truth, then draws ``--trials`` random samples of n documents for each ``--documents``
size and runs the estimate and its suggestion on each. Prints, per n: how often the bootstrap interval
and the suggested band [rho - gamma, rho + gamma] contain the corpus ratio, the interval's mean width,
and the 5-95% range of the point estimate (how far one draw of n documents can land).

    .venv/bin/python benchmarks/ratio_estimate_coverage.py ../shared/data/conll2003-en/train.txt \
        --encoder all-MiniLM-L6-v2 --documents 10 20 50 100 --trials 300 [--confidence 0.95 0.99]

Every level is measured on the same draws of n documents.
"""

import argparse
import sys

import numpy as np


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a gold corpus (CoNLL / OntoNotes / complete .jsonl)")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--documents", type=int, nargs="+", default=[10, 20, 50, 100], help="sample sizes n")
    parser.add_argument("--trials", type=int, default=300, help="random samples per n")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples per estimate")
    parser.add_argument(
        "--confidence", type=float, nargs="+", default=[0.95], help="interval levels (eer-estimate-ratio --confidence)"
    )
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="also write the table as JSON")
    args = parser.parse_args(argv)

    from eer_plugin.annotation import ratio_estimate
    from eer_plugin.data.corpus_counts import document_counts
    from eer_plugin.data.reader import PartialDocumentReader

    reader = PartialDocumentReader(model_name=args.encoder, max_length=args.max_length)
    docs = [d for d in reader.read_documents(args.data) if d.is_complete]
    counts = [document_counts(reader, doc, count_bookends=False, latent_is_entity=True) for doc in docs]
    truth = ratio_estimate.ratio(counts)
    print(f"{args.data}: {len(docs)} complete documents, corpus entity subword ratio {truth:.3f} ({args.encoder})")
    rng = np.random.default_rng(args.seed)
    rows = []
    for n in args.documents:
        if n > len(docs):
            print(f"n={n}: more than the corpus's {len(docs)} documents, skipped", file=sys.stderr)
            continue
        inside = dict.fromkeys(args.confidence, 0)
        band_inside = dict(inside)
        widths = {c: [] for c in args.confidence}
        points = []
        for trial in range(args.trials):
            sample = [counts[i] for i in rng.choice(len(counts), n, replace=False)]
            for confidence in args.confidence:
                result = ratio_estimate.estimate(sample, args.resamples, confidence, seed=trial)
                band = ratio_estimate.suggest(result["low"], result["high"])
                inside[confidence] += result["low"] <= truth <= result["high"]
                band_inside[confidence] += abs(band["entity_ratio"] - truth) <= band["ratio_margin"]
                widths[confidence].append(result["high"] - result["low"])
            points.append(result["ratio"])
        low, high = np.quantile(points, [0.05, 0.95])
        for confidence in args.confidence:
            row = {
                "documents": n,
                "confidence": confidence,
                "interval_covers": inside[confidence] / args.trials,
                "band_covers": band_inside[confidence] / args.trials,
                "mean_width": float(np.mean(widths[confidence])),
                "estimate_p05": float(low),
                "estimate_p95": float(high),
            }
            rows.append(row)
            print(
                f"n={n:>4}: {confidence:.0%} interval contains {truth:.3f} in {row['interval_covers']:.0%} of {args.trials} draws, the suggested band in "
                f"{row['band_covers']:.0%}; mean interval width {row['mean_width']:.3f}; point estimate 5-95% {low:.3f}-{high:.3f}"
            )
    result = {
        "data": args.data,
        "encoder": args.encoder,
        "documents": len(docs),
        "corpus_ratio": truth,
        "trials": args.trials,
        "rows": rows,
    }
    if args.output:
        from eer_plugin.common.atomic import write_json

        write_json(result, args.output)
    return result


if __name__ == "__main__":
    main()
