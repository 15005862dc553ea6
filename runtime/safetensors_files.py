"""A checkpoint's safetensors files, found and read from their headers alone: which files there are (one
`model.safetensors`, a sharded index, or every `*.safetensors`, as Hugging Face and mlx-vlm look for them) and
every tensor's dtype, shape and byte range, checked against its file -- no tensor data is read.

Why a module of its own: the audio checkpoint (runtime/checkpoint.py), the prefill stage, the decoder and its
emulation all find and read tensors this way, whatever schema they then check.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any, NamedTuple

# safetensors' own limit on the JSON header (MAX_HEADER_SIZE in the reference implementation).
MAX_HEADER_BYTES = 100_000_000
INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"

# Byte sizes of the safetensors dtypes (sub-byte float types are sized in bits: see _byte_size).
_DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "I64": 64,
    "U64": 64,
    "F64": 64,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
}


class CheckpointError(ValueError):
    """The checkpoint cannot be used (base class of every checkpoint error: this module's and runtime/checkpoint.py's)."""


class CheckpointFormatError(CheckpointError):
    """A file is missing, truncated or corrupt, or the index / quantization block is malformed."""


class TensorInfo(NamedTuple):
    """Where one tensor lives: `offsets` is its absolute [begin, end) byte range in `file`."""

    file: Path
    dtype: str
    shape: tuple[int, ...]
    offsets: tuple[int, int]

    @property
    def nbytes(self) -> int:
        return self.offsets[1] - self.offsets[0]


def _byte_size(dtype: str, shape: tuple[int, ...]) -> int | None:
    bits = _DTYPE_BITS.get(dtype)
    if bits is None:
        return None
    total = math.prod(shape) * bits
    return (total + 7) // 8


def _no_duplicate_keys(path: Path):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise CheckpointFormatError(f"{path}: corrupt safetensors header: key {key!r} appears twice")
            out[key] = value
        return out

    return hook


def read_safetensors_header(path: str | Path) -> dict[str, TensorInfo]:
    """Every tensor of one safetensors file, from its header alone (no tensor data is read).

    Checks that the header length fits the file (and safetensors' 100 MB limit), that the header is a
    JSON object, and that each tensor's byte range lies inside the file and matches dtype x shape.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointFormatError(
                    f"{path}: not a safetensors file ({size} bytes, shorter than the 8-byte header length)"
                )
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_BYTES:
                raise CheckpointFormatError(
                    f"{path}: corrupt safetensors header: header length {n} exceeds the {MAX_HEADER_BYTES}-byte limit"
                )
            if n > size - 8:
                raise CheckpointFormatError(
                    f"{path}: truncated or corrupt safetensors file: header length {n} "
                    f"exceeds the {size - 8} bytes after the length field"
                )
            raw = f.read(n)
    except OSError as exc:
        raise CheckpointFormatError(f"{path}: cannot read: {exc}") from None
    if len(raw) != n:
        raise CheckpointFormatError(f"{path}: truncated safetensors header ({len(raw)} of {n} bytes)")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointFormatError(f"{path}: corrupt safetensors header: not valid UTF-8 JSON ({exc})") from None
    if not isinstance(header, dict):
        raise CheckpointFormatError(f"{path}: corrupt safetensors header: expected a JSON object")
    data_start, data_size = 8 + n, size - 8 - n
    tensors: dict[str, TensorInfo] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        where = f"{path}: tensor {name!r}"
        if not isinstance(entry, dict):
            raise CheckpointFormatError(f"{where}: corrupt header entry (expected an object)")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(dtype, str):
            raise CheckpointFormatError(f"{where}: corrupt header entry: dtype {dtype!r}")
        if not (
            isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
        ):
            raise CheckpointFormatError(f"{where}: corrupt header entry: shape {shape!r}")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
        ):
            raise CheckpointFormatError(f"{where}: corrupt header entry: data_offsets {offsets!r}")
        begin, end = offsets
        if not 0 <= begin <= end:
            raise CheckpointFormatError(f"{where}: corrupt header entry: data_offsets {offsets}")
        if end > data_size:
            raise CheckpointFormatError(
                f"{where}: truncated or corrupt file: data ends at byte {data_start + end} "
                f"but the file has {size} bytes"
            )
        shape_t = tuple(shape)
        want = _byte_size(dtype, shape_t)
        if want is not None and want != end - begin:
            raise CheckpointFormatError(
                f"{where}: corrupt header entry: {dtype} {list(shape_t)} needs {want} bytes, "
                f"data_offsets {offsets} span {end - begin}"
            )
        tensors[name] = TensorInfo(path, dtype, shape_t, (data_start + begin, data_start + end))
    return tensors


def _shard_path(directory: Path, index_path: Path, name: Any) -> Path:
    if not isinstance(name, str) or not name or Path(name).is_absolute() or ".." in Path(name).parts:
        raise CheckpointFormatError(f"{index_path}: weight_map names an invalid shard file {name!r}")
    return directory / name


def find_safetensors_files(directory: str | Path) -> tuple[list[Path], dict[str, str] | None, Path | None]:
    """(files, weight_map or None, index path or None), as Hugging Face / mlx-vlm look for them."""
    directory = Path(directory)
    single, index_path = directory / SINGLE_NAME, directory / INDEX_NAME
    if single.is_file():
        return [single], None, None
    if index_path.is_file():
        try:
            index = json.loads(index_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CheckpointFormatError(f"{index_path}: cannot read the shard index: {exc}") from None
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict) or not all(isinstance(k, str) for k in weight_map):
            raise CheckpointFormatError(f"{index_path}: expected an object with a 'weight_map' of tensor -> shard file")
        files: list[Path] = []
        for shard in weight_map.values():
            path = _shard_path(directory, index_path, shard)
            if path not in files:
                files.append(path)
        missing = [p.name for p in files if not p.is_file()]
        if missing:
            raise CheckpointFormatError(
                f"{index_path}: lists shard file(s) that do not exist in {directory}: " + ", ".join(missing)
            )
        return sorted(files), dict(weight_map), index_path
    files = sorted(p for p in directory.glob("*.safetensors") if p.is_file())
    if not files:
        raise CheckpointFormatError(f"{directory}: no {SINGLE_NAME}, {INDEX_NAME} or *.safetensors file")
    return files, None, None
