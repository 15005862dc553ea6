"""The chunked attention's core between its projections (`attention_triton.py`): one workgroup per
(clip, block of queries, head)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

SIGNATURE = KernelSignature(
    source="attention_triton",
    entry="attention_core",
    inputs=(
        Pointer("q", "bf16"),
        Pointer("scale", "f32"),
        Pointer("k", "bf16"),
        Pointer("v", "bf16"),
        Pointer("pos", "bf16"),
        Pointer("valid", "i32"),
    ),
    output=Pointer("out", "bf16"),
    # a head width divisible by 16: whole rows of a head are then aligned runs of 16 values, which the
    # loads and stores move as vectors
    constants=(
        PushConstant("frames"),
        PushConstant("blocks"),
        PushConstant("heads"),
        PushConstant("head_dim", multiple_of_16=True),
        PushConstant("chunk"),
        PushConstant("past"),
        PushConstant("cap_bits", f32=True),
        PushConstant("mask_bits", f32=True),
    ),
    constexprs=("ROWS", "SLOTS", "DIMS"),
)


@dataclass(frozen=True)
class AttentionKernel:
    """Up to `rows` queries per block, `slots` context slots (the 32-lane softmax sum's width, so exactly
    32) and `dims` values per head, a multiple of 16 (a compile-time promise that lets rows load as vectors)."""

    file: KernelFile

    @property
    def rows(self) -> int:
        return int(self.file.constexpr("ROWS"))

    @property
    def slots(self) -> int:
        return int(self.file.constexpr("SLOTS"))

    @property
    def dims(self) -> int:
        return int(self.file.constexpr("DIMS"))

    def supports(self, chunk: int, context: int, head_dim: int) -> bool:
        return chunk <= self.rows and context <= self.slots and head_dim <= self.dims and head_dim % 16 == 0

    def call(
        self,
        clips: int,
        frames: int,
        blocks: int,
        heads: int,
        head_dim: int,
        chunk: int,
        past: int,
        cap: float,
        mask: float,
    ) -> KernelCall | None:
        """Blocks of `chunk` queries against `chunk + past` context slots, logits soft-capped at `cap`,
        masked with `mask`; None for a shape the kernel does not cover."""
        if not self.supports(chunk, chunk + past, head_dim):
            return None
        return self.file.call(
            clips * blocks * heads,
            frames=frames,
            blocks=blocks,
            heads=heads,
            head_dim=head_dim,
            chunk=chunk,
            past=past,
            cap_bits=cap,
            mask_bits=mask,
        )


#: Up to 16 queries per block (the real config has 12) against up to 32 context slots (24) of up to 256
#: values per head (192); 4 warps.
ATTENTION_SM90 = AttentionKernel(
    KernelFile(
        "attention_core_sm90",
        SIGNATURE,
        warps=4,
        bf16_rounding_only=True,
        constexprs=(("ROWS", 16), ("SLOTS", 32), ("DIMS", 256)),
    )
)
