"""The study behind the binding control's default constants (issue 26): how ``c`` (``price_penalty``, the
price's immediate slope) and ``eta`` (``price_rate``, the multipliers' step) hold bands of the ratio grid.

Each row is one EER-short run (CoNLL-2003 EE-1000, seed 0, MiniLM, the plan's settings) under the binding
control: its band, ``c`` and ``eta``, the training ``rho_hat`` of every epoch, the final one, the worst
distance outside the band over the last five epochs (how far the swing reaches), and the test span F1
that AllenNLP reports. Rows come from run directories (``metrics_epoch_*.json``, ``metrics.json``,
``config.json``) or from the benchmark's run records (``records.jsonl``, :mod:`eer_benchmark.run.records`)::

    python -m eer_benchmark.report.control_study -o docs/results/control_constants.csv \\
        --runs 10,0.1=runs/tune/c10_eta0.1 --records 30,1=runs/old-bind-c30/records.jsonl \\
        --records 10,1=docs/results/records.jsonl

writes the CSV and prints the table that ``docs/data.md`` shows between :data:`START` and :data:`END`
(``tests/test_docs.py`` checks that it is what :func:`table_markdown` makes of the committed CSV)."""

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

from eer_benchmark.report.guide import between
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.core.ratio_control import DEFAULT_PRICE_PENALTY, DEFAULT_PRICE_RATE

START = "<!-- control-constants: generated from docs/results/control_constants.csv; do not edit -->"
END = "<!-- /control-constants -->"
FIELDS = [
    "band_low",
    "band_high",
    "c",
    "eta",
    "source",
    "epochs",
    "rho_hat_by_epoch",
    "final_rho_hat",
    "worst_outside_last5",
    "test_f1",
]
#: the ratio grid's runs under the binding control in the plan's records (the plan's band is the ablation's run)
GRID = "/binding-ratio-control/EE/eer_short"


def _row(
    band: Sequence[float], c: float, eta: float, source: str, epochs: List[dict], final: Optional[dict]
) -> Dict[str, str]:
    low, high = round(band[0] - band[1], 4), round(band[0] + band[1], 4)
    ratios = [float(m["training_rho_hat"]) for m in epochs]
    outside = [max(0.0, low - r, r - high) for r in ratios[-5:]]
    f1 = final.get("test_f1-measure-overall") if final else None
    return {
        "band_low": f"{low:.2f}",
        "band_high": f"{high:.2f}",
        "c": f"{c:g}",
        "eta": f"{eta:g}",
        "source": source,
        "epochs": str(len(ratios)),
        "rho_hat_by_epoch": " ".join(f"{r:.3f}" for r in ratios),
        "final_rho_hat": f"{ratios[-1]:.3f}",
        "worst_outside_last5": f"{max(outside):.3f}",
        "test_f1": "" if f1 is None else f"{100 * f1:.1f}",
    }


def _epochs(files: Dict[str, str]) -> List[dict]:
    names = sorted(
        (n for n in files if n.startswith("metrics_epoch_")),
        key=lambda n: int(n[len("metrics_epoch_") : -len(".json")]),
    )
    return [json.loads(files[n]) for n in names]


def from_run_dir(directory: Path, c: float, eta: float) -> Dict[str, str]:
    files = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.json")}
    model = json.loads(files["config.json"])["model"]
    final = json.loads(files["metrics.json"]) if "metrics.json" in files else None
    epochs = _epochs(files)
    source = "exploratory" + ("" if final else f", stopped after {len(epochs)} epochs")
    return _row((model["entity_ratio"], model["ratio_margin"]), c, eta, source, epochs, final)


def from_records(path: Path, c: float, eta: float) -> Iterator[Dict[str, str]]:
    source = (
        "benchmark plan"
        if (c, eta) == (DEFAULT_PRICE_PENALTY, DEFAULT_PRICE_RATE)
        else "benchmark plan, earlier default"
    )
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if GRID not in record["dir"] or "/eer_shortest/" in record["dir"] or "all-MiniLM-L6-v2" not in record["dir"]:
            continue
        files = record["files"]
        result = json.loads(files["result.json"])
        yield _row(
            (result["entity_ratio"], result["ratio_margin"]),
            c,
            eta,
            source,
            _epochs(files),
            json.loads(files["metrics.json"]),
        )


def table_markdown(rows: List[Dict[str, str]]) -> str:
    """The table of ``docs/data.md``: one row per run, by band, then ``c`` and ``eta``."""
    ordered = sorted(
        rows, key=lambda r: (float(r["band_low"]), float(r["band_high"]), -float(r["c"]), -float(r["eta"]))
    )
    lines = [
        "| band | c | eta | final rho_hat | worst outside, last 5 epochs | test F1 | epochs | run |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in ordered:
        lines.append(
            f"| [{r['band_low']}, {r['band_high']}] | {r['c']} | {r['eta']} | {r['final_rho_hat']} | {r['worst_outside_last5']} "
            f"| {r['test_f1'] or '-'} | {r['epochs']} | {r['source']} |"
        )
    return "\n".join(lines)


def read_csv(text: str) -> List[Dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def region(text: str) -> Optional[str]:
    """What ``text`` holds between :data:`START` and :data:`END` (None without the markers)."""
    return between(text, START, END)


def _constants(value: str) -> tuple:
    constants, _, path = value.partition("=")
    c, _, eta = constants.partition(",")
    if not path or not eta:
        raise argparse.ArgumentTypeError(f"expected C,ETA=PATH (for example 10,1=runs/tune/c10_eta1), got {value!r}")
    return float(c), float(eta), Path(path)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, required=True, help="the CSV to write")
    parser.add_argument(
        "--runs", type=_constants, action="append", default=[], help="C,ETA=RUN_DIR: one training run directory"
    )
    parser.add_argument(
        "--records",
        type=_constants,
        action="append",
        default=[],
        help="C,ETA=RECORDS: the grid's bind runs of a records file",
    )
    args = parser.parse_args(argv)
    rows = [from_run_dir(path, c, eta) for c, eta, path in args.runs]
    rows += [row for c, eta, path in args.records for row in from_records(path, c, eta)]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(args.output, buffer.getvalue())
    print(table_markdown(rows))


if __name__ == "__main__":
    main()
