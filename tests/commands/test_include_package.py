"""``--include-package PACKAGE`` (which every subcommand takes) of a package that is not there, or whose code raises
while it is imported: one line naming the option and the package (and where it raised), status 1, nothing written;
never the ``ModuleNotFoundError`` traceback. Generated: names that are not there (a package, a module under one,
one under eer_plugin), and packages that raise every kind of error on import, directly or from a submodule (AllenNLP
imports a package's submodules too), for every kind of subcommand."""

import sys
from pathlib import Path

import pytest

MISSING = ["no_such_pkg", "no_such_pkg.sub", "eer_plugin.no_such_module", "no_such_pkg_0123456789" * 3]
#: the code that raises, and what the message says of it
RAISING = {
    "zero": ("x = 1 / 0\n", "ZeroDivisionError: division by zero"),
    "dependency": (
        "import no_such_dependency_of_it\n",
        "it imports 'no_such_dependency_of_it', which is not installed",
    ),
    "runtime": ("raise RuntimeError('set FOO first')\n", "RuntimeError: set FOO first"),
    "syntax": ("def broken(:\n", "SyntaxError: "),
    "attribute": ("import os\nos.no_such_function()\n", "AttributeError: "),
    "multiline": ("raise ValueError('line one\\nline two')\n", "ValueError: line one line two"),
}
#: subcommands of every kind: AllenNLP's own, ours, a data command (which then takes AllenNLP's path)
COMMANDS = [
    ["train", "eer_short.jsonnet", "-s", "run"],
    ["evaluate", "model.tar.gz", "test.txt"],
    ["predict", "model.tar.gz", "docs.jsonl", "--predictor", "eer_tagger"],
    ["tune-o-cost", "model.tar.gz", "dev.txt"],
    ["eer-simulate", "gold", "test.txt", "out.jsonl"],
    ["eer-estimate-ratio", "test.txt"],
]


def _packages(root: Path):
    """``(package, what the message must say)`` for each package of :data:`RAISING`, as a module and as a package
    whose submodule raises."""
    cases = []
    for name, (code, says) in RAISING.items():
        (root / f"raising_{name}.py").write_text(code)
        cases.append((f"raising_{name}", says))
        package = root / f"package_{name}"
        (package / "inner").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "inner" / "__init__.py").write_text("")
        (package / "inner" / "module.py").write_text(code)
        cases.append((f"package_{name}", says))
    return cases


def _cli(argv, capsys):
    from eer_plugin import cli

    status = cli.main([str(a) for a in argv])
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line.strip()], err


@pytest.mark.integration  # loads every command or model once per case
def test_a_package_that_is_not_there_is_one_line_for_every_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # AllenNLP also searches the working directory
    for command in COMMANDS:
        for package in MISSING:
            status, lines, err = _cli([*command, "--include-package", package], capsys)
            assert status == 1 and len(lines) == 1 and "Traceback" not in err, (command, package, err[-2000:])
            head = package.split(".")[0] if not package.startswith("eer_plugin.") else package
            assert lines[0].startswith(
                f"eer-ner {command[0]}: error: --include-package {package}: no module named {head!r}"
            ), lines
            assert "check the name, or install the package" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.integration  # loads every command or model once per case
def test_a_package_that_raises_while_imported_is_one_line_naming_where(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = _packages(tmp_path)
    for command in COMMANDS:
        for package, says in cases:
            status, lines, err = _cli([*command, "--include-package", package], capsys)
            assert status == 1 and len(lines) == 1 and "Traceback" not in err, (command, package, err[-2000:])
            line = lines[0]
            assert (
                line.startswith(f"eer-ner {command[0]}: error: --include-package {package}: importing it failed")
                and says in line
            ), line
            assert str(tmp_path) in line and f"leave out --include-package {package}" in line, line
            for name in [m for m in sys.modules if m.startswith(("raising_", "package_"))]:
                del sys.modules[name]


def test_a_package_that_imports_fine_is_still_imported(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "fine_package.py").write_text("import sys\nsys.fine_package_imported = True\n")
    status, lines, err = _cli(["eer-settings", "--include-package", "fine_package"], capsys)
    assert status == 0 and getattr(sys, "fine_package_imported", False), err[-2000:]
    del sys.fine_package_imported


@pytest.mark.integration  # starts eer-ner (15 s)
def test_the_eer_ner_process_says_it_in_one_line(tmp_path):
    from conftest import eer_ner

    (tmp_path / "raising_here.py").write_text("x = 1 / 0\n")
    for package in ("no_such_pkg", "raising_here"):
        done = eer_ner(
            "train",
            "eer_short",
            "-s",
            "run",
            "--include-package",
            package,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 1 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert lines[0].startswith(f"eer-ner train: error: --include-package {package}: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raising_here.py"]
