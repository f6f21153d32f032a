"""Which runs a benchmark invocation runs: shards (``--shard i/n``) and name patterns (``--runs``) over
the plan's units, the dry run's listing (``--dry-run``) and the runs per block."""

import fnmatch
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from eer_benchmark.plan.plan import Plan, Run


def select_shard(units: List[List[Run]], shard: Optional[Tuple[int, int]]) -> List[Tuple[int, List[Run]]]:
    """``(unit index, unit)`` of the units of shard ``i/n``: those whose index % n == i."""
    index, count = shard if shard is not None else (0, 1)
    return [(position, unit) for position, unit in enumerate(units) if position % count == index]


def select_runs(units: List[Tuple[int, List[Run]]], patterns: Optional[Sequence[str]]) -> List[Tuple[int, List[Run]]]:
    """The units with a run whose name (``dataset/scenario/approach/encoder/seedK``) matches one of
    the shell patterns (all units when there are none)."""
    if not patterns:
        return units
    return [(i, unit) for i, unit in units if any(fnmatch.fnmatchcase(run.name, p) for run in unit for p in patterns)]


def dry_run(plan: Plan, runner, units: List[Tuple[int, List[Run]]], echo=print) -> None:
    """Lists each selected run with its state (``done``, ``failed``, ``missing``, or ``again``: done, but trained
    again first because its model is not here and its Raw+CD run needs it), its settings and its commands."""
    for position, unit in units:
        again = {run.name for run in runner.to_run(unit) if runner.is_done(run)}
        for run in unit:
            state = "again" if run.name in again else runner.record(run).get("status")
            echo(f"unit {position:4d}  {state:7s}  {run.name}  (studies: {', '.join(run.studies)})")
            if run.name in again:
                echo("             done, but its model is not here (restored from the records): trained again first")
            env = runner.run_settings(run)
            keys = ("EER_TRAIN_DATA", "EER_SEED", "EER_EPOCHS", "EER_MIN_STEPS", "EER_ENTITY_RATIO", "EER_RATIO_MARGIN")
            keys += tuple(k for k, _ in run.overrides if k not in keys)  # an ablation's own settings
            settings = " ".join(f"{k}={env.get(k, '')}" for k in keys)
            echo(f"             {settings}")
            if run.dev is not None:
                echo(
                    f"             EER_DEV_DATA={env.get('EER_DEV_DATA')} (partial: EE on {run.dataset.dev}, budget {run.dev_budget})"
                )
            estimate = runner.estimate_command(run)
            for command in ([estimate] if estimate else []) + runner.commands(run):
                echo("             " + " ".join(command))
    runs = [run for _, unit in units for run in unit]
    echo(f"{len(runs)} runs in {len(units)} units (dry run: nothing was run)")
    echo("runs per block: " + ", ".join(f"{block} {count}" for block, count in block_counts(runs).items()))


def block_counts(runs: Iterable[Run]) -> Dict[str, int]:
    """Runs per block, in plan order: ``gold`` (gold approaches), ``benchmark <scenario>``, then the
    studies (``ratio grid``, ``learning curve``, ``ablations``) for the runs they added themselves."""
    labels = {"ratio_grid": "ratio grid", "learning_curve": "learning curve", "ablations": "ablations"}
    counts: Dict[str, int] = {}
    for run in runs:
        if "benchmark" in run.studies:
            block = "gold" if run.scenario is None else f"benchmark {run.scenario_name}"
        else:
            block = labels.get(run.studies[0], run.studies[0])
        counts[block] = counts.get(block, 0) + 1
    return counts
