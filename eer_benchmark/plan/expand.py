"""The expansion of a validated plan into its runs (:meth:`Plan.expand <eer_benchmark.plan.plan.Plan.expand>`):
the benchmark table, then the ratio grid, the learning curve and the ablations, each run once.

A study's run is the benchmark's own run when it would be the same run with the same settings (the
ratio grid's benchmark setting, a learning-curve point with a benchmark scenario's data): a study's
``min_steps`` that differs from the scenario's gives the study its own runs."""

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from eer_benchmark.plan.approaches import GOLD_APPROACHES
from eer_benchmark.plan.runs import BIND_SLUG, PlanError, Run
from eer_benchmark.plan.scenario import EXHAUSTIVE_MAX_PER_DOCUMENT, Dataset, Scenario


class Expansion:
    """Adds the runs of ``plan`` (``plan.runs`` and the studies' entries) in a fixed order."""

    def __init__(self, plan):  # an eer_benchmark.plan.plan.Plan (which imports this module)
        self.plan = plan
        self.by_key: Dict[Tuple, Run] = {}
        self.runs: List[Run] = []

    def expand(self):
        self.benchmark()
        if self.plan.ratio_grid:
            self.ratio_grid(self.plan.ratio_grid)
        if self.plan.learning_curve:
            self.learning_curve(self.plan.learning_curve)
        if self.plan.ablations:
            self.ablations(self.plan.ablations)
        for block in self.plan.blocks:  # last: a run shared with an ablation setting stays that setting's first
            self.block(block)
        self.plan.runs = self.runs
        return self.plan

    def add(
        self, dataset, scenario, approach, encoder, seed, study, ratio=None, ablation=None, overrides=(), **options
    ) -> Run:
        """The run (a new one, or the same run added before), with ``study`` among its studies."""
        if (
            ratio is not None
            and tuple(ratio) == self.plan.base_ratio(dataset)
            and (not overrides or ablation is not None)
        ):
            ratio = None  # an ablation's own directory keeps its overrides apart from the benchmark run
        run = Run(
            dataset,
            scenario,
            approach,
            encoder,
            self.plan.encoder_slugs[encoder],
            seed,
            ratio,
            ablation=ablation,
            overrides=tuple(sorted(overrides)),
            **options,
        )
        existing = self.by_key.get(run.key)
        if existing is not None and existing.overrides != run.overrides:
            raise PlanError(
                f"two runs of the plan share the directory {run.rel} with different settings "
                f"({dict(existing.overrides)} and {dict(run.overrides)}): give one of the studies its own setting"
            )
        if existing is None:
            self.by_key[run.key] = existing = run
            self.runs.append(run)
        if study not in existing.studies:
            existing.studies.append(study)
        return existing

    def budget(self, study: Dict[str, Any], scenario: Scenario) -> Tuple[Tuple[str, str], ...]:
        """The EER_MIN_STEPS override of a study's runs on ``scenario`` (none when it is the scenario's own)."""
        steps = study.get("min_steps")
        if steps is None or steps == self.plan.effective_min_steps(scenario):
            return ()
        return (("EER_MIN_STEPS", str(steps)),)

    def benchmark(self) -> None:
        plan = self.plan
        for dataset in plan.datasets:
            for approach in plan.approaches:
                if approach in GOLD_APPROACHES:
                    for encoder in plan.encoders:
                        for seed in plan.seeds:
                            self.add(dataset, None, approach, encoder, seed, "benchmark")
            for scenario in plan.scenarios:
                for approach in plan.scenario_approaches(scenario):
                    for encoder in plan.encoders:
                        for seed in plan.scenario_seeds(scenario):
                            self.add(dataset, scenario, approach, encoder, seed, "benchmark")

    def ratio_grid(self, grid: Dict[str, Any]) -> None:
        plan = self.plan
        for dataset in self.datasets(grid["datasets"]):
            for scenario in self.scenarios(grid["scenarios"]):
                for encoder in plan.encoders:
                    for control in grid["controls"]:
                        for rho, gamma in grid["settings"]:
                            for seed in grid.get("seeds") or plan.scenario_seeds(scenario):
                                # a bind run is shared with the ablation setting "binding ratio control" on the plan's band
                                bind = control != "fixed"
                                run = self.add(
                                    dataset,
                                    scenario,
                                    grid["approach"],
                                    encoder,
                                    seed,
                                    "ratio_grid",
                                    (rho, gamma),
                                    ablation=BIND_SLUG if bind else None,
                                    overrides=self.budget(grid, scenario)
                                    + ((("EER_RATIO_CONTROL", "bind"),) if bind else ()),
                                )
                                entries = plan.bind_entries if bind else plan.ratio_entries
                                entries.append(((dataset.name, scenario.name, encoder), (rho, gamma), run))

    def learning_curve(self, curve: Dict[str, Any]) -> None:
        plan = self.plan
        by_spec = {s.spec: s for s in plan.scenarios}
        names = {s.name for s in plan.scenarios}
        for dataset in self.datasets(curve["datasets"]):
            for scheme in curve["schemes"]:
                for budget_size in curve["budgets"]:
                    scenario = self.curve_scenario(scheme, budget_size, curve, by_spec, names)
                    for approach in curve["approaches"]:
                        for encoder in plan.encoders:
                            for seed in curve.get("seeds") or plan.seeds:
                                run = self.add(dataset, scenario, approach, encoder, seed, "learning_curve")
                                plan.lc_entries.append((dataset.name, scheme, budget_size, run))
        for cell in curve.get("cells", []):
            self.curve_cell(curve, cell, by_spec, names)

    def curve_cell(self, curve, cell, by_spec, names) -> None:
        """A learning curve's further cell (:func:`~eer_benchmark.plan.parse_studies._curve_cell`): its runs on the
        curve's scenarios, with the cell's encoder and the env of its ablation setting (in that setting's directory)."""
        plan, setting = self.plan, cell.get("setting")
        for dataset in self.datasets(curve["datasets"]):
            for scheme in cell.get("schemes") or curve["schemes"]:
                for budget_size in cell.get("budgets") or curve["budgets"]:
                    scenario = self.curve_scenario(scheme, budget_size, curve, by_spec, names)
                    for approach in cell.get("approaches") or curve["approaches"]:
                        for encoder in [cell["encoder"]] if cell.get("encoder") else plan.encoders:
                            for seed in cell.get("seeds") or curve.get("seeds") or plan.seeds:
                                run = self.add(
                                    dataset,
                                    scenario,
                                    approach,
                                    encoder,
                                    seed,
                                    "learning_curve",
                                    ablation=setting["slug"] if setting else None,
                                    overrides=tuple(setting["env"].items()) if setting else (),
                                )
                                if not any(entry[3] is run for entry in plan.lc_entries):  # a run of the curve already
                                    plan.lc_entries.append((dataset.name, scheme, budget_size, run))

    def ablations(self, study: Dict[str, Any]) -> None:
        plan = self.plan
        default = self.scenarios(study["scenarios"])
        own = {s["slug"]: self.scenarios(s["scenarios"]) if s["scenarios"] else default for s in study["settings"]}
        for dataset in self.datasets(study["datasets"]):
            for scenario in plan.scenarios:
                for setting in [s for s in study["settings"] if scenario in own[s["slug"]]]:
                    options = ablation_options(setting, scenario)
                    for approach in setting["approaches"]:
                        for encoder in [setting["encoder"]] if setting["encoder"] else plan.encoders:
                            for seed in setting.get("seeds") or study.get("seeds") or plan.scenario_seeds(scenario):
                                run = self.add_setting(
                                    dataset, scenario, approach, encoder, seed, "ablations", setting, options
                                )
                                plan.ablation_entries.append((setting, run))

    def add_setting(self, dataset, scenario, approach, encoder, seed, study, setting, options) -> Run:
        """The run of an ablation ``setting`` (its slug and environment; ``options``: its
        :func:`ablation_options` on ``scenario``), in ``study`` (``ablations``, or ``block`` for a block's settings)."""
        return self.add(
            dataset,
            scenario,
            approach,
            encoder,
            seed,
            study,
            ablation=setting["slug"],
            overrides=tuple(setting["env"].items()),
            **options,
        )

    def block(self, block: Dict[str, Any]) -> None:
        """A block's runs (``<dataset>/ablations/<block>/...``: an ablation setting of the block's name, which
        changes only the encoder, has the same runs), then its settings' runs with the block's encoder."""
        plan, encoder = self.plan, block["encoder"]
        scenarios = {s.name: s for s in plan.scenarios}
        seeds_of = {entry["name"]: entry["seeds"] for entry in block["scenarios"]}
        for dataset in plan.datasets:
            for approach in [a for a in block["approaches"] if a in GOLD_APPROACHES]:
                for seed in block["seeds"]:
                    plan.block_entries.append(
                        (block, None, self.add(dataset, None, approach, encoder, seed, "block", ablation=block["slug"]))
                    )
            for entry in block["scenarios"]:
                for approach in entry["approaches"]:
                    for seed in entry["seeds"]:
                        run = self.add(
                            dataset, scenarios[entry["name"]], approach, encoder, seed, "block", ablation=block["slug"]
                        )
                        plan.block_entries.append((block, None, run))
            for item in block["settings"]:
                setting = item["setting"]
                for scenario in self.scenarios(
                    item["scenarios"] or setting["scenarios"] or (plan.ablations or {}).get("scenarios")
                ):
                    options = ablation_options(setting, scenario)
                    for approach in item["approaches"]:
                        for seed in seeds_of.get(scenario.name, block["seeds"]):
                            run = self.add_setting(
                                dataset, scenario, approach, encoder, seed, "block", setting, options
                            )
                            plan.block_entries.append((block, setting, run))

    def curve_scenario(self, scheme, budget, curve, by_spec, names) -> Scenario:
        """The scenario of a learning-curve point: a benchmark scenario with the same data and settings
        when the plan has one (its runs are shared), else its own (``EE-<budget>``, ``Exh-<budget>``)."""
        from eer_plugin.annotation.simulators import learning_curve_max_per_document

        if scheme == "ee":
            params = {
                "budget": budget,
                "keep_probability": curve["keep_probability"],
                "max_per_document": learning_curve_max_per_document(budget),
            }
            name = f"EE-{budget}"
        else:  # exhaustive: linear annotation of whole documents in random order
            params = {"budget": budget, "keep_probability": 1.0, "max_per_document": EXHAUSTIVE_MAX_PER_DOCUMENT}
            name = f"Exh-{budget}"
        scenario = Scenario(name, "ee", tuple(sorted(params.items())), min_steps=curve.get("min_steps"))
        shared = by_spec.get(scenario.spec)
        effective_min_steps = self.plan.effective_min_steps
        if shared is not None and (
            shared is by_spec.get(("lc",) + scenario.spec)
            or (not shared.env and not shared.epochs and effective_min_steps(shared) == effective_min_steps(scenario))
        ):
            return (
                shared  # the same data and settings as a benchmark scenario (or an earlier curve point): share its runs
            )
        while scenario.name in names:
            scenario = dataclasses.replace(scenario, name=f"{scenario.name}-lc")
        names.add(scenario.name)
        by_spec[scenario.spec] = by_spec[("lc",) + scenario.spec] = scenario
        return scenario

    def datasets(self, names: Optional[List[str]]) -> List[Dataset]:
        return [d for d in self.plan.datasets if names is None or d.name in names]

    def scenarios(self, names: Optional[List[str]]) -> List[Scenario]:
        """The named scenarios; none named: the EE scenarios (all scenarios when there is none)."""
        if names is not None:
            return [s for s in self.plan.scenarios if s.name in names]
        ee = [s for s in self.plan.scenarios if s.type == "ee"]
        return ee or list(self.plan.scenarios)


def ablation_options(setting: Dict[str, Any], scenario: Scenario) -> Dict[str, Any]:
    """The :class:`~eer_benchmark.plan.plan.Run` fields of an ablation setting's partial dev set,
    complete documents and ratio estimate."""
    options: Dict[str, Any] = {}
    where = f"ablations setting {setting['name']!r}"
    dev = setting.get("dev")
    if dev:
        if dev["budget"] == "proportional" and scenario.type != "ee":
            raise PlanError(
                f"{where}: dev.budget 'proportional' needs an EE scenario (a budget), not {scenario.name!r} ({scenario.type})"
            )
        options["dev"] = tuple((k, dev[k]) for k in ("budget", "keep_probability", "max_per_document"))
    estimate = setting.get("estimate_ratio")
    complete = estimate["complete_documents"] if estimate else setting.get("complete_documents")
    if complete:
        key = "estimate_ratio" if estimate else "complete_documents"
        if scenario.type not in ("ee", "dictionary"):
            raise PlanError(
                f"{where}: {key} needs an EE scenario (its budget pays for the complete documents) or a dictionary scenario, not {scenario.name!r} ({scenario.type})"
            )
        options["complete_documents"] = complete
        options["estimates_ratio"] = bool(estimate)
    return options
