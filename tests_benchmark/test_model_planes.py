"""benchmarks/gpu/model_planes.py: a model file carried in pieces arrives byte for byte, or not at all."""

import importlib.util

import pytest
import torch
from conftest import REPO
from safetensors.torch import save_file

spec = importlib.util.spec_from_file_location("model_planes", REPO / "benchmarks" / "gpu" / "model_planes.py")
planes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(planes)


@pytest.fixture
def model(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "model.safetensors"
    save_file({"embeddings": torch.randn(300, 64) * 0.05, "bias": torch.zeros(64), "scale": torch.ones(7)}, str(path))
    return path


def test_pack_then_unpack_gives_the_same_bytes_and_the_planes_shrink_it(model, tmp_path):
    assert planes.main(["pack", str(model), str(tmp_path / "p"), "--first", "5000", "--size", "20000"]) == 0
    pieces = sorted((tmp_path / "p").glob("piece-*"))
    assert len(pieces) > 2 and pieces[0].stat().st_size == 5000
    assert sum(p.stat().st_size for p in pieces) < model.stat().st_size  # the exponent plane compresses
    assert planes.main(["unpack", str(tmp_path / "p"), "--output", str(tmp_path / "back.safetensors")]) == 0
    assert (tmp_path / "back.safetensors").read_bytes() == model.read_bytes()


def test_a_damaged_missing_or_reordered_piece_is_refused_and_nothing_is_written(model, tmp_path, capsys):
    planes.main(["pack", str(model), str(tmp_path / "p"), "--first", "5000", "--size", "20000"])
    pieces = sorted((tmp_path / "p").glob("piece-*"))
    out = tmp_path / "back.safetensors"
    assert planes.main(["unpack", *map(str, pieces[:-1]), "--output", str(out)]) == 1
    assert "a piece is missing or cut" in capsys.readouterr().err
    assert planes.main(["unpack", *map(str, [pieces[1], pieces[0], *pieces[2:]]), "--output", str(out)]) == 1
    assert "wrong magic" in capsys.readouterr().err
    data = bytearray(pieces[-1].read_bytes())
    data[-10] ^= 0xFF
    pieces[-1].write_bytes(bytes(data))
    assert planes.main(["unpack", str(tmp_path / "p"), "--output", str(out)]) == 1
    assert "damaged" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".back*"))


def test_a_file_that_is_not_float32_tensors_is_refused(tmp_path):
    odd = tmp_path / "odd.safetensors"
    odd.write_bytes((2).to_bytes(8, "little") + b"{}" + b"\x01\x02\x03")
    with pytest.raises(planes.PlanesError, match="not whole float32 values"):
        planes.encode(odd.read_bytes())
