"""``eer-export brat`` on a file system that does not tell apart names differing in case or Unicode normalisation
(macOS's APFS, Windows' NTFS): ids ``A`` and ``a`` (or ``é`` composed and decomposed) are two files on Linux but
one there, where the second document's ``.txt`` and ``.ann`` silently replaced the first's (``open(..., "w")``,
``mkdir(exist_ok=True)``). Now every file and directory is created exclusively and a clash is one error naming
both ids, nothing written.

No such file system can be made here (vfat and casefolding need kernel support that this machine's kernel lacks:
no vfat, no ``/sys/fs/unicode``; no FUSE library), so the tests put one under the exporter: its two creating
functions (``new_file``, ``new_directory``) store each name below the export's temporary directory case-folded
and NFC-normalised, as such a file system does, and report a clash under the name they were given, as it does. The
rest, including the real exclusive creation, runs as it is."""

import os
import unicodedata
from pathlib import Path

import pytest
from test_round_trip_generated import predictions_of

from eer_plugin.commands import eer_export
from eer_plugin.common.outputs import TEMPORARY_MARK
from eer_plugin.corpus.exporters import PredictionsError, brat, export
from eer_plugin.corpus.importers import import_documents
from eer_plugin.corpus.tokenizer import tokenize_text


@pytest.fixture
def folding(monkeypatch):
    """The exporter's creating functions on a file system that folds case and normalisation below the export's
    temporary directory."""

    def on_folding_file_system(create):
        def created(path, *args):
            parts = Path(path).parts
            top = next(i for i, part in enumerate(parts) if TEMPORARY_MARK in part) + 1
            folded = [unicodedata.normalize("NFC", unicodedata.normalize("NFC", p).casefold()) for p in parts[top:]]
            try:
                return create(Path(*parts[:top], *folded), *args)
            except OSError as error:
                error.filename = str(path)
                raise

        return created

    monkeypatch.setattr(brat, "new_file", on_folding_file_system(brat.new_file))
    monkeypatch.setattr(brat, "new_directory", on_folding_file_system(brat.new_directory))


CLASHES = [
    (["A", "a"], "'a.txt', which the file system already holds for document id 'A' (line 1) as 'A.txt'"),
    (["x", "José", "Jose\u0301"], "document id 'José' (line 2) as 'José.txt'"),
    (["News/d1", "news/d2"], "needs 'news', which the file system already holds for document id 'News/d1' (line 1)"),
    (["ÉTÉ/a", "e\u0301te\u0301/b"], "for document id 'ÉTÉ/a' (line 1) as 'ÉTÉ'"),
    (["Straße", "STRASSE"], "for document id 'Straße' (line 1) as 'Straße.txt'"),
    (["Visual.conf/d"], "the configuration needs 'visual.conf', which the file system already holds for document id"),
    (["Annotation.conf/d"], "the configuration needs 'annotation.conf'"),
]


@pytest.mark.parametrize("ids, held", CLASHES)
def test_names_one_folding_file_system_takes_for_one_are_one_error(ids, held, folding, tmp_path, capsys):
    predictions = predictions_of(tmp_path, *["Anna met Bob"] * len(ids), ids=ids)
    with pytest.raises(PredictionsError, match="differ only in case or Unicode normalisation") as info:
        export("brat", predictions, tmp_path / "out")
    assert held in str(info.value) and info.value.line == len(ids)
    assert sorted(os.listdir(tmp_path)) == ["predictions.jsonl"]  # nothing written, no temporary left
    with pytest.raises(SystemExit) as exited:
        eer_export.main(["brat", str(predictions), str(tmp_path / "out")])
    assert exited.value.code == 1
    (error,) = capsys.readouterr().err.splitlines()
    assert error.startswith(f"eer-export: error: {predictions}:{len(ids)}: ") and 'another "id"' in error


@pytest.mark.parametrize("ids", [["A", "B", "a/b"], ["José", "Jose"], ["news/A", "news/B", "News2/a"]])
def test_names_that_stay_apart_are_exported_there_too(ids, folding, tmp_path):
    """(Stored as the file system stores them: folded.)"""
    export("brat", predictions_of(tmp_path, *["Anna met Bob"] * len(ids), ids=ids), tmp_path / "out")
    documents, _ = import_documents("brat", tmp_path / "out", tokenize_text)
    assert sorted(d.id for d in documents) == sorted(unicodedata.normalize("NFC", i.casefold()) for i in ids)


@pytest.mark.parametrize("ids", [["A", "a"], ["José", "Jose\u0301"], ["News/d1", "news/d2"]])
def test_on_linux_both_documents_are_kept(ids, tmp_path):
    export("brat", predictions_of(tmp_path, *["Anna met Bob"] * len(ids), ids=ids), tmp_path / "out")
    documents, _ = import_documents("brat", tmp_path / "out", tokenize_text)
    assert sorted(d.id for d in documents) == sorted(ids)
