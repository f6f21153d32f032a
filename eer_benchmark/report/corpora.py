"""Further corpora in ``docs/results.md`` (issue 53): the report of another plan (e.g.
``benchmarks/plans/conll_es_minilm.jsonnet``, CoNLL-2002 Spanish) rendered as a section of the main plan's page,
with the paper's column of that corpus beside ours, the paper's claims checked on it, and its ``results.csv``
copied beside the main one (``results/results-<dataset>.csv``) so that the guide covers it. Every number comes
from that plan's run records."""

import os
from pathlib import Path
from typing import Callable, Dict, List, Optional

from eer_benchmark.report.blocks import machines_text
from eer_benchmark.report.claims import claims_paragraph, differences
from eer_benchmark.report.guide import CORPORA, CORPUS_CSV
from eer_benchmark.report.reproduction import reproduction_lines
from eer_benchmark.report.sections import ablations
from eer_plugin.common.atomic import atomic_write_text

#: what the English, uncased encoders imply for a corpus in another language (said in its section)
ENGLISH_ENCODERS = (
    "Our encoders (all-MiniLM-L6-v2, all-mpnet-base-v2) are English and uncased (the paper: multilingual BERT for "
    "its non-English corpora): their vocabulary splits {language} words into more, less meaningful pieces and drops "
    "the capitalisation that marks names, so absolute F1 here sits well below the paper's and below ours on "
    "CoNLL-2003 English. What this block tests is the ordering of the approaches (the paper's claims), not the "
    "absolute numbers."
)
LANGUAGES = {"esp": "Spanish"}


def reader_text(dataset) -> str:
    """The reader options of a data set entry, as a sentence (encoding, sentences per document)."""
    options = dict(dataset.reader)
    said = []
    if "file_encoding" in options:
        said.append(f"its files read as {options['file_encoding']} (named in the plan, not guessed)")
    if "sentences_per_document" in options:
        said.append(
            f"no -DOCSTART- lines: the reader groups {options['sentences_per_document']} consecutive sentences into a "
            "document (CoNLL-2003 English has 14.8 sentences per document, so the EE simulator's cap of 10 entities per "
            "document and the short/shortest variants see documents of about the same length)"
        )
    return "; ".join(said)


def corpus_section(
    report,
    written: Dict[str, str],
    paper,
    dataset_column: Dict[str, str],
    assets: Path,
    comparison: Callable,
    relative: Callable[[str], str] = str,
    checks: Optional[Dict[str, dict]] = None,
    checks_file: Optional[str] = None,
) -> List[str]:
    """The lines of one further corpus's section; copies its ``results.csv`` into ``assets`` for the guide
    (through ``relative``, which makes its paths relative to the repository, as the main one's).
    ``comparison``: :func:`eer_benchmark.report.docs.comparison` (ours beside the paper's column), handed in by it;
    ``checks``: runs trained again on another machine (:func:`~eer_benchmark.report.reproduction.read_checks` of
    ``checks_file``), set beside this corpus's runs of the same name."""
    plan = report.plan
    first = plan.datasets[0].name
    atomic_write_text(str(assets / CORPUS_CSV.format(dataset=first)), relative(Path(written["csv"]).read_text()))
    finished = [record for record in report.records.values() if record.get("status") == "done"]
    done = len(finished)
    where = machines_text(finished)
    corpora = ", ".join(CORPORA.get(d.name, d.name) for d in plan.datasets)
    parts = [
        f"## A second corpus: {corpora}",
        "",
        f"Plan: `{Path(plan.path).as_posix()}` ({plan.name}; its header comment explains every choice), encoder "
        f"{', '.join(plan.encoders)}, seeds {plan.seeds_description()}, every other setting that of the English plan; "
        f"{done} of {len(plan.runs)} runs finished (the others show as not run)"
        + (f". Machines: {where} (minutes per run are that machine's)" if where else "")
        + ".",
        "",
    ]
    for dataset in plan.datasets:
        column = dataset_column.get(dataset.name, dataset.name)
        language = LANGUAGES.get(dataset.name)
        if language:
            parts += [ENGLISH_ENCODERS.format(language=language), ""]
        said = reader_text(dataset)
        if said:
            parts += [f"Data: `{os.path.relpath(dataset.train)}` and its dev and test files, {said}.", ""]
        parts += [comparison(plan, report, paper.rows, dataset.name, column), ""]
        parts += [
            f'The paper\'s claims on {CORPORA.get(dataset.name, dataset.name)} (as in "Ours next to the paper" below, '
            f"the paper's column {column}):",
            "",
            differences(plan, report, paper.rows, dataset.name, column, paper.robustness),
            "",
        ]
        paragraph = claims_paragraph(plan, report, paper.rows, paper.robustness, dataset.name, column)
        parts += [paragraph, ""] if paragraph else []
    ablation = ablations(report)  # the plan's settings on this corpus, as the English plan's section shows its own
    if ablation:
        parts += [f"### Ablations on {corpora}", *ablation[1:]]
    again = reproduction_lines(
        report,
        None,
        checks or {},
        f"Runs of this plan trained on another machine, set beside this block's run of the same name (their "
        f"records: `{checks_file}`; the block's seeds: its finished runs of the same approach, data and setting):",
    )
    parts += [f"### {corpora}: runs trained on another machine", "", *again] if again else []
    return parts
