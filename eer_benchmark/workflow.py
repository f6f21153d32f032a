"""A benchmark plan end to end, as ``eer-benchmark`` runs it: load the plan, select the units (``--shard``,
``--runs``), run them (or list them: the dry run), write ``results.csv`` and ``results.md`` and, with ``docs``,
``docs/results.md`` with the paper's numbers beside ours. The plan language, the runner and the report are the
layers below (:mod:`eer_benchmark`)."""

import json
import signal
import sys
import threading
import time
from typing import Callable, Dict, Optional, Sequence, Tuple

from eer_benchmark.plan.parse import load_plan, read_plan_file
from eer_benchmark.plan.selection import dry_run as list_runs
from eer_benchmark.plan.selection import select_runs, select_shard
from eer_benchmark.report.docs import DEFAULT_PAPER, corpus_report, render_docs
from eer_benchmark.report.report import Report
from eer_benchmark.run.runner import Runner
from eer_benchmark.tables import duration
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.errors import UserError


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def dataset_columns(items: Sequence[str]) -> Dict[str, str]:
    """``['fixture=eng-c']`` -> ``{'fixture': 'eng-c'}`` (``--column``: the paper's table column of a data set)."""
    for item in items:
        if "=" not in item:
            raise ValueError(f"--column must be DATASET=PAPER_COLUMN, e.g. eng-c=eng-c; got {item!r}")
    return dict(item.split("=", 1) for item in items)


def corpus_pair(item: str) -> Tuple[str, str]:
    """``'plan.jsonnet=runs/x'`` -> ``('plan.jsonnet', 'runs/x')`` (``--corpus``: a further corpus of the page)."""
    plan, separator, outdir = item.partition("=")
    if not separator or not plan or not outdir:
        raise ValueError(
            f"--corpus must be PLAN=OUTDIR, e.g. benchmarks/plans/conll_es_minilm.jsonnet=runs/bench-esp; got {item!r}"
        )
    return plan, outdir


def run_benchmark(
    plan_path: str,
    output_dir: str,
    shard: Optional[Tuple[int, int]] = None,
    runs: Optional[Sequence[str]] = None,
    dry_run: bool = False,
    report_only: bool = False,
    docs: Optional[str] = None,
    paper: str = str(DEFAULT_PAPER),
    commands: Sequence[str] = (),
    notes: Sequence[str] = (),
    checks: Optional[str] = None,
    columns: Sequence[str] = (),
    corpora: Sequence[str] = (),
    echo: Callable[[str], None] = print,
    prog: str = "eer-benchmark",
    **runner_options,
) -> int:
    """Runs the plan at ``plan_path`` into ``output_dir`` (``runner_options``: of :class:`Runner`; ``shard``
    ``(i, n)`` and the ``runs`` patterns select units) and writes its report; ``report_only``: runs nothing (the
    data files need not exist); ``dry_run``: lists the selected runs and their commands. With ``docs``, also
    ``docs/results.md`` (``paper``, ``commands`` (default: the ``eer-benchmark`` command line), ``notes``,
    ``checks``, ``columns``: ``DATASET=PAPER_COLUMN`` items, ``corpora``: ``PLAN=OUTDIR`` items of further corpora
    rendered as sections of the page). Returns the exit status: 0, 1 (a run failed) or 130
    (interrupted: finished runs are kept; its line names the command, ``prog``). A bad plan is a :class:`~eer_benchmark.plan.runs.PlanError`, a bad
    selection or docs argument a :class:`UserError`."""
    plan = load_plan(
        plan_path, check_files=not report_only
    )  # the report needs no data file: --report-only works without
    runner = Runner(plan, output_dir, echo=echo, **runner_options)
    units = plan.units()
    selected = select_runs(select_shard(units, shard), runs)
    if runs and not selected:
        raise UserError(f"no run of the plan matches --runs {' '.join(runs)}; run names look like {plan.runs[0].name}")
    count = f"{len(selected)} of {len(units)} units"
    shard_name = f"shard {shard[0]}/{shard[1]}" if shard else ""
    if runs:
        shard_text = (f" ({shard_name})" if shard_name else "") + f" (--runs: {count})"
    else:
        shard_text = f" ({shard_name}: {count})" if shard_name else ""
    echo(f"plan {plan.path}: {len(plan.runs)} runs{shard_text} -> {runner.outdir}")
    if dry_run:
        list_runs(plan, runner, selected, echo)
        return 0
    if not report_only:
        stale = runner.stale_runs(r for _, unit in selected for r in unit)
        if stale:
            raise UserError(
                "finished runs in this output directory were made with other settings than the plan's "
                "(use another -o, or delete those run directories):\n  " + "\n  ".join(stale[:10])
            )
        runner.outdir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(runner.outdir / "plan.json", json.dumps(read_plan_file(plan_path), indent=1))
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
                f"{prog}: interrupted; finished runs are kept and interrupted trainings continue from their latest checkpoint: run the same command to continue",
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
    if docs:
        try:
            by_dataset = dataset_columns(columns)
            commands = list(commands) or [f"allennlp eer-benchmark {plan_path} -o {output_dir}"]
            others = [corpus_report(*corpus_pair(item)) for item in corpora]
            echo(f"wrote {render_docs(report, written, commands, paper, docs, by_dataset, notes, checks, others)}")
        except (FileNotFoundError, ValueError) as err:
            raise UserError(str(err)) from None
    return 1 if failed and not report_only else 0
