"""The repository's import graph, read from the source (every ``import``, also those inside functions).

For each of the two packages, ``eer_plugin`` (the product) and ``eer_benchmark`` (the benchmark beside it), a
table of layers (:data:`LAYERS`, :data:`BENCHMARK_LAYERS`; each folder, or module at the package root, is one
unit of one layer): no import runs back up a layer and the units import each other without cycles. Across the
whole repository (both packages, tests, benchmarks/ and scripts/): no two modules import each other, directly or
through others; the product never imports the benchmark. Inside the product, ``core`` imports neither AllenNLP
nor anything outside itself (and holds only the maths), the layers below the AllenNLP roles import no AllenNLP,
and ``import eer_plugin`` imports no AllenNLP and changes no global state (a subprocess runs the issue's command);
the modules ``eer-ner``'s light commands import when they start import no torch, transformers or AllenNLP.
``tests/test_install.py`` imports ``eer_plugin.core`` with AllenNLP blocked."""

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Set, Tuple

import pytest
from conftest import REPO

PACKAGE = REPO / "eer_plugin"
BENCHMARK = REPO / "eer_benchmark"

#: the layers of ``eer_plugin``, lowest first: a unit (a subpackage or a module at the package root) imports only
#: units of its own layer or below. A new unit must be placed here (and in docs/architecture.md's table).
LAYERS = [
    ("the ground floor: the output policy, atomic writes, the user-error root; no AllenNLP", {"common"}),
    ("maths: tags, CRF, losses, ratio control, spans; no AllenNLP", {"core"}),
    ("corpus files in: documents, formats, importers, inspection; no AllenNLP", {"corpus"}),
    ("annotation: simulators, ratio estimate, bootstrap, CBL relabelling; no AllenNLP", {"annotation"}),
    (
        "runtime: archives, errors, encoders, settings, config files (AllenNLP only inside the patch installers)",
        {"runtime"},
    ),
    (
        "inference without AllenNLP: subword chunks, CRF decoding, documents out, the exported model, sharding",
        {"inference"},
    ),
    ("the AllenNLP roles", {"data", "models", "training", "predictors"}),
    ("subcommands: argument parsing", {"commands"}),
    (
        "the plugin and what needs it registered: registration, the AllenNLP patches, the eer-ner front end, the "
        "Python API, the spaCy component, the Label Studio backend",
        {"allennlp_plugin", "patches", "cli", "__init__", "api", "spacy_component", "serve"},
    ),
]
#: the layers of ``eer_benchmark`` (it imports the product's modules freely; the product never imports it)
BENCHMARK_LAYERS = [
    ("helpers: tables and numbers, the machine", {"tables", "machine"}),
    ("plan: approaches, scenarios, the plan language, expansion, selection", {"plan"}),
    ("run: runner, attempts, resume, simulated data, evaluation, records", {"run"}),
    ("analyse: studies, convergence, the paper's numbers", {"analyse"}),
    ("report: results.md, sections, figures, docs/results.md, the guide", {"report"}),
    ("workflow: a plan end to end (select, run, report)", {"workflow"}),
    ("subcommands: eer-benchmark, eer-records", {"commands"}),
    ("registration and the package interface", {"allennlp_plugin", "__init__"}),
]
LAYER_OF = {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}
#: the units below AllenNLP: none of them imports allennlp or allennlp_models (not even inside a function)
WITHOUT_ALLENNLP = {"common", "core", "corpus", "annotation", "inference"}
#: the units below the AllenNLP roles: importing any of their modules imports no AllenNLP
BELOW_THE_ROLES = ["common", "core", "corpus", "annotation", "runtime", "inference"]
#: the modules of ``core``: the maths only (anything else belongs to a layer above)
CORE_MODULES = {
    "__init__",
    "tags",
    "crf",
    "forward_backward",
    "step_constants",
    "losses",
    "calibration",
    "spans",
    "span_sampling",
    "ratio_control",
    "ranges",  # the defaults and ranges of the loss's and the control's settings, declared once (no torch)
    "scan",
    "crf_paths",  # which recursion (sequential, scan, fused) the CRF runs on a device
    "fused",  # the CRF's recursions as Triton kernels (Triton imported on first use only)
    "fused_kernels",
}


def unit_of(module: str) -> str:
    """``eer_plugin.core.crf`` -> ``core``; ``eer_plugin.runtime.errors`` -> ``runtime``; ``eer_plugin`` ->
    ``__init__`` (the same for ``eer_benchmark``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    """The name a file is imported by: dotted inside a package, else its stem (tests, benchmarks/ and scripts/
    put their own folder on the path)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    if parts[0] not in (PACKAGE.name, BENCHMARK.name):
        return parts[-1]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def run_at_import(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements of a module that run when it is imported: its body and the bodies of its classes and
    ``if``/``try``/``with``/loop blocks, not the functions' bodies nor an ``if TYPE_CHECKING:`` block."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            pending += node.orelse
            continue
        if isinstance(node, (ast.If, ast.Try, ast.With, ast.ClassDef, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody"):
                pending += getattr(node, field, [])
            for handler in getattr(node, "handlers", []):
                pending += handler.body


def imports_of(
    root: Path, nodes_of: Callable[[ast.Module], Iterable[ast.AST]] = ast.walk
) -> List[Tuple[str, str, int, str]]:
    """(importing module, its file, line, imported module) for every import under ``root`` (``nodes_of``
    :func:`run_at_import`: only those that run when the module is imported); ``from a import b`` yields ``a.b``
    where that is one of the repository's modules, else ``a``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in nodes_of(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the importing module's package
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
                # the package itself only when a name is its own (not one of its modules)
                targets = ([base] if len(submodules) < len(node.names) else []) + submodules
            else:
                continue
            found += [(module, str(path.relative_to(REPO)), node.lineno, target) for target in targets]
    return found


#: every Python module of the repository (both packages, tests, benchmarks/, scripts/) by the name it is imported by
MODULES = {
    module_name(p): p
    for folder in (PACKAGE, BENCHMARK, REPO / "tests", REPO / "tests_benchmark", REPO / "benchmarks", REPO / "scripts")
    for p in folder.rglob("*.py")
}


def imports() -> List[Tuple[str, str, int, str]]:
    """(importing module, its file, line, imported module) for every import in ``eer_plugin``."""
    return imports_of(PACKAGE)


#: (package folder, its layers) for the layer tests
PACKAGES = [(PACKAGE, LAYERS), (BENCHMARK, BENCHMARK_LAYERS)]
BOTH = pytest.mark.parametrize("root, layers", PACKAGES, ids=[p.name for p, _ in PACKAGES])


def layer_of(layers) -> Dict[str, int]:
    return {unit: index for index, (_, units) in enumerate(layers) for unit in units}


@BOTH
def test_every_unit_has_a_layer_and_each_layer_is_whole_folders(root, layers):
    units = {
        p.stem if p.is_file() else p.name for p in root.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    missing = sorted(units - set(layer_of(layers)))
    assert not missing, f"put {missing} into a layer of the {root.name} table in {Path(__file__).name}"
    assert not [unit for unit in layer_of(layers) if "." in unit], "a layer holds whole folders, not single modules"
    assert not sorted(set(layer_of(layers)) - units), "the table names units that are not there"


@BOTH
def test_no_import_runs_back_up_a_layer(root, layers):
    index = layer_of(layers)
    upward = [
        f"{path}:{line}: {module} ({layers[index[unit_of(module)]][0]}) imports {target} "
        f"({layers[index[unit_of(target)]][0]})"
        for module, path, line, target in imports_of(root)
        if target.startswith(root.name + ".") and index[unit_of(target)] > index[unit_of(module)]
    ]
    assert not upward, "\n".join(upward)


def test_the_product_never_imports_the_benchmark():
    found = [
        f"{path}:{line}: {module} imports {target}"
        for module, path, line, target in imports()
        if target.split(".")[0] == BENCHMARK.name
    ]
    assert not found, "\n".join(found)
    assert any(target.startswith("eer_plugin.") for _, _, _, target in imports_of(BENCHMARK))  # the graph was read


def cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One cycle of ``graph`` (a path that comes back to its start), or []."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: List[str]) -> List[str]:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path + [node, target]
            if target not in state:
                found = visit(target, path + [node])
                if found:
                    return found
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return []


def test_core_imports_nothing_outside_itself_and_no_allennlp():
    outside = [
        f"{path}:{line}: {module} imports {target}"
        for module, path, line, target in imports()
        if unit_of(module) == "core"
        and (
            target.split(".")[0] in ("allennlp", "allennlp_models")
            or (target.startswith("eer_plugin.") and unit_of(target) != "core")
        )
    ]
    assert not outside, "\n".join(outside)


def test_the_layers_below_allennlp_do_not_import_it():
    found = [
        f"{path}:{line}: {module} imports {target}"
        for module, path, line, target in imports()
        if unit_of(module) in WITHOUT_ALLENNLP and target.split(".")[0] in ("allennlp", "allennlp_models")
    ]
    assert not found, "\n".join(found)


def test_core_holds_only_the_maths():
    core = PACKAGE / "core"
    found = {p.stem for p in core.glob("*.py")} | {
        p.name for p in core.iterdir() if p.is_dir() and p.name != "__pycache__"
    }
    assert found - CORE_MODULES == set(), (
        f"core/ is the maths only: move {sorted(found - CORE_MODULES)} to the layer it belongs to"
    )
    assert CORE_MODULES - found == set(), f"{sorted(CORE_MODULES - found)} left core/: update CORE_MODULES"


@BOTH
def test_the_units_import_each_other_without_cycles(root, layers):
    graph: Dict[str, Set[str]] = {}
    for module, _, _, target in imports_of(root):
        if target.startswith(root.name + ".") and unit_of(target) != unit_of(module):
            graph.setdefault(unit_of(module), set()).add(unit_of(target))
    found = cycle(graph)
    assert not found, f"import cycle: {' -> '.join(found)}"
    assert graph["commands"] and "core" not in graph and "tables" not in graph  # the graph was read


def test_no_two_modules_of_the_repository_import_each_other():
    """Module by module, across both packages, the tests, benchmarks/ and scripts/: no import loop, not even one
    inside a function (an import of ``a.b.c`` counts as importing that module, not its packages' ``__init__``)."""
    graph: Dict[str, Set[str]] = {}
    for folder in (PACKAGE, BENCHMARK, REPO / "tests", REPO / "tests_benchmark", REPO / "benchmarks", REPO / "scripts"):
        for module, _, _, target in imports_of(folder):
            if target in MODULES and target != module:
                graph.setdefault(module, set()).add(target)
    found = cycle(graph)
    assert not found, f"import loop: {' -> '.join(found)}"
    assert len(graph) > 100  # the graph was read


#: what ``eer-ner`` does not load for a command of ``eer_plugin.cli.LIGHT_COMMANDS``
MODEL_STACK = ("torch", "transformers", "allennlp", "allennlp_models")


def test_the_light_commands_import_no_model_stack():
    """The modules a light command imports when it starts (the imports that run at import time, followed through
    the package's modules and the packages above them) import no torch, transformers or AllenNLP: ``eer-ner``
    runs these commands without them (``tests/commands/test_light_commands.py`` runs them in a fresh
    interpreter). A heavy import belongs inside the function that needs it."""
    from eer_plugin.cli import LIGHT_COMMANDS

    at_import: Dict[str, List[Tuple[str, int, str]]] = {}
    for module, path, line, target in imports_of(PACKAGE, run_at_import):
        at_import.setdefault(module, []).append((path, line, target))
    found = []
    for command, start in sorted(LIGHT_COMMANDS.items()):
        parents = {start: None}
        pending = [start]
        while pending:
            module = pending.pop()
            for path, line, target in at_import.get(module, []):
                if target.split(".")[0] in MODEL_STACK:
                    chain, step = [], module
                    while step is not None:
                        chain.append(step)
                        step = parents[step]
                    found.append(f"{command}: {path}:{line} imports {target} ({' <- '.join(chain)})")
                parts = target.split(".")
                for end in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ too
                    name = ".".join(parts[:end])
                    if name in MODULES and name.startswith("eer_plugin") and name not in parents:
                        parents[name] = module
                        pending.append(name)
        assert len(parents) > 5, (command, sorted(parents))  # the imports were followed
    assert not found, "\n".join(found)


#: the command of issue 49's "done when": the package and the layers below the AllenNLP roles import no AllenNLP
IMPORT_WITHOUT_ALLENNLP = (
    "import sys, eer_plugin, eer_plugin.core.crf, eer_plugin.corpus, eer_plugin.inference; "
    "assert 'allennlp' not in sys.modules"
)


def test_the_package_init_imports_nothing_but_the_lazy_api():
    """``eer_plugin/__init__.py`` defines the version and the lazy ``Tagger``: registration is
    ``eer_plugin/allennlp_plugin.py``'s alone (read from the source, so no process is needed)."""
    found = [target for module, _, _, target in imports() if module == "eer_plugin"]
    assert found == ["eer_plugin.api"], found
    text = (PACKAGE / "__init__.py").read_text()
    assert "warnings" not in text and "excepthook" not in text


@pytest.mark.integration
def test_importing_the_package_loads_no_allennlp_and_changes_no_global_state():
    """The issue's exact command, then the same imports (and every module of the layers below the AllenNLP
    roles) with ``sys.excepthook`` and the warnings filters compared before and after."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done_when = subprocess.run(
        [sys.executable, "-c", IMPORT_WITHOUT_ALLENNLP], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
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
    layers = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert layers.returncode == 0, layers.stderr
