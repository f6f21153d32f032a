"""The wheel, as ``pip install .`` or a package index gives it to a user (not the editable checkout the suite runs
from): every tracked file of the two packages is inside it, and an install of it, used from a directory outside
the checkout, finds its packaged configs and trains (a dry run) from there.

The wheel is built from a copy of the checkout's tracked files, so the build writes nothing into the checkout."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("eer_plugin", "eer_benchmark")

pytestmark = pytest.mark.integration


def _tracked_files() -> list:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
    ).stdout.decode("utf-8")
    return [name for name in listing.split("\0") if name and os.path.lexists(REPO / name)]


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory) -> Path:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    copy = tmp_path_factory.mktemp("source") / "eer-ner"
    for name in _tracked_files():
        source, target = REPO / name, copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)
    return copy


@pytest.fixture(scope="module")
def wheel(source_copy, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), "."]
    proc = subprocess.run(command, cwd=source_copy, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("eer_ner-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "-q"]
    proc = subprocess.run([*pip, "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return site


def test_the_wheel_holds_every_tracked_file_of_the_packages(wheel):
    with zipfile.ZipFile(wheel) as archive:
        inside = {name for name in archive.namelist() if not name.split("/")[0].endswith(".dist-info")}
    tracked = {name for name in _tracked_files() if name.split("/")[0] in PACKAGES}
    assert tracked - inside == set(), "tracked files the wheel leaves out (setup.py package_data?)"
    assert inside - tracked == set(), "files in the wheel that git does not track"
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
        text = archive.read(entry_points).decode("utf-8")
    for line in ("eer-ner = eer_plugin.cli:main", "eer_ner = eer_plugin.spacy_component:make_eer_ner"):
        assert line in text, text


def _run_installed(site: Path, cwd: Path, *args: str, env_extra=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_an_installed_wheel_finds_its_packaged_configs_and_the_paper_numbers(installed, tmp_path):
    script = (
        "import sys, pathlib, json\n"
        "import eer_plugin\n"
        "from eer_plugin.runtime.config_files import packaged_configs, resolve_config\n"
        "from eer_benchmark.report.docs import DEFAULT_PAPER\n"
        "site = pathlib.Path(sys.argv[1]).resolve()\n"
        "print(json.dumps({'package': str(pathlib.Path(eer_plugin.__file__).resolve()),\n"
        "    'configs': {n: str(pathlib.Path(resolve_config(n)).resolve()) for n in packaged_configs()},\n"
        "    'paper': str(pathlib.Path(DEFAULT_PAPER).resolve()), 'paper_entries': len(json.load(open(DEFAULT_PAPER)))}))\n"
    )
    proc = _run_installed(installed, tmp_path, "-c", script, str(installed))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    site = installed.resolve()
    assert Path(found["package"]).is_relative_to(site), found["package"]
    checkout_configs = sorted(p.name for p in (REPO / "eer_plugin" / "training_configs").glob("*.jsonnet"))
    assert sorted(found["configs"]) == checkout_configs
    for name, path in found["configs"].items():
        assert Path(path).is_relative_to(site) and Path(path).is_file(), (name, path)
    assert Path(found["paper"]).is_relative_to(site) and found["paper_entries"] > 0, found


def test_an_installed_wheel_trains_from_another_directory(installed, tmp_path):
    """`eer-ner train eer_short.jsonnet --dry-run` from an empty directory: the packaged config by name, the
    plugin's registrations from the installed package (no .allennlp_plugins here), the data read and the
    vocabulary built."""
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(REPO / "fixtures" / "conll2003_tiny_partial.jsonl", work / "train.jsonl")
    proc = _run_installed(
        installed,
        work,
        "-m",
        "eer_plugin.cli",
        "train",
        "eer_short.jsonnet",
        "-s",
        "model",
        "--dry-run",
        env_extra={"EER_TRAIN_DATA": "train.jsonl"},
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert (work / "model" / "vocabulary" / "labels.txt").is_file(), sorted(p.name for p in (work / "model").iterdir())
    labels = (work / "model" / "vocabulary" / "labels.txt").read_text(encoding="utf-8").split()
    assert {"O", "B-PER", "I-PER", "L-PER", "U-LOC"} <= set(labels), labels  # the tags the data holds
