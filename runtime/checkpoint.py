"""Open a Gemma 3n checkpoint for the audio stage: find its safetensors files (runtime/safetensors_files.py),
validate the audio schema.

`open_checkpoint(directory)` reads `config.json` and only the *headers* of the safetensors files; it
never touches tensor data.  It then checks the audio tower and audio embedder tensors against the
schema the configuration implies (names, dtypes, shapes; spec numeric-contracts §5), fail-closed:
one `CheckpointSchemaError` lists every missing, unexpected, mistyped and misshapen tensor before
anything is loaded.  Language-model (and vision) tensors in the same files are ignored: their headers
are sanity-checked like every other tensor's, but their data is never read.

Supported layouts (`model.audio_weights`):

* Hugging Face (`model.audio_tower.*`, `model.embed_audio.*`; conv OIHW, depthwise [D, 1, K]), all BF16;
* mlx-vlm (`audio_tower.*`, `embed_audio.*`; conv [O, kt, kf, I], depthwise [D, K, 1]), BF16, where a
  Linear/Embedding weight `X.weight` may be affine-quantized: it is iff `X.scales` exists (the mlx-vlm
  load rule, spec gemma3n-audio §6.3); then `X.weight` is U32 [rows, cols·bits/32] (little-endian
  words, least-significant lane first), `X.scales`/`X.biases` BF16 [rows, cols/group_size], with bits
  and group size from `config.json`'s `quantization` (or `quantization_config`) block.  Conv weights,
  norms and `per_dim_scale` are never quantized.

The files are found as Hugging Face and mlx-vlm look for them: `model.safetensors`, else
`model.safetensors.index.json` (every shard it names must exist), else every `*.safetensors` in the
directory.  A tensor present in two files is an error (an IREE parameter index would silently pick one).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from ..model.audio_config import AudioConfig
from ..model.audio_weights import HF_LAYOUT, MLX_LAYOUT, WeightLayout, WeightSpec, audio_weight_specs
from ..model.checkpoint_config import CheckpointConfig
from .safetensors_files import (
    CheckpointError,
    CheckpointFormatError,
    TensorInfo,
    find_safetensors_files,
    read_safetensors_header,
)

SUPPORTED_BITS = (4, 8)
# numpy dtypes for `read` (safetensors data is little-endian).
_NUMPY_DTYPES: dict[str, np.dtype] = {
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "F16": np.dtype("<f2"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "U32": np.dtype("<u4"),
    "I32": np.dtype("<i4"),
    "U8": np.dtype("u1"),
    "I8": np.dtype("i1"),
    "U16": np.dtype("<u2"),
    "I16": np.dtype("<i2"),
    "I64": np.dtype("<i8"),
    "U64": np.dtype("<u8"),
    "BOOL": np.dtype("?"),
}
# Float dtypes scanned by check_finite: (unsigned view, exponent mask).
_FLOAT_BITS: dict[str, tuple[np.dtype, int]] = {
    "BF16": (np.dtype("<u2"), 0x7F80),
    "F16": (np.dtype("<u2"), 0x7C00),
    "F32": (np.dtype("<u4"), 0x7F800000),
    "F64": (np.dtype("<u8"), 0x7FF0000000000000),
}
_CHUNK_ELEMENTS = 1 << 22


class CheckpointSchemaError(CheckpointError):
    """The audio tensors do not match the schema the configuration implies (every problem listed)."""

    def __init__(
        self, message: str, missing: Sequence[str] = (), unexpected: Sequence[str] = (), mismatched: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.missing = tuple(missing)
        self.unexpected = tuple(unexpected)
        self.mismatched = tuple(mismatched)


class CheckpointNonFiniteError(CheckpointError):
    """An audio tensor holds NaN or Inf."""


# ---------------------------------------------------------------------------------------------- quantization


def _quant_params(block: Any, where: str) -> tuple[int, int]:
    if not isinstance(block, dict):
        raise CheckpointFormatError(f"{where}: expected an object with 'group_size' and 'bits', got {block!r}")
    mode = block.get("mode", "affine")
    if mode != "affine":
        raise CheckpointFormatError(f"{where}: quantization mode {mode!r} is not supported (only 'affine')")
    bits, group = block.get("bits"), block.get("group_size")
    if not isinstance(bits, int) or isinstance(bits, bool) or bits not in SUPPORTED_BITS:
        raise CheckpointFormatError(f"{where}: bits must be one of {SUPPORTED_BITS}, got {bits!r}")
    if not isinstance(group, int) or isinstance(group, bool) or group < 1:
        raise CheckpointFormatError(f"{where}: group_size must be a positive integer, got {group!r}")
    return bits, group


def read_quantization_block(data: Mapping[str, Any], config_path: Path) -> dict[str, Any] | None:
    """The `quantization` (or `quantization_config`) block of the parsed config.json `data` as mlx-vlm
    writes it, or None."""
    blocks = {k: data[k] for k in ("quantization", "quantization_config") if data.get(k) is not None}
    if not blocks:
        return None
    for key, block in blocks.items():
        if not isinstance(block, dict):
            raise CheckpointFormatError(
                f"{config_path}: {key}: expected an object with 'group_size' and 'bits', got {block!r}"
            )
    if len(blocks) == 2:
        a, b = ({f: v.get(f) for f in ("bits", "group_size", "mode")} for v in blocks.values())
        if a != b:
            raise CheckpointFormatError(f"{config_path}: 'quantization' {a} and 'quantization_config' {b} disagree")
    # The values are checked where an audio weight is quantized: a language-model-only setting the
    # audio stage never uses (another bit width, another mode) must not make the checkpoint unusable.
    return blocks["quantization"] if "quantization" in blocks else blocks["quantization_config"]


# ---------------------------------------------------------------------------------------------- schema


def detect_layout(names: Sequence[str], where: str) -> WeightLayout:
    """HF or mlx naming, from which audio prefixes the tensor names use (exactly one must occur)."""

    def has(layout: WeightLayout) -> list[str]:
        return [n for n in names if n.startswith((layout.tower_prefix, layout.embed_prefix))]

    hf, mlx = has(HF_LAYOUT), has(MLX_LAYOUT)
    if hf and mlx:
        raise CheckpointSchemaError(
            f"{where}: audio tensors use both the Hugging Face names ({len(hf)}, e.g. {hf[0]}) and the mlx names "
            f"({len(mlx)}, e.g. {mlx[0]}); a checkpoint must use one layout"
        )
    if not hf and not mlx:
        raise CheckpointSchemaError(
            f"{where}: no audio tensors (expected names starting with {HF_LAYOUT.tower_prefix!r}/"
            f"{HF_LAYOUT.embed_prefix!r} or {MLX_LAYOUT.tower_prefix!r}/{MLX_LAYOUT.embed_prefix!r})"
        )
    return HF_LAYOUT if hf else MLX_LAYOUT


def _fmt_shape(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _other_layout_hint(spec: WeightSpec, found: tuple[int, ...], layout: WeightLayout, cfg: AudioConfig) -> str:
    other = MLX_LAYOUT if layout is HF_LAYOUT else HF_LAYOUT
    for o in audio_weight_specs(cfg, other):
        if o.logical == spec.logical and o.shape == found and o.shape != spec.shape:
            return (
                f" (that is the {other.name} layout's {other.conv_layout if len(found) == 4 else other.depthwise_layout}"
                f" shape; {layout.name} checkpoints store {layout.conv_layout if len(found) == 4 else layout.depthwise_layout})"
            )
    return ""


def _module_quant(block: Mapping[str, Any] | None, module: str, where: str) -> tuple[int, int] | None:
    """(bits, group_size) for one quantized module: a per-module override, else the global values."""
    if block is None:
        return None
    for key in (module, module.removeprefix("model.")):
        override = block.get(key)
        if isinstance(override, dict):
            return _quant_params(override, f"{where}: quantization[{key!r}]")
    return _quant_params(block, f"{where}: quantization")


class Checkpoint:
    """A validated checkpoint: its configuration, layout, audio tensors and the files that hold them."""

    def __init__(
        self,
        directory: Path,
        config: AudioConfig,
        layout: WeightLayout,
        quantization: tuple[int, int] | None,
        tensors: dict[str, TensorInfo],
        specs: list[WeightSpec],
        quantized: tuple[str, ...],
    ) -> None:
        self.directory = directory
        self.config = config
        self.layout = layout
        self.quantization = quantization
        self.tensors = tensors
        self.specs = specs
        self._quantized = quantized
        self._by_logical = {s.logical: s for s in specs}
        self.files: list[Path] = sorted({info.file for info in tensors.values()})

    def __repr__(self) -> str:
        q = "none" if self.quantization is None else f"{self.quantization[0]}-bit/group {self.quantization[1]}"
        return (
            f"Checkpoint({str(self.directory)!r}, layout={self.layout.name}, tensors={len(self.tensors)}, "
            f"files={len(self.files)}, quantization={q})"
        )

    # ------------------------------------------------------------------ schema facts
    def quantized_names(self) -> tuple[str, ...]:
        """Logical names (`model.audio_weights`) of the quantized weights, in schema order."""
        return self._quantized

    def is_quantized(self, logical: str) -> bool:
        return logical in self._quantized

    def schema_lines(self) -> list[str]:
        return [f"{name}:{info.dtype}:{_fmt_shape(info.shape)}" for name, info in self.tensors.items()]

    def schema_digest(self) -> str:
        """sha256 of the ordered `name:dtype:[shape]` lines of the audio tensors (schema order)."""
        return hashlib.sha256("".join(line + "\n" for line in self.schema_lines()).encode()).hexdigest()

    def key(self, name: str) -> str:
        """A checkpoint tensor name, given either it or a logical weight name."""
        if name in self.tensors:
            return name
        spec = self._by_logical.get(name)
        if spec is not None:
            return spec.key
        raise KeyError(f"{name!r} is neither an audio tensor of {self.directory} nor a logical weight name")

    # ------------------------------------------------------------------ data (tests / diagnostics)
    def read(self, name: str) -> np.ndarray:
        """One audio tensor, memory-mapped read-only (BF16 as ml_dtypes.bfloat16, quantized words as uint32)."""
        key = self.key(name)
        return _map(key, self.tensors[key])

    def check_finite(self) -> None:
        """Scan every floating-point audio tensor (chunked, memory-mapped); raise on the first NaN/Inf.

        For quantized weights the BF16 scales and biases are scanned, and their dequantized range
        (|scale|·(2^bits-1) + |bias|) must stay below the BF16 maximum, so no dequantized value can overflow.
        """
        for name, info in self.tensors.items():
            found = _first_non_finite(name, info)
            if found is not None:
                index, value = found
                raise CheckpointNonFiniteError(
                    f"{info.file}: tensor {name} ({info.dtype} {_fmt_shape(info.shape)}) holds {value} at flat "
                    f"index {index} (multi-index {_multi_index(index, info.shape)}); "
                    f"a checkpoint with non-finite weights is refused"
                )
        if self.quantization is None:
            return
        top = (1 << self.quantization[0]) - 1
        limit = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
        for logical in self._quantized:
            base = self._by_logical[logical].key.removesuffix(".weight")
            scales, biases = self.read(base + ".scales"), self.read(base + ".biases")
            bound = np.abs(scales.astype(np.float64)) * top + np.abs(biases.astype(np.float64))
            bad = np.flatnonzero(bound.reshape(-1) > limit)
            if bad.size:
                index = int(bad[0])
                raise CheckpointNonFiniteError(
                    f"{self.tensors[base + '.scales'].file}: quantized weight {base}.weight: group "
                    f"{_multi_index(index, scales.shape)} (flat index {index} of {base}.scales/.biases) can "
                    f"dequantize to a value beyond the BF16 range (|scale|*{top} + |bias| = {bound.reshape(-1)[index]:.4g})"
                )


def _map(name: str, info: TensorInfo) -> np.ndarray:
    """The one place tensor data is touched: a read-only memory map of exactly this tensor's bytes."""
    dtype = _NUMPY_DTYPES.get(info.dtype)
    if dtype is None:
        raise CheckpointError(f"{info.file}: tensor {name}: cannot read dtype {info.dtype}")
    if math.prod(info.shape) == 0:
        return np.empty(info.shape, dtype)
    return np.memmap(info.file, dtype=dtype, mode="r", offset=info.offsets[0], shape=info.shape)


def _multi_index(index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(index, shape))


def _first_non_finite(name: str, info: TensorInfo) -> tuple[int, str] | None:
    if info.dtype not in _FLOAT_BITS or math.prod(info.shape) == 0:
        return None
    view, mask = _FLOAT_BITS[info.dtype]
    flat = _map(name, info).reshape(-1).view(view)
    for start in range(0, flat.size, _CHUNK_ELEMENTS):
        chunk = flat[start : start + _CHUNK_ELEMENTS]
        bad = np.flatnonzero((chunk & view.type(mask)) == view.type(mask))
        if bad.size:
            i = int(bad[0])
            is_nan = bool(int(chunk[i]) & ~mask & ((1 << (8 * view.itemsize - 1)) - 1))
            sign = "-" if int(chunk[i]) >> (8 * view.itemsize - 1) else "+"
            return start + i, "NaN" if is_nan else f"{sign}Inf"
    return None


def _validate(
    cfg: AudioConfig,
    layout: WeightLayout,
    audio: dict[str, TensorInfo],
    qblock: Mapping[str, Any] | None,
    config_path: Path,
) -> tuple[dict[str, TensorInfo], list[WeightSpec], tuple[str, ...], tuple[int, int] | None]:
    specs = audio_weight_specs(cfg, layout)
    missing: list[str] = []
    mismatched: list[str] = []
    expected_names: set[str] = set()
    ordered: dict[str, TensorInfo] = {}
    quantized: list[str] = []
    quant_params: set[tuple[int, int]] = set()
    wrong_float: list[str] = []  # dtypes found where BF16 was expected
    unconfigured: list[str] = []  # quantized weights while config.json has no quantization block
    bad_params: dict[str, list[str]] = {}  # quantization-block problem -> the quantized weights it affects

    def where(info: TensorInfo) -> str:
        return f" (in {info.file.name})"

    def check(name: str, dtype: str, shape: tuple[int, ...], spec: WeightSpec | None = None) -> None:
        expected_names.add(name)
        info = audio.get(name)
        if info is None:
            missing.append(f"{name}: expected {dtype} {_fmt_shape(shape)}")
            return
        ordered[name] = info
        if info.dtype != dtype:
            mismatched.append(f"{name}{where(info)}: expected dtype {dtype}, found {info.dtype}")
        if dtype == "BF16":
            wrong_float.append(info.dtype)
        if info.shape != shape:
            hint = _other_layout_hint(spec, info.shape, layout, cfg) if spec is not None else ""
            mismatched.append(
                f"{name}{where(info)}: expected shape {_fmt_shape(shape)}, found {_fmt_shape(info.shape)}{hint}"
            )

    for spec in specs:
        module = spec.key.removesuffix(".weight") if spec.key.endswith(".weight") else None
        scales = f"{module}.scales" if module else None
        biases = f"{module}.biases" if module else None
        has_q = scales is not None and (scales in audio or biases in audio)
        if not has_q:
            check(spec.key, "BF16", spec.shape, spec)
            continue
        if len(spec.shape) != 2:
            # conv weights and norms are never quantized: their scales/biases are reported as unexpected.
            check(spec.key, "BF16", spec.shape, spec)
            continue
        rows, cols = spec.shape
        try:
            params = _module_quant(qblock, module, config_path.name)
        except CheckpointFormatError as exc:
            bad_params.setdefault(str(exc), []).append(spec.key)
            params = None
        if params is None:
            if qblock is None:
                unconfigured.append(spec.key)
            for n in (spec.key, scales, biases):
                expected_names.add(n)
                if n in audio:
                    ordered[n] = audio[n]
            quantized.append(spec.logical)
            continue
        bits, group = params
        quant_params.add(params)
        quantized.append(spec.logical)
        if cols % group or (cols * bits) % 32:
            mismatched.append(
                f"{spec.key}: quantized, but its {cols} input columns are not a multiple of "
                f"group_size {group} (and of 32/bits = {32 // bits} values per word)"
            )
            for n in (spec.key, scales, biases):
                expected_names.add(n)
                if n in audio:
                    ordered[n] = audio[n]
            continue
        check(spec.key, "U32", (rows, cols * bits // 32))
        check(scales, "BF16", (rows, cols // group))
        check(biases, "BF16", (rows, cols // group))

    unexpected = []
    for name in sorted(set(audio) - expected_names):
        info = audio[name]
        note = ""
        if name.endswith((".scales", ".biases")):
            base = name.rsplit(".", 1)[0] + ".weight"
            spec = next((s for s in specs if s.key == base), None)
            if spec is not None and len(spec.shape) != 2:
                note = " (conv weights, norms and per_dim_scale are never quantized)"
        unexpected.append(
            f"{name}{where(info)}: {info.dtype} {_fmt_shape(info.shape)} is not part of the audio schema{note}"
        )

    if unconfigured:
        mismatched.append(
            f"{config_path.name} has no 'quantization' block (group_size, bits), but "
            f"{len(unconfigured)} weight(s) are quantized (their .scales exist): " + ", ".join(unconfigured)
        )
    for problem, keys in bad_params.items():
        mismatched.append(f"{problem} (needed by {len(keys)} quantized weight(s): {', '.join(keys)})")
    if len(quant_params) > 1:
        mismatched.append(
            f"quantized audio weights use different (bits, group_size): {sorted(quant_params)}; "
            f"one setting for all audio weights is supported"
        )
    if missing or unexpected or mismatched:
        lines = []
        kinds = set(wrong_float)
        if len(kinds) == 1 and kinds & {"F32", "F16", "F64"}:
            lines.append(
                f"{kinds.pop()} checkpoint: the artifact binds the audio weights as BF16 parameters; convert "
                f"the checkpoint's audio weights to BF16 first"
            )
        for title, items in (("missing", missing), ("unexpected", unexpected), ("wrong dtype or shape", mismatched)):
            if items:
                lines.append(f"{len(items)} {title}:")
                lines += [f"  - {item}" for item in items]
        layout_text = f"{layout.name} layout" + (f", quantized {sorted(quant_params)}" if quant_params else "")
        files = sorted({str(i.file) for i in audio.values()})
        raise CheckpointSchemaError(
            f"{config_path.parent}: the audio tensors do not match the schema of its config ({layout_text}; files "
            f"{', '.join(files)}):\n" + "\n".join(lines),
            missing,
            unexpected,
            mismatched,
        )
    quant = next(iter(quant_params)) if quant_params else None
    return ordered, specs, tuple(quantized), quant


# ---------------------------------------------------------------------------------------------- entry point


def open_checkpoint(directory: str | Path) -> Checkpoint:
    """Read config.json and the safetensors headers of a checkpoint; validate the audio schema (fail-closed)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointFormatError(f"{directory}: not a checkpoint directory")
    config = CheckpointConfig.read(directory)
    config_path = config.path
    cfg = config.audio  # ConfigError (a ValueError) names the file
    qblock = read_quantization_block(config.document, config_path)

    files, weight_map, index_path = find_safetensors_files(directory)
    everything: dict[str, TensorInfo] = {}
    duplicates: list[str] = []
    for path in files:
        for name, info in read_safetensors_header(path).items():
            prior = everything.get(name)
            if prior is not None:
                duplicates.append(f"{name}: in {prior.file.name} and {path.name}")
                continue
            everything[name] = info
    if duplicates:
        raise CheckpointFormatError(
            f"{directory}: {len(duplicates)} tensor(s) stored in more than one file:\n"
            + "\n".join(f"  - {d}" for d in duplicates)
        )

    layout = detect_layout(list(everything), str(directory))
    prefixes = (layout.tower_prefix, layout.embed_prefix)
    audio = {n: i for n, i in everything.items() if n.startswith(prefixes)}

    if weight_map is not None and index_path is not None:
        problems = []
        for name, info in audio.items():
            listed = weight_map.get(name)
            if listed is None:
                problems.append(f"{name}: in {info.file.name} but not listed in the index")
            elif directory / listed != info.file:
                problems.append(f"{name}: the index says {listed}, but it is stored in {info.file.name}")
        for name, listed in weight_map.items():
            if name.startswith(prefixes) and name not in everything:
                problems.append(f"{name}: the index says {listed}, but that shard's header has no such tensor")
        if problems:
            raise CheckpointFormatError(
                f"{index_path}: the index and the shards disagree about audio tensors:\n"
                + "\n".join(f"  - {p}" for p in sorted(problems))
            )

    tensors, specs, quantized, quant = _validate(cfg, layout, audio, qblock, config_path)
    return Checkpoint(directory, cfg, layout, quant, tensors, specs, quantized)
