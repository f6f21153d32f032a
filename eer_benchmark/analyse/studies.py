"""The plan's analyses beside the main table: the EER hyperparameter grid (rho, gamma), the
learning curves (EE vs exhaustive annotation at each budget) and the ablations (settings changed one
at a time against the benchmark's own run). Each function takes a
:class:`~eer_benchmark.report.report.Report` and returns Markdown (and, for the learning curve, its rows)."""

from typing import Dict, List, Optional, Tuple

from eer_benchmark.analyse.convergence import ablation_names, band_text, rho_hat_per_epoch
from eer_benchmark.plan.approaches import approach_label
from eer_benchmark.tables import duration, markdown_table, mean, mean_sd_cell, points, read_json, stderr

#: how far outside its band a final training rho_hat may end and still count as held (issue 26)
BAND_SLACK = 0.01


def ratio_grid_table(report) -> str:
    """Test F1 per seed and (rho, gamma) setting of the ratio grid, one table per (dataset, scenario, encoder);
    a band also trained with the binding control has a second row (``bind``) under its fixed-weight row, and
    the last column says whether the final training rho_hat of every seed lies inside the band widened by 0.01."""
    plan = report.plan
    if not plan.ratio_entries and not plan.bind_entries:
        return ""
    groups: Dict[Tuple, Dict[Tuple, Dict[int, dict]]] = {}  # group -> ((rho, gamma), control) -> seed -> record
    for control, entries in (("fixed", plan.ratio_entries), ("bind", plan.bind_entries)):
        for group, setting, run in entries:
            groups.setdefault(group, {}).setdefault((setting, control), {})[run.seed] = report.records[run.key]
    controls = {control for settings in groups.values() for _, control in settings}
    parts = []
    for (dataset, scenario, encoder), settings in groups.items():
        base = plan.base_ratio(next(d for d in plan.datasets if d.name == dataset))
        seeds = sorted({seed for records in settings.values() for seed in records})
        done = {
            key: {s: r for s, r in records.items() if r.get("status") == "done"} for key, records in settings.items()
        }
        rho_stars = [r["rho_star"] for cells in done.values() for r in cells.values() if r.get("rho_star") is not None]
        title = f"**{dataset}, scenario {scenario}, {approach_label(plan.ratio_grid['approach'])}**"
        if len(plan.encoders) > 1:
            title += f", encoder {encoder}"
        if rho_stars:
            title += f" (gold subword ratio of the training data rho* = {mean(rho_stars):.3f}, mean over runs)"
        rows = []
        for key in sorted(
            done, key=lambda k: (list(dict.fromkeys(s for s, _ in settings)).index(k[0]), k[1] != "fixed")
        ):
            (rho, gamma), control = key
            cells = done[key]
            label = f"[{rho - gamma:.2f}, {rho + gamma:.2f}] (rho {rho:g}, gamma {gamma:g})" + (
                "†" if (rho, gamma) == base else ""
            )
            values = [cells[s]["f1"] for s in sorted(cells)]
            per_seed = [
                points(cells[s]["f1"])
                if s in cells
                else ("failed" if settings[key].get(s, {}).get("status") == "failed" else "–")
                for s in seeds
            ]
            rho_hats = [cells[s]["rho_hat"] for s in cells if cells[s].get("rho_hat") is not None]
            inside = all(rho - gamma - BAND_SLACK <= r <= rho + gamma + BAND_SLACK for r in rho_hats)
            row = [label, *per_seed, mean_sd_cell(values, None), f"{mean(rho_hats):.3f}" if rho_hats else "–"]
            if len(controls) > 1:
                row[1:1] = [control]
                row.append(("yes" if inside else "no") if rho_hats else "–")
            rows.append(row)
        header = ["[rho - gamma, rho + gamma]", *[f"seed {s}" for s in seeds], "mean", "final rho_hat"]
        if len(controls) > 1:
            header[1:1] = ["ratio control"]
            header.append(f"rho_hat in band ± {BAND_SLACK:g}")
        parts.append(title + "\n\n" + markdown_table(header, rows))
    note = "\n\n† the benchmark setting (the plan's EER_ENTITY_RATIO / EER_RATIO_MARGIN)."
    if len(controls) > 1:
        note += (
            " Ratio control: `fixed` is the paper's hinge with its fixed weight (`EER_RATIO_LOSS_WEIGHT`), `bind` the "
            "binding control (`EER_RATIO_CONTROL=bind`: an augmented Lagrangian on the running training rho_hat)."
        )
    return "\n\n".join(parts) + note


def learning_curve(report) -> Tuple[str, List[dict]]:
    """F1 (mean ± standard error over seeds) per budget and annotation scheme, and the rows of
    ``learning_curve.csv`` (with the documents annotated, from the simulator's statistics)."""
    if not report.plan.lc_entries:
        return "", []
    cells: Dict[Tuple, List[float]] = {}
    expected: Dict[Tuple, int] = {}
    documents: Dict[Tuple, Dict[int, int]] = {}  # (dataset, scheme, budget) -> seed -> documents annotated
    for dataset, scheme, budget, run in report.plan.lc_entries:
        key = (dataset, scheme, run.approach, run.encoder, budget, run.ablation or "")
        expected[key] = expected.get(key, 0) + 1
        record = report.records[run.key]
        cells.setdefault(key, [])
        if record.get("status") == "done":
            cells[key].append(record["f1"])
        seeds = documents.setdefault((dataset, scheme, budget), {})
        if run.seed not in seeds:  # one statistics file per data set, scenario and seed, shared by the approaches
            stats = read_json(report.runner.data.path(dataset, run.scenario_name, run.seed, ".stats.json"))
            seeds[run.seed] = stats.get("documents_touched") if stats else None
    rows = []
    for (dataset, scheme, approach, encoder, budget, setting), values in cells.items():
        docs = [n for n in documents[(dataset, scheme, budget)].values() if n is not None]
        rows.append(
            {
                "dataset": dataset,
                "scheme": "EE" if scheme == "ee" else "Exhaustive",
                "approach": approach,
                "encoder": encoder,
                "setting": setting,
                "budget": budget,
                "seeds_done": len(values),
                "seeds_planned": expected[(dataset, scheme, approach, encoder, budget, setting)],
                "mean_f1": mean(values) if values else None,
                "std_error": stderr(values) if values else None,
                "f1_per_seed": " ".join(f"{v:.4f}" for v in values),
                "documents_annotated": mean(docs) if docs else None,
            }
        )
    budgets = report.plan.learning_curve["budgets"]
    parts = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        table_rows = []
        for scheme, approach, encoder, setting in dict.fromkeys(
            (r["scheme"], r["approach"], r["encoder"], r["setting"]) for r in rows if r["dataset"] == dataset
        ):
            line = [curve_label(report.plan, scheme, approach, encoder, setting)]
            for budget in budgets:
                r = next(
                    (
                        x
                        for x in rows
                        if (x["dataset"], x["scheme"], x["approach"], x["encoder"], x["setting"], x["budget"])
                        == (dataset, scheme, approach, encoder, setting, budget)
                    ),
                    None,
                )
                line.append(curve_cell_text(r))
            table_rows.append(line)
        # how many documents carry the budget's annotations: the data the short/shortest variants train on
        for scheme in dict.fromkeys(r["scheme"] for r in rows if r["dataset"] == dataset):
            line = [f"documents annotated ({scheme}, mean over seeds)"]
            for budget in budgets:
                docs = next(
                    (
                        x["documents_annotated"]
                        for x in rows
                        if (x["dataset"], x["scheme"], x["budget"]) == (dataset, scheme, budget)
                    ),
                    None,
                )
                line.append("–" if docs is None else f"{docs:g}")
            table_rows.append(line)
        parts.append(
            f"**{dataset}** (test F1, mean ± standard error over seeds)\n\n"
            + markdown_table(["annotation + training", *map(str, budgets)], table_rows)
        )
    return "\n\n".join(parts), rows


def curve_label(plan, scheme: str, approach: str, encoder: str, setting: str = "") -> str:
    """``EE + EER-short``; a cell on another encoder than the plan's names it (``EE + EER-shortest
    (all-mpnet-base-v2)``), a cell of an ablation setting names the setting (``EE + EER-short, binding ratio control``)."""
    text = f"{scheme} + {plan.label(approach, encoder)}"
    if encoder not in plan.encoders:
        text += f" ({plan.encoder_slugs[encoder]})"
    return text + (f", {ablation_names(plan).get(setting, setting)}" if setting else "")


def curve_cell_text(row: Optional[dict]) -> str:
    """A learning-curve cell: ``64.8 ± 1.2`` (its planned seeds finished), ``58.4 (1 of 3 seeds)``, ``pending (0 of 3
    seeds)``; ``–``: the plan has no such run."""
    if row is None:
        return "–"
    planned = row["seeds_planned"]
    if row["mean_f1"] is None:
        return f"pending (0 of {planned} seed{'s' if planned > 1 else ''})"
    text = (
        f"{100 * row['mean_f1']:.1f} ± {100 * row['std_error']:.1f}"
        if row["seeds_done"] > 1
        else points(row["mean_f1"])
    )
    return text + (f" ({row['seeds_done']} of {planned} seeds)" if row["seeds_done"] < planned else "")


#: The paper's claims on its learning curve (section "EE vs. Exhaustive Experiments"), each "A better than
#: B" as ((scheme, approach) of A, of B, the budgets it is claimed for; None: all):
#: "on EE-annotated data, using our EER loss substantially outperforms traditional likelihood training at all
#: amounts of partial annotation, but the opposite is true on exhaustively annotated data"; "at modest sizes of
#: only 500 and 1K annotations, EE annotated data with our proposed EER-short approach outperformed exhaustive
#: annotation with traditional supervised training".
LEARNING_CURVE_CLAIMS = (
    (("ee", "eer_short"), ("ee", "raw_shortest"), None),
    (("exhaustive", "raw_shortest"), ("exhaustive", "eer_short"), None),
    (("ee", "eer_short"), ("exhaustive", "raw_shortest"), (500, 1000)),
)
#: Issue 53: the last claim (partial vs exhaustive annotation at 500 and 1K) with EER's best variant on EE data
#: (EER-shortest), with EER-short under the binding control, and EE + EER against exhaustive annotation + the same
#: EER (which the paper's two claims imply), as (scheme, approach, ablation directory) sides; "" : the plan's setting
EXTENDED_CURVE_CLAIMS = (
    (("ee", "eer_shortest", ""), ("exhaustive", "raw_shortest", ""), (500, 1000)),
    (("ee", "eer_short", "binding-ratio-control"), ("exhaustive", "raw_shortest", ""), (500, 1000)),
    (("ee", "eer_shortest", ""), ("exhaustive", "eer_shortest", ""), (500, 1000)),
)


def curve_comparisons(report) -> List[dict]:
    """The learning-curve claims (:data:`LEARNING_CURVE_CLAIMS`, then :data:`EXTENDED_CURVE_CLAIMS`) at each budget
    and on each encoder the plan trains both sides of: ``{dataset, encoder, budget, a, b, label_a, label_b, planned
    (seeds), pairs (seeds both finished), test (paired bootstrap, seeds pooled; None: none finished), claimed}``."""
    if not report.plan.lc_entries:
        return []
    plan = report.plan
    runs = {
        (dataset, scheme, run.approach, run.ablation or "", budget, run.encoder, run.seed): run
        for dataset, scheme, budget, run in plan.lc_entries
    }
    claims = [((*a, ""), (*b, ""), claimed) for a, b, claimed in LEARNING_CURVE_CLAIMS] + list(EXTENDED_CURVE_CLAIMS)
    scheme_name = {"ee": "EE", "exhaustive": "Exhaustive"}
    out = []
    for dataset, encoder in dict.fromkeys((key[0], key[5]) for key in runs):
        for budget in plan.learning_curve["budgets"]:
            for a, b, claimed in claims:
                seeds = sorted(
                    key[6]
                    for key in runs
                    if key[:6] == (dataset, *a, budget, encoder) and (dataset, *b, budget, encoder, key[6]) in runs
                )
                if not seeds:
                    continue  # the plan does not train this pair
                pairs = [
                    _finished_counts(
                        report, runs[(dataset, *a, budget, encoder, s)], runs[(dataset, *b, budget, encoder, s)]
                    )
                    for s in seeds
                ]
                pairs = [pair for pair in pairs if pair is not None]
                out.append(
                    {
                        "dataset": dataset,
                        "encoder": encoder,
                        "budget": budget,
                        "a": a,
                        "b": b,
                        "label_a": curve_label(plan, scheme_name[a[0]], a[1], encoder, a[2]),
                        "label_b": curve_label(plan, scheme_name[b[0]], b[1], encoder, b[2]),
                        "planned": len(seeds),
                        "pairs": len(pairs),
                        "test": _pooled_bootstrap(report, pairs) if pairs else None,
                        "claimed": claimed is None or budget in claimed,
                    }
                )
    return out


def comparison_text(item: dict) -> str:
    """``+8.6 [+6.1, +11.1] (1 seed)``, ``-7.9 [-12.9, -3.0] (1 of 3 seeds)``, ``pending (0 of 3 seeds)``."""
    test, done, planned = item["test"], item["pairs"], item["planned"]
    seeds = f"{done} seed{'s' if done > 1 else ''}" if done == planned else f"{done} of {planned} seeds"
    if test is None:
        return f"pending ({seeds})"
    return f"{100 * test['delta']:+.1f} [{100 * test['ci_low']:+.1f}, {100 * test['ci_high']:+.1f}] ({seeds})"


def learning_curve_claims(report) -> str:
    """The paper's learning-curve claims (:data:`LEARNING_CURVE_CLAIMS`, and issue 53's :data:`EXTENDED_CURVE_CLAIMS`)
    at each budget of the plan: our difference A − B with the paired bootstrap over test documents (seeds on which
    both finished, pooled) and whether the claim holds; a pair the paper makes no claim on at that budget is shown
    without verdict."""
    several_encoders = len(report.plan.encoders) > 1
    lines = []
    for item in curve_comparisons(report):
        prefix = [item["dataset"]] + ([report.plan.encoder_slugs[item["encoder"]]] if several_encoders else [])
        label_a, label_b, test = item["label_a"], item["label_b"], item["test"]
        claim = f"{label_a} > {label_b}" if item["claimed"] else "– (no claim at this budget)"
        here = direction_verdict(test, +1) if test and item["claimed"] else "–"
        lines.append([*prefix, str(item["budget"]), f"{label_a} − {label_b}", comparison_text(item), claim, here])
    if not lines:
        return ""
    confidence = report.plan.bootstrap["confidence"]
    header = [
        "dataset",
        *(["encoder"] if several_encoders else []),
        "budget",
        "difference",
        f"ours, F1 points [{confidence:.0%} CI]",
        "the paper's claim",
        "here",
    ]
    return markdown_table(header, lines, ["l"] * (len(header) - 5) + ["r", "l", "r", "l", "l"])


def direction_verdict(test: dict, paper_sign: float) -> str:
    """Whether the paper's claim "A better than B" (``paper_sign`` > 0; "worse": < 0) holds against our
    paired bootstrap of A − B: ``holds`` when our difference is significant with the paper's sign, ``does
    not hold`` when significant with the other sign, else ``not significant``."""
    if not test["significant"]:
        return "not significant"
    return "holds" if (test["delta"] > 0) == (paper_sign > 0) else "does not hold"


def band_of_run(report, run, record) -> Tuple[str, str]:
    """(first epoch with the training rho_hat inside the run's band, final rho_hat) of an EER run; "–" otherwise.
    The first cell also names the epoch from which rho_hat stayed in the band when that is a later one
    (``1 of 50, in band from 12``) or that it ended outside (``1 of 50, not at the end``)."""
    if not run.trains_with_ratio or record.get("status") != "done":
        return "–", "–"
    rho, gamma = report.plan.ratio_of(run, record)
    epochs = rho_hat_per_epoch(report.runner.run_dir(run))
    final = record.get("rho_hat")
    final_text = f"{final:.3f}" if final is not None else (f"{epochs[-1][1]:.3f}" if epochs else "–")
    if not epochs:
        return "–", final_text
    first, settled = band_text(epochs, rho, gamma)
    text = f"{first} of {len(epochs)}"
    if first != "never" and settled != first:
        text += ", not at the end" if settled == "never" else f", in band from {settled}"
    return text, final_text


def _finished_counts(report, run_a, run_b) -> Optional[tuple]:
    """The per-document counts of two runs when both finished and have them, else None."""
    if run_a is None or run_b is None:
        return None
    if any(report.records[r.key].get("status") != "done" for r in (run_a, run_b)):
        return None
    a, b = report.doc_counts(run_a.key), report.doc_counts(run_b.key)
    return None if a is None or b is None else (a, b)


def _bootstrap(report, a, b) -> dict:
    """The paired bootstrap of per-document counts ``a`` vs ``b`` with the plan's settings."""
    from eer_plugin.annotation.bootstrap import paired_bootstrap

    return paired_bootstrap(a, b, **report.bootstrap_settings)


def _pooled_bootstrap(report, pairs) -> dict:
    """One paired bootstrap over several seeds: ``pairs`` of per-document counts (A, B), summed per side."""
    from eer_plugin.annotation.bootstrap import sum_over_runs

    mine, theirs = zip(*pairs)
    return _bootstrap(report, sum_over_runs(mine), sum_over_runs(theirs))


def paired_difference(report, run_a, run_b) -> Optional[dict]:
    """Paired bootstrap of two finished runs on the same test documents (the plan's bootstrap settings)."""
    counts = _finished_counts(report, run_a, run_b)
    return None if counts is None else _bootstrap(report, *counts)


def pooled_ablation_differences(report) -> List[dict]:
    """Each ablation setting and approach against the plan's reference approach, its finished seeds pooled
    (per-document counts summed over the seeds on which both finished; one paired bootstrap):
    ``{setting, run (the first), seeds, test}``, in the plan's order; settings with no finished pair left out."""
    groups: Dict[tuple, dict] = {}
    for entry in ablation_rows(report):
        run, reference = entry["run"], entry["reference"]
        counts = None if run is reference else _finished_counts(report, run, reference)  # itself; or not both finished
        if counts is None:
            continue
        key = (
            entry["setting"]["name"],
            run.dataset.name,
            run.scenario_name,
            run.approach,
            run.encoder,
        )  # seeds pooled, never scenarios
        group = groups.setdefault(key, {"setting": entry["setting"], "run": run, "pairs": []})
        group["pairs"].append((run.seed, *counts))
    out = []
    for group in groups.values():
        seeds = [seed for seed, _, _ in group["pairs"]]
        test = _pooled_bootstrap(report, [(mine, theirs) for _, mine, theirs in group["pairs"]])
        out.append({"setting": group["setting"], "run": group["run"], "seeds": seeds, "test": test})
    return out


def _delta_cell(record, other, test) -> str:
    """``+1.2`` (F1 points), with † / ‡ when the paired bootstrap finds it significant; "–" without both runs."""
    if record.get("status") != "done" or other is None or other.get("status") != "done":
        return "–"
    mark = ("†" if test["delta"] > 0 else "‡") if test and test["significant"] else ""
    return f"{100 * (record['f1'] - other['f1']):+.1f}{mark}"


def ablation_rows(report) -> List[dict]:
    """One entry per ablation run: its setting, run, record, the benchmark run it is compared with
    (same approach, data, encoder and seed) and the plan's reference approach's run (same data and seed):
    the one in the same setting when the setting has the reference approach too (e.g. both with a
    setting's own encoder), else one trained on the same data (complete documents, dev set) with the plan's
    settings in another setting, else the benchmark's."""
    plan = report.plan
    rows = []
    for setting, run in plan.ablation_entries:
        base = plan.reference_run(run)
        reference = None
        if plan.reference:
            same_setting = (
                run.dataset.name,
                run.scenario_name,
                plan.reference,
                run.encoder,
                run.seed,
                None,
                run.ablation,
            )
            reference = (
                report.by_key.get(same_setting)
                or same_data_reference(plan, run)
                or plan.reference_run(run, plan.reference)
            )
        rows.append(
            {"setting": setting, "run": run, "record": report.records[run.key], "base": base, "reference": reference}
        )
    return rows


def on_benchmark_data(run) -> bool:
    """Whether a run trains and selects on its scenario's own data (no complete documents, the gold dev set)."""
    return run.train_data_name == run.scenario_name and run.dev is None


def same_data_reference(plan, run):
    """The reference approach's run on the same training and dev data as an ablation run whose data differ from
    the benchmark's (complete documents, a partial dev set), trained with the plan's settings; None if there is none."""
    if on_benchmark_data(run):
        return None
    return next(
        (
            r
            for r in plan.runs
            if r.approach == plan.reference
            and not r.overrides
            and not r.estimates_ratio
            and r.ratio is None
            and (r.dataset.name, r.scenario_name, r.encoder, r.seed, r.train_data_name, r.dev)
            == (run.dataset.name, run.scenario_name, run.encoder, run.seed, run.train_data_name, run.dev)
        ),
        None,
    )


def setting_text(setting: dict, run) -> str:
    """The "settings changed" cell of an ablation setting: its env, its partial dev set, its complete documents, its ratio estimate."""
    parts = [f"encoder {run.encoder}"] if setting.get("encoder") else []
    parts += [f"{k}={v}" for k, v in setting["env"].items()]
    dev = setting.get("dev")
    if dev:
        budget = dev["budget"]
        text = "proportional to the dev file's size" if budget == "proportional" else f"{budget:,}"
        parts.append(f"partial dev set (EE on the dev file, budget {text})")
    estimate = setting.get("estimate_ratio")
    if estimate:
        parts.append(
            f"EER_ENTITY_RATIO / EER_RATIO_MARGIN estimated from {estimate['complete_documents']} complete training documents (in the budget)"
        )
    if setting.get("complete_documents"):
        ratio = ", the plan's ratio" if run.trains_with_ratio else ""  # the other approaches have no ratio to estimate
        parts.append(f"{setting['complete_documents']} complete training documents (in the budget){ratio}")
    return ", ".join(parts)


def ablation_notes(settings: List[dict]) -> str:
    """Sentences for the Ablations section's introduction about partial dev sets, complete documents and ratio estimates ("" without them)."""
    notes = ""
    if any(s.get("dev") for s in settings):
        notes += (
            " A partial dev set: the EE simulator's annotation of the dev file (the run's seed) selects the checkpoint"
            " (with the setting's EER_VALIDATION_METRIC); its benchmark setting is the same approach selected on the gold dev set."
        )
    if any(s.get("estimate_ratio") or s.get("complete_documents") for s in settings):
        notes += (
            " Complete training documents: that many training documents, drawn with the seed, are annotated completely"
            " within the annotation budget (the EE simulator spends the rest on the other documents); the CRF taggers"
            " observe their unmarked words as O, SNS samples its negatives there as anywhere else."
        )
    if any(s.get("estimate_ratio") for s in settings):
        notes += (
            " Estimated rho ± gamma: `allennlp eer-estimate-ratio` on the training documents annotated completely within"
            " the annotation budget, the EER_ENTITY_RATIO / EER_RATIO_MARGIN the run trained with."
        )
    return notes


def _estimate_cell(record: dict) -> str:
    """``0.235 ± 0.030`` (the suggested rho ± gamma) of a ratio-estimate run; "–" before it ran."""
    estimate = record.get("ratio_estimate")
    if not estimate:
        return "–"
    return f"{estimate['entity_ratio']:.3f} ± {estimate['ratio_margin']:.3f}"


def ablations_table(report) -> str:
    """The ablation study: per setting and seed, test P/R/F1, the difference to the benchmark's own run
    of the same approach (same data and seed; it is the "benchmark setting" row), the difference to the
    plan's reference approach, the first epoch with rho_hat inside the band, the final rho_hat, wall time."""
    rows = ablation_rows(report)
    if not rows:
        return ""
    plan = report.plan
    multi_data = len({(r["run"].dataset.name, r["run"].scenario_name) for r in rows}) > 1 or len(plan.datasets) > 1
    reference_label = approach_label(plan.reference) if plan.reference else None
    estimates = any(r["run"].estimates_ratio for r in rows)

    def line(name, env_text, run, record, base, reference):
        band, final = band_of_run(report, run, record)
        done = record.get("status") == "done"
        cells = [name, approach_label(run.approach)]
        if multi_data:
            cells.append(f"{run.dataset.name}/{run.scenario_name}")
        cells += [str(run.seed), env_text]
        if done:
            cells += [points(record["precision"]), points(record["recall"]), points(record["f1"])]
        else:
            cells += ["–", "–", "failed" if record.get("status") == "failed" else "not run"]
        if estimates:
            cells.append(_estimate_cell(record) if run.estimates_ratio else "–")
        base_record = report.records[base.key] if base is not None else None
        cells.append(
            "–"
            if base is None or base is run
            else _delta_cell(record, base_record, paired_difference(report, run, base))
        )
        if reference_label:
            other = reference if reference is not run else None  # the reference approach's own row: "–"
            ref_record = report.records[other.key] if other is not None else None
            cells.append(_delta_cell(record, ref_record, paired_difference(report, run, other)))
        cells += [
            band,
            final,
            duration(float(record["seconds"])) if done and record.get("seconds") is not None else "–",
        ]
        return cells

    lines, shown = [], set()
    for entry in rows:  # the benchmark runs the settings are compared with, once each, first
        base = entry["base"]
        if base is not None and base.key not in shown:
            shown.add(base.key)
            lines.append(
                line("benchmark setting", "the plan's", base, report.records[base.key], base, entry["reference"])
            )
    for entry in rows:
        run, setting = entry["run"], entry["setting"]
        env_text = setting_text(setting, run)
        lines.append(line(setting["name"], env_text, run, entry["record"], entry["base"], entry["reference"]))
    header = ["setting", "approach"] + (["data"] if multi_data else []) + ["seed", "settings changed", "P", "R", "F1"]
    header += ["estimated rho ± gamma"] if estimates else []
    header += ["Δ F1 vs benchmark setting"]
    header += [f"Δ F1 vs {reference_label}"] if reference_label else []
    header += ["first epoch in band", "final rho_hat", "wall time"]
    align = ["l", "l"] + (["l"] if multi_data else []) + ["r", "l"] + ["r"] * (len(header) - (5 if multi_data else 4))
    return markdown_table(header, lines, align)
