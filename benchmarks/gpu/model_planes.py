"""Carry a safetensors file through a size-limited channel: lossless, in pieces, checked on arrival.

fp32 weights barely compress as bytes (zlib: 0.99), but split into byte planes the sign/exponent plane
does (lzma: 0.37), which makes all-mpnet-base-v2's 438 MB into 367 MB. ``pack`` writes the planes as one
blob cut into pieces (the first smaller, to share its transfer with other files); ``unpack`` joins the
pieces, rebuilds the file and refuses it unless its SHA-256 is the original's.

    python benchmarks/gpu/model_planes.py pack MODEL.safetensors OUTDIR --first 27000000 --size 58500000
    python benchmarks/gpu/model_planes.py unpack OUTDIR_OR_PIECES... --output model.safetensors

It needs numpy alone (no eer_plugin, hence its own small atomic write): on the device it runs from
/tmp/pieces before the carried packages are on the path.
"""

import argparse
import hashlib
import lzma
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import List, Sequence

import numpy as np

MAGIC = b"EERPLANES1"
PLANES = 4  # bytes of a float32; the last (little-endian) holds the sign and most of the exponent


class PlanesError(Exception):
    pass


def encode(raw: bytes) -> bytes:
    """The blob: magic, SHA-256 of ``raw``, the part lengths, then the safetensors header and the planes
    (the sign/exponent plane lzma-compressed, the others zlib)."""
    if len(raw) < 8:
        raise PlanesError("not a safetensors file: shorter than its 8-byte header length")
    start = 8 + struct.unpack("<Q", raw[:8])[0]
    body = np.frombuffer(raw, dtype=np.uint8, offset=min(start, len(raw)))
    if start > len(raw) or body.size % PLANES:
        raise PlanesError(f"the tensor data ({body.size} bytes after the header) is not whole float32 values")
    planes = body.reshape(-1, PLANES).T
    parts = [raw[:start]]
    for i in range(PLANES):
        plane = np.ascontiguousarray(planes[i]).tobytes()
        parts.append(lzma.compress(plane, preset=6) if i == PLANES - 1 else zlib.compress(plane, 6))
    head = MAGIC + hashlib.sha256(raw).digest() + struct.pack(f"<{len(parts)}Q", *map(len, parts))
    return head + b"".join(parts)


def decode(blob: bytes) -> bytes:
    """The original file of :func:`encode`'s blob; :class:`PlanesError` when it is cut, altered or not one."""
    if not blob.startswith(MAGIC):
        raise PlanesError("not a planes blob (wrong magic): were the pieces joined in order?")
    pos = len(MAGIC)
    digest = blob[pos : pos + 32]
    pos += 32
    sizes = struct.unpack(f"<{PLANES + 1}Q", blob[pos : pos + 8 * (PLANES + 1)])
    pos += 8 * (PLANES + 1)
    if pos + sum(sizes) != len(blob):
        raise PlanesError(
            f"the blob has {len(blob)} bytes, its header says {pos + sum(sizes)}: a piece is missing or cut"
        )
    parts = []
    for size in sizes:
        parts.append(blob[pos : pos + size])
        pos += size
    try:
        planes = [
            np.frombuffer(lzma.decompress(p) if i == PLANES - 1 else zlib.decompress(p), dtype=np.uint8)
            for i, p in enumerate(parts[1:])
        ]
    except (lzma.LZMAError, zlib.error) as err:
        raise PlanesError(f"a plane does not decompress ({err}): a piece is damaged") from err
    raw = parts[0] + np.stack(planes, axis=1).reshape(-1).tobytes()
    if hashlib.sha256(raw).digest() != digest:
        raise PlanesError("the rebuilt file's SHA-256 differs from the original's: a piece is damaged or out of order")
    return raw


def split(blob: bytes, first: int, size: int) -> List[bytes]:
    """Pieces of ``blob``: the first ``first`` bytes, then ``size`` bytes each."""
    if first <= 0 or size <= 0:
        raise PlanesError("piece sizes must be positive")
    pieces, pos = [blob[:first]], first
    while pos < len(blob):
        pieces.append(blob[pos : pos + size])
        pos += size
    return pieces


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def pieces_of(paths: Sequence[str]) -> List[Path]:
    """The pieces named, or the ``piece-NN`` files of one directory, in order."""
    if len(paths) == 1 and Path(paths[0]).is_dir():
        return sorted(Path(paths[0]).glob("piece-[0-9][0-9]"))
    return [Path(p) for p in paths]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    pack = sub.add_parser("pack", help="MODEL.safetensors -> OUTDIR/piece-00, piece-01, ...")
    pack.add_argument("model")
    pack.add_argument("outdir")
    pack.add_argument("--first", type=int, default=27_000_000, help="bytes of the first piece (default 27 MB)")
    pack.add_argument("--size", type=int, default=58_500_000, help="bytes of each later piece (default 58.5 MB)")
    unpack = sub.add_parser("unpack", help="pieces (or their directory) -> the checked safetensors file")
    unpack.add_argument("pieces", nargs="+")
    unpack.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            out = Path(args.outdir)
            out.mkdir(parents=True, exist_ok=True)
            pieces = split(encode(Path(args.model).read_bytes()), args.first, args.size)
            for i, piece in enumerate(pieces):
                write_atomic(out / f"piece-{i:02d}", piece)
            print(f"{len(pieces)} pieces, {sum(map(len, pieces))} bytes in {out}")
        else:
            paths = pieces_of(args.pieces)
            if not paths:
                raise PlanesError(f"no pieces in {args.pieces}")
            raw = decode(b"".join(p.read_bytes() for p in paths))
            write_atomic(Path(args.output), raw)
            print(f"{args.output}: {len(raw)} bytes, SHA-256 checked")
    except (PlanesError, OSError) as err:
        print(f"model_planes: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
