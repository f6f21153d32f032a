"""``eer-export``'s run: predictions -> an annotation tool's import file, the output checked first (the output
policy, :mod:`eer_plugin.common.outputs`; brat's is a new directory) and the options checked against the
format (only Label Studio takes any)."""

from typing import Tuple

from eer_plugin.common.outputs import check_outputs
from eer_plugin.corpus.exporters import export
from eer_plugin.corpus.exporters.brat import check_output_directory
from eer_plugin.corpus.formats import PathLike

#: the format that takes options (their defaults: the signature of :func:`eer_plugin.corpus.exporters.label_studio.write`)
OPTIONS_FORMAT = "label-studio"


class ExportArgumentError(ValueError):
    """An option that does not belong to the chosen format."""


def export_file(format: str, predictions: PathLike, output: PathLike, **given) -> Tuple[int, int, int]:
    """Checks the output, then writes ``predictions`` as ``format`` to ``output`` with the ``given`` options
    (None: not given, the format's own default; any other for a format other than :data:`OPTIONS_FORMAT` is an
    :class:`ExportArgumentError` naming its flags); returns (documents, spans, error records skipped)."""
    if format == "brat":
        check_output_directory(output)
    else:
        check_outputs([("PREDICTIONS", predictions)], [("OUT", output)])
    options = {key: value for key, value in given.items() if value is not None}
    if options and format != OPTIONS_FORMAT:
        flags = ", ".join("--" + key.replace("_", "-") for key in options)
        raise ExportArgumentError(f"{flags}: option(s) of the {OPTIONS_FORMAT} format, not of {format}")
    return export(format, predictions, output, **options)
