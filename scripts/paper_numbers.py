"""Writes the paper's numbers that the benchmark report sets beside its own (the benchmark table, the
EER hyperparameter table, the sentences on settings and convergence) from the paper's LaTeX source
into ``eer_benchmark/analyse/paper_numbers.json`` (package data), so that the report needs no paper:

    python scripts/paper_numbers.py ../shared/paper/eer-paper.tex [-o JSON]

``tests_benchmark/test_benchmark_paper.py`` checks the committed file against the source when ``../shared`` is present."""

import argparse
import json
import sys
from pathlib import Path

from eer_benchmark.analyse.paper import PAPER_NUMBERS, numbers_text, paper_numbers
from eer_plugin.common.atomic import atomic_write_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tex", help="the paper's LaTeX source, e.g. ../shared/paper/eer-paper.tex")
    parser.add_argument(
        "-o", "--output", default=str(PAPER_NUMBERS), help="the JSON file to write (default: %(default)s)"
    )
    args = parser.parse_args()
    tex = Path(args.tex)
    if not tex.is_file():
        print(
            f"error: the paper's LaTeX source is not at {tex}; give its path (in the project: ../shared/paper/eer-paper.tex)",
            file=sys.stderr,
        )
        return 2
    data = paper_numbers(tex.read_text())
    if not data["rows"]:
        print(f"error: {tex} has no table \\label{{table:benchmark}} with rows", file=sys.stderr)
        return 2
    atomic_write_text(args.output, numbers_text(data))
    json.loads(Path(args.output).read_text())  # the file reads back
    print(f"wrote {args.output}: {len(data['rows'])} table rows, {len(data['robustness'])} EER hyperparameter settings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
