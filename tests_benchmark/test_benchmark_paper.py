"""The paper's numbers the benchmark report sets beside its own: the main table, the ratio robustness
table and the convergence sentence, read from the LaTeX source (fixtures here; the real paper when
../shared is present), and the packaged copy of them that the report reads."""

import pytest
from conftest import REPO
from test_benchmark import PAPER_ROBUSTNESS, PAPER_TABLE, plan_data

from eer_benchmark import Report, Runner, parse_plan
from eer_benchmark.analyse.paper import paper_value


def test_paper_table_is_read_from_the_latex_source():
    from eer_benchmark.analyse.paper import paper_table, paper_value

    tex = PAPER_TABLE
    columns, rows = paper_table(tex)
    assert columns == ["eng-c", "avg"]
    assert rows[("", "Gold-BERT-all")] == {"eng-c": 92.7, "avg": 85.6}
    assert rows[("ee", "EER-BERT-short")] == {"eng-c": 89.0, "avg": 71.7} and rows[("ee", "Raw-BERT-all")]["avg"] == 2.6
    assert paper_value(rows, "ee", "eer_short", "eng-c") == (89.0, "EER-BERT-short")
    assert paper_value(rows, "nns", "eer_short", "eng-c") == (88.0, "EER-BERT-all")  # NNS: the -all row
    assert paper_value(rows, None, "gold", "avg") == (85.6, "Gold-BERT-all")
    assert paper_value(rows, "ee", "sns_shortest", "eng-c") == (None, "")  # no fallback: EE has -shortest rows
    assert paper_value(rows, "ee", "raw_shortest", "eng-c") == (80.7, "Raw-BERT-shortest")
    paper = REPO.parent / "shared" / "paper" / "eer-paper.tex"
    if paper.exists():  # the real table: 7 data sets + avg, EER-short on eng-c = 89.0
        columns, rows = paper_table(paper.read_text())
        assert columns[0] == "eng-c" and columns[-1] == "avg" and len(columns) == 8
        assert paper_value(rows, "ee", "eer_short", "eng-c") == (89.0, "EER-BERT-short")


def test_ratio_grid_is_set_beside_the_papers_hyperparameter_table(tmp_path):
    from eer_benchmark.analyse.paper import paper_robustness
    from eer_benchmark.report.docs import ratio_comparison

    paper = paper_robustness(PAPER_ROBUSTNESS)
    assert paper == {
        (0.23, 0.23): {"f1": [86.8, 87.4, 87.0], "avg": 87.1, "mark": "*"},
        (0.3, 0.3): {"f1": [79.1, 79.4, 79.7], "avg": 79.4, "mark": ""},
        (0.1, 0.2): {"f1": [87.6, 88.2, 87.8], "avg": 87.9, "mark": "†"},
    }
    assert paper_robustness(PAPER_TABLE) == {}
    plan = parse_plan(plan_data(ratio_grid=[[0.15, 0.05], [0.3, 0.0], [0.05, 0.0]])).expand()
    report = Report(plan, Runner(plan, str(tmp_path / "out")))
    high = next(run for _, setting, run in plan.ratio_entries if setting == (0.3, 0.0))
    report.records[high.key] = {
        **report.records[high.key],
        "status": "done",
        "f1": 0.612,
        "rho_hat": 0.287,
        "rho_star": 0.2,
    }
    lines = ratio_comparison(report, paper).split("\n")
    assert lines[2] == "| fx | EE-15 | [0.10, 0.20]† | not run | – | 87.9† |"  # the benchmark's own EER-short run
    assert lines[3] == "| fx | EE-15 | [0.30, 0.30] | 61.2 | 0.287 | 79.4 |"
    assert lines[4] == "| fx | EE-15 | [0.05, 0.05] | not run | – | – |"  # not in the paper's table
    assert "rho* (gold subword entity ratio of our training data) = 0.200" in lines[-1]
    assert "rho = rho* setting [0.23, 0.23]" in lines[-1]
    if (REPO.parent / "shared" / "paper" / "eer-paper.tex").exists():
        real = paper_robustness((REPO.parent / "shared" / "paper" / "eer-paper.tex").read_text())
        assert len(real) == 7 and real[(0.1, 0.2)]["avg"] == 87.9 and real[(0.3, 0.3)]["f1"] == [79.1, 79.4, 79.7]


def test_papers_convergence_sentence_is_quoted_without_markup():
    from eer_benchmark.analyse.paper import paper_convergence

    tex = (
        "Intro. We tested this by taking $\\rhohat$ of the models with respect to the true $\\rho^*$, resulting in "
        "mean absolute error of only $0.018$. This is closer than $0.2$ (the error then would be $0.048$). Next."
    )
    assert paper_convergence(tex) == (
        "We tested this by taking rho_hat of the models with respect to the true rho*, resulting in "
        "mean absolute error of only 0.018. This is closer than 0.2 (the error then would be 0.048)"
    )
    assert paper_convergence("no such sentence.") == ""


PAPER_TEX = REPO.parent / "shared" / "paper" / "eer-paper.tex"


def test_packaged_numbers_read_back_as_the_latex_gives_them(tmp_path):
    """The report reads the paper's numbers from package data (no ../shared needed); the JSON form
    gives back exactly what the LaTeX parser gives, row order and marks included."""
    from eer_benchmark.analyse.paper import (
        PAPER_NUMBERS,
        numbers_text,
        paper_convergence,
        paper_numbers,
        paper_robustness,
        paper_table,
        read_paper,
    )
    from eer_benchmark.report.docs import DEFAULT_PAPER

    assert DEFAULT_PAPER == PAPER_NUMBERS and PAPER_NUMBERS.parent.name == "analyse"
    packaged = read_paper()
    assert packaged.columns[0] == "eng-c" and packaged.columns[-1] == "avg" and len(packaged.columns) == 8
    assert paper_value(packaged.rows, "ee", "eer_short", "eng-c") == (89.0, "EER-BERT-short")
    assert packaged.robustness[(0.1, 0.2)] == {"f1": [87.6, 88.2, 87.8], "avg": 87.9, "mark": "†"}
    tex = (
        PAPER_TABLE
        + "\n"
        + PAPER_ROBUSTNESS
        + "\nSetup. We used a learning rate of $2\\times 10^{-5}$ with a schedule."
    )
    path = tmp_path / "numbers.json"
    path.write_text(numbers_text(paper_numbers(tex)))
    (tmp_path / "paper.tex").write_text(tex)
    for paper in (read_paper(path), read_paper(tmp_path / "paper.tex")):
        assert (paper.columns, paper.rows) == paper_table(tex)
        assert list(paper.robustness.items()) == list(paper_robustness(tex).items())
        assert paper.settings == '"We used a learning rate of 2x10^-5 with a schedule."'
        assert paper.convergence == paper_convergence(tex) == ""
    with pytest.raises(
        FileNotFoundError, match=r"the paper's numbers are not at .*missing.json: pass the paper's LaTeX source"
    ):
        read_paper(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text('{"rows": []}')
    with pytest.raises(ValueError, match=r"broken.json: not the paper's numbers .*scripts/paper_numbers.py TEX -o"):
        read_paper(tmp_path / "broken.json")


@pytest.mark.skipif(
    not PAPER_TEX.exists(),
    reason="the paper's LaTeX source (../shared/paper/eer-paper.tex) is not beside the repository",
)
def test_packaged_numbers_are_the_papers_latex():
    """eer_benchmark/analyse/paper_numbers.json is what scripts/paper_numbers.py writes from the paper's
    LaTeX source today: regenerate it with that script when this fails."""
    from eer_benchmark.analyse.paper import PAPER_NUMBERS, numbers_text, paper_numbers

    assert PAPER_NUMBERS.read_text() == numbers_text(paper_numbers(PAPER_TEX.read_text()))
