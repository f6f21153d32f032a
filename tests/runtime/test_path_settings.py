"""Environment settings that name a file other than the data (``EER_WORD_VECTORS``: CBL-LSTM's word vectors) and
that name no regular file: one line naming the setting and the path when the config is read (before ``train`` or
``cbl`` makes its serialization directory), not a ``FileNotFoundError`` or ``IsADirectoryError`` from deep inside
AllenNLP's embedding. Generated: a path that is not there (absolute, relative, under a file), a directory, and the
forms that are left to AllenNLP (a URL, an archive member, a regular file)."""

import pytest

from eer_plugin.corpus.documents import DataFileError

CONFIGS = ["cbl_lstm_short.jsonnet", "cbl_lstm_all.jsonnet"]


def _bad_paths(root):
    (root / "a-file.txt").write_text("the 0.1 0.2\n")
    (root / "a-directory").mkdir()
    return [
        (str(root / "no-such-vectors.txt"), "not found"),
        ("no/such/relative/vectors.txt", "not found (relative paths start in"),
        (str(root / "a-file.txt" / "below.txt"), "not found"),
        (str(root / "a-directory"), "is a directory, not a file"),
    ]


@pytest.mark.parametrize("config", CONFIGS)
def test_word_vectors_that_are_no_file_are_one_line_naming_the_setting(config, tmp_path, monkeypatch):
    from allennlp.common import Params

    for path, says in _bad_paths(tmp_path):
        monkeypatch.setenv("EER_WORD_VECTORS", path)
        with pytest.raises(DataFileError) as raised:
            Params.from_file(config)
        message = str(raised.value)
        assert message.startswith(f"{config}: pretrained_file {path!r} {says}"), message
        assert message.endswith("the setting that names it: EER_WORD_VECTORS") and "\n" not in message


@pytest.mark.parametrize("path", ["https://example.org/vectors.txt", "(vectors.zip)#vectors.txt", "FILE"])
def test_word_vectors_that_may_be_read_are_left_to_the_embedding(path, tmp_path, monkeypatch):
    from allennlp.common import Params

    (tmp_path / "vectors.txt").write_text("the 0.1 0.2\n")
    path = str(tmp_path / "vectors.txt") if path == "FILE" else path
    monkeypatch.setenv("EER_WORD_VECTORS", path)
    config = Params.from_file(CONFIGS[0]).as_dict(quiet=True)
    assert config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["pretrained_file"] == path
