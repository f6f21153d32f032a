"""The records of a benchmark's finished runs, kept in one JSON-lines file across sessions
(``docs/results/records.jsonl``, written and read by ``benchmarks/results.sh``).

A record is what the report reads of a finished run (its ``DONE`` marker, ``result.json``, the
per-document counts, the epoch metrics, the ratio start and estimate, the tuned O-cost, CBL's rounds)
and the statistics of the simulated data: no model, checkpoint or log. One line per directory of the
benchmark directory, sorted by its path, so a diff shows which runs changed::

    {"dir": "runs/eng-c/EE/eer_short/all-MiniLM-L6-v2/seed0", "files": {"DONE": "...", "result.json": "..."}}

``files`` maps a path inside that directory to the file's text, byte for byte. :func:`save` adds the
finished runs of a benchmark directory to the file (a run in the benchmark directory replaces its
line; data statistics are merged file by file), written atomically; :func:`restore` writes the files
back into a benchmark directory where they are missing (never over an existing file; a run's ``DONE``
last), so a later session on a fresh clone goes on with the runs that are missing (the command line is
:mod:`eer_benchmark.commands.eer_records`; ``python -m eer_benchmark.run.records`` runs it too)::

    eer-ner eer-records save OUTDIR docs/results/records.jsonl
    eer-ner eer-records restore docs/results/records.jsonl OUTDIR

The same ``save`` turns a tree of records in the benchmark directory's layout (``runs/``, ``data/``)
into the file."""

import fnmatch
import json
import os
from pathlib import Path, PurePosixPath
from typing import Dict, List

from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.corpus import strict_json

#: the files of a finished run that the report and the resume read (``metrics*.json``: the final metrics and each epoch's)
RUN_FILES = (
    "DONE",
    "result.json",
    "doc_counts.json",
    "metrics*.json",
    "ratio_init.json",
    "ratio_estimate.json",
    "o_cost.json",
    "cbl_rounds.json",
)
#: the statistics of the simulated data (``data/<dataset>/<data>/seed<k>.stats.json``)
DATA_FILES = ("*.stats.json",)
DONE = "DONE"
#: directories of the benchmark directory that hold no records
SKIPPED = ("logs",)

Records = Dict[str, Dict[str, str]]  # directory (relative, POSIX) -> {path inside it: text}


class RecordsError(ValueError):
    """A records file that cannot be read (truncated, edited by hand) or names a path outside the benchmark directory."""


def _matches(name: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _read_text(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:  # newline="": the text byte for byte
        return handle.read()


def collect(outdir: Path) -> Records:
    """The records of the finished runs (directories with a ``DONE`` marker) and of the data statistics
    in the benchmark directory ``outdir``; a finished run inside another one's directory has its own record."""
    runs: Records = {}
    data: Records = {}
    for root, dirs, files in os.walk(outdir):
        here = Path(root)
        if here == outdir:
            dirs[:] = [d for d in dirs if d not in SKIPPED]
        dirs.sort()
        rel = here.relative_to(outdir).as_posix()
        if DONE in files:
            runs[rel] = {}
            for sub_root, sub_dirs, sub_files in os.walk(here):
                sub = Path(sub_root)
                if sub != here and (sub / DONE).exists():
                    sub_dirs[:] = []
                    continue
                for name in sub_files:
                    if _matches(name, RUN_FILES):
                        runs[rel][(sub / name).relative_to(here).as_posix()] = _read_text(sub / name)
        stats = sorted(name for name in files if _matches(name, DATA_FILES))
        if stats and rel not in runs:
            data[rel] = {name: _read_text(here / name) for name in stats}
    return {**data, **runs}


def _checked_path(text, source: str, what: str) -> PurePosixPath:
    path = PurePosixPath(text) if isinstance(text, str) else None
    if path is None or not text or path.is_absolute() or ".." in path.parts:
        raise RecordsError(f"{source}: {what} {text!r} is not a relative path inside the benchmark directory")
    return path


def read_records(path: Path) -> Records:
    """The records of ``path``; a :class:`RecordsError` names the line that cannot be read."""
    records: Records = {}
    expected = 'one JSON object per line, {"dir": "<path>", "files": {"<name>": "<text>", ...}}'
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                entry = strict_json.loads(line)
            except strict_json.JsonError as error:
                raise RecordsError(
                    f"{where}: not a complete JSON line ({error}); expected {expected}. "
                    "The file is truncated or was edited by hand: restore it from git (git checkout -- FILE)"
                ) from None
            if not isinstance(entry, dict) or set(entry) != {"dir", "files"} or not isinstance(entry["files"], dict):
                raise RecordsError(f"{where}: expected {expected}, got {line.strip()[:80]!r}")
            directory = str(_checked_path(entry["dir"], where, "dir"))
            if directory in records:
                raise RecordsError(f"{where}: directory {directory!r} has a record already (one line per directory)")
            for name, text in entry["files"].items():
                _checked_path(name, where, "file")
                if not isinstance(text, str):
                    raise RecordsError(f"{where}: the text of {name!r} is no JSON string")
            records[directory] = entry["files"]
    return records


def write_records(path: Path, records: Records) -> None:
    """``records`` as JSON lines sorted by directory (files sorted by name), written atomically."""
    lines = [
        json.dumps({"dir": directory, "files": dict(sorted(records[directory].items()))}, ensure_ascii=False) + "\n"
        for directory in sorted(records)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(lines))


def save(outdir: Path, path: Path) -> Records:
    """Adds the records of the benchmark directory ``outdir`` to the file ``path`` (made when missing):
    a finished run's record replaces the file's line of that directory, data statistics are merged file
    by file. Returns what was collected from ``outdir``."""
    records = read_records(path) if path.exists() else {}
    found = collect(outdir) if outdir.is_dir() else {}
    if not found and not path.exists():
        return found  # nothing to keep: no empty file
    for directory, files in found.items():
        records[directory] = files if DONE in files else {**records.get(directory, {}), **files}
    write_records(path, records)
    return found


def restore(path: Path, outdir: Path) -> List[Path]:
    """Writes the files recorded in ``path`` into ``outdir`` where they are missing (an existing file is
    never overwritten; a run's ``DONE`` is written last, atomically like every file). Returns the files written."""
    written = []
    for directory, files in read_records(path).items():
        for name in sorted(files, key=lambda n: n == DONE):
            target = outdir / directory / name
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(target, files[name])
            written.append(target)
    return written


if __name__ == "__main__":  # the entry that scripts used before `eer-ner eer-records`: that command, unchanged
    import runpy

    runpy.run_module("eer_benchmark.commands.eer_records", run_name="__main__", alter_sys=True)
