"""The one weights-only reader of ``.th`` files (``runtime/weights_files.py``) and its two callers: every generated
way a file is not a torch state is a reason in words, the same reason whether the file is an archive's weights or a
training's checkpoint, and no code from the file ever runs."""

import io
import pickle
import zipfile

import pytest
import torch

from eer_plugin.common.errors import ArchiveError
from eer_plugin.runtime.archive import MissingWeightsError, load_weights
from eer_plugin.runtime.weights_files import UnloadableFile, read_file
from eer_plugin.training.checkpoint_files import CheckpointError, UnusableCheckpoint, load_file


class _Payload:
    """Pickled with a ``__reduce__`` that would create a file on a plain ``torch.load``."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _with_pickle(pickled: bytes) -> bytes:
    """A real torch file whose ``data.pkl`` is replaced by ``pickled``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(_saved({"x": torch.zeros(1)}))) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, pickled if item.filename.endswith("data.pkl") else zin.read(item.filename))
    return out.getvalue()


def _bad_files(marker: str):
    """``(name, bytes, a word the reason must hold)``: each way a ``.th`` file is not a torch state."""
    whole = _saved({"w": torch.arange(1000.0)})
    yield "empty", b"", "empty"
    yield "text", b"a text file\n", "not a torch file"
    yield "zip start only", b"PK\x03\x04", "incomplete"
    for fraction in (0.1, 0.5, 0.9, 0.999):
        yield f"cut at {fraction}", whole[: int(len(whole) * fraction)], "incomplete"
    yield "code", _with_pickle(pickle.dumps({"x": _Payload(marker)}, protocol=2)), "weights_only=True"
    yield "zero bytes inside", whole[:200] + b"\0" * (len(whole) - 200), "incomplete"


def test_every_bad_file_is_a_reason_and_runs_no_code(tmp_path):
    marker = tmp_path / "code-ran"
    for index, (name, data, word) in enumerate(_bad_files(str(marker))):
        path = tmp_path / f"bad-{index}.th"
        path.write_bytes(data)
        for mmap in (False, True):
            with pytest.raises(UnloadableFile) as raised:
                read_file(str(path), mmap=mmap)
            assert word in raised.value.reason, (name, raised.value.reason)
            assert "\n" not in raised.value.reason
            # the same reason, whichever caller reads it
            with pytest.raises(UnusableCheckpoint) as unusable:
                load_file(str(path), mmap=mmap)
            assert unusable.value.reason == raised.value.reason
        with pytest.raises(ArchiveError) as refused:
            load_weights(path)
        assert raised.value.reason in str(refused.value) and str(path) in str(refused.value), name
    assert not marker.exists()


def test_a_whole_file_reads_back(tmp_path):
    state = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.ones(2)}
    path = tmp_path / "whole.th"
    path.write_bytes(_saved(state))
    for mmap in (False, True):
        loaded = read_file(str(path), mmap=mmap)
        assert loaded.keys() == state.keys() and all(torch.equal(loaded[k], state[k]) for k in state)
    assert torch.equal(load_weights(path)["w"], state["w"])


def test_missing_and_unreadable_paths_are_not_reasons(tmp_path):
    """A path that is not there or not a file is the caller's own line: the archive's missing weights, a
    checkpoint the user must make readable; never 'damaged'."""
    missing, directory = tmp_path / "missing.th", tmp_path / "directory.th"
    directory.mkdir()
    for path in (missing, directory):
        with pytest.raises(OSError):
            read_file(str(path))
        with pytest.raises(CheckpointError, match="cannot be read"):
            load_file(str(path))
    with pytest.raises(MissingWeightsError, match="no weights file"):
        load_weights(missing)
    with pytest.raises(ArchiveError, match="cannot be read") as refused:
        load_weights(directory)
    assert "damaged" not in str(refused.value)


@pytest.mark.parametrize("kind", ["torch zip", "torch legacy", "safetensors"])
def test_a_weights_file_given_as_the_model_says_which_file_to_give(kind, tmp_path):
    """best.th, a legacy torch file or an encoder's model.safetensors where a model archive is asked (predict,
    evaluate, Tagger.load) is named as weights, with the file to give instead: not only "not a tar file"."""
    from eer_plugin.api import Tagger
    from eer_plugin.runtime.archive import extracted_archive

    state = {"scorer.weight": torch.zeros(3, 2)}
    path = tmp_path / ("model.safetensors" if kind == "safetensors" else "best.th")
    if kind == "safetensors":
        from safetensors.torch import save_file

        save_file(state, str(path))
    else:
        torch.save(state, str(path), _use_new_zipfile_serialization=kind == "torch zip")
    what = "safetensors weights" if kind == "safetensors" else "PyTorch weights (a .th or .pt file"
    for load in (lambda: extracted_archive(str(path)).__enter__(), lambda: Tagger.load(str(path))):
        with pytest.raises(ArchiveError) as raised:
            load()
        message = str(raised.value)
        assert message.startswith(f"{path}: {what}"), message
        assert "not a model archive (model.tar.gz): give the model.tar.gz that training wrote beside it" in message
