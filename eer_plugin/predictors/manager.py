"""``allennlp predict`` that survives bad input lines, numbers them and reports them in its exit status.

AllenNLP 2.10's ``_PredictManager`` (``allennlp/commands/predict.py``) reads the input lines, skips
the blank ones, calls the predictor's ``load_line`` on each of the others, groups them into batches
of ``--batch-size`` for ``predict_batch_json`` and writes ``dump_line`` of every result. A line
that ``load_line`` or the predictor cannot handle raises, which ends the whole run (the documents
after it are never written) with a traceback that names no line.

:class:`LineReportingPredictManager` changes that for predictors that declare
``reports_bad_lines = True`` (the ``eer_tagger`` predictor; any other predictor runs exactly as in
AllenNLP): it gives every loaded line its 1-based line number in the input (``LINE_KEY`` in the
JSON object, blank lines counted), the predictor answers a bad line with an error record (see
:mod:`eer_plugin.predictors.tagger`), and after the last line, when any line failed, it prints how
many to stderr and exits with status 1. :func:`install_predict_manager` (called when the plugin is
imported) puts it in place of ``allennlp.commands.predict._PredictManager``, which ``allennlp
predict`` looks up when it runs.
"""
import sys
from typing import Iterator

from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.common.util import JsonDict
from allennlp.commands import predict as allennlp_predict

#: Key of the input line number in a loaded JSON object (removed before the document is read).
LINE_KEY = "_eer_line"


class LineReportingPredictManager(allennlp_predict._PredictManager):
    """See the module docstring."""

    def _reports(self) -> bool:
        return self._dataset_reader is None and bool(getattr(self._predictor, "reports_bad_lines", False))

    def _get_json_data(self) -> Iterator[JsonDict]:
        if not self._reports():
            yield from super()._get_json_data()
            return
        if self._input_file == "-":
            yield from self._numbered(sys.stdin)
        else:
            with open_compressed(cached_path(self._input_file)) as lines:
                yield from self._numbered(lines)

    def _numbered(self, lines) -> Iterator[JsonDict]:
        for number, line in enumerate(lines, 1):
            if line.isspace():
                continue
            data = self._predictor.load_line(line)
            data[LINE_KEY] = number
            yield data

    def run(self) -> None:
        failed = getattr(self._predictor, "failed_lines", None)
        before = len(failed) if self._reports() and failed is not None else 0
        super().run()
        if self._reports() and failed is not None and len(failed) > before:
            count = len(failed) - before
            shown = ", ".join(str(line) for line in failed[before:][:20]) + (", ..." if count > 20 else "")
            print(f"eer_tagger: {count} input line(s) failed (lines {shown}); the others were tagged",
                  file=sys.stderr, flush=True)
            raise SystemExit(1)


def install_predict_manager() -> None:
    """Makes ``allennlp predict`` use :class:`LineReportingPredictManager` (idempotent)."""
    if allennlp_predict._PredictManager is not LineReportingPredictManager:
        allennlp_predict._PredictManager = LineReportingPredictManager  # type: ignore[misc]
