"""`.npz` / `.npy` bytes as a sequence of pieces that reference the arrays, never a second copy of them.

A server result can be hundreds of megabytes; `np.savez` into a `BytesIO` would build all of it again
in memory for every download.  An `.npz` is a ZIP archive of `.npy` members stored without
compression (what `np.savez` writes), so it can be laid out in advance: for each array a local file
header, its `.npy` header and the array's own memory (a `memoryview`), then the central directory.
The CRC-32 each header needs is computed over the array's memory in place.  `np.load` reads the
result like any `.npz` (the tests check that, and that `zipfile` verifies every CRC).

Archives are plain ZIP (no ZIP64): each member and the whole archive must stay under 4 GiB, far above
any result the server's duration limit allows; a larger one is refused with a clear error.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator, Mapping

import numpy as np

__all__ = ["Pieces", "npy_pieces", "npz_pieces"]

_ZIP_LIMIT = 0xFFFFFFFF
_DOS_DATE = (1 << 5) | 1  # 1980-01-01: fixed, so the same arrays always give the same bytes
_VERSION = 20  # ZIP 2.0: stored members


class Pieces:
    """The bytes of a file as consecutive pieces (bytes or memoryviews of arrays) and their total size."""

    def __init__(self, parts: list) -> None:
        self.parts = [memoryview(p) for p in parts]  # each a flat view of bytes
        self.size = sum(p.nbytes for p in self.parts)

    def chunks(self, chunk_bytes: int = 1 << 20) -> Iterator[memoryview]:
        """The pieces cut into slices of at most `chunk_bytes` (what a socket write should take at once)."""
        for part in self.parts:
            for start in range(0, len(part), chunk_bytes):
                yield part[start : start + chunk_bytes]

    def join(self) -> bytes:
        """All of it in one bytes object (tests and small payloads only)."""
        return b"".join(self.parts)


def _npy_header(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, np.lib.format.header_data_from_array_1_0(array))
    return buf.getvalue()


def _memory(array: np.ndarray) -> memoryview:
    """The array's own bytes, flat (no copy: the array is C-contiguous)."""
    return memoryview(array.reshape(-1).view(np.uint8))


def _contiguous(name: str, array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype.hasobject:
        raise ValueError(f"{name}: object arrays cannot be streamed")
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def npy_pieces(array: np.ndarray) -> Pieces:
    """One array as `.npy` bytes: its header, then its own memory."""
    array = _contiguous("array", array)
    return Pieces([_npy_header(array), _memory(array)])


def npz_pieces(arrays: Mapping[str, np.ndarray]) -> Pieces:
    """Arrays as an uncompressed `.npz` (members ``NAME.npy``), the layout `np.savez` writes."""
    parts: list = []
    central: list[bytes] = []
    offset = 0
    for name, value in arrays.items():
        array = _contiguous(name, value)
        header = _npy_header(array)
        data = _memory(array)
        size = len(header) + data.nbytes
        crc = zlib.crc32(data, zlib.crc32(header))
        filename = f"{name}.npy".encode()
        if size > _ZIP_LIMIT or offset > _ZIP_LIMIT:
            raise ValueError(f"{name}: a result of {size} bytes (at offset {offset}) does not fit a plain ZIP archive")
        local = (
            struct.pack("<4s5H3L2H", b"PK\x03\x04", _VERSION, 0, 0, 0, _DOS_DATE, crc, size, size, len(filename), 0)
            + filename
        )
        central.append(
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                _VERSION,
                _VERSION,
                0,
                0,
                0,
                _DOS_DATE,
                crc,
                size,
                size,
                len(filename),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + filename
        )
        parts += [local, header, data]
        offset += len(local) + size
    directory = b"".join(central)
    if offset + len(directory) > _ZIP_LIMIT:
        raise ValueError(f"a result of {offset} bytes does not fit a plain ZIP archive")
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), offset, 0)
    return Pieces(parts + [directory, end])
