"""The decode step's attention contractions (`decode_attention_triton.py`): the scores q . k and the
partial products p . v, one program per (sequence, KV head, column tile or column range), each sequence's
key and value rows read from row `at` of its rows' buffer (the KV cache, or a prompt's keys)."""

from __future__ import annotations

from dataclasses import dataclass

from .reductions import SCHEDULE_THREADS
from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

_SHAPE = (PushConstant("kv_heads"), PushConstant("groups"), PushConstant("columns", multiple_of_16=True))
SCORES = KernelSignature(
    source="decode_attention_triton",
    entry="decode_scores",
    inputs=(Pointer("q", "bf16"), Pointer("k", "bf16"), Pointer("at", "i32")),
    output=Pointer("s", "f32"),
    constants=_SHAPE,
    constexprs=("ROWS", "BC", "DIMS"),
)
VALUES = KernelSignature(
    source="decode_attention_triton",
    entry="decode_values",
    inputs=(Pointer("p", "bf16"), Pointer("v", "bf16"), Pointer("at", "i32")),
    output=Pointer("o", "f32"),
    constants=_SHAPE + (PushConstant("S"),),
    constexprs=("ROWS", "BC", "DIMS"),
)

SOFTMAX = KernelSignature(
    source="decode_attention_triton",
    entry="decode_softmax",
    inputs=(Pointer("s", "f32"), Pointer("pos", "i32")),
    output=Pointer("p", "bf16"),
    constants=(
        PushConstant("heads"),
        PushConstant("columns"),
        PushConstant("window"),
        PushConstant("passes"),
        PushConstant("mask_bits", f32=True),
    ),
    constexprs=("THREADS", "READS"),
)

#: A prompt's softmax (`prompt_softmax`): the same operations on the prefill template's scores, a sliding layer's
#: denominator over its ring of `summed` slots.
PROMPT_SOFTMAX = KernelSignature(
    source="decode_attention_triton",
    entry="prompt_softmax",
    inputs=(Pointer("s", "f32"), Pointer("pos", "i32")),
    output=Pointer("p", "bf16"),
    constants=(
        PushConstant("queries"),
        PushConstant("groups"),
        PushConstant("columns"),
        PushConstant("window"),
        PushConstant("summed"),
        PushConstant("passes"),
        PushConstant("mask_bits", f32=True),
    ),
    constexprs=("THREADS", "READS"),
)

#: The softmax files' reads per thread: the decoder's denominator schedule (`decoder_policy.DENOMINATOR_READS`).
SOFTMAX_READS = 4

#: Programs a column-range split aims for in the values product (the H200 has 132 SMs).
VALUE_PROGRAMS = 128


@dataclass(frozen=True)
class DecodeAttentionKernels:
    """Up to `ROWS` query heads per KV head, `DIMS` values per head, columns in tiles of `BC`; the softmax
    between them, and a prompt's softmax, in one file per schedule block size (`SCHEDULE_THREADS`)."""

    scores: KernelFile
    values: KernelFile
    softmax: dict[int, KernelFile]
    prompt_softmax: dict[int, KernelFile]

    @property
    def rows(self) -> int:
        return int(self.scores.constexpr("ROWS"))

    @property
    def tile(self) -> int:
        return int(self.scores.constexpr("BC"))

    @property
    def dims(self) -> int:
        return int(self.scores.constexpr("DIMS"))

    def supports(self, groups: int, columns: int, head_dim: int) -> bool:
        return groups <= self.rows and head_dim == self.dims and columns % self.tile == 0

    def splits(self, sequences: int, kv_heads: int, columns: int) -> int:
        """Column ranges of the values product: a power of two of whole tiles, enough for `VALUE_PROGRAMS`."""
        s = 1
        while sequences * kv_heads * s < VALUE_PROGRAMS and columns % (2 * s * self.tile) == 0:
            s *= 2
        return s

    def calls(
        self, sequences: int, kv_heads: int, groups: int, columns: int, head_dim: int
    ) -> tuple[KernelCall, KernelCall] | None:
        """The scores and values launches for `sequences` queries over `columns` cache rows each, or None for a
        shape the kernels do not cover."""
        if not self.supports(groups, columns, head_dim):
            return None
        shape = {"kv_heads": kv_heads, "groups": groups, "columns": columns}
        s = self.splits(sequences, kv_heads, columns)
        return (
            self.scores.call(sequences * kv_heads * (columns // self.tile), **shape),
            self.values.call(sequences * kv_heads * s, **shape, S=s),
        )

    def softmax_call(
        self,
        sequences: int,
        heads: int,
        columns: int,
        window: int | None,
        reads: int,
        threads: int,
        passes: int,
        mask_value: float,
    ) -> KernelCall:
        """The softmax of `sequences` x `heads` rows of `columns` scores (a sliding layer's ring of `window`),
        its denominator in the block schedule of `threads` threads of `reads` reads, `passes` blocks a row
        (`decoder_ops.block_schedule`)."""
        file = _reading(self.softmax[threads], reads)
        return file.call(
            sequences * heads, heads=heads, columns=columns, window=window or 0, passes=passes, mask_bits=mask_value
        )

    def prompt_softmax_call(
        self,
        kv_heads: int,
        queries: int,
        groups: int,
        columns: int,
        window: int | None,
        summed: int,
        reads: int,
        threads: int,
        passes: int,
        mask_value: float,
    ) -> KernelCall:
        """The softmax of a prompt's scores [kv_heads, queries, groups, columns] (a full layer's denominator over
        the `summed` = `columns` columns in order, a sliding layer's over its ring of `summed` slots), the
        denominator in the block schedule of `threads` threads of `reads` reads, `passes` blocks of `summed`."""
        file = _reading(self.prompt_softmax[threads], reads)
        return file.call(
            kv_heads * queries * groups,
            queries=queries,
            groups=groups,
            columns=columns,
            window=window or 0,
            summed=summed,
            passes=passes,
            mask_bits=mask_value,
        )


def _reading(file: KernelFile, reads: int) -> KernelFile:
    if reads != file.constexpr("READS"):
        raise ValueError(f"kernel {file.stem} reads {file.constexpr('READS')} values a thread, the schedule {reads}")
    return file


def _softmax_file(threads: int, signature: KernelSignature = SOFTMAX) -> KernelFile:
    return KernelFile(
        f"{signature.entry}_t{threads}_sm90",
        signature,
        warps=threads // 32,  # a hardware thread per schedule thread: its READS values are one vector load
        constexprs=(("THREADS", threads), ("READS", SOFTMAX_READS)),
        bf16_rounding_only=True,  # the probabilities' rounding point: contracts that round there
    )


def _file(signature: KernelSignature, stem: str) -> KernelFile:
    return KernelFile(
        stem,
        signature,
        warps=4,
        stages=3,
        bf16_rounding_only=True,  # BF16 operands: linked only under a contract whose contractions read BF16
        constexprs=(("ROWS", 16), ("BC", 64), ("DIMS", 256)),
    )


#: Gemma 3n E2B/E4B: 4 query heads per KV head, 256 values per head; 64 cache rows per tile.
DECODE_ATTENTION_SM90 = DecodeAttentionKernels(
    _file(SCORES, "decode_scores_sm90"),
    _file(VALUES, "decode_values_sm90"),
    {threads: _softmax_file(threads) for threads in SCHEDULE_THREADS},
    {threads: _softmax_file(threads, PROMPT_SOFTMAX) for threads in SCHEDULE_THREADS},
)
