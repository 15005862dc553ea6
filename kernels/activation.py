"""The feed-forward's SiLU over BF16 (`activation_triton.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

SIGNATURE = KernelSignature(
    source="activation_triton",
    entry="silu_bf16",
    inputs=(Pointer("x", "bf16"),),
    output=Pointer("y", "bf16"),
    constants=(PushConstant("count", multiple_of_16=True),),  # vector loads and stores
    constexprs=("BLOCK",),
)


@dataclass(frozen=True)
class ElementwiseKernel:
    """`block` values per workgroup."""

    file: KernelFile

    @property
    def block(self) -> int:
        return int(self.file.constexpr("BLOCK"))

    def supports(self, count: int) -> bool:
        return count % 16 == 0 and count < 2**31

    def workgroups(self, count: int) -> int:
        return -(-count // self.block)

    def call(self, count: int) -> KernelCall | None:
        """The activation of `count` values, or None (a count it does not cover)."""
        if not self.supports(count):
            return None
        return self.file.call(self.workgroups(count), count=count)


#: 4096 values per workgroup, 4 warps (32 values, four 16-byte vectors, per thread).
SILU_SM90 = ElementwiseKernel(
    KernelFile("silu_bf16_sm90", SIGNATURE, warps=4, bf16_rounding_only=True, constexprs=(("BLOCK", 4096),))
)
