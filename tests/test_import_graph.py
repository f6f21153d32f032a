"""The package's import graph, read from the source (every ``import``, also those inside functions): no
import runs back up a layer, the units import each other without cycles, ``core`` imports neither
AllenNLP nor anything outside itself (and holds only the maths), and no layer below the runtime (nor `inference`) imports
AllenNLP. ``tests/test_install.py`` checks the last point by
importing ``eer_plugin.core`` with AllenNLP blocked; this test needs no process and names the line."""
import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest
from conftest import REPO

PACKAGE = REPO / "eer_plugin"

#: the layers, lowest first: a unit (a subpackage or a module at the package root; ``commands.evaluate_documents``
#: is named with its subpackage until it leaves with the benchmark) imports only units of its own layer or below.
#: A new unit must be placed here.
LAYERS = [
    ("the ground floor: the output policy, atomic writes, the user-error root; no AllenNLP", {"common"}),
    ("maths: tags, CRF, losses, ratio control, spans; no AllenNLP", {"core"}),
    ("corpus files in: documents, formats, importers, inspection; no AllenNLP", {"corpus"}),
    ("annotation: simulators, ratio estimate, bootstrap, CBL relabelling; no AllenNLP", {"annotation"}),
    ("runtime: archives, errors, encoders, settings, config files (AllenNLP only inside the patch installers)",
     {"runtime"}),
    ("inference without AllenNLP: subword chunks, CRF decoding, documents out, the exported model, sharding",
     {"inference"}),
    ("the AllenNLP roles", {"data", "models", "training", "predictors"}),
    ("the benchmark", {"benchmark"}),
    ("subcommands: argument parsing", {"commands"}),
    ("the plugin and what needs it registered: registration, the AllenNLP patches, the eer-ner front end, the "
     "Python API, the spaCy component", {"allennlp_plugin", "patches", "cli", "__init__", "api", "spacy_component",
                                         "commands.evaluate_documents"}),
]
LAYER_OF = {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}
#: the units below AllenNLP: none of them imports allennlp or allennlp_models (not even inside a function)
WITHOUT_ALLENNLP = {"common", "core", "corpus", "annotation", "inference"}
#: the units below the AllenNLP roles: importing any of their modules imports no AllenNLP
BELOW_THE_ROLES = ["common", "core", "corpus", "annotation", "runtime", "inference"]
#: the modules of ``core``: the maths only (anything else belongs to a layer above)
CORE_MODULES = {
    "__init__", "tags", "crf", "forward_backward", "step_constants", "losses", "calibration", "spans", "span_sampling",
    "ratio_control",
}


def unit_of(module: str) -> str:
    """``eer_plugin.core.crf`` -> ``core``; ``eer_plugin.runtime.errors`` -> ``runtime``; ``eer_plugin`` ->
    ``__init__``; a module named in :data:`LAYERS` with its subpackage is a unit of its own."""
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


#: the command of issue 49's "done when": the package and the layers below the AllenNLP roles import no AllenNLP
IMPORT_WITHOUT_ALLENNLP = (
    "import sys, eer_plugin, eer_plugin.core.crf, eer_plugin.corpus, eer_plugin.inference; "
    "assert 'allennlp' not in sys.modules"
)


def test_the_package_init_imports_nothing_but_the_lazy_api():
    """``eer_plugin/__init__.py`` defines the version and the lazy ``Tagger``: registration is
    ``eer_plugin/allennlp_plugin.py``'s alone (read from the source, so no process is needed)."""
    found = [target for module, _, _, target in imports() if module == "eer_plugin"]
    assert found == ["eer_plugin", "eer_plugin.api"], found
    text = (PACKAGE / "__init__.py").read_text()
    assert "warnings" not in text and "excepthook" not in text


@pytest.mark.integration
def test_importing_the_package_loads_no_allennlp_and_changes_no_global_state():
    """The issue's exact command, then the same imports (and every module of the layers below the AllenNLP
    roles) with ``sys.excepthook`` and the warnings filters compared before and after."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done_when = subprocess.run([sys.executable, "-c", IMPORT_WITHOUT_ALLENNLP], cwd=REPO, env=env, capture_output=True,
                               text=True, timeout=300)
    assert done_when.returncode == 0, done_when.stderr
    below = BELOW_THE_ROLES
    script = (
        "import importlib, pkgutil, sys, warnings\n"
        "import numpy, torch, tqdm, transformers  # their own warnings filters, installed when they are imported\n"
        "hook, filters = sys.excepthook, list(warnings.filters)\n"
        "import eer_plugin\n"
        f"for package in {below!r}:\n"
        "    module = importlib.import_module('eer_plugin.' + package)\n"
        "    for info in pkgutil.walk_packages(module.__path__, prefix=module.__name__ + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('allennlp', 'allennlp_models'))\n"
        "assert not leaked, leaked[:5]\n"
        "assert sys.excepthook is hook, 'sys.excepthook was replaced'\n"
        "assert warnings.filters == filters, warnings.filters[: len(warnings.filters) - len(filters)]\n"
    )
    layers = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert layers.returncode == 0, layers.stderr
