"""A model archive with a part missing or damaged, generated from the untrained tagger's archive: every member
removed (config, each vocabulary file, the weights), every tensor of the tag scorer and the CRF and a seeded
sample of the encoder's removed from the weights, the weights file replaced by what is no state dict. Each is
one :class:`ArchiveError` line naming the archive the user gave (never the temporary extraction directory) and
what is wrong, through the loader every command shares (``evaluate``, ``tune-o-cost``, ``eer-export-model``,
``predict``, ``Tagger.load``); no archive loads with a weight left at its random start."""

import io
import random
import tarfile
from pathlib import Path

import pytest
import torch

from eer_plugin.common.errors import ArchiveError


def _rewritten(archive: Path, out: Path, edit) -> Path:
    """A copy of ``archive`` whose members went through ``edit(name, data)`` (None: left out; a directory's name
    ends with ``/``, its data is empty)."""
    with tarfile.open(archive) as source, tarfile.open(out, "w:gz") as target:
        for member in source.getmembers():
            if not member.isfile():
                if edit(member.name.lstrip("./") + "/", b"") is not None:
                    target.addfile(member)
                continue
            data = edit(member.name.lstrip("./"), source.extractfile(member).read())
            if data is not None:
                member.size = len(data)
                target.addfile(member, io.BytesIO(data))
    return out


def _members(archive: Path) -> list:
    with tarfile.open(archive) as source:
        return sorted(m.name.lstrip("./") for m in source.getmembers() if m.isfile())


def _weights_without(name: str):
    def edit(member: str, data: bytes):
        if member != "weights.th":
            return data
        state = torch.load(io.BytesIO(data), weights_only=True)
        del state[name]
        buffer = io.BytesIO()
        torch.save(state, buffer)
        return buffer.getvalue()

    return edit


def _refused(path: Path) -> str:
    from eer_plugin.runtime.archive import load_model_archive

    with pytest.raises(ArchiveError) as caught:
        load_model_archive(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and "eer-archive-" not in message, message
    return message


def test_an_archive_without_any_of_its_files_names_what_it_lacks(archive, tmp_path):
    members = _members(archive)
    assert "config.json" in members and "weights.th" in members and any(m.startswith("vocabulary/") for m in members)
    for index, name in enumerate(members):
        if name == "vocabulary/.lock":  # the lock file of the training that wrote it: not needed to load
            continue
        path = _rewritten(
            archive,
            tmp_path / f"without-{index}.tar.gz",
            lambda member, data, name=name: None if member == name else data,
        )
        message = _refused(path)
        if name == "config.json":
            assert "no config.json" in message
        elif name == "weights.th":
            assert "no weights file" in message
        elif name == "vocabulary/labels.txt":  # the tag set: the model has no entity types
            assert "no entity types" in message, message
        else:
            assert f"without its {name}" in message, (name, message)
    without_vocabulary = _rewritten(
        archive,
        tmp_path / "no-vocabulary.tar.gz",
        lambda member, data: None if member.startswith("vocabulary/") else data,
    )
    assert "a model archive without its vocabulary/" in _refused(without_vocabulary)


def test_weights_missing_a_tensor_are_refused_not_left_at_random(archive, tmp_path):
    """AllenNLP 2.10.1 let an archive load without ``tag_scorer.bias`` (or any weight: its filter of the encoder's
    authorized missing key dropped every missing key), the weight left at its random start."""
    with tarfile.open(archive) as source:
        state = torch.load(source.extractfile("weights.th"), weights_only=True)
    encoder = sorted(name for name in state if name.startswith("text_field_embedder."))
    names = sorted(set(state) - set(encoder)) + random.Random(0).sample(encoder, 3)
    assert {"tag_scorer.weight", "tag_scorer.bias", "crf.transitions"} <= set(names)
    for index, name in enumerate(names):
        message = _refused(_rewritten(archive, tmp_path / f"weights-{index}.tar.gz", _weights_without(name)))
        assert "its weights do not fit the model" in message and name in message, message


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage" * 10, b"PK\x03\x04 a zip file", "a text file\n".encode(), "list", "truncated"],
)
def test_a_weights_file_that_is_no_state_dict_is_named_in_its_archive(content, archive, tmp_path):
    def edit(member: str, data: bytes):
        if member != "weights.th":
            return data
        if content == "list":
            buffer = io.BytesIO()
            torch.save([1, 2, 3], buffer)
            return buffer.getvalue()
        return data[: len(data) // 2] if content == "truncated" else content

    message = _refused(_rewritten(archive, tmp_path / "bad-weights.tar.gz", edit))
    assert "its weights.th: not a" in message and "use the model.tar.gz that eer-ner train wrote" in message, message
