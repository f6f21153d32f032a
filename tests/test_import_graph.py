"""The package's import graph, read from the source (every ``import``, also those inside functions): no
import runs back up a layer, the units import each other without cycles, ``core`` imports neither
AllenNLP nor anything outside itself (and holds only the maths), and no layer below the runtime (nor `inference`) imports
AllenNLP. ``tests/test_install.py`` checks the last point by
importing ``eer_plugin.core`` with AllenNLP blocked; this test needs no process and names the line."""
import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

from conftest import REPO

PACKAGE = REPO / "eer_plugin"

#: the layers, lowest first: a unit (a subpackage, a module at the package root, or a module named here with its
#: subpackage, such as ``runtime.outputs``) imports only units of its own layer or below. A new unit must be placed here.
LAYERS = [
    ("maths: tags, CRF, losses, ratio control, spans; no AllenNLP", {"core"}),
    ("the output policy: whole files or nothing; no AllenNLP", {"runtime.outputs"}),
    ("corpus files in: documents, formats, importers, inspection; no AllenNLP", {"corpus"}),
    ("annotation: simulators, ratio estimate, bootstrap, CBL relabelling; no AllenNLP", {"annotation"}),
    ("runtime: archives, atomic writes, errors, encoders, settings, config files", {"runtime"}),
    ("inference without AllenNLP: subword chunks, CRF decoding, documents out, the exported model", {"inference"}),
    ("the AllenNLP roles", {"data", "models", "training", "predictors"}),
    ("the benchmark", {"benchmark"}),
    ("entry points: subcommands, registration, the AllenNLP patches, the Python API, the spaCy component",
     {"commands", "_register", "__init__", "runtime.patches", "api", "spacy_component"}),
]
LAYER_OF = {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}
#: the units below AllenNLP: none of them imports allennlp or allennlp_models
WITHOUT_ALLENNLP = {"core", "runtime.outputs", "corpus", "annotation", "inference"}
#: the modules of ``core``: the maths only (anything else belongs to a layer above)
CORE_MODULES = {
    "__init__", "tags", "crf", "forward_backward", "step_constants", "losses", "calibration", "spans", "span_sampling",
    "ratio_control", "scan",
}


def unit_of(module: str) -> str:
    """``eer_plugin.core.crf`` -> ``core``; ``eer_plugin.runtime.errors`` -> ``runtime``; ``eer_plugin.runtime.outputs``
    -> ``runtime.outputs`` (a unit of its own); ``eer_plugin`` -> ``__init__``."""
    parts = module.split(".")
    if len(parts) > 2 and ".".join(parts[1:3]) in LAYER_OF:
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "__init__"


def imports() -> List[Tuple[str, str, int, str]]:
    """(importing module, its file, line, imported module) for every import in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the importing module's package
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names] if base == "eer_plugin" else [base]
            else:
                continue
            found += [(module, str(path.relative_to(REPO)), node.lineno, target) for target in targets]
    return found


def test_every_unit_has_a_layer():
    units = {unit_of(module) for module, *_ in imports()} | {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    missing = sorted(units - set(LAYER_OF))
    assert not missing, f"put {missing} into a layer of LAYERS in {Path(__file__).name}"


def test_no_import_runs_back_up_a_layer():
    upward = [
        f"{path}:{line}: {module} ({LAYERS[LAYER_OF[unit_of(module)]][0]}) imports {target} ({LAYERS[LAYER_OF[unit_of(target)]][0]})"
        for module, path, line, target in imports()
        if target.startswith("eer_plugin.") and unit_of(target) in LAYER_OF and unit_of(module) in LAYER_OF
        and LAYER_OF[unit_of(target)] > LAYER_OF[unit_of(module)]
    ]  # fmt: skip
    assert not upward, "\n".join(upward)


def test_core_imports_nothing_outside_itself_and_no_allennlp():
    outside = [
        f"{path}:{line}: {module} imports {target}"
        for module, path, line, target in imports()
        if unit_of(module) == "core" and (target.split(".")[0] in ("allennlp", "allennlp_models") or (target.startswith("eer_plugin.") and unit_of(target) != "core"))
    ]  # fmt: skip
    assert not outside, "\n".join(outside)


def test_the_layers_below_allennlp_do_not_import_it():
    found = [
        f"{path}:{line}: {module} imports {target}"
        for module, path, line, target in imports()
        if unit_of(module) in WITHOUT_ALLENNLP and target.split(".")[0] in ("allennlp", "allennlp_models")
    ]  # fmt: skip
    assert not found, "\n".join(found)


def test_core_holds_only_the_maths():
    core = PACKAGE / "core"
    found = {p.stem for p in core.glob("*.py")} | {p.name for p in core.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert found - CORE_MODULES == set(), f"core/ is the maths only: move {sorted(found - CORE_MODULES)} to the layer it belongs to"
    assert CORE_MODULES - found == set(), f"{sorted(CORE_MODULES - found)} left core/: update CORE_MODULES"


def test_the_units_import_each_other_without_cycles():
    graph: Dict[str, Set[str]] = {}
    for module, _, _, target in imports():
        if target.startswith("eer_plugin.") and unit_of(target) != unit_of(module):
            graph.setdefault(unit_of(module), set()).add(unit_of(target))
    state: Dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(unit: str, path: List[str]) -> None:
        state[unit] = 1
        for target in sorted(graph.get(unit, ())):
            assert state.get(target) != 1, f"import cycle: {' -> '.join(path + [unit, target])}"
            if target not in state:
                visit(target, path + [unit])
        state[unit] = 2

    for unit in sorted(graph):
        if unit not in state:
            visit(unit, [])
    assert graph["commands"] and "core" not in graph  # the graph was read: the commands import, core imports no unit
