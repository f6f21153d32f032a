"""Runs trained again on another machine (a lent GPU, say) to check that it reproduces them: a block's
runs, or a plan's own (a further corpus's, ``block`` None). Their records are kept in a file of the layout of
``docs/results/records.jsonl`` (``docs/results/device_checks.jsonl``: ``eer-ner eer-records save CHECK_OUTDIR
FILE``; run names differ between corpora, so one file serves every plan); the block's (or corpus's) section of
``docs/results.md`` sets each beside the run of the same name, with the spread of the finished seeds of that
approach on the same data, which says what "within the noise" means."""

import json
import statistics
from pathlib import Path
from typing import Dict, List, Optional

from eer_benchmark.machine import machine_text
from eer_benchmark.plan.approaches import approach_label
from eer_benchmark.report.cells import cell
from eer_benchmark.run.records import DONE, read_records
from eer_benchmark.tables import markdown_table


def read_checks(path: Optional[str]) -> Dict[str, dict]:
    """``runs/<run name>`` -> the ``result.json`` of each finished run in the records file ``path``
    (none without a path); a :class:`~eer_benchmark.run.records.RecordsError` names a bad line."""
    if not path:
        return {}
    records = read_records(Path(path))
    return {
        directory: json.loads(files["result.json"])
        for directory, files in records.items()
        if DONE in files and "result.json" in files
    }


def _run_text(record: Optional[dict]) -> list:
    if not record or record.get("status") != "done":
        return ["not run yet", "–", "–"]
    return [machine_text(record.get("machine")), f"{100 * record['f1']:.1f}", f"{record['seconds'] / 60:.1f}"]


def _seeds_text(seeds: list) -> str:
    if len(seeds) < 2:
        return f"{seeds[0]:.1f} (1 seed)" if seeds else "–"
    return f"{min(seeds):.1f}–{max(seeds):.1f} ({len(seeds)} seeds)"


def reproduction_lines(report, block: Optional[dict], checks: Dict[str, dict], lead: str) -> List[str]:
    """The lines of the runs of ``block`` (None: of the plan outside its blocks) that ``checks`` trained again
    elsewhere, under the paragraph ``lead``: one table row per run (both machines, F1 and minutes, the difference,
    the range of the finished seeds of the same approach, data and setting), then one sentence per approach and
    data with checks of at least two seeds (against the seeds' range and mean); none without such runs."""
    table, verdicts = _reproduction(report, block, checks)
    if not table:
        return []
    return [lead, "", table, "", *(f"- {verdict}" for verdict in verdicts), *([""] if verdicts else [])]


def _spread(values: list) -> str:
    return f"{_seeds_text(values)} (mean {statistics.mean(values):.1f}, sd {statistics.stdev(values):.1f})"


def _verdict(label: str, machine: str, checked: list, seeds: list, dropout: Optional[tuple] = None) -> str:
    """The sentence on one group of checks; ``dropout``: (setting name, F1s) of the block's runs of the same
    approach and data with only the dropout stream changed (the one draw a GPU makes differently), the noise
    the checks are held against as well."""
    inside = _inside(checked, seeds)
    text = (
        f"{label}: {len(checked)} seeds on {machine} {_seeds_text(checked).split(' (')[0]} (mean "
        f"{statistics.mean(checked):.1f}, sd {statistics.stdev(checked):.1f}) against the block's {_spread(seeds)}: "
        f"{inside} of {len(checked)} inside the block's range, so the check "
        f"{'reproduces the block within its seeds' if inside == len(checked) else 'does not reproduce the block within its seeds'}."
    )
    if dropout and len(dropout[1]) >= 2:
        name, other = dropout
        both = seeds + other
        inside = _inside(checked, both)
        text += (
            f" The same seeds on the block's machine with only the dropout stream changed (setting '{name}') ended at "
            f"{_spread(other)}; with the block's runs {min(both):.1f}–{max(both):.1f}, and {inside} of {len(checked)} "
            f"checks inside that range."
        )
    return text


def _inside(values: list, reference: list) -> int:
    """How many of ``values`` lie within the range of ``reference``."""
    return sum(min(reference) <= value <= max(reference) for value in values)


def entries(plan, block: Optional[dict]) -> list:
    """(setting, run) of ``block``'s runs, or (``block`` None) of the plan's runs outside its blocks, an ablation
    run with its setting, every other run with None."""
    if block is not None:
        return [(setting, run) for b, setting, run in plan.block_entries if b is block]
    in_blocks = {run.key for _, _, run in plan.block_entries}
    settings = {run.key: setting for setting, run in plan.ablation_entries}
    return [(settings.get(run.key), run) for run in plan.runs if run.key not in in_blocks]


def _same_setting(entries: list, setting: Optional[dict], run) -> list:
    """The runs of ``entries`` under ``setting`` (None: none) with ``run``'s ratio: the seeds a check is held against."""
    slug = (setting or {}).get("slug")
    return [other for s, other in entries if (s or {}).get("slug") == slug and other.ratio == run.ratio]


def _dropout_spread(report, entries: list, run) -> Optional[tuple]:
    """(name, F1s) of the finished runs of ``run``'s approach and data under the first setting of ``entries`` that
    changes only the dropout stream (:func:`_dropout_settings`); None where there is none."""
    other = next(iter(_dropout_settings([s for s, _ in entries if s])), None)
    if other is None:
        return None
    again, _ = cell(report, _same_setting(entries, other, run), run.approach, run.scenario_name)
    return other["name"], [100 * record["f1"] for record in again.values()]


def _dropout_settings(settings: list) -> list:
    """The ``settings`` that change the dropout stream and nothing else (``EER_DROPOUT_SEED`` alone), each once."""
    found = {}
    for setting in settings:
        if set(setting.get("env") or {}) == {"EER_DROPOUT_SEED"}:
            found.setdefault(setting["name"], setting)
    return list(found.values())


def _reproduction(report, block: Optional[dict], checks: Dict[str, dict]):
    lines, groups = [], {}
    mine = entries(report.plan, block)
    for setting, run in mine:
        check = checks.get(f"runs/{run.rel}")
        if check is None:
            continue
        here = report.records[run.key]
        finished, _ = cell(report, _same_setting(mine, setting, run), run.approach, run.scenario_name)
        seeds = [100 * record["f1"] for record in finished.values()]
        done = here.get("status") == "done"
        inside = "–" if len(seeds) < 2 else ("yes" if min(seeds) <= 100 * check["f1"] <= max(seeds) else "no")
        label = f"{run.scenario_name}{', ' + setting['name'] if setting else ''}, {approach_label(run.approach)}"
        key = (label, machine_text(check.get("machine")))
        if key not in groups:  # the dropout-stream runs once per group, for the checks of runs without a setting
            groups[key] = {
                "checked": [],
                "seeds": seeds,
                "dropout": None if setting else _dropout_spread(report, mine, run),
            }
        group = groups[key]
        group["checked"].append(100 * check["f1"])
        lines.append(
            [
                f"{run.scenario_name}{', ' + setting['name'] if setting else ''}",
                approach_label(run.approach),
                str(run.seed),
                *_run_text(here),
                *_run_text(check),
                f"{100 * (check['f1'] - here['f1']):+.1f}" if done else "–",
                _seeds_text(seeds),
                inside,
            ]
        )
    header = [
        "scenario",
        "approach",
        "seed",
        "machine of the block's run",
        "F1",
        "min",
        "machine of the check",
        "F1",
        "min",
        "Δ F1 (check − block)",
        "block's seeds (F1)",
        "check inside the seeds' range",
    ]
    table = markdown_table(header, lines, ["l", "l", "r", "l", "r", "r", "l", "r", "r", "r", "r", "l"]) if lines else ""
    verdicts = [
        _verdict(label, machine, group["checked"], group["seeds"], group["dropout"])
        for (label, machine), group in groups.items()
        if len(group["checked"]) >= 2 and len(group["seeds"]) >= 2
    ]
    return table, verdicts
