"""The README is an index of at most 200 lines, every relative link in it and in ``docs/*.md`` leads to
a file that exists (and, into a Markdown page, to a heading that exists), every docs page is reachable
from the README, ``docs/speed.md``'s generated block is what ``benchmarks/speed_report.py`` renders, and
the guide (docs/which-approach.md) and the README's Results quote the benchmark report."""

import importlib.util
import re
from pathlib import Path

import pytest
from conftest import REPO

README = REPO / "README.md"
GUIDE = REPO / "docs" / "which-approach.md"  # "Which approach should I use?", generated between its markers
PAGES = [README] + sorted((REPO / "docs").glob("*.md"))  # docs/results/runs/ holds run records, not pages

#: pages that other branches of issue 28 write (the code map, the Python API, scale-out); a link to one of
#: them may point nowhere until that branch is merged. Remove an entry once its page is in the repository.
PENDING: set = set()

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
#: a bootstrap difference as the docs quote it: "+0.2 F1 [-1.3, +1.6]" (minus signs as hyphens)
INTERVAL = re.compile(r"([-+]\d+\.\d) F1 \[([-+]\d+\.\d), ([-+]\d+\.\d)\]")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def generated_report() -> str:
    """docs/results.md without its significance marks (the report writes "+4.2† [+2.5, +5.8]"; the docs quote
    "+4.2 F1 [+2.5, +5.8]")."""
    return (REPO / "docs" / "results.md").read_text(encoding="utf-8").replace("†", "").replace("‡", "")


def links(page: Path, root: Path = REPO):
    """Relative link targets of ``page`` outside code blocks, as (path relative to ``root``, anchor)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page.resolve()
        yield resolved.relative_to(root.resolve()).as_posix(), anchor


def anchors(page: Path):
    """GitHub's anchors of the headings of ``page``: lower case, punctuation dropped, spaces as hyphens."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_the_readme_is_an_index_of_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail into a docs/ page"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_leads_somewhere(page):
    broken = []
    for path, anchor in links(page):
        if path in PENDING and not (REPO / path).exists():
            continue
        target = REPO / path
        if not target.exists():
            broken.append(f"{path} (no such file)")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{path}#{anchor} (no such heading)")
    assert not broken, f"{page.relative_to(REPO)}: broken links: {broken}"


def test_every_docs_page_is_linked_from_the_readme():
    linked = {path for path, _ in links(README)}
    pages = {p.relative_to(REPO).as_posix() for p in PAGES[1:]}
    assert pages - linked == set(), "add these pages to the README's Documentation table"


def test_the_link_reader_resolves_links_and_skips_code_blocks(tmp_path):
    """The checker's parts: links resolve against their page's folder, anchors are split off, web links and
    code blocks are skipped, and headings give GitHub's anchors."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Check your data first: `eer-inspect`\n[x](../README.md#a-b) [y](#c) [w](https://x.org/a.md)\n"
        "```\n[z](inside-a-code-block.md)\n# not a heading\n```\n![plot](results/p.png)\n"
    )
    assert list(links(page, tmp_path)) == [("README.md", "a-b"), ("docs/page.md", "c"), ("docs/results/p.png", "")]
    assert anchors(page) == {"check-your-data-first-eer-inspect"}


def _speed_report():
    spec = importlib.util.spec_from_file_location("speed_report", REPO / "benchmarks" / "speed_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_speed_page_holds_what_make_bench_renders(tmp_path):
    """``make bench`` writes its block into docs/speed.md (no longer the README): rendering the saved report
    into a copy of the page changes nothing, and a page without the markers is left as it is."""
    import json

    speed_report = _speed_report()
    report = json.loads((REPO / "benchmarks" / "speed_report.json").read_text())
    page = REPO / "docs" / "speed.md"
    copy = tmp_path / "speed.md"
    copy.write_text(page.read_text())
    speed_report.write_block(copy, speed_report.report_lines(report))
    assert copy.read_text() == page.read_text()

    copy.write_text(page.read_text().replace("1 threads", "9 threads"))  # a stale block is replaced
    speed_report.write_block(copy, speed_report.report_lines(report))
    assert copy.read_text() == page.read_text()

    plain = tmp_path / "plain.md"
    plain.write_text("# no generated block\n")
    speed_report.write_block(plain, ["x"])
    assert plain.read_text() == "# no generated block\n"
    assert "speed-report:begin" not in README.read_text()


def test_the_settings_tables_of_the_docs_name_every_setting_its_key_and_default():
    """docs/configs.md's two tables against the one settings table (eer_plugin/runtime/settings.py): every
    environment setting in the first; every hyperparameter in the second with its -o key and its default
    (cells list several settings in the same order); the benchmark's compared settings are settings too."""
    from eer_benchmark.run.runner import COMPARED_SETTINGS
    from eer_plugin.runtime.settings import ENVIRONMENT, HYPERPARAMETERS, SETTINGS

    rows = [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in (REPO / "docs" / "configs.md").read_text().splitlines()
    ]
    environment = {name for row in rows if len(row) == 3 for name in re.findall(r"`(EER_\w+)`", row[0])}
    assert environment == {s.name for s in ENVIRONMENT}, "docs/configs.md: the environment settings' table"
    found = {}
    for key, names, default, _ in (row for row in rows if len(row) == 4):
        for position, name in enumerate(re.findall(r"`(EER_\w+)`", names)):
            found[name] = (
                re.findall(r"`([\w.]+)`", key),
                default.split(", ")[position] if ", " in default else default,
            )
    assert set(found) == {s.name for s in HYPERPARAMETERS}, "docs/configs.md: the hyperparameters' table"
    for setting in HYPERPARAMETERS:
        keys, default = found[setting.name]
        assert setting.path in keys and all(path in keys for _, path in setting.other_paths), setting.name
        shown = "empty" if setting.default == "" else setting.default
        assert default.strip("`").startswith(shown), (
            f"{setting.name}: docs say {default!r}, the table {setting.default!r}"
        )
    assert set(COMPARED_SETTINGS) <= {s.name for s in SETTINGS}


def test_the_settings_table_of_the_docs_gives_each_cbl_setting_its_default_and_range():
    """docs/configs.md's hyperparameters' table has a row for each key of the ``cbl`` block, with the default and the
    range of its one declaration (eer_plugin/annotation/cbl.py), said as ``allennlp cbl`` says it when it refuses a
    value, and the step's row the most rounds a run plans."""
    from eer_plugin.annotation.cbl import DEFAULTS, MAX_ROUNDS, RANGES

    rows = {
        cells[0].strip("`"): cells
        for line in (REPO / "docs" / "configs.md").read_text().splitlines()
        for cells in [[cell.strip() for cell in line.split("|")[1:-1]]]
        if len(cells) == 4
    }
    for key, bounds in RANGES.items():
        _, _, default, meaning = rows[f"cbl.{key}"]
        assert default == str(DEFAULTS[key]) and meaning.startswith(bounds.expected), (key, default, meaning)
    assert f"A run plans at most {MAX_ROUNDS} rounds (`MAX_ROUNDS`" in rows["cbl.step"][3]  # the limit of its plan


def test_the_guide_is_what_the_report_csv_says():
    """Every number of "Which approach should I use?" (docs/which-approach.md, linked from the README) comes from
    docs/results/results.csv (and the paper's numbers): the region between its markers is exactly what the renderer
    writes from them, and the README keeps no generated rows."""
    from eer_benchmark.analyse.paper import read_paper
    from eer_benchmark.report.guide import END, START, guide_inputs, guide_markdown, region

    written = region(GUIDE.read_text(encoding="utf-8"))
    assert written is not None, "docs/which-approach.md lost the markers of its generated guide"
    rows, curve_rows = guide_inputs(REPO / "docs" / "results")  # results.csv, a further corpus's, the curve's claims
    expected = guide_markdown(rows, read_paper().rows, curve_rows)
    assert written == expected, (
        "docs/which-approach.md is stale: run RENDER_ONLY=1 bash benchmarks/results.sh (it rewrites it)"
    )
    assert START not in README.read_text(encoding="utf-8") and END not in README.read_text(encoding="utf-8")
    outside = GUIDE.read_text(encoding="utf-8").replace(written, "").split("# Which approach should I use?")[1]
    for name in ("CoNLL-2003", "CoNLL-2002", "all-mpnet-base-v2", "2-core"):  # names, not measurements
        outside = outside.replace(name, "")
    assert not re.search(r"\d", outside), "a number outside the generated table of the guide"


def test_the_readme_results_numbers_are_the_reports():
    """The README's hand-written "Results" paragraph cannot drift from docs/results.md: each "mean ± sd" and each
    bootstrap "difference F1 [low, high]" it quotes is in the generated report as written (its † / ‡ aside), every other number too."""
    section = (
        README.read_text(encoding="utf-8")
        .split("\n## Results\n")[1]
        .split("\n## ")[0]
        .replace("−", "-")
        .replace("\n", " ")
    )
    report = generated_report()
    intervals = INTERVAL.findall(section)
    spreads = re.findall(r"\d+\.\d ± \d+\.\d", section)
    assert intervals and spreads
    missing = [f"{d} [{lo}, {hi}]" for d, lo, hi in intervals if f"{d} [{lo}, {hi}]" not in report]
    missing += [s for s in spreads if s not in report]
    quoted = set(re.findall(r"\d+\.\d+", section))
    missing += sorted(n for n in quoted if not re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", report))
    assert not missing, f"README.md's Results quote numbers docs/results.md does not have: {missing}"


def test_the_docs_spreads_and_intervals_are_the_reports():
    """Every "mean ± sd" (one decimal, F1) and every bootstrap "difference F1 [low, high]" that the hand-written
    docs quote is in a generated report: docs/results.md or the generated guide (docs/which-approach.md)."""
    from eer_benchmark.report.guide import region

    generated = generated_report() + region(GUIDE.read_text(encoding="utf-8"))
    missing = []
    for page in sorted((REPO / "docs").glob("*.md")):
        if page.name in ("results.md", GUIDE.name):
            continue
        text = page.read_text(encoding="utf-8").replace("−", "-").replace("\n", " ")
        quoted = re.findall(r"(?<![\d.])\d+\.\d ± \d+\.\d(?![\d])", text)
        quoted += [f"{d} [{lo}, {hi}]" for d, lo, hi in INTERVAL.findall(text)]
        missing += [f"{page.name}: {q}" for q in quoted if q not in generated]
    assert not missing, (
        f"the docs quote numbers that no generated report has (rerun the render, then fix the text): {missing}"
    )


def test_the_control_constants_table_is_what_its_csv_says():
    """docs/data.md's table of the binding control's constants (c, eta) is what
    ``eer_benchmark.report.control_study`` renders from docs/results/control_constants.csv, and the CSV's
    rows under the package's default constants are the benchmark plan's runs."""
    from eer_benchmark.report.control_study import read_csv, region, table_markdown
    from eer_plugin.core.ratio_control import DEFAULT_PRICE_PENALTY, DEFAULT_PRICE_RATE

    written = region((REPO / "docs" / "data.md").read_text(encoding="utf-8"))
    assert written is not None, "docs/data.md lost the markers of its control-constants table"
    rows = read_csv((REPO / "docs" / "results" / "control_constants.csv").read_text(encoding="utf-8"))
    assert written == table_markdown(rows), (
        "docs/data.md's table is stale: rerun python -m eer_benchmark.report.control_study"
    )
    default = [r for r in rows if (float(r["c"]), float(r["eta"])) == (DEFAULT_PRICE_PENALTY, DEFAULT_PRICE_RATE)]
    assert len(default) == 5 and {r["source"] for r in default} == {"benchmark plan"}


def test_the_speed_report_carries_issue_52s_figures_under_stable_keys():
    """``benchmarks/speed_report.json`` holds issue 52's figures where a script can read them: ``int8``,
    ``step_breakdown``, ``sequential_ops`` and, once measured on a GPU, ``gpu`` (the path ``auto`` takes there)."""
    import json

    report = json.loads((REPO / "benchmarks" / "speed_report.json").read_text())
    assert {"speedup", "f1_fp32", "f1_int8"} <= set(report["int8"])
    assert 0 < report["int8"]["f1_int8"] <= 100 and 0 < report["int8"]["f1_fp32"] <= 100
    ops = report["sequential_ops"]
    assert ops["n"] == 512 and ops["before"] > ops["after"] > 0
    for encoder in ("all-MiniLM-L6-v2", "all-mpnet-base-v2"):
        shares = report["step_breakdown"][encoder]["cpu"]["train_shares"]
        assert {"encoder_forward_backward", "loss", "optimizer"} <= set(shares)
    gpu = report["gpu"]
    assert {"device", "torch", "cuda", "loss_and_decoding_over_encoder", "dev_pass_over_encoder_forward"} <= set(gpu)
    rows = [devices["gpu"] for e, devices in report["step_breakdown"].items() if e != "measured" and "gpu" in devices]
    assert gpu == _speed_report().gpu_summary(rows)


def test_a_merged_gpu_row_sets_the_gpu_figures_of_the_path_auto_takes(tmp_path):
    """Merging a GPU's breakdown rows: ``gpu`` takes each encoder's fused-path figures where the row measured
    them (``auto`` takes the fused kernels on CUDA), the row's own otherwise, and the larger of the encoders'."""
    speed_report = _speed_report()

    def row(encoder, path, loss, dev, fused=None):
        entry = {"encoder": encoder, "device_name": "GPU X", "torch": "2.x", "cuda": "13.0", "crf_path": path}
        entry.update(loss_and_decoding_over_encoder=loss, dev_pass_over_encoder_forward=dev)
        entry["measured"] = {"date": "today"}
        if fused:
            entry["fused_path"] = {
                "loss_and_decoding_over_encoder": fused[0],
                "dev_pass_over_encoder_forward": fused[1],
            }
        return entry

    report = {"step_breakdown": {"small": {"cpu": {}}}}
    other = {"step_breakdown": {"small": {"gpu": row("small", "scan", 1.3, 3.6, fused=(0.4, 1.9))}}}
    speed_report.merge_breakdown(report, other)
    assert report["gpu"]["crf_path"] == "fused"
    assert (report["gpu"]["loss_and_decoding_over_encoder"], report["gpu"]["dev_pass_over_encoder_forward"]) == (
        0.4,
        1.9,
    )
    other = {"step_breakdown": {"large": {"gpu": row("large", "fused", 0.2, 2.5)}}}
    speed_report.merge_breakdown(report, other)
    assert report["step_breakdown"]["small"]["cpu"] == {}  # other rows stay
    assert (report["gpu"]["loss_and_decoding_over_encoder"], report["gpu"]["dev_pass_over_encoder_forward"]) == (
        0.4,
        2.5,
    )
    assert set(report["gpu"]["encoders"]) == {"small", "large"} and report["gpu"]["device"] == "GPU X"
