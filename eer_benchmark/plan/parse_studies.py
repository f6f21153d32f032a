"""The plan's studies: the ratio grid, the learning curve and the ablations (``ratio_grid``,
``learning_curve``, ``ablations``), checked as :mod:`~eer_benchmark.plan.parse` checks the rest."""

from typing import Any, Dict, List, Optional

from eer_benchmark.plan.approaches import GOLD_APPROACHES, KNOWN_APPROACHES, RATIO_APPROACHES
from eer_benchmark.plan.checks import (
    check_approaches,
    check_env,
    check_keys,
    check_min_steps,
    check_names,
    check_seeds,
    check_subset,
    require,
)
from eer_benchmark.plan.plan import RATIO_CONTROLS, setting_slug
from eer_benchmark.plan.scenario import Scenario


def check_ratio_grid(
    grid: Any, scenarios: List[Scenario], dataset_names: List[str], scenario_names: List[str]
) -> Dict[str, Any]:
    """``ratio_grid``: a list of [rho, gamma] pairs, or ``{settings, approach, controls, datasets, scenarios, seeds,
    min_steps}``. ``controls``: the ratio controls each band is trained with, ``fixed`` (the paper's hinge with a
    fixed weight, the default) and/or ``bind`` (the binding control, ``EER_RATIO_CONTROL=bind``)."""
    if isinstance(grid, list):
        grid = {"settings": grid}
    require(isinstance(grid, dict), "'ratio_grid' must be a list of [rho, gamma] pairs or a mapping with 'settings'")
    check_keys(grid, ["settings", "approach", "controls", "datasets", "scenarios", "seeds", "min_steps"], "ratio_grid")
    settings = grid.get("settings")
    require(
        isinstance(settings, list) and settings, "ratio_grid: 'settings' must be a non-empty list of [rho, gamma] pairs"
    )
    pairs = []
    for pair in settings:
        require(
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair)
            and 0 <= pair[0] <= 1
            and pair[1] >= 0,
            f"ratio_grid: each setting must be [rho, gamma] with 0 <= rho <= 1 and gamma >= 0, got {pair!r}",
        )
        pairs.append((float(pair[0]), float(pair[1])))
    approach = grid.get("approach", "eer_short")
    require(
        approach in RATIO_APPROACHES,
        f"ratio_grid: 'approach' must be an EER approach ({', '.join(RATIO_APPROACHES)}), got {approach!r}",
    )
    require(bool(scenarios), "ratio_grid needs a scenario")
    controls = check_names(grid.get("controls", ["fixed"]), "ratio_grid.controls")
    for control in controls:
        require(
            control in RATIO_CONTROLS,
            f"ratio_grid.controls: unknown control {control!r}; expected {' or '.join(map(repr, RATIO_CONTROLS))}",
        )
    return {
        "settings": pairs,
        "approach": approach,
        "controls": controls,
        "datasets": check_subset(grid.get("datasets"), dataset_names, "ratio_grid.datasets"),
        "scenarios": check_subset(grid.get("scenarios"), scenario_names, "ratio_grid.scenarios"),
        "seeds": check_seeds(grid["seeds"], "ratio_grid.seeds") if "seeds" in grid else None,
        "min_steps": check_min_steps(grid["min_steps"], "ratio_grid.min_steps") if "min_steps" in grid else None,
    }


def check_learning_curve(curve: Any, dataset_names: List[str]) -> Dict[str, Any]:
    """``learning_curve: {budgets, approaches, datasets, schemes, keep_probability, seeds, min_steps}``."""
    require(isinstance(curve, dict), "'learning_curve' must be a mapping with 'budgets' and 'approaches'")
    check_keys(
        curve,
        ["budgets", "approaches", "datasets", "schemes", "keep_probability", "seeds", "min_steps", "cells"],
        "learning_curve",
    )
    budgets = curve.get("budgets")
    require(
        isinstance(budgets, list)
        and budgets
        and all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budgets),
        f"learning_curve: 'budgets' must be a non-empty list of positive integers, got {budgets!r}",
    )
    lc_approaches = check_approaches(
        curve.get("approaches", ["eer_short", "raw_shortest"]), "learning_curve.approaches"
    )
    for gold in GOLD_APPROACHES:
        require(
            gold not in lc_approaches,
            f"learning_curve.approaches: {gold!r} ignores the budget; put it in 'approaches' (it is drawn as a line)",
        )
    schemes = check_names(curve.get("schemes", ["ee", "exhaustive"]), "learning_curve.schemes")
    for scheme in schemes:
        require(
            scheme in ("ee", "exhaustive"),
            f"learning_curve.schemes: unknown scheme {scheme!r}; expected 'ee' or 'exhaustive'",
        )
    keep = curve.get("keep_probability", 0.8)
    require(
        isinstance(keep, (int, float)) and 0 < keep <= 1,
        f"learning_curve: 'keep_probability' must be in (0, 1], got {keep!r}",
    )
    return {
        "budgets": sorted(set(budgets)),
        "approaches": lc_approaches,
        "schemes": schemes,
        "keep_probability": float(keep),
        "datasets": check_subset(curve.get("datasets"), dataset_names, "learning_curve.datasets"),
        "seeds": check_seeds(curve["seeds"], "learning_curve.seeds") if "seeds" in curve else None,
        "min_steps": check_min_steps(curve["min_steps"], "learning_curve.min_steps") if "min_steps" in curve else None,
        "cells": [_curve_cell(cell, i) for i, cell in enumerate(curve.get("cells") or [])],
    }


def _curve_cell(cell: Any, index: int) -> Dict[str, Any]:
    """A learning curve's further cells: ``{budgets, schemes, approaches, seeds, encoder, setting}``, each key
    defaulting to the curve's (``encoder``: the plan's encoders; ``setting``: the name of an ablation setting
    whose env the runs take, e.g. 'binding ratio control'), on the curve's data and step budget: more seeds,
    approaches or an encoder at some budgets without running the whole curve again."""
    where = f"learning_curve.cells[{index}]"
    require(
        isinstance(cell, dict), f"{where} must be a mapping such as {{budgets: [1000], approaches: ['eer_shortest']}}"
    )
    check_keys(cell, ["budgets", "schemes", "approaches", "seeds", "encoder", "setting"], where)
    out: Dict[str, Any] = {}
    if "budgets" in cell:
        budgets = cell["budgets"]
        require(
            isinstance(budgets, list)
            and budgets
            and all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budgets),
            f"{where}: 'budgets' must be a non-empty list of positive integers, got {budgets!r}",
        )
        out["budgets"] = sorted(set(budgets))
    if "schemes" in cell:
        out["schemes"] = check_names(cell["schemes"], f"{where}.schemes")
        for scheme in out["schemes"]:
            require(
                scheme in ("ee", "exhaustive"),
                f"{where}.schemes: unknown scheme {scheme!r}; expected 'ee' or 'exhaustive'",
            )
    if "approaches" in cell:
        out["approaches"] = check_approaches(cell["approaches"], f"{where}.approaches")
        require(
            bool(out["approaches"]) and not any(a in GOLD_APPROACHES for a in out["approaches"]),
            f"{where}.approaches: a non-empty list of partial-annotation approaches, got {cell['approaches']!r}",
        )
    if "seeds" in cell:
        out["seeds"] = check_seeds(cell["seeds"], f"{where}.seeds")
    for key in ("encoder", "setting"):
        if key in cell:
            require(isinstance(cell[key], str) and cell[key].strip(), f"{where}: {key!r} must be a non-empty name")
            out[key] = cell[key]
    return out


def check_curve_settings(curve: Dict[str, Any], ablations: Optional[Dict[str, Any]]) -> None:
    """A learning-curve cell's ``setting`` names an ablation setting that changes the env only (its data, dev set
    and encoder are the curve's)."""
    known = {s["name"]: s for s in (ablations or {}).get("settings", [])}
    for index, cell in enumerate(curve["cells"]):
        name = cell.get("setting")
        if name is None:
            continue
        setting = known.get(name)
        require(
            setting is not None,
            f"learning_curve.cells[{index}]: 'setting' {name!r} is not an ablation setting of the plan ({', '.join(known) or 'none'})",
        )
        require(
            bool(setting["env"])
            and not (
                setting["dev"] or setting["estimate_ratio"] or setting["complete_documents"] or setting["encoder"]
            ),
            f"learning_curve.cells[{index}]: the setting {name!r} changes more than env; a curve cell takes env-only settings",
        )
        cell["setting"] = setting


def check_ablations(study: Any, dataset_names: List[str], scenario_names: List[str]) -> Dict[str, Any]:
    """``ablations: {approach, scenarios, datasets, seeds, settings: [{name, env, approach, encoder, scenarios}]}``:
    each setting is one run per seed (default: the scenario's seeds) of the approach (a setting's ``approach``
    may list several) on each scenario's data, with the plan's settings and the setting's env over them;
    compared with the benchmark's own run. A setting's ``encoder`` replaces the plan's encoders for its runs
    (a second encoder measured on a few approaches without running the whole plan with it); its
    ``scenarios`` replace the study's (a setting that matters on one annotation scenario only)."""
    require(isinstance(study, dict), "'ablations' must be a mapping with 'approach' and 'settings'")
    check_keys(study, ["approach", "settings", "datasets", "scenarios", "seeds"], "ablations")
    require(bool(scenario_names), "ablations need a scenario")

    def approach_of(value: Any, where: str) -> str:
        require(
            value in KNOWN_APPROACHES and value not in GOLD_APPROACHES,
            f"{where}: unknown approach {value!r}; expected a partial-annotation approach such as eer_short",
        )
        return value

    approach = approach_of(study.get("approach", "eer_short"), "ablations.approach")
    settings = study.get("settings")
    require(
        isinstance(settings, list) and bool(settings), "ablations: 'settings' must be a non-empty list of {name, env}"
    )
    parsed, slugs = [], set()
    for index, item in enumerate(settings):
        require(
            isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip(),
            f"ablations.settings[{index}] must be a mapping with a 'name' and an 'env'",
        )
        where = f"ablations setting {item['name']!r}"
        check_keys(
            item,
            ["name", "env", "approach", "encoder", "dev", "estimate_ratio", "complete_documents", "seeds", "scenarios"],
            where,
        )
        dev = _partial_dev(item["dev"], where) if item.get("dev") is not None else None
        estimate = _estimate_ratio(item["estimate_ratio"], where) if item.get("estimate_ratio") is not None else None
        complete = _complete_documents(item.get("complete_documents"), where)
        require(
            not (estimate and complete),
            f"{where}: give either 'estimate_ratio' (complete documents and the ratio estimated on them) or 'complete_documents' (the plan's ratio), not both",
        )
        env = check_env(item.get("env", {}), f"{where}: env")
        encoder = item.get("encoder")
        require(
            encoder is None or (isinstance(encoder, str) and encoder.strip()),
            f"{where}: 'encoder' must be a model name or directory",
        )
        require(
            bool(env) or bool(dev) or bool(estimate) or bool(complete) or encoder is not None,
            f"{where}: 'env' is {'empty' if 'env' in item else 'missing'}: give the EER_* variables that differ "
            "from the plan's (or a dev, encoder, estimate_ratio or complete_documents); as it stands it would repeat the benchmark run",
        )
        if dev is not None:
            require(
                str(env.get("EER_VALIDATION_METRIC", "")).endswith("partial-f1"),
                f"{where}: a partial dev set needs env.EER_VALIDATION_METRIC '+partial-f1' (the complete-data F1 scores unmarked words as O)",
            )
        if estimate is not None:
            for key in ("EER_ENTITY_RATIO", "EER_RATIO_MARGIN"):
                require(
                    key not in env, f"{where}: env.{key} comes from the ratio estimate (estimate_ratio); do not set it"
                )
        require(
            "EER_ENCODER" not in env,
            f"{where}: env.EER_ENCODER: give the setting's encoder as its 'encoder' (or the plan's 'encoders')",
        )
        name_slug = setting_slug(item["name"])
        require(name_slug not in slugs, f"{where}: its directory name {name_slug!r} is another setting's; rename one")
        slugs.add(name_slug)
        own = item.get("approach", approach)
        own = [approach_of(a, f"{where}: 'approach'") for a in (own if isinstance(own, list) else [own])]
        require(
            bool(own) and len(set(own)) == len(own), f"{where}: 'approach' must name an approach, or list distinct ones"
        )
        seeds = check_seeds(item["seeds"], f"{where}: seeds") if "seeds" in item else None
        parsed.append(
            {
                "name": item["name"],
                "slug": name_slug,
                "env": env,
                "approaches": own,
                "encoder": encoder,
                "dev": dev,
                "estimate_ratio": estimate,
                "complete_documents": complete,
                "seeds": seeds,
                "scenarios": check_subset(item.get("scenarios"), scenario_names, f"{where}: scenarios"),
            }
        )
    return {
        "approach": approach,
        "settings": parsed,
        "datasets": check_subset(study.get("datasets"), dataset_names, "ablations.datasets"),
        "scenarios": check_subset(study.get("scenarios"), scenario_names, "ablations.scenarios"),
        "seeds": check_seeds(study["seeds"], "ablations.seeds") if "seeds" in study else None,
    }


def _partial_dev(value: Any, where: str) -> Dict[str, Any]:
    """An ablation setting's ``dev: {type: 'ee', budget: N | 'proportional', keep_probability, max_per_document}``:
    checkpoints selected on the EE simulator's partial annotation of the dataset's dev file (the run's seed);
    ``'proportional'``: round(scenario budget x dev tokens / train tokens)."""
    require(isinstance(value, dict), f"{where}: 'dev' must be a mapping such as {{type: 'ee', budget: 'proportional'}}")
    check_keys(value, ["type", "budget", "keep_probability", "max_per_document"], f"{where}: dev")
    require(
        value.get("type", "ee") == "ee",
        f"{where}: dev.type must be 'ee' (the Exploratory Expert on the dev file), got {value.get('type')!r}",
    )
    budget = value.get("budget", "proportional")
    require(
        budget == "proportional" or (isinstance(budget, int) and not isinstance(budget, bool) and budget >= 1),
        f"{where}: dev.budget must be a positive integer or 'proportional', got {budget!r}",
    )
    keep = value.get("keep_probability", 0.8)
    require(
        isinstance(keep, (int, float)) and 0 < keep <= 1,
        f"{where}: dev.keep_probability must be in (0, 1], got {keep!r}",
    )
    cap = value.get("max_per_document", 10)
    require(
        isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1,
        f"{where}: dev.max_per_document must be a positive integer, got {cap!r}",
    )
    return {"type": "ee", "budget": budget, "keep_probability": float(keep), "max_per_document": cap}


def _complete_documents(value: Any, where: str) -> Optional[int]:
    """An ablation setting's ``complete_documents: 20``: that many training documents annotated completely
    within the scenario's budget (as for ``estimate_ratio``), trained with the plan's ratio; None: not given."""
    if value is None:
        return None
    require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 1,
        f"{where}: complete_documents must be a positive integer (training documents annotated completely), got {value!r}",
    )
    return value


def _estimate_ratio(value: Any, where: str) -> Dict[str, Any]:
    """An ablation setting's ``estimate_ratio: {complete_documents: 20}``: that many training documents
    annotated completely within the scenario's budget, and EER_ENTITY_RATIO / EER_RATIO_MARGIN from
    ``allennlp eer-estimate-ratio`` on them."""
    require(isinstance(value, dict), f"{where}: 'estimate_ratio' must be a mapping such as {{complete_documents: 20}}")
    check_keys(value, ["complete_documents"], f"{where}: estimate_ratio")
    count = value.get("complete_documents", 20)
    require(
        isinstance(count, int) and not isinstance(count, bool) and count >= 1,
        f"{where}: estimate_ratio.complete_documents must be a positive integer, got {count!r}",
    )
    return {"complete_documents": count}


def check_blocks(
    items: Any,
    ablations: Optional[Dict[str, Any]],
    scenario_names: List[str],
    reference: Optional[str],
    seeds: List[int],
) -> List[Dict[str, Any]]:
    """``blocks: [{name, encoder, approaches, seeds, scenarios: [{name, seeds, approaches}], settings: [{name, approach, scenarios}]}]``:
    the benchmark table again on another encoder, for some approaches, scenarios and seeds (issue 27's headline
    block), rendered as a table of its own. Its runs live in ``<dataset>/ablations/<block name as a directory>/``:
    an ablation setting of the same name that changes the encoder only (to the block's) has the same runs, which
    the block therefore counts as its own (a setting of that name that changes more is an error). ``settings`` names
    ablation settings (a partial dev set, complete documents, a ratio estimate, env) to run with the block's
    encoder as well, on the block scenarios' seeds, for the setting's approaches (or the given ``approach``) and
    scenarios (or the given ``scenarios``: some of the setting's, where it names any)."""
    require(
        isinstance(items, list) and bool(items),
        "'blocks' must be a non-empty list of {name, encoder, approaches, scenarios}",
    )
    known_settings = {s["name"]: s for s in (ablations or {}).get("settings", [])}
    blocks, slugs = [], set()
    for index, item in enumerate(items):
        require(
            isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip(),
            f"blocks[{index}] must be a mapping with a 'name'",
        )
        where = f"block {item['name']!r}"
        check_keys(item, ["name", "encoder", "approaches", "seeds", "scenarios", "settings"], where)
        encoder = item.get("encoder")
        require(
            isinstance(encoder, str) and bool(encoder.strip()), f"{where}: 'encoder' must be a model name or directory"
        )
        approaches = check_approaches(item.get("approaches"), f"{where}: approaches")
        require(bool(approaches), f"{where}: 'approaches' is empty")
        require(
            reference is None or reference in approaches,
            f"{where}: 'approaches' must include the plan's reference {reference!r} (the bootstrap compares with it)",
        )
        block_seeds = check_seeds(item["seeds"], f"{where}: seeds") if "seeds" in item else list(seeds)
        name_slug = setting_slug(item["name"])
        require(name_slug not in slugs, f"{where}: its directory name {name_slug!r} is another block's; rename one")
        slugs.add(name_slug)
        same_dir = next((s for s in known_settings.values() if s["slug"] == name_slug), None)
        if same_dir is not None:
            changes_only_encoder = not (
                same_dir["env"] or same_dir["dev"] or same_dir["estimate_ratio"] or same_dir["complete_documents"]
            )
            require(
                changes_only_encoder and same_dir["encoder"] == encoder,
                f"{where}: the ablation setting {same_dir['name']!r} has the same directory ({name_slug!r}) but other settings than "
                f"the encoder {encoder!r} alone; rename the block (only a setting that changes the encoder to the block's shares its runs)",
            )
        scenarios = []
        for position, entry in enumerate(item.get("scenarios") or []):
            at = f"{where}: scenarios[{position}]"
            require(
                isinstance(entry, dict) and entry.get("name") in scenario_names,
                f"{at} must be {{name, seeds, approaches}} with a scenario of the plan ({', '.join(scenario_names)})",
            )
            check_keys(entry, ["name", "seeds", "approaches"], at)
            own = (
                check_approaches(entry["approaches"], f"{at}: approaches")
                if "approaches" in entry
                else [a for a in approaches if a not in GOLD_APPROACHES]
            )
            require(
                all(a in approaches and a not in GOLD_APPROACHES for a in own),
                f"{at}: 'approaches' must be the block's approaches other than gold, got {own!r}",
            )
            entry_seeds = check_seeds(entry["seeds"], f"{at}: seeds") if "seeds" in entry else block_seeds
            scenarios.append({"name": entry["name"], "seeds": entry_seeds, "approaches": own})
        require(
            bool(scenarios) or all(a in GOLD_APPROACHES for a in approaches),
            f"{where}: 'scenarios' is empty, but its approaches other than gold need one",
        )
        settings = []
        for position, entry in enumerate(item.get("settings") or []):
            at = f"{where}: settings[{position}]"
            require(
                isinstance(entry, dict) and entry.get("name") in known_settings,
                f"{at} must be {{name, approach, scenarios}} naming an ablation setting of the plan, got {entry!r}",
            )
            check_keys(entry, ["name", "approach", "scenarios"], at)
            setting = known_settings[entry["name"]]
            require(
                setting["encoder"] is None,
                f"{at}: the ablation setting {entry['name']!r} has an encoder of its own; the block gives it the block's",
            )
            own = entry.get("approach", setting["approaches"])
            own = check_approaches(own if isinstance(own, list) else [own], f"{at}: approach")
            require(
                all(a in setting["approaches"] for a in own),
                f"{at}: 'approach' must be among the setting's approaches {setting['approaches']}",
            )
            # the setting's scenarios; where neither it nor the study names any (its runs: the EE scenarios), any of the plan's
            allowed = setting["scenarios"] or (ablations or {}).get("scenarios")
            chosen = entry.get("scenarios")
            if chosen is not None:
                require(
                    isinstance(chosen, list) and bool(chosen) and all(n in (allowed or scenario_names) for n in chosen),
                    f"{at}: 'scenarios' must be a non-empty list among the setting's scenarios ({', '.join(allowed or scenario_names)}), got {chosen!r}",
                )
            settings.append({"setting": setting, "approaches": own, "scenarios": chosen})
        blocks.append(
            {
                "name": item["name"],
                "slug": name_slug,
                "encoder": encoder,
                "approaches": approaches,
                "seeds": block_seeds,
                "scenarios": scenarios,
                "settings": settings,
            }
        )
    return blocks
