"""The benchmark report: ``OUTDIR/results.md`` (the paper-style F1 table with significance marks,
the bootstrap table, wall times, and the analyses of :mod:`~eer_benchmark.analyse.studies`,
:mod:`~eer_benchmark.analyse.convergence` and :mod:`~eer_benchmark.report.plots`) and
``OUTDIR/results.csv`` (one row per run of the plan, whatever its status). Every number comes from
the runs' result files."""

from typing import Any, Dict, List, Optional, Tuple

from eer_benchmark.analyse import convergence
from eer_benchmark.machine import machine_text
from eer_benchmark.plan.approaches import GOLD_APPROACHES, KNOWN_APPROACHES, approach_label
from eer_benchmark.plan.plan import GOLD_SCENARIO, Plan
from eer_benchmark.plan.scenario import Scenario
from eer_benchmark.plan.selection import block_counts
from eer_benchmark.report import sections
from eer_benchmark.run.runner import Runner
from eer_benchmark.tables import duration, markdown_table, mean, mean_sd_cell, points, read_json
from eer_plugin.common.atomic import atomic_write_text

CSV_COLUMNS = (
    "dataset",
    "scenario",
    "approach",
    "encoder",
    "seed",
    "status",
    "precision",
    "recall",
    "f1",
    "rho_hat",
    "seconds",
    "run_dir",
    "log",
    "study",
    "entity_ratio",
    "ratio_margin",
    "rho_star",
    "tp",
    "fp",
    "fn",
    "eval_seconds",
    "o_cost",
    "error",
    "ablation",
    "machine",
)


class Report:
    """Tables of a benchmark directory (every number comes from the runs' result files).

    Args:
        plan: the expanded plan whose runs the report covers (runs not on disk show as not run).
        runner: the :class:`~eer_benchmark.run.runner.Runner` of the benchmark directory; only its
            paths and :meth:`~eer_benchmark.run.runner.Runner.record` are used (nothing runs).
    """

    def __init__(self, plan: Plan, runner: Runner):
        self.plan = plan
        self.runner = runner
        self.records = {run.key: runner.record(run) for run in plan.runs}
        self.by_key = {run.key: run for run in plan.runs}
        self._counts: Dict[Tuple, Optional[dict]] = {}
        self.bootstraps: List[dict] = []

    # ------------------------------------------------------------------ access
    def setting(self, key: str, default: str = "–") -> str:
        """The value of an EER_* setting over the plan's runs (``'a / b'`` when runs differ), from the
        plan's env and the config defaults."""
        values = [self.plan.run_env(run.dataset, run.scenario, run.variant).get(key, default) for run in self.plan.runs]
        return " / ".join(dict.fromkeys(values)) or default

    def precision_text(self) -> str:
        """The encoder precision of the plan's runs; ``auto`` says what it means, since it differs by machine."""
        value = self.setting("EER_PRECISION", "fp32")
        return value.replace("auto", "auto (bf16 where the hardware computes bfloat16 natively, else fp32)")

    def speed_text(self) -> str:
        """The speed-ups these runs used (and the one they did not), from the plan's settings."""
        from eer_benchmark.run.evaluation import BATCH_SIZE

        return (
            f"Speed-ups used: training batches of {self.setting('EER_BATCH_SIZE', '?')} chunks bucketed by length (little "
            "padding); the CRF's forward recursion, marginals and Viterbi vectorised over batch and tags; test evaluation "
            f"predicts the chunks of all test documents in batches of {BATCH_SIZE}, across document boundaries. "
            f"Encoder precision: {self.precision_text()}; bf16 pays off only on CPUs that compute it natively "
            "(`make bench` measures the step time in both)."
        )

    def lookup(
        self, dataset: str, scenario: str, approach: str, encoder: str, seed: int, ratio=None, ablation=None
    ) -> Optional[dict]:
        return self.records.get((dataset, scenario, approach, encoder, seed, ratio, ablation))

    def done(self, dataset, scenario, approach, encoder, ratio=None, ablation=None) -> Dict[int, dict]:
        """Seed -> result of the finished runs of one cell (every seed the plan has for it); ``ablation``: the
        directory of an ablation setting's or a block's runs (None: the benchmark's)."""
        out = {}
        for seed in self.plan.all_seeds:
            record = self.lookup(dataset, scenario, approach, encoder, seed, ratio, ablation)
            if record and record.get("status") == "done":
                out[seed] = record
        return out

    def cell_status(self, dataset, scenario, approach, encoder, ratio=None, ablation=None) -> Dict[str, int]:
        counts = {"done": 0, "failed": 0, "missing": 0}
        for seed in self.plan.all_seeds:
            record = self.lookup(dataset, scenario, approach, encoder, seed, ratio, ablation)
            if record is not None:
                counts[record.get("status", "missing")] = counts.get(record.get("status", "missing"), 0) + 1
        return counts

    def doc_counts(self, key: Tuple) -> Optional[dict]:
        if key not in self._counts:
            data = read_json(self.runner.run_dir(self.by_key[key]) / "doc_counts.json")
            self._counts[key] = data["counts"] if data else None
        return self._counts[key]

    @property
    def bootstrap_settings(self) -> Dict[str, Any]:
        """The plan's bootstrap settings as keyword arguments of :func:`~eer_plugin.annotation.bootstrap.paired_bootstrap`."""
        settings = self.plan.bootstrap
        return dict(n_resamples=settings["resamples"], confidence=settings["confidence"], seed=settings["seed"])

    def pair_counts(
        self,
        dataset,
        scenario,
        approach,
        encoder,
        reference: Optional[str] = None,
        ratios=(None, None),
        ablations=(None, None),
    ):
        """Per-document counts of ``approach`` and the reference (default: the plan's), summed over
        their common seeds; ``ratios``: the (rho, gamma) of each side (None: the benchmark setting);
        ``ablations``: the directory of each side's setting or block (None: the benchmark's runs)."""
        from eer_plugin.annotation.bootstrap import sum_over_runs

        reference = reference or self.plan.reference
        mine = self.done(dataset, scenario, approach, encoder, ratios[0], ablations[0])
        theirs = self.done(dataset, scenario, reference, encoder, ratios[1], ablations[1])
        seeds = sorted(set(mine) & set(theirs))
        a = [self.doc_counts((dataset, scenario, approach, encoder, s, ratios[0], ablations[0])) for s in seeds]
        b = [self.doc_counts((dataset, scenario, reference, encoder, s, ratios[1], ablations[1])) for s in seeds]
        if not seeds or any(c is None for c in a + b):
            return None, seeds
        return (sum_over_runs(a), sum_over_runs(b)), seeds

    # ------------------------------------------------------------------ main table
    def row_specs(self) -> List[Tuple[Optional[Scenario], List[Tuple[str, str]]]]:
        """Groups of (label, approach, encoder) rows: gold first, then one group per scenario."""
        label = self.plan.label
        groups = []
        gold = [a for a in self.plan.approaches if a in GOLD_APPROACHES]
        if gold:
            groups.append((None, [(label(a, e), a, e) for a in gold for e in self.plan.encoders]))
        for scenario in self.plan.scenarios:
            rows = [(label(a, e), a, e) for a in self.plan.scenario_approaches(scenario) for e in self.plan.encoders]
            groups.append((scenario, rows))
        return groups

    def significance(self, scenario: Scenario, approach: str, encoder: str, dataset: Optional[str]) -> Optional[dict]:
        """Bootstrap of ``approach`` vs the reference on one dataset (or pooled over all, ``None``)."""
        from eer_plugin.annotation.bootstrap import paired_bootstrap, pooled_bootstrap

        if self.plan.reference is None or approach == self.plan.reference or approach in GOLD_APPROACHES:
            return None
        settings = self.bootstrap_settings
        names = [dataset] if dataset is not None else [d.name for d in self.plan.datasets]
        pairs, seeds = [], {}
        for name in names:
            pair, common = self.pair_counts(name, scenario.name, approach, encoder)
            if pair is None:
                return None
            pairs.append(pair)
            seeds[name] = common
        result = paired_bootstrap(*pairs[0], **settings) if len(pairs) == 1 else pooled_bootstrap(pairs, **settings)
        result.update(
            scenario=scenario.name, approach=approach, encoder=encoder, dataset=dataset or "pooled", seeds=seeds
        )
        self.bootstraps.append(result)
        return result

    def main_table(self) -> str:
        datasets = [d.name for d in self.plan.datasets]
        header = ["Approach / dataset", *datasets, "avg"]
        lines = []
        for scenario, rows in self.row_specs():
            scenario_name = scenario.name if scenario else GOLD_SCENARIO
            if scenario is not None:
                lines.append(
                    [f"**{scenario.name}**: {scenario.describe()}{self._achieved(scenario)}"] + [""] * (len(header) - 1)
                )
            cells: Dict[Tuple[int, int], Tuple[Optional[float], str, str]] = {}
            for r, (_, approach, encoder) in enumerate(rows):
                per_seed_avg: Dict[int, List[float]] = {}
                for c, dataset in enumerate(datasets):
                    done = self.done(dataset, scenario_name, approach, encoder)
                    values = [done[s]["f1"] for s in sorted(done)]
                    for s in done:
                        per_seed_avg.setdefault(s, []).append(done[s]["f1"])
                    mark = ""
                    if scenario is not None and values:
                        test = self.significance(scenario, approach, encoder, dataset)
                        mark = self._mark(test)
                    cells[(r, c)] = (
                        mean(values) if values else None,
                        mean_sd_cell(values, self.cell_status(dataset, scenario_name, approach, encoder)),
                        mark,
                    )
                complete = [v for s, v in per_seed_avg.items() if len(v) == len(datasets)]
                averages = [mean(v) for v in complete]
                mark = ""
                if averages and scenario is not None and len(datasets) > 1:
                    mark = self._mark(self.significance(scenario, approach, encoder, None))
                elif averages and scenario is not None:
                    mark = cells[(r, 0)][2]
                cells[(r, len(datasets))] = (mean(averages) if averages else None, mean_sd_cell(averages, None), mark)
            for c in range(len(datasets) + 1):
                best = max((cells[(r, c)][0] for r in range(len(rows)) if cells[(r, c)][0] is not None), default=None)
                for r in range(len(rows)):
                    value, text, mark = cells[(r, c)]
                    bold = best is not None and value is not None and abs(value - best) < 1e-12 and len(rows) > 1
                    cells[(r, c)] = (value, f"**{text}**{mark}" if bold else f"{text}{mark}", mark)
            for r, (label, _, _) in enumerate(rows):
                lines.append([label] + [cells[(r, c)][1] for c in range(len(datasets) + 1)])
        return markdown_table(header, lines)

    def _achieved(self, scenario: Scenario) -> str:
        recalls, precisions = [], []
        for dataset in self.plan.datasets:
            for seed in self.plan.scenario_seeds(scenario):
                stats = read_json(self.runner.data.path(dataset.name, scenario.name, seed, ".stats.json"))
                if stats:
                    recalls.append(stats["recall"])
                    precisions.append(stats["precision"])
        if not recalls:
            return ""
        return f" (simulated data: recall {mean(recalls):.3f}, precision {mean(precisions):.3f}, mean over data sets and seeds)"

    @staticmethod
    def _mark(test: Optional[dict]) -> str:
        if not test or not test["significant"]:
            return ""
        return "†" if test["delta"] > 0 else "‡"

    # ------------------------------------------------------------------ other sections
    def bootstrap_table(self) -> str:
        if not self.bootstraps:
            return ""
        confidence = self.plan.bootstrap["confidence"]
        rows = []
        for b in self.bootstraps:
            label = self.plan.label(b["approach"], b["encoder"])
            seeds = sorted({s for v in b["seeds"].values() for s in v})
            rows.append(
                [
                    b["scenario"],
                    label,
                    b["dataset"],
                    ",".join(map(str, seeds)),
                    str(b["n_documents"]),
                    points(b["f1_a"], 2),
                    points(b["f1_b"], 2),
                    f"{100 * b['delta']:+.2f}",
                    f"[{100 * b['ci_low']:+.2f}, {100 * b['ci_high']:+.2f}]",
                    f"{b['p_value']:.4f}",
                    ("yes, better" if b["delta"] > 0 else "yes, worse") if b["significant"] else "no",
                ]
            )
        header = [
            "scenario",
            "approach",
            "dataset",
            "seeds",
            "docs",
            "F1",
            f"F1 {approach_label(self.plan.reference)}",
            "Δ",
            f"{confidence:.0%} CI of Δ",
            "p",
            "significant",
        ]
        return markdown_table(header, rows, ["l", "l", "l", "l", "r", "r", "r", "r", "r", "r", "l"])

    def time_table(self) -> Tuple[str, float]:
        """The wall time per approach, and the total compute seconds of the finished runs (each run
        directory's own training, decoding-cost search and test evaluation, once). The runs a study
        added (an ablation setting, the ratio grid, the learning curve) have rows of their own: their
        settings or data differ from the approach's benchmark runs."""
        ablation_names = convergence.ablation_names(self.plan)
        per_row: Dict[Tuple[str, str], List[dict]] = {}
        total = 0.0
        for run in self.plan.runs:
            record = self.records[run.key]
            if record.get("status") != "done":
                continue
            if "benchmark" in run.studies:
                group = ""
            elif run.ablation:
                group = f"ablation: {ablation_names[run.ablation]}"
            else:
                (group,) = block_counts([run])
            per_row.setdefault((run.approach, group), []).append(record)
            total += self.compute_seconds(record)
        order = {approach: i for i, approach in enumerate(KNOWN_APPROACHES)}
        rows = []
        for (approach, group), records in sorted(
            per_row.items(), key=lambda item: (item[0][1] != "", order.get(item[0][0], len(order)))
        ):
            seconds = [float(r["seconds"]) for r in records]
            evals = [float(r.get("eval_seconds") or 0) for r in records]
            label = approach_label(approach) + (f" ({group})" if group else "")
            rows.append(
                [label, str(len(records)), duration(mean(seconds)), duration(sum(seconds)), duration(mean(evals))]
            )
        header = [
            "approach",
            "finished runs",
            "training time per run",
            "training time, total",
            "test evaluation per run",
        ]
        return (markdown_table(header, rows) if rows else ""), total

    @staticmethod
    def compute_seconds(record: dict) -> float:
        return float(record.get("own_seconds", record.get("seconds") or 0)) + float(record.get("eval_seconds") or 0)

    def compute_by_block(self) -> Dict[str, Tuple[int, float]]:
        """Finished runs and their compute seconds per block (gold, benchmark <scenario>, the studies' own runs)."""
        out: Dict[str, Tuple[int, float]] = {}
        for run in self.plan.runs:
            record = self.records[run.key]
            if record.get("status") != "done":
                continue
            (block,) = block_counts([run])
            count, seconds = out.get(block, (0, 0.0))
            out[block] = (count + 1, seconds + self.compute_seconds(record))
        return out

    # ------------------------------------------------------------------ outputs
    def csv_rows(self) -> List[Dict[str, Any]]:
        rows = []
        for run in self.plan.runs:
            record = self.records[run.key]
            rho, gamma = self.plan.ratio_of(run, record)
            row = {
                "dataset": run.dataset.name,
                "scenario": run.scenario_name,
                "approach": run.approach,
                "encoder": run.encoder,
                "seed": run.seed,
                "status": record.get("status", "missing"),
                "run_dir": str(self.runner.run_dir(run)),
                "log": str(self.runner.log_path(run)),
                "study": ";".join(run.studies),
                "entity_ratio": rho,
                "ratio_margin": gamma,
                "error": record.get("error", ""),
                "ablation": run.ablation or "",
                # where a finished run ran (eer_benchmark.machine): its seconds are that machine's
                "machine": machine_text(record.get("machine")) if record.get("status") == "done" else "",
            }
            for key in (
                "precision",
                "recall",
                "f1",
                "rho_hat",
                "seconds",
                "rho_star",
                "tp",
                "fp",
                "fn",
                "eval_seconds",
                "o_cost",
            ):
                value = record.get(key)
                row[key] = "" if value is None else value
            rows.append(row)
        return rows

    def status_counts(self) -> Dict[str, int]:
        """Runs per status (``done``, ``failed``, ``missing``)."""
        status = {"done": 0, "failed": 0, "missing": 0}
        for record in self.records.values():
            status[record.get("status", "missing")] = status.get(record.get("status", "missing"), 0) + 1
        return status

    def write(self) -> Dict[str, str]:
        """Writes ``results.csv`` and ``results.md`` (its sections: :mod:`~eer_benchmark.report.sections`),
        with the analyses' CSV and plot files; returns their paths by kind (``csv``, ``md``, ...)."""
        outdir = self.runner.outdir
        outdir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(outdir / "results.csv", sections.csv_text(CSV_COLUMNS, self.csv_rows()))
        written = {"csv": str(outdir / "results.csv")}
        status = self.status_counts()
        md = (
            sections.header(self, status)
            + sections.test_f1(self)
            + sections.significance(self)
            + sections.wall_time(self, status)
        )
        md += (
            sections.ratio_grid(self)
            + sections.learning_curve(self, written)
            + sections.rho_hat_convergence(self, written)
        )
        md += sections.band_entry(self) + sections.ablations(self)
        atomic_write_text(outdir / "results.md", "\n".join(md))
        written["md"] = str(outdir / "results.md")
        return written
