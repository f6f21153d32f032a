"""``eer-ner eer-records save OUTDIR FILE`` / ``eer-ner eer-records restore FILE OUTDIR``: the finished runs'
records of a benchmark directory kept in one JSON-lines file across sessions (``docs/results/records.jsonl``,
written and read by ``benchmarks/results.sh``).

The arguments only; the records are :mod:`eer_benchmark.run.records`. A records file that cannot be read
is one ``eer-ner eer-records: error: ...`` line (the command's prog) naming its line, and exit status 1. ``python -m
eer_benchmark.run.records`` (the entry scripts used before this command) runs this command.
"""

import argparse
import sys
from pathlib import Path
from typing import List, Optional

from eer_benchmark.run.records import DONE, RecordsError, restore, save
from eer_plugin.commands import subcommand
from eer_plugin.common.wording import counted

NAME = "eer-records"
DESCRIPTION = "Save the finished runs of a benchmark directory into a records file, or restore them from it."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    commands = parser.add_subparsers(dest="action", required=True, metavar="{save,restore}")
    saving = commands.add_parser("save", help="add the finished runs of OUTDIR to FILE")
    saving.add_argument("outdir", type=Path)
    saving.add_argument("file", type=Path)
    restoring = commands.add_parser(
        "restore", help="write the files recorded in FILE into OUTDIR where they are missing"
    )
    restoring.add_argument("file", type=Path)
    restoring.add_argument("outdir", type=Path)
    return parser


def run(args: argparse.Namespace) -> None:
    if args.action == "save":
        found = save(args.outdir, args.file)
        finished = sum(DONE in files for files in found.values())
        if found:
            print(f"records: {counted(finished, 'finished run')} of {args.outdir} saved in {args.file}")
        else:  # a mistyped OUTDIR said "0 finished runs ... saved" before, as if it had worked
            what = "no finished run nor data statistics" if args.outdir.is_dir() else "is no directory"
            print(
                f"records: nothing saved: {args.outdir} {'holds ' if args.outdir.is_dir() else ''}{what} (give the "
                f"directory eer-benchmark -o wrote); {args.file} is as it was"
            )
    elif args.file.exists():  # no records yet: nothing to restore
        written = restore(args.file, args.outdir)
        print(f"records: {counted(len(written), 'file')} restored from {args.file} into {args.outdir}")


run_or_exit, _main = subcommand.define(
    NAME, DESCRIPTION, add_arguments, run, (RecordsError,), register=__name__ != "__main__"
)


def main(argv: Optional[List[str]] = None, prog: str = NAME) -> int:
    """The command on ``argv``: 0; a records file that cannot be read prints one line and exits with status 1."""
    return _main(argv, prog)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(prog="python -m eer_benchmark.commands.eer_records"))
