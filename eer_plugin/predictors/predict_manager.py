"""The predict manager of ``allennlp predict``: survives bad input lines, never destroys a file, writes clean
JSON lines, resumes a killed run.

AllenNLP 2.10's ``_PredictManager`` (``allennlp/commands/predict.py``) opens ``--output-file`` for
writing (truncating it) before it reads anything, reads the input lines, calls the predictor's
``load_line`` on each non-blank one, groups them into batches of ``--batch-size`` for
``predict_batch_json`` and writes ``dump_line`` of every result to the file and, unless
``--silent``, ``input N: ...`` / ``prediction: ...`` pairs to stdout. A line that ``load_line`` or
the predictor cannot handle ends the whole run with a traceback.

:class:`LineReportingPredictManager` replaces it (``eer_plugin.commands.predict.install_predict_manager``, one of
the patches the plugin installs when it registers). For every predictor:

* the arguments are checked before anything is opened for writing (:func:`check_arguments`: batch
  size at least 1, input readable, ``--output-file`` not the input, the archive or the weights, see
  :mod:`eer_plugin.common.outputs`), each failure one line (:class:`~eer_plugin.common.errors.UserError`);
* ``--output-file`` is written to a temporary file in its directory and renamed over the output
  only when the run is complete: an error, Ctrl-C or a kill leaves the previous file as it was.

For predictors that declare ``reports_bad_lines = True`` (the ``eer_tagger`` predictor) also:

* every loaded line gets its 1-based line number in the input (``LINE_KEY`` in the JSON object,
  blank lines counted); a line that is not valid UTF-8 becomes an error record (the predictor
  answers every bad line with one, see :mod:`eer_plugin.predictors.tagger`), and after the last
  line, when any line failed, the manager raises a :class:`UserError` saying how many of how many lines of
  which input failed and what became of the others (:func:`failure_summary`): the command's last line,
  ``eer-ner predict: error: ...``, and exit status 1, as every input error;
* stdout gets the output JSON lines themselves (no ``input``/``prediction`` prefixes, no internal
  keys), unless ``--silent``.

Under ``eer-ner predict`` (``install_predict_manager`` also wraps AllenNLP's ``_predict``), the
arguments are checked before the model is loaded, ``--silent`` without ``--output-file`` (which
AllenNLP answers by writing nothing) is a one-line error, and ``--resume`` continues a killed run:
the complete lines of its unfinished (temporary) output are kept, that many non-blank input lines
skipped, and the rest tagged into the same file (costs one pass over the kept lines). Each kept record is
first checked against the input line it claims to tag (:func:`~eer_plugin.inference.documents.output_mismatch`:
its ``id`` and ``text`` or ``tokens``, an error record's line): an input edited since the killed run stops
the command with one line, and the unfinished output is kept as it was.

An input that is a folder is tagged as its ``.txt`` files, one document per file in path order
(:func:`~eer_plugin.inference.documents.folder_input_lines`; the folder ``eer-dictionary`` reads), each with its path as ``id``.

``--output-file`` that is a symbolic link writes its target (atomically); one that is a device, a FIFO or
``/dev/stdout`` is written directly as a stream (:mod:`eer_plugin.common.outputs`); a write that fails (a
full disk, ``/dev/full``) is one line, the temporary file removed.
"""

import io
import os
import re
import sys
from typing import Iterator, Optional

from allennlp.commands import predict as allennlp_predict
from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.common.util import JsonDict

from eer_plugin.common.errors import UserError
from eer_plugin.common.outputs import (
    WRITE_ERRORS,
    abandon,
    check_outputs,
    is_stream,
    publish,
    remove_stale_temporaries,
    stale_temporaries,
    target_of,
    temporary_name,
    write_failure,
)
from eer_plugin.common.wording import counted
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.formats.files import FormatError, check_input_file, open_text, tar_first_member, text_files
from eer_plugin.corpus.formats.office import is_model_member
from eer_plugin.inference.documents import ERROR_KEY, LINE_KEY, UnreadableDocument, folder_input_lines, output_mismatch

_UNDECODABLE = re.compile("[\udc80-\udcff]")  # bytes that are not UTF-8, under errors="surrogateescape"


def _is_local(path: str) -> bool:
    return path != "-" and "://" not in path


def check_arguments(
    input_file: str,
    output_file: Optional[str],
    batch_size: int,
    archive_file: Optional[str] = None,
    weights_file: Optional[str] = None,
) -> None:
    """:class:`UserError` for arguments that cannot work; nothing is opened for writing."""
    if batch_size < 1:
        raise UserError(f"--batch-size must be at least 1, got {batch_size}")
    if _is_local(input_file):
        try:
            if os.path.isdir(input_file):
                text_files(input_file)  # a folder holds at least one .txt file
            else:
                check_input_file(input_file)
                if is_model_member(tar_first_member(input_file) or ""):
                    raise UserError(
                        f"the input {input_file} is a model archive: the model comes first, then the documents: "
                        f"eer-ner predict {input_file} {archive_file or 'INPUT'} ..."
                    )
        except FormatError as error:
            raise UserError(
                f"{error} (expected the input JSON lines file, a folder of .txt files, or - to read stdin)"
            ) from None
    inputs = [
        ("the input", input_file if _is_local(input_file) else None),
        ("the model archive", archive_file),
        ("--weights-file", weights_file),
    ]
    check_outputs(inputs, [("--output-file", output_file)])


#: the longest input line read (characters); a longer one is an error record, read in bounded memory
MAX_LINE = 1 << 24


class _TooLong(str):
    """The stand-in of an input line longer than :data:`MAX_LINE` (not blank: it is a document that failed)."""


_TOO_LONG = _TooLong("(too long)")


def _bounded_lines(handle) -> Iterator[str]:
    """The lines of ``handle`` (each with its line end), a line longer than :data:`MAX_LINE` characters yielded as
    :data:`_TOO_LONG` after it was skipped in bounded memory (``/dev/zero`` piped to stdin never fills the memory)."""
    while True:
        line = handle.readline(MAX_LINE)
        if not line:
            return
        if len(line) == MAX_LINE and not line.endswith(("\n", "\r")):
            while line and not line.endswith(("\n", "\r")):
                line = handle.readline(MAX_LINE)
            yield _TOO_LONG
            continue
        yield line


def _open_input(path: str):
    """The input as text lines (:func:`~eer_plugin.corpus.formats.files.open_text`: gzip, bzip2 or xz; UTF-8 or
    UTF-16/32 by a byte-order mark; a stray NUL byte is its line's error); a file that cannot be read so (zstd,
    zip, UTF-16 without a mark) is a :class:`UserError` with the fix."""
    try:
        return open_text(path, whole_file=False)
    except FormatError as err:
        raise UserError(str(err).replace("eer-ner reads", "eer-ner predict reads")) from None


def _line_label(input_file: str) -> str:
    """What precedes a bad line's number in its stderr message: the input and what its numbers count."""
    if input_file == "-":
        return "<stdin> line"
    if _is_local(input_file) and os.path.isdir(input_file):
        return f"folder {input_file} document"
    return f"{input_file} line"


def failure_summary(failed: list, documents: int, input_file: str) -> str:
    """The error (the last stderr line) of a run in which the lines ``failed`` (their numbers, None when unknown) of the
    ``documents`` non-blank input lines gave error records: how many, which, and what became of the others."""
    count = len(failed)
    unit = _line_label(input_file).rsplit(" ", 1)[1]  # "line", or "document" for a folder's files
    which = f"{unit}{'s' if count > 1 else ''} " + ", ".join(str(line) for line in failed[:20])
    which += ", ..." if count > 20 else ""
    name = "<stdin>" if input_file == "-" else input_file
    if count >= documents:
        many = f"all {count} input {unit}s" if count > 1 else f"the one input {unit}"
        return f"{many} of {name} failed ({which}); nothing was tagged"
    rest = documents - count
    return (
        f"{count} of {counted(documents, 'input ' + unit)} of {name} failed ({which}); "
        f"the other {rest} {'was' if rest == 1 else 'were'} tagged"
    )


class LineReportingPredictManager(allennlp_predict._PredictManager):
    """See the module docstring."""

    def __init__(
        self,
        predictor,
        input_file: str,
        output_file: Optional[str],
        batch_size: int,
        print_to_console: bool,
        has_dataset_reader: bool,
        multitask_head: Optional[str] = None,
        resume: bool = False,
    ) -> None:
        check_arguments(input_file, output_file, batch_size)
        super().__init__(predictor, input_file, None, batch_size, print_to_console, has_dataset_reader, multitask_head)
        self._output_path = output_file
        self._temporary = None
        self._skip, self._kept_failures = 0, []  # --resume: input lines already tagged, and which of them failed
        self._kept = []  # --resume: the kept output records, checked against the input lines they claim to tag
        self._keep_unfinished = False
        self._documents = 0  # non-blank input lines read (those --resume kept included)
        if self._reports():
            self._predictor.line_label = _line_label(input_file)
        if output_file is not None and is_stream(output_file):  # a device, FIFO or stdout: written directly
            if resume:
                raise UserError(
                    f"--resume needs a regular --output-file; {output_file} is a stream (a device, FIFO or stdout)"
                )
            self._output_file = open(output_file, "w", encoding="utf-8")
        elif output_file is not None:
            directory = os.path.dirname(target_of(output_file))
            if directory:
                os.makedirs(directory, exist_ok=True)
            self._temporary = temporary_name(output_file)
            if resume:
                self._adopt_killed_run(output_file)
            remove_stale_temporaries(output_file)
            self._output_file = open(self._temporary, "a" if resume else "w", encoding="utf-8")

    def _adopt_killed_run(self, output_file: str) -> None:
        """``--resume``: the largest unfinished output of a killed run becomes this run's, cut after its
        last complete line; that many non-blank input lines are skipped."""
        if not self._reports() or getattr(self._predictor, "output_format", "json") != "json":
            raise UserError("--resume works with the eer_tagger predictor's JSON output only")
        stale = stale_temporaries(output_file)
        if not stale:
            print(f"eer_tagger: --resume: no unfinished run of {output_file}; tagging from the start", file=sys.stderr)
            return
        end = 0
        with open(stale[0], "rb") as handle:
            for line in handle:
                try:
                    record = strict_json.loads(line.decode("utf-8")) if line.endswith(b"\n") else None
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    break
                self._kept.append(record)
                if "error" in record:
                    self._kept_failures.append(record.get("line"))
                self._skip += 1
                end += len(line)
        os.truncate(stale[0], end)
        os.replace(stale[0], self._temporary)
        print(
            f"eer_tagger: --resume: kept {counted(self._skip, 'output line')} of the killed run; tagging the rest",
            file=sys.stderr,
            flush=True,
        )

    def _reports(self) -> bool:
        return self._dataset_reader is None and bool(getattr(self._predictor, "reports_bad_lines", False))

    def _get_json_data(self) -> Iterator[JsonDict]:
        if not self._reports():
            yield from super()._get_json_data()
            return
        if self._input_file == "-":
            yield from self._numbered(
                _bounded_lines(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape"))
            )
        elif not _is_local(self._input_file):
            with open_compressed(cached_path(self._input_file), encoding="utf-8", errors="surrogateescape") as lines:
                yield from self._numbered(_bounded_lines(lines))
        elif os.path.isdir(self._input_file):
            yield from self._numbered(folder_input_lines(self._input_file))
        else:
            with _open_input(self._input_file) as lines:
                yield from self._numbered(_bounded_lines(lines))

    def _numbered(self, lines) -> Iterator[JsonDict]:
        seen = 0
        for number, line in enumerate(lines, 1):
            if line.isspace():
                continue
            seen += 1
            self._documents = seen
            if seen <= self._skip:  # tagged by the run --resume continues: only if the input is what it tagged
                reason = output_mismatch(self._kept[seen - 1], line, number)
                if reason is not None:
                    self._keep_unfinished = True  # the killed run's output stays for a --resume with its input
                    raise UserError(
                        f"--resume: output line {seen} of the killed run is not the output of {self._input_file} line "
                        f"{number} ({reason}): the input changed since that run. Nothing was written; run without --resume"
                    )
                continue
            bad = None if line is _TOO_LONG or isinstance(line, UnreadableDocument) else _UNDECODABLE.search(line)
            if isinstance(line, UnreadableDocument):
                data = {ERROR_KEY: str(line), "id": line.doc_id}
            elif line is _TOO_LONG:
                data = {
                    ERROR_KEY: f"a line longer than {MAX_LINE} characters: not one input document (read no further than that)"
                }
            elif bad:
                byte = ord(bad.group()) - 0xDC00
                data = {ERROR_KEY: f"not UTF-8 (byte 0x{byte:02x} at column {bad.start() + 1}); save the file as UTF-8"}
            else:
                data = self._predictor.load_line(line)
            data[LINE_KEY] = number
            yield data
        if seen < self._skip:
            raise UserError(
                f"--resume: the killed run wrote {self._skip} output lines, but {self._input_file} has only {seen} "
                "non-blank lines: not the same input. Run without --resume"
            )

    def _maybe_print_to_console_and_file(self, index: int, prediction: str, model_input: Optional[str] = None) -> None:
        if not self._reports():
            super()._maybe_print_to_console_and_file(index, prediction, model_input)
            return
        if self._print_to_console:
            sys.stdout.write(prediction)
        if self._output_file is not None:
            self._output_file.write(prediction)

    def run(self) -> None:
        failed = getattr(self._predictor, "failed_lines", None)
        before = len(failed) if self._reports() and failed is not None else 0
        if failed is not None:
            failed.extend(self._kept_failures)
        try:
            super().run()  # closes the output file
            if self._temporary is not None:
                publish(self._temporary, self._output_path, sync=True)
        except KeyboardInterrupt:  # Ctrl-C: the complete lines so far stay for --resume (a kill leaves them too)
            self._keep_unfinished = True
            raise
        except OSError as error:  # a full disk, /dev/full: one line (the finally removes the temporary file)
            if error.errno not in WRITE_ERRORS or self._output_path is None:
                raise
            raise UserError(str(write_failure(self._output_path, error, stream=self._temporary is None))) from None
        finally:
            if self._output_file is not None and not self._output_file.closed:
                try:
                    self._output_file.close()
                except OSError:  # its data cannot be written (the error being reported): nothing more to do
                    pass
            if self._temporary is not None and os.path.exists(self._temporary):
                if self._keep_unfinished:
                    abandon(self._temporary)  # a stale temporary file: the next --resume adopts it
                else:
                    os.remove(self._temporary)
        if self._reports() and failed is not None and len(failed) > before:
            raise UserError(failure_summary(failed[before:], self._documents, self._input_file))
