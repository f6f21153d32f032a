"""The paper's claims that a plan can check: the paper's difference, ours (per seed, and pooled over seeds
with the paired bootstrap) and the verdict, and the paragraphs of ``docs/results.md`` that state them (used by
:mod:`eer_benchmark.report.docs` and by the blocks' sections, :mod:`eer_benchmark.report.blocks`)."""

from typing import Dict, List, Optional, Tuple

from eer_benchmark.analyse.paper import NO_PAPER_SCENARIO_TYPES, paper_value
from eer_benchmark.analyse.studies import direction_verdict, pooled_ablation_differences
from eer_benchmark.plan.approaches import approach_label, family_of, split_approach
from eer_benchmark.tables import markdown_table, mean, std
from eer_plugin.annotation.bootstrap import paired_bootstrap

#: a paper difference smaller than this (F1 points) is read as the claim "about equal"
EQUAL_MARGIN = 1.0


def verdict(paper_delta: Optional[float], test: Optional[dict]) -> str:
    """Whether one of the paper's claims holds here, from its difference (F1 points) and our paired
    bootstrap: ``holds`` / ``does not hold`` / ``not significant`` (``–``: not run or not in the paper).
    A claim "A better than B" holds when our difference is significant with the paper's sign, does not
    hold when it is significant with the other sign; a claim "about equal" (|paper| < EQUAL_MARGIN)
    holds when ours is not significant."""
    if paper_delta is None or test is None:
        return "–"
    if abs(paper_delta) < EQUAL_MARGIN:
        return "does not hold" if test["significant"] else "holds"
    return direction_verdict(test, paper_delta)


def _claim_text(a: str, b: str, paper_delta: Optional[float]) -> str:
    if paper_delta is None:
        return f"{a} vs {b}"
    if abs(paper_delta) < EQUAL_MARGIN:
        return f"{a} ≈ {b}"
    return f"{a} > {b}" if paper_delta > 0 else f"{a} < {b}"


def pooled(
    report, dataset, scenario, a, b, encoder, ratios=(None, None), ablations=(None, None)
) -> Tuple[Optional[dict], List[float]]:
    """The paired bootstrap of A vs B with their common seeds pooled (per-document counts summed), and
    the per-seed F1 differences (points); ``ablations``: each side's setting or block directory (None: the benchmark's)."""
    mine = report.done(dataset, scenario, a, encoder, ratios[0], ablations[0])
    theirs = report.done(dataset, scenario, b, encoder, ratios[1], ablations[1])
    per_seed = [100 * (mine[s]["f1"] - theirs[s]["f1"]) for s in sorted(set(mine) & set(theirs))]
    pair, _ = report.pair_counts(dataset, scenario, a, encoder, reference=b, ratios=ratios, ablations=ablations)
    if pair is None:
        return None, per_seed
    return paired_bootstrap(*pair, **report.bootstrap_settings), per_seed


def claims(
    plan, report, rows, robustness: Dict[tuple, dict], dataset: str, column: str, block: Optional[dict] = None
) -> List[dict]:
    """The paper's claims that this plan can check, each with the paper's difference, ours (per seed,
    and pooled over seeds with the paired bootstrap) and the :func:`verdict`: every EER approach
    (short, shortest) against every baseline in each scenario (the paper's NNS block: its -all rows),
    EER-short against EER-shortest, and each setting of the ratio grid against the benchmark setting
    (the paper's "Varying EER HPs", ``robustness``: as :func:`~eer_benchmark.analyse.paper.paper_robustness`).
    Computed once per report and data set. ``block``: the claims on a block's runs (its encoder, scenarios
    and approaches; no ratio grid) instead of the benchmark's."""
    cache = report.__dict__.setdefault("_claims", {})
    key = (dataset, column, block["slug"] if block else None)
    if key not in cache:
        cache[key] = _claims(plan, report, rows, robustness, dataset, column, block)
    return cache[key]


def claim_pairs(scenarios, approaches_of) -> List[tuple]:
    """(scenario, A, B) of the paper's claims: EER-short and -shortest against every baseline (the approaches
    without the ratio, not gold) of each scenario, and EER-short against EER-shortest (``approaches_of``: a
    scenario's approaches)."""
    pairs = []
    for scenario in scenarios:
        approaches = approaches_of(scenario)
        eer = [a for a in approaches if family_of(a).ratio and split_approach(a)[1] != "all"]
        pairs += [(scenario, a, b) for a in eer for b in approaches if not family_of(b).ratio and not family_of(b).gold]
    for scenario in scenarios:
        if "eer_short" in approaches_of(scenario) and "eer_shortest" in approaches_of(scenario):
            pairs.append((scenario, "eer_short", "eer_shortest"))
    return pairs


def _claims(
    plan, report, rows, robustness: Dict[tuple, dict], dataset: str, column: str, block: Optional[dict] = None
) -> List[dict]:
    if block is None:
        in_paper = [s for s in plan.scenarios if s.type not in NO_PAPER_SCENARIO_TYPES]  # a dictionary: no paper claims
        encoder, ablation, pairs = plan.encoders[0], None, claim_pairs(in_paper, plan.scenario_approaches)
    else:
        scenarios = {s.name: s for s in plan.scenarios}
        own = {entry["name"]: entry["approaches"] for entry in block["scenarios"]}
        pairs = claim_pairs([scenarios[name] for name in own], lambda scenario: own[scenario.name])
        encoder, ablation = block["encoder"], block["slug"]
    out = []
    for scenario, a, b in pairs:
        (value_a, row_a), (value_b, row_b) = (paper_value(rows, scenario.type, x, column) for x in (a, b))
        # both set beside the same paper row (the NNS block's -all rows): the paper says nothing on the pair
        paper_delta = value_a - value_b if None not in (value_a, value_b) and row_a != row_b else None
        test, per_seed = pooled(report, dataset, scenario.name, a, b, encoder, ablations=(ablation, ablation))
        out.append(
            {
                "scenario": scenario.name,
                "difference": f"{approach_label(a)} − {approach_label(b)}",
                "claim": _claim_text(approach_label(a), approach_label(b), paper_delta),
                "paper": paper_delta,
                "per_seed": per_seed,
                "test": test,
                "verdict": verdict(paper_delta, test),
            }
        )
    if plan.ratio_entries and block is None:
        base_of: Dict[tuple, tuple] = {}  # group -> (base setting, the ratio key of its runs)
        for group, setting, run in plan.ratio_entries:
            if setting == plan.base_ratio(run.dataset):
                base_of[group] = (setting, run.ratio)
        approach = plan.ratio_grid["approach"]
        seen = set()
        for group, setting, run in plan.ratio_entries:
            if group[0] != dataset or group not in base_of or setting == base_of[group][0] or (group, setting) in seen:
                continue
            seen.add((group, setting))
            base, base_key = base_of[group]
            interval = lambda r: (round(r[0] - r[1], 2), round(r[0] + r[1], 2))  # noqa: E731
            theirs = [robustness.get(interval(x)) for x in (setting, base)]
            paper_delta = theirs[0]["avg"] - theirs[1]["avg"] if None not in theirs else None
            test, per_seed = pooled(
                report, dataset, group[1], approach, approach, group[2], ratios=(run.ratio, base_key)
            )
            names = [f"[{interval(x)[0]:.2f}, {interval(x)[1]:.2f}]" for x in (setting, base)]
            out.append(
                {
                    "scenario": group[1],
                    "difference": f"{approach_label(approach)} {names[0]} − {names[1]}",
                    "claim": _claim_text(names[0], names[1], paper_delta),
                    "paper": paper_delta,
                    "per_seed": per_seed,
                    "test": test,
                    "verdict": verdict(paper_delta, test),
                }
            )
    return out


def differences(
    plan,
    report,
    rows,
    dataset: str,
    column: str,
    robustness: Optional[Dict[tuple, dict]] = None,
    block: Optional[dict] = None,
) -> str:
    """The paper's claims as differences (see :func:`claims`), in F1 points: ours (mean ± sd over the
    common seeds), the paired bootstrap with the seeds pooled, the paper's, and the verdict."""
    lines = []
    confidence = plan.bootstrap["confidence"]
    for c in claims(plan, report, rows, robustness or {}, dataset, column, block):
        ours = "–"
        if c["per_seed"]:
            ours = f"{mean(c['per_seed']):+.1f}" + (f" ± {std(c['per_seed']):.1f}" if len(c["per_seed"]) > 1 else "")
        test = c["test"]
        pooled = (
            f"{100 * test['delta']:+.1f} [{100 * test['ci_low']:+.1f}, {100 * test['ci_high']:+.1f}]" if test else "–"
        )
        paper = f"{c['paper']:+.1f}" if c["paper"] is not None else "–"
        lines.append([c["scenario"], c["difference"], ours, paper, pooled, c["claim"], c["verdict"]])
    header = [
        "scenario",
        "difference",
        f"ours ({dataset}, F1 points)",
        f"paper ({column})",
        f"ours, seeds pooled [{confidence:.0%} CI]",
        "the paper's claim",
        "here",
    ]
    return markdown_table(header, lines, ["l", "l", "r", "r", "r", "l", "l"])


def claims_paragraph(
    plan, report, rows, robustness: Dict[tuple, dict], dataset: str, column: str, block: Optional[dict] = None
) -> str:
    """The claims in words, generated from :func:`claims` (no number typed by hand), with the ablation
    that comes closest to the plan's reference approach (not for a ``block``'s claims)."""
    found = [c for c in claims(plan, report, rows, robustness, dataset, column, block) if c["verdict"] != "–"]
    if not found:
        return ""
    groups: Dict[str, List[str]] = {}
    for c in found:
        groups.setdefault(c["verdict"], []).append(f"{c['claim']} ({c['scenario']})")
    plural = {"holds": "hold", "does not hold": "do not hold"}
    counts = ", ".join(
        f"{len(groups[v])} {v if len(groups[v]) == 1 else plural.get(v, v)}"
        for v in ("holds", "does not hold", "not significant")
        if v in groups
    )
    text = [
        f"**Which of the paper's claims hold here** ({dataset}; {plan.bootstrap['confidence']:.0%} paired bootstrap over test "
        f'documents, seeds pooled; a paper difference under {EQUAL_MARGIN:g} point reads as "about equal"): of {len(found)} '
        f"claims checked, {counts}."
    ]
    for v in ("holds", "does not hold", "not significant"):
        if v in groups:
            text.append(f"{v[0].upper() + v[1:]}: {'; '.join(groups[v])}.")
    if plan.reference and block is None:
        closing, tested = [], 0
        pooled = pooled_ablation_differences(report)
        scenarios: Dict[tuple, set] = {}  # (setting, approach) -> its scenarios: named when there are several
        for entry in pooled:
            scenarios.setdefault((entry["setting"]["name"], entry["run"].approach), set()).add(
                entry["run"].scenario_name
            )
        for entry in pooled:
            if entry["run"].dataset.name != dataset:
                continue
            tested += 1
            test, seeds = entry["test"], entry["seeds"]
            if not (test["significant"] and test["delta"] < 0):
                which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))} pooled"
                where = (
                    f"{entry['run'].scenario_name}, "
                    if len(scenarios[(entry["setting"]["name"], entry["run"].approach)]) > 1
                    else ""
                )
                closing.append(
                    f"{entry['setting']['name']} ({approach_label(entry['run'].approach)}, {where}{which}: {100 * test['delta']:+.1f})"
                )
        if tested:
            label = approach_label(plan.reference)
            text.append(
                f"Ablations: of {tested} finished ablation settings (an approach's seeds pooled), "
                + (
                    f"these are not significantly worse than {label}: {'; '.join(closing)}."
                    if closing
                    else f"none comes within significance of {label}."
                )
            )
    return " ".join(text)
