"""The contract's row reductions as kernels (`reductions_triton.py`): the pinned 32-lane XOR row sum,
and the scaled RMS norm around it in its variants.

One file per schedule block size (32 .. 1024 threads: the contract's `lane_threads`, which the caller
passes); each workgroup runs the schedules of several rows (`ROWS_PER_BLOCK`). File names carry the
schedule's thread count (`t256`), not the launch's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .gemv import MAX_SPLITS
from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

SCHEDULE_THREADS = (32, 64, 128, 256, 512, 1024)  # the block sizes the contract's lane/XOR schedule allows
_ROWS = ("THREADS", "ROWS_PER_BLOCK")

LANE_SUM = KernelSignature(
    source="reductions_triton",
    entry="lane_xor_sum",
    inputs=(Pointer("x", "f32"),),
    output=Pointer("s", "f32"),
    constants=(PushConstant("rows"), PushConstant("width"), PushConstant("reads"), PushConstant("square")),
    constexprs=_ROWS,
)


def _norm(x: str, y: str, residual: bool) -> KernelSignature:
    """An RMS norm of clamp(X) (8-read sum of squares, then the normalization); eps, the clamp limit and the
    residual weight travel as F32 bits, then whether the contract rounds."""
    scalars = (PushConstant("eps_bits", f32=True), PushConstant("clip_bits", f32=True))
    if residual:
        return KernelSignature(
            "reductions_triton",
            "rms_norm_residual",
            inputs=(Pointer("x", x), Pointer("w", "bf16"), Pointer("res", "f32")),
            output=Pointer("y", y),
            constants=(
                PushConstant("rows"),
                PushConstant("width"),
                *scalars,
                PushConstant("weight_bits", f32=True),
                PushConstant("round_bf16"),
            ),
            constexprs=_ROWS,
        )
    return KernelSignature(
        "reductions_triton",
        "rms_norm",
        inputs=(Pointer("x", x), Pointer("w", "bf16")),
        output=Pointer("y", y),
        constants=(PushConstant("rows"), PushConstant("width"), *scalars, PushConstant("round_bf16")),
        constexprs=_ROWS + _NORM_FLAGS,
    )


#: The text decoder's norm of a decode linear's partial sums (`rms_norm_partials`): P [splits, rows, width].
PARTIAL_NORM = KernelSignature(
    "reductions_triton",
    "rms_norm_partials",
    inputs=(Pointer("p", "f32"), Pointer("w", "bf16")),
    output=Pointer("y", "f32"),
    constants=(
        PushConstant("rows"),
        PushConstant("width", multiple_of_16=True),  # aligned vector loads of the partials
        PushConstant("splits"),
        PushConstant("eps_bits", f32=True),
        PushConstant("round_bf16"),
    ),
    constexprs=_ROWS + ("MAX_SPLITS",),
)

#: `rms_norm_partials` with the residual after it (`rms_norm_partials_residual`): RES and ADD [rows, width].
PARTIAL_NORM_RESIDUAL = KernelSignature(
    "reductions_triton",
    "rms_norm_partials_residual",
    inputs=(Pointer("p", "f32"), Pointer("w", "bf16"), Pointer("res", "f32"), Pointer("add", "f32")),
    output=Pointer("y", "f32"),
    constants=(
        PushConstant("rows"),
        PushConstant("width", multiple_of_16=True),
        PushConstant("splits"),
        PushConstant("eps_bits", f32=True),
        PushConstant("scale_bits", f32=True),
        PushConstant("round_bf16"),
        PushConstant("round_residual"),
        PushConstant("round_add"),
        PushConstant("round_scale"),
    ),
    constexprs=_ROWS + ("MAX_SPLITS", "ADD", "SCALE"),
)
#: `rms_norm_partials` added to AltUp's streams after the first (`rms_norm_partials_streams`): S, Y [N, rows, width].
PARTIAL_NORM_STREAMS = KernelSignature(
    "reductions_triton",
    "rms_norm_partials_streams",
    inputs=(Pointer("p", "f32"), Pointer("w", "bf16"), Pointer("s", "f32")),
    output=Pointer("y", "f32"),
    constants=(
        PushConstant("rows"),
        PushConstant("width", multiple_of_16=True),
        PushConstant("splits"),
        PushConstant("eps_bits", f32=True),
        PushConstant("round_bf16"),
        PushConstant("round_residual"),
    ),
    constexprs=_ROWS + ("MAX_SPLITS", "N"),
)
#: `rms_norm_partials` of a decode step's key or value heads as the KV cache stores them (`rms_norm_partials_kv`):
#: RoPE after the norm for the keys (cos and sin [tokens, width]), the result BF16 [rows, width].
PARTIAL_NORM_KV = KernelSignature(
    "reductions_triton",
    "rms_norm_partials_kv",
    inputs=(Pointer("p", "f32"), Pointer("w", "bf16"), Pointer("cos", "f32"), Pointer("sin", "f32")),
    output=Pointer("y", "bf16"),
    constants=(
        PushConstant("rows"),
        PushConstant("width", multiple_of_16=True),
        PushConstant("splits"),
        PushConstant("heads"),
        PushConstant("eps_bits", f32=True),
        PushConstant("round_bf16"),
        PushConstant("round_x_cos"),
        PushConstant("round_rot_sin"),
        PushConstant("round_sum"),
    ),
    constexprs=_ROWS + ("MAX_SPLITS", "ROPE"),
)

#: The LAuReL residual's: RES is the input norm's BF16 result (exact in F32), handed over as it is.
PARTIAL_NORM_RESIDUAL_BF16 = dataclasses.replace(
    PARTIAL_NORM_RESIDUAL,
    inputs=(Pointer("p", "f32"), Pointer("w", "bf16"), Pointer("res", "bf16"), Pointer("add", "f32")),
)
#: AltUp's streams: 4 in every Gemma 3n configuration, compiled into the streams files.
STREAMS = 4

#: The residuals after a decoder norm of partials, by name: (ADD, SCALE). "attention": round(round(round(x + norm)
#: + laurel) * 2^-0.5) (`attention_residual.mlir.j2`); "mlp": round(h + norm) (`decoder_mlp.mlir.j2`); "laurel":
#: round(xn + norm), xn read as BF16 (`laurel.mlir.j2`).
RESIDUALS = {"attention": (True, True), "mlp": (False, False), "laurel": (False, False)}
#: The residuals whose RES is read as BF16.
BF16_RESIDUALS = frozenset({"laurel"})

#: The plain norm's compile-time switches (`reductions_triton.rms_norm`): the SiLU after it, MLX's rounding
#: before the weight.
_NORM_FLAGS = ("SILU", "MLX")

#: The RMS norm's variants, by output: "f32" carrier, "bf16" for a matmul operand, "silu_bf16" the BF16
#: matmul operand round(silu(norm)) (the light convolution's activation after its norm), "residual" =
#: round(RES + norm * weight) (a conformer module's tail), "residual_bf16" the same reading X as BF16 (a
#: GEMM kernel's result, handed over without an F32 pass), "mlx" the text decoder's F32 norm with MLX's
#: two rounding points, "mlx_bf16" the same handed to a linear as its BF16 operand: (file stem, signature, the
#: switches set). The SiLU variant rounds to BF16 at the
#: template's points whatever the contract says, so it serves only contracts that do.
RMS_NORM_OUTPUTS: dict[str, tuple[str, KernelSignature, tuple[str, ...]]] = {
    "f32": ("rms_norm", _norm("f32", "f32", residual=False), ()),
    "bf16": ("rms_norm_bf16", _norm("f32", "bf16", residual=False), ()),
    "residual": ("rms_norm_residual", _norm("f32", "f32", residual=True), ()),
    "residual_bf16": ("rms_norm_residual_xbf16", _norm("bf16", "f32", residual=True), ()),
    "silu_bf16": ("rms_norm_silu_bf16", _norm("f32", "bf16", residual=False), ("SILU",)),
    "mlx": ("rms_norm_mlx", _norm("f32", "f32", residual=False), ("MLX",)),
    "mlx_bf16": ("rms_norm_mlx_bf16", _norm("f32", "bf16", residual=False), ("MLX",)),
}


@dataclass(frozen=True)
class RowKernel:
    """A kernel over rows whose reduction follows the contract's schedule of `block_threads` threads,
    `rows_per_workgroup` rows per workgroup."""

    file: KernelFile

    @property
    def block_threads(self) -> int:
        return int(self.file.constexpr("THREADS"))

    @property
    def rows_per_workgroup(self) -> int:
        return int(self.file.constexpr("ROWS_PER_BLOCK"))

    def workgroups(self, rows: int) -> int:
        return -(-rows // self.rows_per_workgroup)


def _row_kernel(
    stem: str, signature: KernelSignature, threads: int, warps: int, row_budget: int, switches: tuple[str, ...] = ()
) -> RowKernel:
    """Each workgroup takes `row_budget` schedule threads' worth of rows; `switches`: the norm's flags set
    (`_NORM_FLAGS`, for a kernel that has them)."""
    rows = max(1, row_budget // threads)
    flags = tuple((flag, flag in switches) for flag in signature.constexprs if flag in _NORM_FLAGS)
    constexprs = (("THREADS", threads), ("ROWS_PER_BLOCK", rows)) + flags
    file = KernelFile(f"{stem}_t{threads}_sm90", signature, warps, constexprs, bf16_rounding_only="SILU" in switches)
    return RowKernel(file)


#: 4 warps, 2048 schedule threads' worth of rows per workgroup.
LANE_SUMS_SM90 = {t: _row_kernel("lane_xor_sum", LANE_SUM, t, warps=4, row_budget=2048) for t in SCHEDULE_THREADS}

#: 8 warps, since a workgroup then normalizes its rows, reading them again (schedule threads x 8 values each).
RMS_NORMS_SM90 = {
    (output, t): _row_kernel(stem, signature, t, warps=8, row_budget=1024, switches=switches)
    for output, (stem, signature, switches) in RMS_NORM_OUTPUTS.items()
    for t in SCHEDULE_THREADS
}


def _partial_norm_kernel(threads: int) -> RowKernel:
    """8 warps and 256 schedule threads' worth of rows (one row of the hidden width per workgroup: a decode step's
    few rows spread over as many SMs), up to the decode-linear kernel's most splits."""
    rows = max(1, 256 // threads)
    constexprs = (("THREADS", threads), ("ROWS_PER_BLOCK", rows), ("MAX_SPLITS", MAX_SPLITS))
    return RowKernel(KernelFile(f"rms_norm_partials_t{threads}_sm90", PARTIAL_NORM, 8, constexprs))


PARTIAL_NORMS_SM90 = {t: _partial_norm_kernel(t) for t in SCHEDULE_THREADS}


def _partial_norm_residual_kernel(residual: str, threads: int) -> RowKernel:
    """As `_partial_norm_kernel`, with the residual `residual` (`RESIDUALS`) compiled in."""
    add, scale = RESIDUALS[residual]
    rows = max(1, 256 // threads)
    constexprs = (
        ("THREADS", threads),
        ("ROWS_PER_BLOCK", rows),
        ("MAX_SPLITS", MAX_SPLITS),
        ("ADD", add),
        ("SCALE", scale),
    )
    stem = f"rms_norm_partials_{residual}_t{threads}_sm90"
    signature = PARTIAL_NORM_RESIDUAL_BF16 if residual in BF16_RESIDUALS else PARTIAL_NORM_RESIDUAL
    return RowKernel(KernelFile(stem, signature, 8, constexprs))


PARTIAL_NORM_STREAMS_SM90 = {
    t: RowKernel(
        KernelFile(
            f"rms_norm_partials_streams_t{t}_sm90",
            PARTIAL_NORM_STREAMS,
            8,
            (("THREADS", t), ("ROWS_PER_BLOCK", max(1, 256 // t)), ("MAX_SPLITS", MAX_SPLITS), ("N", STREAMS)),
        )
    )
    for t in SCHEDULE_THREADS
}

PARTIAL_NORM_KV_SM90 = {
    (rope, t): RowKernel(
        KernelFile(
            f"rms_norm_partials_{'keys' if rope else 'values'}_t{t}_sm90",
            PARTIAL_NORM_KV,
            8,
            (("THREADS", t), ("ROWS_PER_BLOCK", max(1, 256 // t)), ("MAX_SPLITS", MAX_SPLITS), ("ROPE", rope)),
            bf16_rounding_only=True,  # its result is the BF16 cache's
        )
    )
    for rope in (True, False)
    for t in SCHEDULE_THREADS
}

PARTIAL_NORM_RESIDUALS_SM90 = {
    (residual, t): _partial_norm_residual_kernel(residual, t) for residual in RESIDUALS for t in SCHEDULE_THREADS
}


def lane_sum_call(threads: int, rows: int, width: int, reads: int, square: bool) -> KernelCall:
    """S = the 32-lane XOR sum of each row of [rows, width] in the schedule of `threads` threads with `reads`
    reads each (of squares)."""
    kernel = LANE_SUMS_SM90[threads]
    return kernel.file.call(kernel.workgroups(rows), rows=rows, width=width, reads=reads, square=int(square))


def rms_norm_call(
    output: str,
    threads: int,
    rows: int,
    width: int,
    w_dtype: str,
    eps: float,
    clip: float | None,
    rounds: bool,
    residual_weight: float | None = None,
) -> KernelCall | None:
    """The scaled RMS norm variant `output` of [rows, width], its sum of squares in the schedule of `threads`
    threads with 8 reads each, or None where it does not apply (weights in another dtype than the kernel
    reads)."""
    kernel = RMS_NORMS_SM90[output, threads]
    signature = kernel.file.signature
    if w_dtype != signature.input("w").dtype:
        return None
    constants = {
        "rows": rows,
        "width": width,
        "eps_bits": eps,
        "clip_bits": float("inf") if clip is None else clip,
        "round_bf16": int(rounds),
    }
    if any(c.name == "weight_bits" for c in signature.constants):
        if residual_weight is None:
            raise ValueError(f"the RMS-norm variant {output!r} needs the residual weight")
        constants["weight_bits"] = residual_weight
    return kernel.file.call(kernel.workgroups(rows), **constants)


def partial_norm_call(threads: int, rows: int, width: int, splits: int, eps: float, rounds: bool) -> KernelCall:
    """The text decoder's norm of [rows, width] = round(the sum of `splits` partials), its sum of squares in the
    schedule of `threads` threads with 8 reads each."""
    if not 1 <= splits <= MAX_SPLITS:
        raise ValueError(f"{splits} partials: the partials-norm kernel adds 1 to {MAX_SPLITS}")
    if splits * rows * width >= 2**31:
        raise ValueError(f"{splits} x {rows} x {width} partials: the kernel indexes them with 32-bit offsets")
    kernel = PARTIAL_NORMS_SM90[threads]
    return kernel.file.call(
        kernel.workgroups(rows), rows=rows, width=width, splits=splits, eps_bits=eps, round_bf16=int(rounds)
    )


def partial_norm_residual_call(
    residual: str,
    threads: int,
    rows: int,
    width: int,
    splits: int,
    eps: float,
    scale: float,
    rounds: dict[str, bool],
) -> KernelCall | None:
    """`partial_norm_call` with the residual `residual` after the norm (`rounds`: round_bf16, round_residual,
    round_add, round_scale; `scale` read only where the residual scales), or None where its width breaks the
    kernel's promise."""
    if width % 16 or not 1 <= splits <= MAX_SPLITS or splits * rows * width >= 2**31:
        return None
    kernel = PARTIAL_NORM_RESIDUALS_SM90[residual, threads]
    return kernel.file.call(
        kernel.workgroups(rows), rows=rows, width=width, splits=splits, eps_bits=eps, scale_bits=scale, **rounds
    )


def partial_norm_streams_call(
    threads: int, streams: int, rows: int, width: int, splits: int, eps: float, rounds: dict[str, bool]
) -> KernelCall | None:
    """`partial_norm_call` added to the streams after the first of [streams, rows, width] (`rounds`: round_bf16,
    round_residual), or None where the files do not cover it."""
    if streams != STREAMS or width % 16 or not 1 <= splits <= MAX_SPLITS:
        return None
    if max(splits, streams) * rows * width >= 2**31:
        return None
    kernel = PARTIAL_NORM_STREAMS_SM90[threads]
    return kernel.file.call(kernel.workgroups(rows), rows=rows, width=width, splits=splits, eps_bits=eps, **rounds)


def partial_norm_kv_call(
    rope: bool, threads: int, rows: int, heads: int, width: int, splits: int, eps: float, rounds: dict[str, bool]
) -> KernelCall | None:
    """`partial_norm_call` of `rows` = tokens x `heads` key (`rope`) or value rows of `width`, as BF16 (`rounds`:
    round_bf16, round_x_cos, round_rot_sin, round_sum), or None where a row is not the schedule's whole block."""
    if width != threads * 8 or not 1 <= splits <= MAX_SPLITS or splits * rows * width >= 2**31:
        return None
    kernel = PARTIAL_NORM_KV_SM90[rope, threads]
    return kernel.file.call(
        kernel.workgroups(rows), rows=rows, width=width, splits=splits, heads=heads, eps_bits=eps, **rounds
    )
