"""The light convolution's GLU and causal depthwise convolution (`conv_triton.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

SIGNATURE = KernelSignature(
    source="conv_triton",
    entry="glu_depthwise",
    inputs=(Pointer("g", "bf16"), Pointer("w", "f32")),
    output=Pointer("y", "f32"),
    # a channel count divisible by 16: vector loads and stores
    constants=(PushConstant("frames"), PushConstant("channels", multiple_of_16=True), PushConstant("taps")),
    constexprs=("FRAMES", "CHANNELS"),
)


@dataclass(frozen=True)
class ConvKernel:
    """`frames` x `channels` outputs per workgroup."""

    file: KernelFile

    @property
    def frames(self) -> int:
        return int(self.file.constexpr("FRAMES"))

    @property
    def channels(self) -> int:
        return int(self.file.constexpr("CHANNELS"))

    def supports(self, channels: int) -> bool:
        return channels % 16 == 0

    def workgroups(self, clips: int, frames: int, channels: int) -> int:
        return clips * -(-frames // self.frames) * -(-channels // self.channels)

    def call(self, clips: int, frames: int, channels: int, taps: int) -> KernelCall | None:
        """GLU then `taps` causal taps over [clips, frames, channels], or None (channels it does not cover)."""
        if not self.supports(channels):
            return None
        return self.file.call(self.workgroups(clips, frames, channels), frames=frames, channels=channels, taps=taps)


#: 16 frames x 128 channels per workgroup, 4 warps.
GLU_DEPTHWISE_SM90 = ConvKernel(
    KernelFile(
        "glu_depthwise_sm90",
        SIGNATURE,
        warps=4,
        bf16_rounding_only=True,
        constexprs=(("FRAMES", 16), ("CHANNELS", 128)),
    )
)
