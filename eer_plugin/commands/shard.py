"""``eer-ner eer-shard INPUT DIR --shards N`` and ``eer-ner eer-merge MANIFEST OUTPUT PART...``: tag a
large input with several ``eer-ner predict`` processes (or machines) and merge their outputs in order.
The rules are in :mod:`eer_plugin.inference.sharding`; the recipe is in docs/scale-out.md."""

import argparse
import os

from eer_plugin.commands import subcommand
from eer_plugin.commands.defaults import add_option
from eer_plugin.common.outputs import OutputError
from eer_plugin.common.wording import counted
from eer_plugin.inference.sharding import ShardError, merge_outputs, split_input

SPLIT = "eer-shard"
MERGE = "eer-merge"


def add_split_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("input", metavar="INPUT", help="JSON lines to tag (the input of eer-ner predict)")
    parser.add_argument("directory", metavar="DIR", help="where the shards and their manifest (<stem>.shards.json) go")
    parser.add_argument(
        "--shards", type=int, required=True, help="how many shards (contiguous line ranges, about equal in documents)"
    )
    return parser


def run_split(args: argparse.Namespace) -> dict:
    manifest = split_input(args.input, args.directory, args.shards)
    print(
        f"{SPLIT}: {counted(manifest['documents'], 'document')} of {args.input} -> {counted(len(manifest['shards']), 'shard')}, "
        f"manifest {manifest['manifest']}"
    )
    for entry in manifest["shards"]:
        shard = os.path.join(args.directory, entry["file"])
        tagged = shard[: -len(".jsonl")] + ".tagged.jsonl"
        print(
            f"  lines {entry['first_line']}-{entry['first_line'] + entry['lines'] - 1} ({counted(entry['documents'], 'document')}): "
            f"eer-ner predict MODEL {shard} --predictor eer_tagger --output-file {tagged} --silent"
        )
    return manifest


def add_merge_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("manifest", metavar="MANIFEST", help="the .shards.json that eer-shard wrote")
    parser.add_argument("output", metavar="OUTPUT", help="the merged output (written when complete)")
    parser.add_argument("parts", metavar="PART", nargs="+", help="the output of every shard, in shard order")
    add_option(
        parser,
        "--format",
        choices=("json", "conll"),
        default_from=(merge_outputs, "output_format"),
        help="the parts' output format (predict's output_format; json: each part's line count is checked; "
        "default %(default)s)",
    )
    return parser


def run_merge(args: argparse.Namespace) -> dict:
    summary = merge_outputs(args.manifest, args.parts, args.output, args.format)
    print(
        f"{MERGE}: {counted(summary['shards'], 'shard output')} ({counted(summary['documents'], 'document')}) -> {args.output}"
    )
    return summary


run_split_or_exit, split_main = subcommand.define(
    SPLIT,
    "Split JSON lines into N shards by line ranges, to tag them with parallel eer-ner predict runs (eer-merge joins the outputs).",
    add_split_arguments,
    run_split,
    (ShardError, OutputError, OSError),
)
run_merge_or_exit, merge_main = subcommand.define(
    MERGE,
    "Join the eer-ner predict outputs of eer-shard's shards, in order, into one output (as an unsharded run writes it).",
    add_merge_arguments,
    run_merge,
    (ShardError, OutputError, OSError),
)
