"""The benchmark behind ``allennlp eer-benchmark``: run a plan (the paper's results table and
analyses) and write the tables. One module per concern:

- :mod:`~eer_benchmark.plan.approaches`: the approach registry (each family's command, packaged config
  and what it supports: the ratio, O-cost tuning, CBL rounds, resume, distributed training);
- :mod:`~eer_benchmark.plan.scenario`: data sets and annotation scenarios (the simulators' settings);
  :mod:`~eer_benchmark.plan.plan`: runs and the expansion of a plan into them;
  :mod:`~eer_benchmark.plan.parse`: reading and checking plan files;
- :mod:`~eer_benchmark.run.runner`: execution (subprocesses, resume, retries, jobs), one attempt at a
  run in :mod:`~eer_benchmark.run.attempt`, shards and ``--runs`` in :mod:`~eer_benchmark.plan.selection`;
- :mod:`~eer_benchmark.report.report`: ``results.md`` and ``results.csv`` (main table, bootstrap,
  wall time), with :mod:`~eer_benchmark.analyse.studies` (ratio grid, learning curve),
  :mod:`~eer_benchmark.analyse.convergence` (rho_hat against rho* and the band) and
  :mod:`~eer_benchmark.report.plots`;
- :mod:`~eer_benchmark.report.docs`: ``docs/results.md``, the report with the paper's numbers beside
  ours (read from the paper's LaTeX into ``paper_numbers.json`` by :mod:`~eer_benchmark.analyse.paper`);
- :mod:`~eer_benchmark.run.records`: the finished runs' records in one JSON-lines file
  (``docs/results/records.jsonl``), saved and restored across sessions by ``benchmarks/results.sh``.

The command line is :mod:`eer_benchmark.commands.benchmark`::

    allennlp eer-benchmark PLAN -o OUTDIR [--jobs N] [--shard i/n] [--dry-run] [--report-only] [--docs DIR]

PLAN is a jsonnet, JSON or YAML file (see docs/benchmark.md, "Reproducing the benchmark table")::

    {datasets: [{name: 'eng-c', train: '...', dev: '...', test: '...'}],
     scenarios: [{name: 'EE', type: 'ee', budget: 1000},                  // the plan's seeds
                 {name: 'NNS', type: 'nns', seeds: [0], min_steps: 786}],  // its own seeds and step budget
     approaches: ['gold', 'gold_sns', 'raw_shortest', 'raw_cd_shortest', 'cbl_bert_shortest', 'sns_shortest',
                  'eer_all', 'eer_short', 'eer_shortest'],
     encoders: ['all-MiniLM-L6-v2'], seeds: [0, 1, 2], epochs: 10, env: {EER_BATCH_SIZE: '8'},
     reference: 'sns_shortest',                     // significance marks vs this approach
     ratio_grid: [[0.15, 0.15], [0.15, 0.0]],       // (rho, gamma) of eer_short
     learning_curve: {budgets: [100, 500, 1000], approaches: ['eer_short', 'raw_shortest'], seeds: [0], min_steps: 310},
     ablations: {approach: 'eer_short', scenarios: ['EE'], seeds: [0],
                 settings: [{name: 'no calibrated start', env: {EER_RATIO_INIT: 'none'}},
                            {name: 'bf16 encoder', env: {EER_PRECISION: 'bf16'}, approach: 'eer_shortest'}]}}

A *run* is (dataset, scenario, approach, encoder, seed) plus, for the ratio grid, a (rho, gamma)
setting, and for the ablations, a setting. Each run is an ordinary AllenNLP serialization directory
``OUTDIR/runs/<dataset>/<scenario>/<approach>/<encoder>/seed<k>`` (an ablation run:
``OUTDIR/runs/<dataset>/ablations/<setting>/<scenario>/<approach>/<encoder>/seed<k>``) made by a subprocess
(``allennlp train``, ``allennlp cbl``, ``allennlp tune-o-cost``; the packaged configs), started in the
current directory (relative data paths start there), followed by a per-document
evaluation on the test data (:mod:`eer_benchmark.run.evaluation`). Simulated partial training data is
written once per (dataset, scenario, seed) to ``OUTDIR/data``. The gold approaches (``gold``,
``gold_sns``) ignore the scenario and run on the plan's seeds.

Outputs: ``OUTDIR/results.csv`` (one row per run of the plan, whatever its status) and
``OUTDIR/results.md`` (the tables), plus ``learning_curve.csv/.png`` and
``rho_hat_over_epochs.png`` when the plan asks for those analyses.
"""

from eer_benchmark.plan.parse import load_plan, parse_plan, read_plan_file
from eer_benchmark.plan.plan import Plan, PlanError, Run, epochs_text
from eer_benchmark.plan.selection import dry_run, select_runs, select_shard
from eer_benchmark.report.report import Report
from eer_benchmark.run.runner import Runner, StepFailed

__all__ = [
    "Plan",
    "PlanError",
    "Report",
    "Run",
    "Runner",
    "StepFailed",
    "dry_run",
    "epochs_text",
    "load_plan",
    "parse_plan",
    "read_plan_file",
    "select_runs",
    "select_shard",
]
