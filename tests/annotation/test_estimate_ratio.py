"""eer-estimate-ratio: the subword entity ratio of complete documents as EER's loss counts it, its
bootstrap interval, the suggested rho/gamma and the two warnings; the reader's file_encoding."""

import json
import re
from collections import Counter

import pytest
from conftest import FIXTURES

from eer_plugin.annotation import ratio_estimate
from eer_plugin.annotation.ratio_estimate import RatioCounts, chunk_counts, estimate, suggest, warnings
from eer_plugin.commands import estimate_ratio
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_documents, write_jsonl

ENCODER = "all-MiniLM-L6-v2"  # the packaged copy: works offline


# ----------------------------------------------------------------------------------- maths
def test_chunk_counts_exclude_bookends_and_read_types():
    labels = ["O", "B-PER", "L-PER", "O", "U-LOC", "_", "O"]  # bookends first and last
    counts = chunk_counts("d", [labels, ["O", "O", "O"]])
    assert counts.subwords == 6 and counts.entities == Counter({"PER": 2, "LOC": 1, "": 1})
    assert chunk_counts("d", [labels], count_bookends=True).subwords == 7
    assert chunk_counts("d", [labels], latent_is_entity=False).entity_subwords == 3


def test_estimate_point_interval_and_per_type():
    counts = [
        RatioCounts("a", 10, Counter(PER=2)),
        RatioCounts("b", 30, Counter(PER=3, LOC=3)),
        RatioCounts("c", 10, Counter()),
    ]
    result = estimate(counts, resamples=2000, seed=1)
    assert result["ratio"] == pytest.approx(8 / 50) and result["entity_subwords"] == 8 and result["documents"] == 3
    assert result["per_type"]["PER"]["ratio"] == pytest.approx(5 / 50) and result["per_type"]["LOC"][
        "ratio"
    ] == pytest.approx(3 / 50)
    assert 0.0 <= result["low"] <= result["ratio"] <= result["high"] <= 0.2  # 0.2 is the densest document's ratio
    assert estimate(counts, resamples=2000, seed=1) == result  # seeded
    single = estimate([RatioCounts("a", 10, Counter(PER=2))], resamples=50)
    assert single["low"] == single["high"] == single["ratio"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="no complete documents"):
        estimate([])


def test_suggest_covers_the_interval():
    for low, high in [(0.18, 0.29), (0.2104, 0.2196), (0.0, 0.333), (0.1234, 0.1235)]:
        s = suggest(low, high)
        assert (
            s["entity_ratio"] - s["ratio_margin"] <= low + 1e-12
            and high <= s["entity_ratio"] + s["ratio_margin"] + 1e-12
        )
        assert s["ratio_margin"] >= ratio_estimate.DEFAULT_MIN_MARGIN
    assert suggest(0.18, 0.29) == {"entity_ratio": 0.235, "ratio_margin": 0.055}


def test_warnings_few_documents_and_partial_ratio_above_band():
    result = {"documents": 3}
    messages = warnings(result, {"entity_ratio": 0.15, "ratio_margin": 0.05}, partial_ratio=0.25, partial_documents=7)
    assert messages[0].startswith("only 3 complete documents: the interval is wide")
    assert (
        "the annotated entities of the 7 partial documents alone make up 0.250 of their subwords, above rho + gamma = 0.200"
        in messages[1]
    )
    assert warnings({"documents": 20}, {"entity_ratio": 0.15, "ratio_margin": 0.05}, 0.19) == []


# ----------------------------------------------------------------------------------- command, MiniLM
def run(capsys, *argv):
    result = estimate_ratio.run(
        estimate_ratio.add_arguments(__import__("argparse").ArgumentParser()).parse_args([str(a) for a in argv])
    )
    return result, capsys.readouterr()


def test_command_on_the_gold_fixture_counts_like_the_tokenizer(capsys, tmp_path):
    from eer_plugin.data.reader import PartialDocumentReader

    data = FIXTURES / "conll2003_tiny.txt"
    out = tmp_path / "ratio.json"
    result, printed = run(capsys, data, "--encoder", ENCODER, "--resamples", 500, "--output", out)
    reader = PartialDocumentReader(model_name=ENCODER)
    subwords = entities = 0
    for doc in read_documents(data):  # every document is short: one chunk each, so pieces = positions
        pieces = [len(p) for p in reader.tokenize_words(doc.tokens)]
        subwords += sum(pieces)
        entities += sum(sum(pieces[s:e]) for s, e, _ in doc.spans)
    assert (result["subwords"], result["entity_subwords"]) == (subwords, entities)
    assert result["ratio"] == pytest.approx(entities / subwords)
    assert sum(v["entity_subwords"] for v in result["per_type"].values()) == entities
    s = result["suggested"]
    assert (
        s["entity_ratio"] - s["ratio_margin"] <= result["low"]
        and result["high"] <= s["entity_ratio"] + s["ratio_margin"] + 1e-9
    )
    assert (
        f"""-o '{{"model.entity_ratio": {s["entity_ratio"]}, "model.ratio_margin": {s["ratio_margin"]}}}'\n"""
        in printed.out
    )
    assert "suggested: " + json.dumps(s) in printed.out
    assert "only 4 complete documents" in printed.err
    assert json.loads(out.read_text())["suggested"] == s
    bookends, _ = run(capsys, data, "--encoder", ENCODER, "--resamples", 50, "--count-bookends")
    assert bookends["subwords"] == subwords + 2 * 4 and bookends["entity_subwords"] == entities


def test_command_uses_only_complete_documents_and_checks_partial_data(capsys, tmp_path):
    complete = Document(
        "c", ["Paris", "is", "a", "big", "city", "in", "the", "north", "."], [9], [(0, 1, "LOC")], is_complete=True
    )
    dense = Document("p", ["Jimi", "Hendrix", "met", "Bob", "Dylan", "."], [6], [(0, 2, "PER"), (3, 5, "PER")])
    data = tmp_path / "data.jsonl"
    write_jsonl([complete, dense], data)
    result, printed = run(capsys, data, "--encoder", ENCODER, "--resamples", 50)
    assert result["documents"] == 1 and result["partial_documents"] == 1
    assert result["partial_annotated_ratio"] > result["suggested"]["entity_ratio"] + result["suggested"]["ratio_margin"]
    assert "the annotated entities of the 1 partial document alone make up" in printed.err
    only_partial = tmp_path / "partial.jsonl"
    write_jsonl([dense], only_partial)
    with pytest.raises(SystemExit):
        estimate_ratio.main([str(only_partial), "--encoder", ENCODER])
    assert "no complete document (is_complete: true) to count" in capsys.readouterr().err
    # --partial files are checked too, in the chosen variant
    result, _ = run(
        capsys,
        FIXTURES / "conll2003_tiny.txt",
        "--encoder",
        ENCODER,
        "--resamples",
        20,
        "--partial",
        only_partial,
        "--variant",
        "short",
    )
    assert result["partial_documents"] == 1 and result["partial_variant"] == "short"


# ----------------------------------------------------------------------------------- reader file_encoding
def test_reader_file_encoding(tmp_path, caplog):
    from eer_plugin.data.reader import PartialDocumentReader

    path = tmp_path / "esp.txt"
    path.write_bytes("Jos\u00e9 B-PER\nvive O\nen O\nM\u00e1laga B-LOC\n".encode("latin-1"))
    docs = PartialDocumentReader(model_name=ENCODER).read_documents(str(path))
    assert docs[0].tokens == ["Jos\u00e9", "vive", "en", "M\u00e1laga"] and "reading it as latin-1" in caplog.text
    strict = PartialDocumentReader(model_name=ENCODER, file_encoding="utf-8")
    with pytest.raises(Exception, match="invalid UTF-8 byte 0xe9"):
        strict.read_documents(str(path))
    assert (
        PartialDocumentReader(model_name=ENCODER, file_encoding="cp1252").read_documents(str(path))[0].tokens[0]
        == "Jos\u00e9"
    )


# ----------------------------------------------------------------------------------- coverage script
def test_coverage_script_on_the_fixture(capsys, tmp_path):
    """benchmarks/ratio_estimate_coverage.py: a sample of every document is the corpus itself (its estimate
    is the corpus ratio on every draw); smaller samples spread around it; sizes above the corpus are skipped."""
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("coverage_script", REPO / "benchmarks" / "ratio_estimate_coverage.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    data = FIXTURES / "conll2003_tiny.txt"
    documents = len(read_documents(data))
    output = tmp_path / "coverage.json"
    result = script.main(
        [
            str(data),
            "--encoder",
            ENCODER,
            "--documents",
            "1",
            str(documents),
            str(documents + 1),
            "--trials",
            "20",
            "--resamples",
            "200",
            "--output",
            str(output),
        ]
    )
    assert json.loads(output.read_text()) == json.loads(json.dumps(result))
    one, whole = result["rows"]
    assert [one["documents"], whole["documents"]] == [
        1,
        documents,
    ] and "more than the corpus's" in capsys.readouterr().err
    assert whole["estimate_p05"] == pytest.approx(result["corpus_ratio"]) == pytest.approx(whole["estimate_p95"])
    assert whole["interval_covers"] == whole["band_covers"] == 1.0
    assert (
        one["estimate_p05"] < result["corpus_ratio"] < one["estimate_p95"] and one["mean_width"] == 0.0
    )  # one document: no interval


def test_coverage_script_levels_share_the_draws(tmp_path):
    """--confidence 0.8 0.99: both levels are measured on the same draws (same point-estimate spread); the
    wider level's interval is never narrower and contains the corpus ratio at least as often."""
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("coverage_script", REPO / "benchmarks" / "ratio_estimate_coverage.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    data = FIXTURES / "conll2003_tiny.txt"
    documents = len(read_documents(data))
    result = script.main(
        [
            str(data),
            "--encoder",
            ENCODER,
            "--documents",
            str(max(2, documents - 1)),
            "--trials",
            "15",
            "--resamples",
            "200",
            "--confidence",
            "0.8",
            "0.99",
        ]
    )
    narrow, wide = result["rows"]
    assert [narrow["confidence"], wide["confidence"]] == [0.8, 0.99]
    assert (narrow["estimate_p05"], narrow["estimate_p95"]) == (wide["estimate_p05"], wide["estimate_p95"])
    assert wide["mean_width"] >= narrow["mean_width"] > 0.0
    assert wide["interval_covers"] >= narrow["interval_covers"]


@pytest.mark.parametrize(
    "option, value, says",
    [
        ("--confidence", "1.5", "confidence must be in (0, 1), got 1.5"),
        ("--confidence", "nan", "confidence must be in (0, 1), got nan"),
        ("--resamples", "0", "resamples must be at least 1, got 0"),
        ("--min-margin", "-1", "min_margin (the smallest gamma) must be in [0, 1), got -1.0"),
        ("--min-margin", "nan", "min_margin (the smallest gamma) must be in [0, 1), got nan"),
    ],
)
def test_an_option_out_of_range_is_refused_before_the_data_is_read(option, value, says, tmp_path, monkeypatch):
    """Every option of the estimate is checked first: no tokenizer is loaded, no file read, nothing written."""
    from eer_plugin.data import corpus_counts

    monkeypatch.setattr(corpus_counts, "_reader", lambda *a, **k: pytest.fail("the data was read"))
    out = tmp_path / "ratio.json"
    with pytest.raises(ValueError, match=re.escape(says)):
        corpus_counts.estimate_ratio(str(FIXTURES / "conll2003_tiny.txt"), ENCODER, output=str(out),
                                     **{option[2:].replace("-", "_"): float(value)})  # fmt: skip
    assert not out.exists()
    with pytest.raises(ValueError, match="min_margin"):
        suggest(0.1, 0.2, -0.5)
