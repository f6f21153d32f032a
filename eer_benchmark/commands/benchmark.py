"""``allennlp eer-benchmark``: run a benchmark plan (the paper's results table and analyses) and
write the tables; with ``--docs DIR`` also ``DIR/results.md`` with the paper's numbers beside ours.

::

    allennlp eer-benchmark PLAN -o OUTDIR [--jobs N] [--shard i/n] [--runs PATTERN ...] [--dry-run]
        [--report-only] [--docs DIR [--paper JSON|TEX] [--command TEXT ...] [--note TEXT ...] [--column DATASET=COLUMN ...]
        [--checks RECORDS]]

The command line only: the plan language, the runner and the report are in :mod:`eer_benchmark`
(see its docstring and docs/benchmark.md, "Reproducing the benchmark table").
"""

import argparse
import json
import re
import signal
import sys
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from eer_benchmark import PlanError, Report, Runner, dry_run, load_plan, read_plan_file, select_runs, select_shard
from eer_benchmark.report.docs import DEFAULT_PAPER, corpus_report, render_docs
from eer_benchmark.tables import duration
from eer_plugin.commands import subcommand
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.errors import UserError


def parse_shard(text: str) -> Tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise argparse.ArgumentTypeError(f"--shard must be i/n with 0 <= i < n, e.g. 0/4; got {text!r}")
    return int(match[1]), int(match[2])


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run_benchmark(args: argparse.Namespace) -> int:
    echo = print
    plan = load_plan(
        args.plan, check_files=not args.report_only
    )  # the report needs no data file: --report-only works without
    runner = Runner(
        plan,
        args.output_dir,
        jobs=args.jobs,
        threads=args.threads,
        retries=args.retries,
        echo=echo,
        keep_checkpoints=args.keep_checkpoints,
    )
    units = plan.units()
    selected = select_runs(select_shard(units, args.shard), args.runs)
    if args.runs and not selected:
        raise UserError(
            f"no run of the plan matches --runs {' '.join(args.runs)}; run names look like {plan.runs[0].name}"
        )
    count = f"{len(selected)} of {len(units)} units"
    shard = f"shard {args.shard[0]}/{args.shard[1]}" if args.shard else ""
    if args.runs:
        shard_text = (f" ({shard})" if shard else "") + f" (--runs: {count})"
    else:
        shard_text = f" ({shard}: {count})" if shard else ""
    echo(f"plan {plan.path}: {len(plan.runs)} runs{shard_text} -> {runner.outdir}")
    if args.dry_run:
        dry_run(plan, runner, selected, echo)
        return 0
    if not args.report_only:
        stale = runner.stale_runs(r for _, unit in selected for r in unit)
        if stale:
            raise UserError(
                "finished runs in this output directory were made with other settings than the plan's "
                "(use another -o, or delete those run directories):\n  " + "\n  ".join(stale[:10])
            )
        runner.outdir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(runner.outdir / "plan.json", json.dumps(read_plan_file(args.plan), indent=1))
        started = time.time()
        # SIGTERM (kill, a batch scheduler) stops like Ctrl-C: running runs are killed and run again
        # next time; never retried or recorded as failed (AllenNLP's own handler raises an ordinary
        # exception, which would look like a failing run).
        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _interrupt) if in_main_thread else None
        try:
            runner.run_units([unit for _, unit in selected])
        except KeyboardInterrupt:
            print(
                "eer-benchmark: interrupted; finished runs are kept and interrupted trainings continue from their latest checkpoint: run the same command to continue",
                file=sys.stderr,
            )
            return 130
        finally:
            if in_main_thread:
                signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        echo(f"ran for {duration(time.time() - started)}")
    report = Report(plan, runner)
    written = report.write()
    records = [runner.record(run) for run in plan.runs]
    failed = sum(1 for r in records if r.get("status") == "failed")
    missing = sum(1 for r in records if r.get("status") == "missing")
    echo(
        f"wrote {written['csv']} and {written['md']} ({len(records) - failed - missing} done, {failed} failed, {missing} not run)"
    )
    if args.docs:
        try:
            columns = _columns(args.column)
            commands = args.command or [f"allennlp eer-benchmark {args.plan} -o {args.output_dir}"]
            others = [corpus_report(*_corpus(item)) for item in args.corpus]
            echo(
                f"wrote {render_docs(report, written, commands, args.paper, args.docs, columns, args.note, args.checks, others)}"
            )
        except (FileNotFoundError, ValueError) as err:
            raise UserError(str(err)) from None
    return 1 if failed and not args.report_only else 0


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "plan", help="benchmark plan: jsonnet, JSON or YAML (see docs/benchmark.md, 'Reproducing the benchmark table')"
    )
    parser.add_argument(
        "-o", "--output-dir", required=True, help="benchmark directory (data, runs, logs, results.csv, results.md)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="runs in parallel (default 1); each gets cores // jobs torch threads"
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
    parser.add_argument(
        "--retries", type=int, default=1, help="retries of a failing run before it is recorded as failed (default 1)"
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
    docs.add_argument(
        "--paper",
        default=str(DEFAULT_PAPER),
        help="the paper's numbers: a JSON file written by scripts/paper_numbers.py, or the paper's LaTeX source "
        "(.tex) (default: the package's eer_benchmark/analyse/paper_numbers.json)",
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


def _corpus(item: str) -> Tuple[str, str]:
    """``'plan.jsonnet=runs/x'`` -> ``('plan.jsonnet', 'runs/x')``."""
    plan, separator, outdir = item.partition("=")
    if not separator or not plan or not outdir:
        raise ValueError(
            f"--corpus must be PLAN=OUTDIR, e.g. benchmarks/plans/conll_es_minilm.jsonnet=runs/bench-esp; got {item!r}"
        )
    return plan, outdir


def _columns(items: List[str]) -> Dict[str, str]:
    """``['fixture=eng-c']`` -> ``{'fixture': 'eng-c'}``."""
    for item in items:
        if "=" not in item:
            raise ValueError(f"--column must be DATASET=PAPER_COLUMN, e.g. eng-c=eng-c; got {item!r}")
    return dict(item.split("=", 1) for item in items)


DESCRIPTION = (
    "Run a benchmark plan (approaches x scenarios x datasets x encoders x seeds) and write the paper-style tables."
)

# as `python -m eer_benchmark.commands.benchmark` the module below registers it (one module object, as the plugin's)
# a bad plan, selection or docs argument: one "eer-benchmark: error: ..." line, exit status 1
run_or_exit, _main = subcommand.define(
    "eer-benchmark",
    DESCRIPTION,
    add_arguments,
    run_benchmark,
    (PlanError, UserError),
    named_errors=True,
    returns_status=True,
    register=__name__ != "__main__",
)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The exit status of the command on ``argv``: 0, 1 (a run failed) or 130 (interrupted); a bad plan or
    selection prints one line and exits with status 1."""
    return _main(None if argv is None else list(argv), "eer-benchmark")


if __name__ == "__main__":  # pragma: no cover
    from eer_benchmark.commands.benchmark import main as registered_main  # one module object, as the plugin's

    sys.exit(registered_main())
