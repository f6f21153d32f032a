"""``docs/architecture.md`` is the code map: it names every module of the package and every AllenNLP patch
that :mod:`eer_plugin.patches` installs, and the layers it draws are those of ``test_import_graph.py``."""

import re

from conftest import REPO
from test_import_graph import BENCHMARK_LAYERS, LAYERS

from eer_plugin.patches import PATCHES

PACKAGE = REPO / "eer_plugin"
BENCHMARK = REPO / "eer_benchmark"
MAP = (REPO / "docs" / "architecture.md").read_text()


def test_the_code_map_names_every_module():
    named = set(re.findall(r"`([\w/]+\.py)`", MAP))
    modules = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    missing = sorted(modules - named)
    assert not missing, f"docs/architecture.md does not name {missing}: give each a line in the code map"
    gone = sorted(n for n in named - modules if "/" in n and n.split("/")[0] in {p.name for p in PACKAGE.iterdir()})
    assert not gone, f"docs/architecture.md names modules that are not there: {gone}"


def test_the_code_map_names_every_module_of_the_benchmark():
    named = set(re.findall(r"`(eer_benchmark/[\w/]+\.py)`", MAP))
    modules = {str(p.relative_to(REPO)) for p in BENCHMARK.rglob("*.py")}
    assert not sorted(modules - named), f"docs/architecture.md does not name {sorted(modules - named)}"
    assert not sorted(named - modules), (
        f"docs/architecture.md names modules that are not there: {sorted(named - modules)}"
    )


def test_the_patch_table_lists_every_patch():
    rows = [line for line in MAP.split("## The AllenNLP patches")[1].splitlines() if line.startswith("| `")]
    installers = [patch.installer.replace("eer_plugin.", "").split(" ")[0] for patch in PATCHES]
    assert [re.match(r"\| `([^`]+)`", row).group(1) for row in rows] == installers


def layer_rows(section: str) -> list:
    return [line for line in section.split("## ")[0].splitlines() if re.match(r"\| \d", line)]


def folders_of(row: str) -> set:
    return {name.rstrip("/").removesuffix(".py") for name in re.findall(r"`([\w/.]+)`", row.split("|")[2])}


def test_the_code_map_draws_the_layers_of_the_import_graph():
    """Both tables say which layer each folder is, in the order of ``tests/test_import_graph.py``."""
    for rows, layers in (
        (layer_rows(MAP), LAYERS),
        (layer_rows(MAP.split("## The benchmark: `eer_benchmark/`")[1]), BENCHMARK_LAYERS),
    ):
        assert [folders_of(row) for row in rows] == [units for _, units in layers]
