"""The root of eer-ner's user errors and how one is shown (no AllenNLP, no other eer-ner module).

Every check that fails because of what the user gave it raises a :class:`UserError` (or a kind of it:
:class:`ArchiveError` here, the corpus's ``DataFileError``, the output policy's ``OutputError``, the
runtime's ``UnknownEntityTypeError``). One exit convention for every command: an error in the user's input
is one line written by :func:`print_error` and exit status 1 (:data:`INPUT_ERROR`); a command line that
argparse cannot parse is argparse's own usage message and status 2. Uncaught, a :class:`UserError` is
printed the same way by the excepthook that the AllenNLP plugin installs
(:func:`eer_plugin.runtime.errors.install_excepthook`).
"""
import sys
from typing import Optional

#: the exit status of a command stopped by an error in its input (argparse's usage errors: 2)
INPUT_ERROR = 1


class UserError(Exception):
    """A failure caused by the user's input, explained in one line (``message``, also its ``str``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


class ArchiveError(UserError):
    """A model archive (or exported model directory) that is missing, is no archive, or is unsafe to extract."""


def print_error(error: BaseException, command: Optional[str] = None) -> None:
    """The one error printer: ``error: <message>`` (``<command>: error: <message>`` with ``command``, as
    argparse writes it) on stderr."""
    print(f"{command + ': ' if command else ''}error: {error}", file=sys.stderr)
