"""``allennlp eer-benchmark``: run a benchmark plan (the paper's results table and analyses) and
write the tables; with ``--docs DIR`` also ``DIR/results.md`` with the paper's numbers beside ours.

::

    allennlp eer-benchmark PLAN -o OUTDIR [--jobs N] [--shard i/n] [--runs PATTERN ...] [--dry-run]
        [--report-only] [--docs DIR [--paper JSON|TEX] [--command TEXT ...] [--note TEXT ...] [--column DATASET=COLUMN ...]
        [--checks RECORDS]]

The command line only: the run end to end is :func:`eer_benchmark.workflow.run_benchmark`; the plan language,
the runner and the report are in :mod:`eer_benchmark` (see its docstring and docs/benchmark.md, "Reproducing
the benchmark table").
"""

import argparse
import re
import sys
from typing import Optional, Sequence, Tuple

from eer_benchmark.plan.runs import PlanError
from eer_benchmark.run.runner import Runner
from eer_benchmark.workflow import run_benchmark as run_plan
from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.errors import UserError


def parse_shard(text: str) -> Tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise argparse.ArgumentTypeError(f"--shard must be i/n with 0 <= i < n, e.g. 0/4; got {text!r}")
    return int(match[1]), int(match[2])


def run_benchmark(args: argparse.Namespace) -> int:
    """The plan run end to end (:func:`eer_benchmark.workflow.run_benchmark`); returns the exit status."""
    return run_plan(
        args.plan,
        args.output_dir,
        args.shard,
        args.runs,
        args.dry_run,
        args.report_only,
        args.docs,
        args.paper,
        args.command,
        args.note,
        args.checks,
        args.column,
        args.corpus,
        echo=print,
        jobs=args.jobs,
        threads=args.threads,
        retries=args.retries,
        keep_checkpoints=args.keep_checkpoints,
        prog=getattr(args, "prog", "eer-benchmark"),
    )


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "plan", help="benchmark plan: jsonnet, JSON or YAML (see docs/benchmark.md, 'Reproducing the benchmark table')"
    )
    parser.add_argument(
        "-o", "--output-dir", required=True, help="benchmark directory (data, runs, logs, results.csv, results.md)"
    )
    add_option(
        parser,
        "--jobs",
        type=int,
        default_from=(Runner, "jobs"),
        help="runs in parallel (default %(default)s); each gets cores // jobs torch threads",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch/OpenMP threads per run (default: cores // jobs)"
    )
    parser.add_argument(
        "--shard",
        type=parse_shard,
        default=None,
        help="i/n: run only the units whose index %% n == i (split a plan across machines sharing OUTDIR)",
    )
    parser.add_argument(
        "--runs",
        nargs="+",
        metavar="PATTERN",
        default=None,
        help="run only the runs whose name matches a shell pattern, e.g. 'eng-c/EE/*' (names: dataset/scenario/approach/encoder/seedK)",
    )
    add_option(
        parser,
        "--retries",
        type=int,
        default_from=(Runner, "retries"),
        help="retries of a failing run before it is recorded as failed (default %(default)s)",
    )
    parser.add_argument(
        "--keep-checkpoints",
        action="store_true",
        help="keep the trainer's checkpoints (model_state_*.th, training_state_*.th, CBL rounds' best.th) of finished runs",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list the runs (and their commands) of this shard; run nothing"
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="run nothing; write results.csv and results.md from OUTDIR (merges shards; the data files need not exist)",
    )
    docs = parser.add_argument_group("docs (the report with the paper's numbers beside ours, e.g. docs/results.md)")
    docs.add_argument(
        "--docs",
        default=None,
        metavar="DIR",
        help="also write DIR/results.md and its plots and CSV files in DIR/results/",
    )
    add_option(
        docs,
        "--paper",
        default_from=(run_plan, "paper"),
        help="the paper's numbers: a JSON file written by scripts/paper_numbers.py, or the paper's LaTeX source "
        "(.tex) (default %(default)s: the package's own)",
    )
    docs.add_argument(
        "--command",
        action="append",
        default=[],
        help="a command that produced OUTDIR, quoted into the file (repeatable)",
    )
    docs.add_argument(
        "--note", action="append", default=[], help="a remark on how the runs went, quoted into the file (repeatable)"
    )
    docs.add_argument(
        "--checks",
        default=None,
        metavar="RECORDS",
        help="records (eer-records save) of block runs trained again on another machine, set beside the block's own",
    )
    docs.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="PLAN=OUTDIR",
        help="a further corpus's plan and benchmark directory, rendered as a section of DIR/results.md and counted in "
        "the guide (repeatable; e.g. benchmarks/plans/conll_es_minilm.jsonnet=runs/bench-esp)",
    )
    docs.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="DATASET=PAPER_COLUMN",
        help="the paper's table column of a data set, e.g. eng-c=eng-c (default: the same name)",
    )
    return parser


DESCRIPTION = (
    "Run a benchmark plan (approaches x scenarios x datasets x encoders x seeds) and write the paper-style tables."
)

# as `python -m eer_benchmark.commands.benchmark` the module below registers it (one module object, as the plugin's)
# a bad plan, selection or docs argument: one "eer-ner eer-benchmark: error: ..." line (its prog), exit status 1
run_or_exit, _main = subcommand.define(
    "eer-benchmark",
    DESCRIPTION,
    add_arguments,
    run_benchmark,
    (PlanError, UserError),
    returns_status=True,
    register=__name__ != "__main__",
)


def main(argv: Optional[Sequence[str]] = None, prog: str = "eer-benchmark") -> int:
    """The exit status of the command on ``argv``: 0, 1 (a run failed) or 130 (interrupted); a bad plan or
    selection prints one line naming ``prog`` and exits with status 1."""
    return _main(None if argv is None else list(argv), prog)


if __name__ == "__main__":  # pragma: no cover
    from eer_benchmark.commands.benchmark import main as registered_main  # one module object, as the plugin's

    sys.exit(registered_main(prog="python -m eer_benchmark.commands.benchmark"))
