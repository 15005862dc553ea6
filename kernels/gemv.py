"""The decode-step linear (`gemv_triton.py`): P[S, M, N] = A[M, K] @ B[N, K]^T in S K ranges, F32 partials.

The linear of a decode step has a handful of rows (one per sequence), so the Hopper GEMM's 128 x 256 tiles
left most of each tile empty and gave a [2048, 16384] weight 8 programs; IREE's own matvec code read it at
~31 GB/s. This kernel streams BN weight rows per program along K (BK columns at a time, through a
multi-stage copy pipeline) and splits K into S ranges where the output alone gives too few programs; the
template adds the S partials and rounds (`linear.gemv.mlir.j2`). Four files: 16-row tiles for up to 16 rows,
64-row tiles for up to 64 (a 16-row tile re-reads a weight once per 16 rows, which the 1 GB tied head cannot
afford at batch 64), a narrow file for outputs no whole 64-column tile covers (AltUp's 4-output router,
which IREE's own `vecmat_4x2048` took 36 µs for), and one of 64-column K tiles for linears of 64 inputs
(LAuReL's right linear). Tilings chosen from `scripts/gemv_survey.py` on the H200 (BENCHMARKS.md, "The decode
linear"). Two more entries serve two or four linears of one input in one launch (`GemvGroupKernel`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant, TiledKernel


def _signature(narrow: bool) -> KernelSignature:
    """N and K multiples of 16 (aligned vector loads), N any width for the narrow file; S splits K into equal
    ranges of whole BK tiles."""
    return KernelSignature(
        source="gemv_triton",
        entry="gemv_bf16_nt_splitk",
        inputs=(Pointer("a", "bf16"), Pointer("b", "bf16")),
        output=Pointer("p", "f32"),
        constants=(
            PushConstant("M"),
            PushConstant("N", multiple_of_16=not narrow),
            PushConstant("K", multiple_of_16=True),
            PushConstant("S"),
        ),
        constexprs=("BM", "BN", "BK", "NARROW"),
    )


#: At least this many output tiles keep every SM streaming without a split (132 SMs on the H200).
UNSPLIT_TILES = 132
#: The most K ranges a linear is split into (more only adds partials to sum).
MAX_SPLITS = 16


@dataclass(frozen=True)
class GemvKernel(TiledKernel):
    """One (BM-row, BN-column, K range) tile per workgroup; serves linears of up to `max_rows` rows."""

    max_rows: int

    @property
    def narrow(self) -> bool:
        return bool(self.file.constexpr("NARROW"))

    def supports(self, rows: int, n: int, k: int) -> bool:
        """Shapes the kernel covers: its rows, whole column tiles (any width for the narrow file), whole K tiles."""
        return 1 <= rows <= self.max_rows and n >= 1 and (self.narrow or n % self.bn == 0) and k % self.bk == 0

    def splits(self, n: int, k: int) -> int:
        """How many K ranges: none for an output of at least `UNSPLIT_TILES` tiles, else the most whole-tile
        ranges up to `MAX_SPLITS` (a power of two; the survey's best for every E4B decode shape but one, within
        6 % there). The narrow file splits too: unsplit, one program walked AltUp's router's 2048 columns alone
        (16 µs on the H200), and the partials' sum fuses into the router's tanh."""
        if n // self.bn >= UNSPLIT_TILES:
            return 1
        s = 1
        while 2 * s <= MAX_SPLITS and k % (2 * s * self.bk) == 0:
            s *= 2
        return s

    def call(self, rows: int, cols: int, k: int) -> KernelCall | None:
        """P[S, rows, cols] for A[rows, k] @ B[cols, k]^T, or None for a shape the kernel does not cover."""
        if not self.supports(rows, cols, k):
            return None
        s = self.splits(cols, k)
        workgroups = -(-rows // self.bm) * -(-cols // self.bn) * s
        return self.file.call(workgroups, M=rows, N=cols, K=k, S=s)


def _file(name: str, bm: int, bn: int = 64, bk: int = 128, narrow: bool = False) -> KernelFile:
    return KernelFile(
        f"gemv_bf16_nt_{name}_sm90",
        _signature(narrow),
        warps=4,
        stages=3,
        bf16_rounding_only=True,  # BF16 operands: linked only under a contract whose linears read BF16
        constexprs=(("BM", bm), ("BN", bn), ("BK", bk), ("NARROW", narrow)),
    )


#: 16 x 64 tiles, K tile 128, 4 warps, 3 stages (the survey's best single tiling over E4B's decode shapes).
GEMV_ROWS16_SM90 = GemvKernel(_file("m16", 16), max_rows=16)
#: 64-row tiles for 17 to 64 rows (one weight read for a whole batch of 64).
GEMV_ROWS64_SM90 = GemvKernel(_file("m64", 64), max_rows=64)
#: 16 x 16 tiles, the columns past N masked, for any output width up to 64 rows: what no whole 64-column
#: tile covers (the weight is a few rows, so re-reading it for each 16 rows costs nothing).
GEMV_NARROW_SM90 = GemvKernel(_file("narrow", 16, bn=16, narrow=True), max_rows=64)
#: 16 x 64 tiles with a K tile of 64, up to 64 rows: linears of 64 inputs, which no K tile of 128 covers
#: (LAuReL's right linear, rank 64: IREE's `vecmat_2048x64` took 9.4 us a launch on an H100).
GEMV_K64_SM90 = GemvKernel(_file("k64", 16, bk=64), max_rows=64)
#: The files of whole 64-column tiles, the narrowest that serves a linear of `rows` rows first.
GEMV_WIDE_SM90 = (GEMV_ROWS16_SM90, GEMV_ROWS64_SM90)
GEMV_SM90 = (*GEMV_WIDE_SM90, GEMV_NARROW_SM90, GEMV_K64_SM90)


def gemv_call(rows: int, cols: int, k: int) -> KernelCall | None:
    """The decode linear's launch: on the narrowest whole-tile file that serves `rows` rows, else on the narrow
    file, else on the file of 64-column K tiles (None: not covered)."""
    wide = next((kernel for kernel in GEMV_WIDE_SM90 if rows <= kernel.max_rows), None)
    return (
        (wide.call(rows, cols, k) if wide else None)
        or GEMV_NARROW_SM90.call(rows, cols, k)
        or GEMV_K64_SM90.call(rows, cols, k)
    )


@dataclass(frozen=True)
class GemvVariant(TiledKernel):
    """Another entry of the decode-linear kernel on the tiles and K split of `single` (the same BM, BN, BK, warps and
    stages), so each of its programs sums what `single`'s would: the same bits, with more done around them."""

    single: GemvKernel

    def single_call(self, rows: int, n: int, k: int) -> KernelCall | None:
        """`single`'s launch for the linear, or None where another file (or none) would serve it."""
        call = gemv_call(rows, n, k)
        return call if call is not None and call.file is self.single.file else None


def _variant_file(single: GemvKernel, stem: str, signature: KernelSignature) -> KernelFile:
    constexprs = tuple((key, value) for key, value in single.file.constexprs if key != "NARROW")
    return KernelFile(
        f"gemv_bf16_nt_{stem}_sm90",
        signature,
        warps=single.file.warps,
        stages=single.file.stages,
        bf16_rounding_only=True,
        constexprs=constexprs,
    )


def _first_call(kernels: tuple[GemvVariant, ...], *args: object) -> KernelCall | None:
    """The first of `kernels` that serves the call (they are tried narrowest tiles first)."""
    return next((c for kernel in kernels if (c := kernel.call(*args)) is not None), None)


#: The 16- and 64-row tiles the variants run on.
_VARIANT_TILES = ((GEMV_ROWS16_SM90, "m16"), (GEMV_ROWS64_SM90, "m64"))
#: The group entries by member count.
GROUP_ENTRIES = {2: "pair", 4: "quad"}


def _group_signature(members: int) -> KernelSignature:
    """The single entry's parameters with one weight pointer and one width per member; the members' partials
    lie one after the other in P."""
    return KernelSignature(
        source="gemv_triton",
        entry=f"gemv_bf16_nt_splitk_{GROUP_ENTRIES[members]}",
        inputs=(Pointer("a", "bf16"), *(Pointer(f"b{i}", "bf16") for i in range(members))),
        output=Pointer("p", "f32"),
        constants=(
            PushConstant("M"),
            *(PushConstant(f"N{i}", multiple_of_16=True) for i in range(members)),
            PushConstant("K", multiple_of_16=True),
            PushConstant("S"),
        ),
        constexprs=("BM", "BN", "BK"),
    )


@dataclass(frozen=True)
class GemvGroupKernel(GemvVariant):
    """`members` linears of one input in one launch, each member's partials the single launch's bits; one launch
    where there were `members`."""

    @property
    def members(self) -> int:
        return len([p for p in self.file.signature.inputs if p.name != "a"])

    def call(self, rows: int, outs: tuple[int, ...], k: int) -> KernelCall | None:
        """P, the members' [S, rows, outs[i]] partials one after the other, or None where the members' single
        launches would not all be this file's single file with one K split (then they stay single launches)."""
        if len(outs) != self.members:
            return None
        singles = [self.single_call(rows, n, k) for n in outs]
        if any(c is None for c in singles) or len({c.constant("S") for c in singles}) != 1:
            return None
        widths = {f"N{i}": n for i, n in enumerate(outs)}
        splits = singles[0].constant("S")
        return self.file.call(sum(c.workgroups for c in singles), M=rows, K=k, S=splits, **widths)


#: Pairs (the MLP's gate and up) and quads (LAuReL's left linear, q, k, v) on the 16- and 64-row tiles.
GEMV_GROUPS_SM90 = tuple(
    GemvGroupKernel(_variant_file(single, f"{GROUP_ENTRIES[members]}_{name}", _group_signature(members)), single)
    for members in GROUP_ENTRIES
    for single, name in _VARIANT_TILES
)


def gemv_group_call(rows: int, outs: tuple[int, ...], k: int) -> KernelCall | None:
    """One launch for the linears of one input with `outs` outputs each, where a group file covers them (None:
    they stay one launch each)."""
    return _first_call(GEMV_GROUPS_SM90, rows, outs, k)


#: The GELU product's rounding push constants after its two F32 constants, each with its contract point: the
#: linears' (the contract's default point), `gelu_tanh.mlir.j2`'s eight, then `mlp.product`.
GELU_PRODUCT_POINTS = (
    ("round_linear", None),
    ("round_cube", "gelu.cube"),
    ("round_cubic_term", "gelu.cubic_term"),
    ("round_inner", "gelu.inner"),
    ("round_scaled_inner", "gelu.scaled_inner"),
    ("round_tanh", "gelu.tanh"),
    ("round_one_plus", "gelu.one_plus"),
    ("round_half_x", "gelu.half_x"),
    ("round_out", "gelu.out"),
    ("round_product", "mlp.product"),
)
GELU_PRODUCT = KernelSignature(
    source="gemv_triton",
    entry="gemv_bf16_nt_gelu_product",
    inputs=(Pointer("a", "bf16"), Pointer("g", "bf16"), Pointer("u", "bf16")),
    output=Pointer("y", "bf16"),
    constants=(
        PushConstant("M"),
        PushConstant("N", multiple_of_16=True),
        PushConstant("K", multiple_of_16=True),
        PushConstant("k_cubic_bits", f32=True),
        PushConstant("k_sqrt_bits", f32=True),
        *(PushConstant(name) for name, _ in GELU_PRODUCT_POINTS),
    ),
    constexprs=("BM", "BN", "BK"),
)


@dataclass(frozen=True)
class GeluProductKernel(GemvVariant):
    """round(gelu_tanh(round(A @ G^T)) * round(A @ U^T)) as BF16 in one launch, where neither linear is split (so
    each sum is the unsplit launch's bits)."""

    def call(
        self, rows: int, n: int, k: int, k_cubic: float, k_sqrt: float, rounds: dict[str, bool]
    ) -> KernelCall | None:
        """The launch for [rows, k] inputs and n outputs (`rounds`: by `GELU_PRODUCT_POINTS` name), or None."""
        single = self.single_call(rows, n, k)
        if single is None or single.constant("S") != 1:
            return None
        return self.file.call(single.workgroups, M=rows, N=n, K=k, k_cubic_bits=k_cubic, k_sqrt_bits=k_sqrt, **rounds)


#: The GELU product on the 16- and 64-row tiles.
GEMV_GELU_PRODUCT_SM90 = tuple(
    GeluProductKernel(_variant_file(single, f"gelu_product_{name}", GELU_PRODUCT), single)
    for single, name in _VARIANT_TILES
)


def gelu_product_call(
    rows: int, n: int, k: int, k_cubic: float, k_sqrt: float, rounds: dict[str, bool]
) -> KernelCall | None:
    """The MLP's gate, up and GELU product in one launch where a file covers it (None: the pair and IREE's
    elementwise product)."""
    return _first_call(GEMV_GELU_PRODUCT_SM90, rows, n, k, k_cubic, k_sqrt, rounds)


def _operand_signature(
    entry: str, a_dtype: str, extra: tuple[Pointer, ...], constants: tuple[str, ...]
) -> KernelSignature:
    """The single entry's parameters for an A read as `a_dtype` and turned into the BF16 operand as it is read."""
    return KernelSignature(
        source="gemv_triton",
        entry=entry,
        inputs=(Pointer("a", a_dtype), *extra, Pointer("b", "bf16")),
        output=Pointer("p", "f32"),
        constants=(
            PushConstant("M"),
            PushConstant("N", multiple_of_16=True),
            PushConstant("K", multiple_of_16=True),
            PushConstant("S"),
            *(PushConstant(name) for name in constants),
        ),
        constexprs=("BM", "BN", "BK"),
    )


SCALED = _operand_signature("gemv_bf16_nt_scaled_splitk", "f32", (Pointer("s", "bf16"),), ("round_scale",))
SUMMED = _operand_signature("gemv_bf16_nt_summed_splitk", "f32", (), ("a_splits", "round_a"))


@dataclass(frozen=True)
class ScaledGemvKernel(GemvVariant):
    """The partials of round(A * s) @ B^T for F32 A and a BF16 scale s per input, the scaling done as A is read
    (the single launch's partials for the scaled BF16 operand)."""

    def call(self, rows: int, n: int, k: int, round_scale: bool) -> KernelCall | None:
        single = self.single_call(rows, n, k)
        if single is None:
            return None
        s = single.constant("S")
        return self.file.call(single.workgroups, M=rows, N=n, K=k, S=s, round_scale=int(round_scale))


#: The scaled operand on the 16- and 64-row tiles (the per-layer input gate).
GEMV_SCALED_SM90 = tuple(
    ScaledGemvKernel(_variant_file(single, f"scaled_{name}", SCALED), single) for single, name in _VARIANT_TILES
)


def scaled_gemv_call(rows: int, n: int, k: int, round_scale: bool) -> KernelCall | None:
    """The partials of round(A * s) @ B^T in one launch where a file covers them (None: IREE's scaling, then the
    decode-linear kernel)."""
    return _first_call(GEMV_SCALED_SM90, rows, n, k, round_scale)


@dataclass(frozen=True)
class SummedGemvKernel(GemvVariant):
    """The partials of round(sum of A's partials) @ B^T, A handed over as another decode linear's F32 partial sums
    (their sum in order and its rounding done as A is read)."""

    def call(self, rows: int, n: int, k: int, a_splits: int, round_a: bool) -> KernelCall | None:
        single = self.single_call(rows, n, k)
        if single is None or not 1 <= a_splits <= MAX_SPLITS:
            return None
        s = single.constant("S")
        return self.file.call(single.workgroups, M=rows, N=n, K=k, S=s, a_splits=a_splits, round_a=int(round_a))


#: The summed operand on the 16- and 64-row tiles and the 64-column K tiles (LAuReL's right linear).
GEMV_SUMMED_SM90 = tuple(
    SummedGemvKernel(_variant_file(single, f"summed_{name}", SUMMED), single)
    for single, name in (*_VARIANT_TILES, (GEMV_K64_SM90, "k64"))
)


def summed_gemv_call(rows: int, n: int, k: int, a_splits: int, round_a: bool) -> KernelCall | None:
    """The partials of round(sum of A's `a_splits` partials) @ B^T in one launch where a file covers them (None:
    IREE's sum and rounding, then the decode-linear kernel)."""
    return _first_call(GEMV_SUMMED_SM90, rows, n, k, a_splits, round_a)
