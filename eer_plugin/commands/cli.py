"""The ``eer-ner`` command: AllenNLP's command line with this plugin registered, from any directory.

``allennlp`` finds plugin subcommands through a ``.allennlp_plugins`` file in the working directory
(or ``--include-package``, which only helps subcommands it already knows), so ``allennlp
eer-simulate`` works only in the repository root. ``eer-ner`` (installed as a console script by
``setup.py``) imports :mod:`eer_plugin` first (readers, models, predictors, the ``eer_atomic``
checkpointer, the archive checks, and the subcommands ``eer-simulate``, ``tune-o-cost``, ``cbl``,
``eer-benchmark``, ``eer-inspect``, ...), then runs AllenNLP's own ``main``: every ``allennlp`` subcommand (``train``,
``evaluate``, ``predict``, ...) plus ours, with the same arguments::

    eer-ner train eer_short.jsonnet -s runs/eer   # a packaged config, by name (eer_plugin/runtime/config_files.py)
    eer-ner eer-simulate --help
    eer-ner evaluate runs/eer/model.tar.gz test.txt

``python -m eer_plugin.commands.cli`` does the same. An error caused by the input
(:class:`eer_plugin.runtime.errors.UserError`: a missing or unsafe archive, an unknown entity type, ...)
is one line on stderr and exit status 1, and so is a missing input file.
"""
import os
import sys
from typing import Optional, Sequence


#: the entry point group of subcommands that the plugin's import does not register (``eer-ner serve``: setup.py)
SUBCOMMAND_GROUP = "eer_ner.subcommands"


def load_subcommand_entry_points() -> None:
    """Imports each module of :data:`SUBCOMMAND_GROUP`, which registers its subcommand."""
    from importlib.metadata import entry_points

    for entry_point in entry_points(group=SUBCOMMAND_GROUP):
        entry_point.load()


def main(argv: Optional[Sequence[str]] = None) -> int:
    import eer_plugin  # noqa: F401  (registers every component and subcommand of the plugin)
    from allennlp.commands import main as allennlp_main

    load_subcommand_entry_points()

    from eer_plugin.runtime.errors import INPUT_ERROR, UserError, print_error

    if argv is not None:  # AllenNLP's parser reads sys.argv
        sys.argv = ["eer-ner", *argv]
    try:
        allennlp_main(prog="eer-ner")
    except UserError as error:
        print_error(error)
        return INPUT_ERROR
    except FileNotFoundError as error:  # AllenNLP's cached_path: e.g. a predict input file that is not there
        print_error(f"{error} (relative paths start in {os.getcwd()})")
        return INPUT_ERROR
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
