"""The plan language: reading a plan file (jsonnet, JSON or YAML) and checking every key, with errors
(:class:`~eer_plugin.benchmark.plan.PlanError`) that name the key, what was expected and the fix."""
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from eer_plugin.benchmark.plan import (
    ABLATIONS_DIR, GOLD_APPROACHES, GOLD_SCENARIO, KNOWN_APPROACHES, VARIANTS, Plan, PlanError, setting_slug, slug, split_approach,
)  # fmt: skip
from eer_plugin.benchmark.scenario import READER_OPTION_VARIABLES, SCENARIO_PARAMETERS, SCENARIO_TYPES, Dataset, Scenario
from eer_plugin.benchmark.scenario import dataset_reader_options
from eer_plugin.encoders import config_defaults
from eer_plugin.settings import unset_defaults

PLAN_KEYS = (
    "name", "description", "datasets", "scenarios", "approaches", "encoders", "seeds", "epochs", "env",
    "reference", "ratio_grid", "learning_curve", "bootstrap", "min_steps", "ablations",
)  # fmt: skip
#: EER_* variables the plan sets through its own keys, not through ``env``
CONTROLLED_VARIABLES = {
    "EER_TRAIN_DATA": "datasets[].train (simulated per scenario)",
    "EER_GOLD_TRAIN_DATA": "datasets[].train",
    "EER_DEV_DATA": "datasets[].dev (a partial dev set: an ablation setting's 'dev')",
    "EER_TEST_DATA": "datasets[].test",
    "EER_SEED": "seeds",
    **{variable: f"datasets[].{key}" for key, variable in READER_OPTION_VARIABLES.items()},
}
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def read_plan_file(path: str) -> Any:
    """A plan file as Python data: ``.yaml``/``.yml`` with PyYAML, anything else as jsonnet (which
    includes JSON; ``std.extVar(NAME)`` reads environment variables, or an ``EER_*`` setting's default)."""
    p = Path(path)
    if not p.is_file():
        raise PlanError(f"plan file not found: {p}")
    if p.suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(p.read_text())
        except yaml.YAMLError as err:
            raise PlanError(f"{p}: invalid YAML: {err}") from None
    import _jsonnet

    try:
        # the environment, and the settings' defaults for the EER_* variables it does not set
        text = _jsonnet.evaluate_file(str(p), ext_vars={**unset_defaults(), **os.environ})
    except RuntimeError as err:
        raise PlanError(f"{p}: invalid jsonnet: {err}") from None
    return json.loads(text)


def load_plan(path: str, check_files: bool = True) -> Plan:
    """Reads and validates a plan (relative data paths are relative to the current directory)."""
    return parse_plan(read_plan_file(path), str(path), check_files).expand()


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise PlanError(message)


def _check_keys(data: Mapping, allowed: Sequence[str], where: str) -> None:
    unknown = [k for k in data if k not in allowed]
    _require(not unknown, f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected {', '.join(allowed)}")


def _names(values, where: str) -> List[str]:
    _require(isinstance(values, list) and all(isinstance(v, str) for v in values), f"{where} must be a list of names")
    return list(values)


def _env(data: Any, where: str) -> Dict[str, str]:
    _require(isinstance(data, dict), f"{where} must be a mapping of environment variables to values")
    env = {}
    for key, value in data.items():
        _require(isinstance(key, str) and bool(key), f"{where}: variable names must be strings")
        _require(
            key not in CONTROLLED_VARIABLES,
            f"{where}: {key} is set by the runner from the plan's {CONTROLLED_VARIABLES.get(key)}; do not set it in env",
        )
        _require(value is not None and not isinstance(value, (dict, list)), f"{where}: {key} must be a string or number")
        env[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


def _resolve(path: Any, where: str, check: bool) -> str:
    _require(isinstance(path, str) and bool(path), f"{where} must be a file path")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path.cwd() / resolved
    resolved = Path(os.path.normpath(resolved))
    if check and not resolved.exists():
        raise PlanError(f"{where}: file not found: {resolved} (relative paths are relative to the current directory {Path.cwd()})")
    return str(resolved)


def _scenario(data: Any, index: int) -> Scenario:
    where = f"scenarios[{index}]"
    _require(isinstance(data, dict), f"{where} must be a mapping with 'name' and 'type'")
    name, kind = data.get("name"), data.get("type")
    _require(isinstance(name, str) and bool(NAME_PATTERN.match(name or "")), f"{where}: 'name' must be a name like 'EE-1000' (letters, digits, . _ + -), got {name!r}")
    where = f"scenario {name!r}"
    _require(name != GOLD_SCENARIO, f"{where}: the name 'gold' is reserved for the gold approaches' runs")
    _require(name != ABLATIONS_DIR, f"{where}: the name 'ablations' is reserved for the ablation study's runs")
    _require(kind in SCENARIO_TYPES, f"{where}: unknown type {kind!r}; expected one of {', '.join(SCENARIO_TYPES)}")
    defaults = SCENARIO_PARAMETERS[kind]
    _check_keys(data, ["name", "type", "env", "epochs", "min_steps", "seeds", *defaults], where)
    params = {}
    for key, default in defaults.items():
        value = data.get(key, default)
        _require(value is not None, f"{where}: type {kind!r} needs {key!r}")
        if key in ("budget", "max_per_document", "max_fp_length"):
            _require(isinstance(value, int) and not isinstance(value, bool) and value >= 1, f"{where}: {key!r} must be a positive integer, got {value!r}")
        else:
            _require(isinstance(value, (int, float)) and 0 < value <= 1, f"{where}: {key!r} must be a number in (0, 1], got {value!r}")
            value = float(value)
        params[key] = value
    env = _env(data.get("env", {}), f"{where}: env")
    _require("EER_EPOCHS" not in env, f"{where}: set epochs with the scenario's 'epochs', not env.EER_EPOCHS")
    epochs = _epochs(data["epochs"], f"{where}: 'epochs'") if "epochs" in data else {}
    _require("EER_MIN_STEPS" not in env, f"{where}: set the step budget with the scenario's 'min_steps', not env.EER_MIN_STEPS")
    min_steps = _min_steps(data["min_steps"], f"{where}: 'min_steps'") if "min_steps" in data else None
    seeds = tuple(_seeds(data["seeds"], f"{where}: 'seeds'")) if "seeds" in data else None
    items = (tuple(sorted(params.items())), tuple(sorted(env.items())), tuple(sorted(epochs.items())))
    return Scenario(name, kind, *items, min_steps=min_steps, seeds=seeds)


def _seeds(value: Any, where: str) -> List[int]:
    """``seeds`` of a plan, a scenario or a study: a non-empty list of distinct non-negative integers."""
    _require(
        isinstance(value, list) and bool(value) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value),
        f"{where} must be a non-empty list of non-negative integers, got {value!r}",
    )
    _require(len(set(value)) == len(value), f"{where} lists a seed twice")
    return list(value)


def _min_steps(value: Any, where: str) -> int:
    """``min_steps`` of a plan or scenario: a positive integer, passed to the runs as EER_MIN_STEPS (the
    trainer then makes the epochs longer until epochs x batches per epoch reaches it)."""
    _require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 1,
        f"{where} must be a positive integer (the least number of optimizer steps of a run), got {value!r}",
    )
    return value


def _epochs(value: Any, where: str) -> Dict[str, int]:
    """``epochs`` of a plan or scenario: one positive integer for every variant, or a mapping from
    variant (all, short, shortest) to a positive integer (a variant left out keeps the config default,
    the paper's 20 for all and 50 for short and shortest)."""
    def positive(number: Any) -> bool:
        return isinstance(number, int) and not isinstance(number, bool) and number >= 1

    if isinstance(value, dict):
        for key, number in value.items():
            _require(key in VARIANTS, f"{where}: unknown variant {key!r}; expected {', '.join(VARIANTS)}")
            _require(positive(number), f"{where}: {key!r} must be a positive integer, got {number!r}")
        return dict(value)
    _require(positive(value), f"{where} must be a positive integer or a mapping like {{all: 2, short: 10, shortest: 10}}, got {value!r}")
    return {variant: value for variant in VARIANTS}


def _approaches(values: Any, where: str) -> List[str]:
    names = _names(values, where)
    for name in names:
        _require(name in KNOWN_APPROACHES, f"{where}: unknown approach {name!r}; known approaches: {', '.join(KNOWN_APPROACHES)}")
    _require(len(set(names)) == len(names), f"{where}: an approach is listed twice")
    return names


def parse_plan(data: Any, path: str = "<plan>", check_files: bool = True) -> Plan:
    """Validates plan data (see the module docstring); errors are :class:`PlanError` naming the key."""
    try:
        return _parse_plan(data, path, check_files)
    except PlanError as err:
        raise PlanError(f"plan {path}: {err}") from None


def _parse_plan(data: Any, path: str, check_files: bool) -> Plan:
    _require(isinstance(data, dict), "the plan must be a mapping (jsonnet/JSON object or YAML mapping)")
    _check_keys(data, PLAN_KEYS, "plan")
    env = _env(data.get("env", {}), "env")

    datasets: List[Dataset] = []
    _require(isinstance(data.get("datasets"), list) and data["datasets"], "'datasets' must be a non-empty list of {name, train, dev, test}")
    for index, item in enumerate(data["datasets"]):
        _require(isinstance(item, dict), f"datasets[{index}] must be a mapping with name, train, dev, test")
        name = item.get("name")
        _require(isinstance(name, str) and bool(NAME_PATTERN.match(name or "")), f"datasets[{index}]: 'name' must be a name like 'eng-c', got {name!r}")
        where = f"dataset {name!r}"
        _check_keys(item, ["name", "train", "dev", "test", "env", *READER_OPTION_VARIABLES], where)
        for key in ("train", "dev", "test"):
            _require(key in item, f"{where}: missing key {key!r} (a gold data file)")
        files = {key: _resolve(item[key], f"{where}: {key!r}", check_files) for key in ("train", "dev", "test")}
        dataset_env = _env(item.get("env", {}), f"{where}: env")
        try:
            reader = tuple(sorted(dataset_reader_options(item).items()))
        except ValueError as err:
            raise PlanError(f"{where}: {err}") from None
        datasets.append(Dataset(name, files["train"], files["dev"], files["test"], tuple(sorted(dataset_env.items())), reader))
    _require(len({d.name for d in datasets}) == len(datasets), "two datasets have the same name")

    _require("approaches" in data, f"'approaches' is missing; known approaches: {', '.join(KNOWN_APPROACHES)}")
    approaches = _approaches(data["approaches"], "approaches")
    _require(bool(approaches), "'approaches' is empty")
    scenarios = [_scenario(item, i) for i, item in enumerate(data.get("scenarios") or [])]
    _require(len({s.name for s in scenarios}) == len(scenarios), "two scenarios have the same name")
    _require(
        bool(scenarios) or all(a in GOLD_APPROACHES for a in approaches),
        f"'scenarios' is empty, but approaches other than {' and '.join(GOLD_APPROACHES)} need one",
    )

    if "encoders" in data:
        _require("EER_ENCODER" not in env, "set the encoder either with 'encoders' or with env.EER_ENCODER, not both")
        encoders = _names(data["encoders"], "encoders")
        _require(bool(encoders), "'encoders' is empty")
    else:
        encoders = [env.pop("EER_ENCODER", config_defaults()["EER_ENCODER"])]
    env.pop("EER_ENCODER", None)

    seeds = _seeds(data.get("seeds", [0]), "'seeds'")
    epochs: Dict[str, int] = {}
    if "epochs" in data:
        _require("EER_EPOCHS" not in env, "set epochs either with 'epochs' or with env.EER_EPOCHS, not both")
        epochs = _epochs(data["epochs"], "'epochs'")
    elif "EER_EPOCHS" in env:
        _require(env["EER_EPOCHS"].isdigit() and int(env["EER_EPOCHS"]) >= 1, f"env: EER_EPOCHS must be a positive integer, got {env['EER_EPOCHS']!r}")
        epochs = _epochs(int(env.pop("EER_EPOCHS")), "env: EER_EPOCHS")
    min_steps = None
    if "min_steps" in data:
        _require("EER_MIN_STEPS" not in env, "set the step budget either with 'min_steps' or with env.EER_MIN_STEPS, not both")
        min_steps = _min_steps(data["min_steps"], "'min_steps'")
    for key in ("EER_ENTITY_RATIO", "EER_RATIO_MARGIN"):
        places = [("env", env)] + [(f"dataset {d.name!r}: env", dict(d.env)) for d in datasets]
        places += [(f"scenario {s.name!r}: env", dict(s.env)) for s in scenarios]
        for where, values in places:
            if key in values:
                try:
                    float(values[key])
                except ValueError:
                    raise PlanError(f"{where}: {key} must be a number, got {values[key]!r}") from None

    reference = data.get("reference")
    if reference is not None:
        _require(isinstance(reference, str) and reference in KNOWN_APPROACHES, f"'reference': unknown approach {reference!r}; known approaches: {', '.join(KNOWN_APPROACHES)}")
        _require(
            reference in approaches and reference not in GOLD_APPROACHES,
            f"'reference' {reference!r} must be one of the plan's approaches other than {' and '.join(GOLD_APPROACHES)}",
        )

    dataset_names, scenario_names = [d.name for d in datasets], [s.name for s in scenarios]

    def subset(values, known, where):
        if values is None:
            return None
        names = _names(values, where)
        for name in names:
            _require(name in known, f"{where}: unknown name {name!r}; the plan has {', '.join(known)}")
        return names

    grid = data.get("ratio_grid")
    if grid is not None:
        if isinstance(grid, list):
            grid = {"settings": grid}
        _require(isinstance(grid, dict), "'ratio_grid' must be a list of [rho, gamma] pairs or a mapping with 'settings'")
        _check_keys(grid, ["settings", "approach", "datasets", "scenarios", "seeds", "min_steps"], "ratio_grid")
        settings = grid.get("settings")
        _require(isinstance(settings, list) and settings, "ratio_grid: 'settings' must be a non-empty list of [rho, gamma] pairs")
        pairs = []
        for pair in settings:
            _require(
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair)
                and 0 <= pair[0] <= 1 and pair[1] >= 0,
                f"ratio_grid: each setting must be [rho, gamma] with 0 <= rho <= 1 and gamma >= 0, got {pair!r}",
            )  # fmt: skip
            pairs.append((float(pair[0]), float(pair[1])))
        approach = grid.get("approach", "eer_short")
        _require(approach in KNOWN_APPROACHES and split_approach(approach)[0] == "eer", f"ratio_grid: 'approach' must be an EER approach (eer_all, eer_short, eer_shortest), got {approach!r}")
        _require(bool(scenarios), "ratio_grid needs a scenario")
        grid = {
            "settings": pairs, "approach": approach,
            "datasets": subset(grid.get("datasets"), dataset_names, "ratio_grid.datasets"),
            "scenarios": subset(grid.get("scenarios"), scenario_names, "ratio_grid.scenarios"),
            "seeds": _seeds(grid["seeds"], "ratio_grid.seeds") if "seeds" in grid else None,
            "min_steps": _min_steps(grid["min_steps"], "ratio_grid.min_steps") if "min_steps" in grid else None,
        }  # fmt: skip

    curve = data.get("learning_curve")
    if curve is not None:
        _require(isinstance(curve, dict), "'learning_curve' must be a mapping with 'budgets' and 'approaches'")
        _check_keys(curve, ["budgets", "approaches", "datasets", "schemes", "keep_probability", "seeds", "min_steps"], "learning_curve")
        budgets = curve.get("budgets")
        _require(
            isinstance(budgets, list) and budgets and all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budgets),
            f"learning_curve: 'budgets' must be a non-empty list of positive integers, got {budgets!r}",
        )
        lc_approaches = _approaches(curve.get("approaches", ["eer_short", "raw_shortest"]), "learning_curve.approaches")
        for gold in GOLD_APPROACHES:
            _require(gold not in lc_approaches, f"learning_curve.approaches: {gold!r} ignores the budget; put it in 'approaches' (it is drawn as a line)")
        schemes = _names(curve.get("schemes", ["ee", "exhaustive"]), "learning_curve.schemes")
        for scheme in schemes:
            _require(scheme in ("ee", "exhaustive"), f"learning_curve.schemes: unknown scheme {scheme!r}; expected 'ee' or 'exhaustive'")
        keep = curve.get("keep_probability", 0.8)
        _require(isinstance(keep, (int, float)) and 0 < keep <= 1, f"learning_curve: 'keep_probability' must be in (0, 1], got {keep!r}")
        curve = {
            "budgets": sorted(set(budgets)), "approaches": lc_approaches, "schemes": schemes, "keep_probability": float(keep),
            "datasets": subset(curve.get("datasets"), dataset_names, "learning_curve.datasets"),
            "seeds": _seeds(curve["seeds"], "learning_curve.seeds") if "seeds" in curve else None,
            "min_steps": _min_steps(curve["min_steps"], "learning_curve.min_steps") if "min_steps" in curve else None,
        }  # fmt: skip

    ablations = _ablations(data["ablations"], dataset_names, scenario_names, subset) if data.get("ablations") is not None else None
    # directory names of the plan's encoders and of the ablation settings' own
    own_encoders = [setting["encoder"] for setting in (ablations or {}).get("settings", []) if setting["encoder"]]
    slugs = {e: slug(e) for e in dict.fromkeys(encoders + own_encoders)}
    _require(len(set(slugs.values())) == len(slugs), f"two encoders share the directory name: {slugs}")

    bootstrap = {"resamples": 100_000, "confidence": 0.99, "seed": 0}
    if data.get("bootstrap") is not None:
        _require(isinstance(data["bootstrap"], dict), "'bootstrap' must be a mapping with resamples, confidence, seed")
        _check_keys(data["bootstrap"], list(bootstrap), "bootstrap")
        bootstrap.update(data["bootstrap"])
        _require(isinstance(bootstrap["resamples"], int) and bootstrap["resamples"] >= 1, "bootstrap: 'resamples' must be a positive integer")
        _require(isinstance(bootstrap["confidence"], float) and 0 < bootstrap["confidence"] < 1, "bootstrap: 'confidence' must be in (0, 1)")
        _require(isinstance(bootstrap["seed"], int), "bootstrap: 'seed' must be an integer")
    return Plan(
        path=str(path), name=str(data.get("name") or Path(path).stem), datasets=datasets, scenarios=scenarios,
        approaches=approaches, encoders=encoders, encoder_slugs=slugs, seeds=list(seeds), env=env, epochs=epochs,
        reference=reference, ratio_grid=grid, learning_curve=curve, bootstrap=bootstrap, min_steps=min_steps,
        ablations=ablations,
    )  # fmt: skip


def _ablations(study: Any, dataset_names: List[str], scenario_names: List[str], subset) -> Dict[str, Any]:
    """``ablations: {approach, scenarios, datasets, seeds, settings: [{name, env, approach, encoder, scenarios}]}``:
    each setting is one run per seed (default: the scenario's seeds) of the approach (a setting's ``approach``
    may list several) on each scenario's data, with the plan's settings and the setting's env over them;
    compared with the benchmark's own run. A setting's ``encoder`` replaces the plan's encoders for its runs
    (a second encoder measured on a few approaches without running the whole plan with it); its
    ``scenarios`` replace the study's (a setting that matters on one annotation scenario only)."""
    _require(isinstance(study, dict), "'ablations' must be a mapping with 'approach' and 'settings'")
    _check_keys(study, ["approach", "settings", "datasets", "scenarios", "seeds"], "ablations")
    _require(bool(scenario_names), "ablations need a scenario")

    def approach_of(value: Any, where: str) -> str:
        _require(
            value in KNOWN_APPROACHES and value not in GOLD_APPROACHES,
            f"{where}: unknown approach {value!r}; expected a partial-annotation approach such as eer_short",
        )
        return value

    approach = approach_of(study.get("approach", "eer_short"), "ablations.approach")
    settings = study.get("settings")
    _require(isinstance(settings, list) and bool(settings), "ablations: 'settings' must be a non-empty list of {name, env}")
    parsed, slugs = [], set()
    for index, item in enumerate(settings):
        _require(isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip(), f"ablations.settings[{index}] must be a mapping with a 'name' and an 'env'")
        where = f"ablations setting {item['name']!r}"
        _check_keys(item, ["name", "env", "approach", "encoder", "dev", "estimate_ratio", "complete_documents", "seeds", "scenarios"], where)
        dev = _partial_dev(item["dev"], where) if item.get("dev") is not None else None
        estimate = _estimate_ratio(item["estimate_ratio"], where) if item.get("estimate_ratio") is not None else None
        complete = _complete_documents(item.get("complete_documents"), where)
        _require(
            not (estimate and complete),
            f"{where}: give either 'estimate_ratio' (complete documents and the ratio estimated on them) or 'complete_documents' (the plan's ratio), not both",
        )  # fmt: skip
        env = _env(item.get("env", {}), f"{where}: env")
        encoder = item.get("encoder")
        _require(encoder is None or (isinstance(encoder, str) and encoder.strip()), f"{where}: 'encoder' must be a model name or directory")
        _require(
            bool(env) or bool(dev) or bool(estimate) or bool(complete) or encoder is not None,
            f"{where}: 'env' is {'empty' if 'env' in item else 'missing'}: give the EER_* variables that differ "
            "from the plan's (or a dev, encoder, estimate_ratio or complete_documents); as it stands it would repeat the benchmark run",
        )  # fmt: skip
        if dev is not None:
            _require(
                str(env.get("EER_VALIDATION_METRIC", "")).endswith("partial-f1"),
                f"{where}: a partial dev set needs env.EER_VALIDATION_METRIC '+partial-f1' (the complete-data F1 scores unmarked words as O)",
            )  # fmt: skip
        if estimate is not None:
            for key in ("EER_ENTITY_RATIO", "EER_RATIO_MARGIN"):
                _require(key not in env, f"{where}: env.{key} comes from the ratio estimate (estimate_ratio); do not set it")
        _require("EER_ENCODER" not in env, f"{where}: env.EER_ENCODER: give the setting's encoder as its 'encoder' (or the plan's 'encoders')")
        name_slug = setting_slug(item["name"])
        _require(name_slug not in slugs, f"{where}: its directory name {name_slug!r} is another setting's; rename one")
        slugs.add(name_slug)
        own = item.get("approach", approach)
        own = [approach_of(a, f"{where}: 'approach'") for a in (own if isinstance(own, list) else [own])]
        _require(bool(own) and len(set(own)) == len(own), f"{where}: 'approach' must name an approach, or list distinct ones")
        seeds = _seeds(item["seeds"], f"{where}: seeds") if "seeds" in item else None
        parsed.append({
            "name": item["name"], "slug": name_slug, "env": env, "approaches": own, "encoder": encoder, "dev": dev,
            "estimate_ratio": estimate, "complete_documents": complete, "seeds": seeds,
            "scenarios": subset(item.get("scenarios"), scenario_names, f"{where}: scenarios"),
        })  # fmt: skip
    return {
        "approach": approach, "settings": parsed,
        "datasets": subset(study.get("datasets"), dataset_names, "ablations.datasets"),
        "scenarios": subset(study.get("scenarios"), scenario_names, "ablations.scenarios"),
        "seeds": _seeds(study["seeds"], "ablations.seeds") if "seeds" in study else None,
    }  # fmt: skip


def _partial_dev(value: Any, where: str) -> Dict[str, Any]:
    """An ablation setting's ``dev: {type: 'ee', budget: N | 'proportional', keep_probability, max_per_document}``:
    checkpoints selected on the EE simulator's partial annotation of the dataset's dev file (the run's seed);
    ``'proportional'``: round(scenario budget x dev tokens / train tokens)."""
    _require(isinstance(value, dict), f"{where}: 'dev' must be a mapping such as {{type: 'ee', budget: 'proportional'}}")
    _check_keys(value, ["type", "budget", "keep_probability", "max_per_document"], f"{where}: dev")
    _require(value.get("type", "ee") == "ee", f"{where}: dev.type must be 'ee' (the Exploratory Expert on the dev file), got {value.get('type')!r}")
    budget = value.get("budget", "proportional")
    _require(
        budget == "proportional" or (isinstance(budget, int) and not isinstance(budget, bool) and budget >= 1),
        f"{where}: dev.budget must be a positive integer or 'proportional', got {budget!r}",
    )
    keep = value.get("keep_probability", 0.8)
    _require(isinstance(keep, (int, float)) and 0 < keep <= 1, f"{where}: dev.keep_probability must be in (0, 1], got {keep!r}")
    cap = value.get("max_per_document", 10)
    _require(isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1, f"{where}: dev.max_per_document must be a positive integer, got {cap!r}")
    return {"type": "ee", "budget": budget, "keep_probability": float(keep), "max_per_document": cap}


def _complete_documents(value: Any, where: str) -> Optional[int]:
    """An ablation setting's ``complete_documents: 20``: that many training documents annotated completely
    within the scenario's budget (as for ``estimate_ratio``), trained with the plan's ratio; None: not given."""
    if value is None:
        return None
    _require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 1,
        f"{where}: complete_documents must be a positive integer (training documents annotated completely), got {value!r}",
    )  # fmt: skip
    return value


def _estimate_ratio(value: Any, where: str) -> Dict[str, Any]:
    """An ablation setting's ``estimate_ratio: {complete_documents: 20}``: that many training documents
    annotated completely within the scenario's budget, and EER_ENTITY_RATIO / EER_RATIO_MARGIN from
    ``allennlp eer-estimate-ratio`` on them."""
    _require(isinstance(value, dict), f"{where}: 'estimate_ratio' must be a mapping such as {{complete_documents: 20}}")
    _check_keys(value, ["complete_documents"], f"{where}: estimate_ratio")
    count = value.get("complete_documents", 20)
    _require(
        isinstance(count, int) and not isinstance(count, bool) and count >= 1,
        f"{where}: estimate_ratio.complete_documents must be a positive integer, got {count!r}",
    )
    return {"complete_documents": count}
