"""The ``eer-ner`` command: AllenNLP's command line with this plugin registered, from any directory.

``allennlp`` finds plugin subcommands through a ``.allennlp_plugins`` file in the working directory
(or ``--include-package``, which only helps subcommands it already knows), so ``allennlp
eer-simulate`` works only in the repository root. ``eer-ner`` (installed as a console script by
``setup.py``) imports :mod:`eer_plugin.allennlp_plugin` first (readers, models, predictors, the ``eer_atomic``
checkpointer, the archive checks, and the subcommands ``eer-simulate``, ``tune-o-cost``, ``cbl``,
``eer-benchmark``, ``eer-inspect``, ...), then runs AllenNLP's own ``main``: every ``allennlp`` subcommand (``train``,
``evaluate``, ``predict``, ...) plus ours, with the same arguments::

    eer-ner train eer_short.jsonnet -s runs/eer   # a packaged config, by name (eer_plugin/runtime/config_files.py)
    eer-ner eer-simulate --help
    eer-ner evaluate runs/eer/model.tar.gz test.txt

The commands of :data:`LIGHT_COMMANDS` (``eer-dictionary``, ``eer-import``, ...) need neither AllenNLP nor
torch: ``eer-ner`` runs them through their own ``main`` without importing either; so is ``eer-ner`` alone or
``eer-ner --help``, the commands by purpose (:mod:`eer_plugin.commands.overview`).

``python -m eer_plugin.cli`` does the same. An error caused by the input
(:class:`eer_plugin.common.errors.UserError`: a missing or unsafe archive, an unknown entity type, ...)
is one line on stderr and exit status 1, and so is a missing input file; Ctrl-C is one line saying the data is
safe (status 130), and so is SIGTERM (status 143) or SIGHUP (129) in any command (the model commands, ``train``, the
data commands alike: :func:`eer_plugin.common.errors.terminate_as_interrupt`), a closed pipe
(``eer-ner eer-inspect FILE | head -2``) ends quietly (status 141), a full disk is one line
(:func:`eer_plugin.common.errors.report`, the one printer). Every such line names the command as argparse's usage
errors do (:func:`command_name`), AllenNLP's ``train``, ``evaluate`` and ``predict`` as eer-ner's own::

    eer-ner eer-split: error: data.jsonl: no such file (relative paths start in /home/me)
    eer-ner train: error: config 'missing.jsonnet' not found: ...
    eer-ner eer-split: error: unrecognized arguments: --bogus      (argparse's, status 2)
    eer-ner predict: interrupted (Ctrl-C): every output is written whole or not at all, ...
"""

import importlib
import sys
from typing import Optional, Sequence

#: the commands that need no AllenNLP (nor torch): ``eer-ner NAME ...`` runs them without importing it (0.36 s
#: to start beside a training, against 8.6 s and 0.48 GB through AllenNLP), with the same arguments, output and
#: exit status; ``--include-package`` on the line takes AllenNLP's path
LIGHT_COMMANDS = {
    "eer-dictionary": "eer_plugin.commands.dictionary",
    "eer-export": "eer_plugin.commands.eer_export",
    "eer-import": "eer_plugin.commands.eer_import",
    "eer-merge": "eer_plugin.commands.shard",
    "eer-settings": "eer_plugin.commands.eer_settings",
    "eer-shard": "eer_plugin.commands.shard",
    "eer-simulate": "eer_plugin.commands.simulate",
    "eer-split": "eer_plugin.commands.split",
}


def command_name(arguments: Sequence[str]) -> str:
    """``eer-ner NAME`` for the command line ``eer-ner NAME ...``, as argparse names the subcommand in its usage
    errors (its ``prog``); ``eer-ner`` before a command is named (``eer-ner --version``)."""
    return f"eer-ner {arguments[0]}" if arguments and not arguments[0].startswith("-") else "eer-ner"


def main(argv: Optional[Sequence[str]] = None) -> int:
    from eer_plugin.common.errors import INPUT_ERROR, print_error, relative_paths_hint, report, terminate_as_interrupt

    arguments = list(sys.argv[1:] if argv is None else argv)
    name = command_name(arguments)  # what every error line starts with: "eer-ner train: error: ..."
    terminate_as_interrupt()  # a command stopped by SIGTERM or SIGHUP removes its temporary files, as after Ctrl-C
    try:
        if arguments in ([], ["-h"], ["--help"]):  # the commands by purpose, without AllenNLP's 7 s start
            from eer_plugin.commands.overview import overview

            print(overview())
            return 0
        if arguments and arguments[0] in LIGHT_COMMANDS and "--include-package" not in arguments:
            from eer_plugin.commands import subcommand

            importlib.import_module(LIGHT_COMMANDS[arguments[0]])
            return subcommand.main_of(arguments[0])(arguments[1:], prog=name)
        from allennlp.commands import main as allennlp_main

        import eer_plugin.allennlp_plugin  # noqa: F401  (registers every component and subcommand of the plugin)

        sys.argv = ["eer-ner", *arguments]  # AllenNLP's parser reads sys.argv
        allennlp_main(prog="eer-ner")
    except FileNotFoundError as error:  # AllenNLP's cached_path: e.g. a predict input file that is not there
        print_error(f"{error}{relative_paths_hint(error.filename)}", name)
        return INPUT_ERROR
    except BaseException as error:  # noqa: BLE001  (the one printer decides; anything else keeps its traceback)
        if isinstance(error, SystemExit):
            raise
        status = report(error, name)
        if status is None:
            raise
        return status
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
