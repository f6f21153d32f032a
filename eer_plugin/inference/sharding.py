"""Tagging a large input in parallel: split it into shards by line ranges, merge the outputs in order.

``allennlp predict`` is one process. For a corpus too large for one, :func:`split_input` cuts the
JSON-lines input into ``N`` contiguous line ranges with about the same number of documents (non-blank
lines) each, byte for byte (blank and undecodable lines included, so each shard is tagged exactly as
its lines would be in the whole file), and writes a manifest next to them. Every shard is then tagged
by its own ``eer-ner predict`` process, on one machine or many, each with ``--output-file`` (atomic:
the file appears only when its shard is finished; ``--resume`` continues a killed one).
:func:`merge_outputs` concatenates the outputs in shard order into one file, written atomically,
after checking that every output is complete (a JSON output has one line per document of its shard) and
that it is the output of *that* shard: the manifest holds the SHA-256 fingerprint of the input and of every
shard, each shard (next to the manifest) must still have its fingerprint, and every output record of a JSON
output must be the output of its shard's line (:func:`~eer_plugin.inference.documents.output_mismatch`: id and
text or tokens, an error record's line), so parts swapped, one part given twice, or an input edited after the
split stop the merge with one line and nothing is written.
The error records of bad input lines (``{"line": N, ...}``, CoNLL ``# error: line N, ...``) carry line
numbers of the shard; the merge adds the shard's offset, so the merged output is the unsharded
output: byte for byte, but for a span probability's last float32 digit where a CPU's rounding depends on
which documents share a batch.
"""

import hashlib
import json
import os
import re
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Dict, Iterator, List, Sequence

from eer_plugin.common.outputs import check_outputs, remove_stale_temporaries, replacing, writing
from eer_plugin.common.wording import counted
from eer_plugin.core.ranges import is_integer
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.formats.files import SNIFF_BYTES, FormatError, check_input_file, text_codec
from eer_plugin.inference.documents import output_mismatch

MANIFEST_SUFFIX = ".shards.json"
#: the start of an error record: JSON output, CoNLL output (the id's characters read possessively: the engine keeps
#: no state per character, which took 180 bytes for each character of a long id)
_ERROR_LINE = (
    re.compile(r'^\{"line": (\d+)(?=, "id": (?:null|"(?:[^"\\]|\\.)*+"), "error": )'),
    re.compile(r"^# error: line (\d+)(?=, id )"),
)


class ShardError(ValueError):
    """A shard manifest or output that cannot be merged (the message names the file and the fix)."""


def _lines(path: str, mode: str = "r"):
    """The file's lines as ``eer-ner predict`` numbers them (universal newlines), each with its own line
    ending and its bytes kept (``surrogateescape``): written back the same way, they are the same bytes."""
    return open(path, mode, encoding="utf-8", errors="surrogateescape", newline="")


@contextmanager
def _writing_lines(path: str) -> Iterator[IO]:
    """:func:`~eer_plugin.common.outputs.writing` for lines read by :func:`_lines` (same bytes out)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    remove_stale_temporaries(path)
    with replacing(path) as temporary, _lines(temporary, "w") as handle:
        yield handle


def fingerprint(path: str) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _is_document(line: str) -> bool:
    """What ``eer-ner predict`` tags: every line that is not blank."""
    return not line.isspace()


def shard_starts(documents: int, shards: int) -> List[int]:
    """The 0-based document ordinal each shard starts with: ``shards`` contiguous runs of about
    ``documents / shards`` documents (a shard also holds the blank lines after its documents)."""
    if shards < 1:
        raise ShardError(f"--shards must be at least 1, got {shards}")
    if shards > max(documents, 1):
        raise ShardError(
            f"--shards {shards} is more than the {counted(documents, 'document')} of the input: use at most {max(documents, 1)}"
        )
    return [(k * documents) // shards for k in range(shards)]


def split_input(path: str, directory: str, shards: int) -> Dict:
    """Writes ``directory/<stem>.shard-KK-of-NN.jsonl`` and the manifest ``directory/<stem>.shards.json``
    (two passes over the input, nothing held in memory); returns the manifest."""
    try:
        check_input_file(path)  # no such file, a directory, a device or FIFO (/dev/null): named as every reader does
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as err:  # unreadable (permissions)
        raise ShardError(f"{path}: cannot read file: {err.strerror or err}") from None
    except FormatError as err:
        raise ShardError(str(err)) from None
    try:
        codec = text_codec(head, path, whole_file=False)  # predict's input: a stray NUL is its line's error
    except FormatError as err:
        raise ShardError(str(err)) from None
    if codec != "utf-8":  # shards are cut at the line ends of UTF-8 bytes (predict itself reads UTF-16)
        raise ShardError(
            f"{path}: {codec.upper()} text (byte-order mark); eer-shard cuts UTF-8 lines: convert it first: "
            f"iconv -f {codec} -t utf-8 {path} > {Path(path).stem}.utf8.jsonl"
        )
    source = Path(path)
    stem = source.name[: -len(".jsonl")] if source.name.endswith(".jsonl") else source.stem
    names = [f"{stem}.shard-{k:02d}-of-{shards:02d}.jsonl" for k in range(shards)]
    manifest_path = os.path.join(directory, stem + MANIFEST_SUFFIX)
    check_outputs(
        [("INPUT", path)],
        [("manifest", manifest_path)] + [(f"shard {k}", os.path.join(directory, n)) for k, n in enumerate(names)],
    )
    with _lines(path) as handle:
        documents = sum(1 for line in handle if _is_document(line))
    try:
        starts = shard_starts(documents, shards)[1:] + [documents]  # the ordinal that ends each shard
    except ShardError as err:  # the number of shards against the input's documents: name the input
        raise ShardError(f"{path}: {err}") from None
    entries = [{"file": name, "first_line": 0, "lines": 0, "documents": 0} for name in names]
    with _lines(path) as handle, ExitStack() as stack:
        shard, ordinal = 0, 0
        out = stack.enter_context(_writing_lines(os.path.join(directory, names[0])))
        entries[0]["first_line"] = 1
        for number, line in enumerate(handle, 1):
            if _is_document(line):
                if ordinal == starts[shard]:  # this document opens the next shard
                    shard += 1
                    out = stack.enter_context(_writing_lines(os.path.join(directory, names[shard])))
                    entries[shard]["first_line"] = number
                ordinal += 1
                entries[shard]["documents"] += 1
            entries[shard]["lines"] += 1
            out.write(line)
    for entry in entries:
        entry["sha256"] = fingerprint(os.path.join(directory, entry["file"]))
    manifest = {"input": str(source), "input_sha256": fingerprint(path), "documents": documents, "shards": entries}
    with writing(manifest_path) as out:
        out.write(json.dumps(manifest, indent=2) + "\n")
    return {**manifest, "manifest": manifest_path}


def read_manifest(path: str) -> Dict:
    try:
        manifest = strict_json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ShardError(
            f"{path}: not a shard manifest written by eer-shard (cannot read it: {error}); give the .shards.json file eer-shard wrote"
        ) from None
    except strict_json.JsonError as error:
        raise ShardError(
            f"{path}:{error.line}: not a shard manifest written by eer-shard ({error}); give the .shards.json file eer-shard wrote"
        ) from None
    shards = manifest.get("shards") if isinstance(manifest, dict) else None
    if not isinstance(shards, list) or not shards:
        raise ShardError(
            f"{path}: not a shard manifest written by eer-shard (no list of 'shards'); give the .shards.json file "
            "eer-shard wrote"
        )
    for k, entry in enumerate(shards):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("file"), str)
            and isinstance(entry.get("sha256", ""), str)  # manifests of eer-shard before fingerprints have none
            and all(is_integer(entry.get(key)) and entry[key] >= 0 for key in ("first_line", "documents"))
            and entry["first_line"] >= 1
        ):
            raise ShardError(
                f"{path}: not a shard manifest written by eer-shard (shards[{k}] needs a 'file' string, 'first_line' "
                "and 'documents' counts and a 'sha256' string); give the .shards.json file eer-shard wrote"
            )
    return manifest


def shift_error_line(line: str, offset: int) -> str:
    """An output line with the input line number of its error record (if it is one) moved by ``offset``."""
    for pattern in _ERROR_LINE:
        match = pattern.match(line)
        if match:
            return line[: match.start(1)] + str(int(match.group(1)) + offset) + line[match.end(1) :]
    return line


def _check_shard(manifest_path: str, k: int, entry: Dict, part: str, output_format: str) -> None:
    """:class:`ShardError` unless shard ``k`` (next to the manifest) still has the fingerprint the manifest
    recorded and, for JSON output, every record of ``part`` is the output of its line of that shard."""
    shard = os.path.join(os.path.dirname(os.path.abspath(manifest_path)), entry["file"])
    if "sha256" in entry:  # manifests of eer-shard before fingerprints have none
        if not os.path.isfile(shard):
            raise ShardError(
                f"{shard}: shard {k} is missing: eer-merge checks every output against its shard; keep the "
                "shards next to the manifest"
            )
        if fingerprint(shard) != entry["sha256"]:
            raise ShardError(
                f"{shard}: shard {k} changed since eer-shard wrote it (its SHA-256 is not the manifest's): "
                "split the input again and tag the new shards"
            )
    if output_format != "json" or not os.path.isfile(shard):
        return
    with _lines(shard) as inputs, _lines(part) as outputs:
        records = ((place, text) for place, text in enumerate(outputs, 1) if text.strip())
        for number, line in enumerate(inputs, 1):
            if not _is_document(line):
                continue
            place, record = next(records, (None, None))
            try:
                value = strict_json.loads(record) if record is not None else None
            except strict_json.JsonError as error:
                raise ShardError(
                    f"{part}:{place}: not a JSON-lines output of eer-ner predict ({error}); CoNLL output: --format conll"
                ) from None
            reason = output_mismatch(value, line, number)
            if reason is not None:
                raise ShardError(
                    f"{part}: its record for line {number} of shard {k} ({entry['file']}) is not that line's output ({reason}): "
                    "the parts are swapped, repeated or from another input; give each shard's output in shard order"
                )


def merge_outputs(manifest_path: str, parts: Sequence[str], output: str, output_format: str = "json") -> Dict:
    """Concatenates the shards' outputs ``parts`` (in shard order) into ``output``; returns a summary."""
    manifest = read_manifest(manifest_path)
    shards = manifest["shards"]
    if len(parts) != len(shards):
        raise ShardError(
            f"{manifest_path} has {len(shards)} shards but {len(parts)} outputs were given: give one output per shard, in shard order"
        )
    check_outputs(
        [("manifest", manifest_path)] + [(f"output of shard {k}", p) for k, p in enumerate(parts)], [("OUTPUT", output)]
    )
    for k, part in enumerate(parts):
        for j in range(k):
            if os.path.exists(part) and os.path.exists(parts[j]) and os.path.samefile(part, parts[j]):
                raise ShardError(
                    f"{part} is given for shard {j} and for shard {k}: give each shard's own output, in shard order"
                )
    for k, (entry, part) in enumerate(zip(shards, parts)):
        if not os.path.isfile(part):
            raise ShardError(f"{part}: no output of shard {k} ({entry['file']}); tag it with eer-ner predict first")
        if output_format == "json":
            with open(part, "rb") as handle:
                written = sum(1 for line in handle if line.strip())
            if written != entry["documents"]:
                raise ShardError(
                    f"{part}: {written} output lines but shard {k} ({entry['file']}) has {entry['documents']} documents: "
                    "not this shard's output, or not a JSON-lines output (CoNLL output: --format conll)"
                )
    for k, (entry, part) in enumerate(zip(shards, parts)):
        _check_shard(manifest_path, k, entry, part, output_format)
    with _writing_lines(output) as out:
        for entry, part in zip(shards, parts):
            offset = int(entry["first_line"]) - 1
            with _lines(part) as handle:
                for line in handle:
                    out.write(shift_error_line(line, offset) if offset else line)
    return {"output": output, "shards": len(shards), "documents": manifest.get("documents")}
