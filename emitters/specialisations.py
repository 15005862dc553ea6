"""What each op family's function is specialised on, and its symbol (`emitters/symbols.py`).

`OpEmitter` names every function it renders by one of these (`LaneXorSum(4, 128, 4).symbol` is
`lane_xor_sum_R4_W128_X4`), and tests read symbols back with `from_symbol` / `parse_symbol`. `kernel`
says that the function calls a committed Hopper kernel (`_Ksm90`) instead of IREE's code for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .symbols import Choice, Decimal, Dims, F32Bits, Flag, Int, Specialisation, Switch, token

DTYPES = ("bf16", "f32")
KERNEL = "Ksm90"


@dataclass(frozen=True)
class LaneXorSum(Specialisation):
    family: ClassVar[str] = "lane_xor_sum"
    rows: int = token(Int("R"))
    width: int = token(Int("W"))
    reads: int = token(Int("X"))
    square: bool = token(Flag("sq"), default=False)
    kernel: bool = token(Flag(KERNEL), default=False)


@dataclass(frozen=True)
class PrefixScan(Specialisation):
    family: ClassVar[str] = "prefix_scan"
    rows: int = token(Int("R"))
    width: int = token(Int("W"))


@dataclass(frozen=True)
class AffineDequant(Specialisation):
    family: ClassVar[str] = "affine_dequant"
    shape: tuple[int, ...] = token(Dims())
    bits: int = token(Int("b"))
    group_size: int = token(Int("g"))


@dataclass(frozen=True)
class ValidMask(Specialisation):
    family: ClassVar[str] = "valid_mask"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    stride: int = token(Int("S"))


@dataclass(frozen=True)
class MaskFrames(Specialisation):
    family: ClassVar[str] = "mask_frames"
    shape: tuple[int, ...] = token(Dims())


@dataclass(frozen=True)
class MelBoundary(Specialisation):
    family: ClassVar[str] = "mel_boundary"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    mel: int = token(Int("M"))


@dataclass(frozen=True)
class SscpConv(Specialisation):
    family: ClassVar[str] = "sscp_conv"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    freq: int = token(Int("F"))
    channels: tuple[int, ...] = token(Dims("C"))  # (in, out)
    stride: tuple[int, ...] = token(Dims("S"))
    operand_dtype: str = token(Choice("I", DTYPES))
    result_dtype: str = token(Choice("R", DTYPES))
    weight_layout: str = token(Choice("", ("oihw", "ohwi")))


@dataclass(frozen=True)
class CumulativeGroupNorm(Specialisation):
    family: ClassVar[str] = "cumulative_group_norm"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    freq: int = token(Int("F"))
    channels: int = token(Int("C"))


@dataclass(frozen=True)
class Linear(Specialisation):
    """`bf16_result`: the GEMM kernel's BF16 result is handed over as it is."""

    family: ClassVar[str] = "linear"
    lead: tuple[int, ...] = token(Dims())
    k: int = token(Int("K"))
    out: int = token(Int("N"))
    operand_dtype: str = token(Choice("I", DTYPES))
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")
    kernel: bool = token(Flag(KERNEL), default=False)
    bf16_result: bool = token(Flag("Ybf16"), default=False)


@dataclass(frozen=True)
class RmsNorm(Specialisation):
    """`residual_weight`: round(res + norm * weight); `output`: what a kernel hands over (see
    kernels/reductions.py): its F32 carrier, the BF16 matmul operand, or round(silu(norm)) as BF16."""

    family: ClassVar[str] = "rms_norm"
    lead: tuple[int, ...] = token(Dims())
    d: int = token(Int("D"))
    scaled: bool = token(Switch("scaled", "noscale"), default=True)
    clip: float | None = token(F32Bits("clip"), default=None)
    residual_weight: float | None = token(Decimal("res"), default=None)
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")
    kernel: bool = token(Flag(KERNEL), default=False)
    output: str = token(Choice("", ("bf16", "silu_bf16", "f32"), omitted="f32"), default="f32")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.output != "f32" and not self.kernel:
            raise ValueError(f"only a kernel hands a norm over as {self.output}")


@dataclass(frozen=True)
class FeedForward(Specialisation):
    family: ClassVar[str] = "feed_forward"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    d: int = token(Int("D"))


@dataclass(frozen=True)
class LightConv(Specialisation):
    family: ClassVar[str] = "light_conv"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    d: int = token(Int("D"))
    taps: int = token(Int("K"))
    dw_layout: str = token(Choice("", ("d1k", "dk1")))
    kernel: bool = token(Flag(KERNEL), default=False)


@dataclass(frozen=True)
class Attention(Specialisation):
    family: ClassVar[str] = "attention"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    d: int = token(Int("D"))
    heads: int = token(Int("H"))
    chunk: int = token(Int("W"))
    max_past: int = token(Int("P"))
    kernel: bool = token(Flag(KERNEL), default=False)


@dataclass(frozen=True)
class SscpBlock(Specialisation):
    family: ClassVar[str] = "sscp_block"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    freq: int = token(Int("F"))
    channels: tuple[int, ...] = token(Dims("C"))  # (in, out)


@dataclass(frozen=True)
class ConformerBlock(Specialisation):
    family: ClassVar[str] = "conformer_block"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    d: int = token(Int("D"))


@dataclass(frozen=True)
class Reduction(Specialisation):
    family: ClassVar[str] = "reduction"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    d: int = token(Int("D"))
    factor: int = token(Int("R"))


@dataclass(frozen=True)
class Embedder(Specialisation):
    family: ClassVar[str] = "embedder"
    lead: tuple[int, ...] = token(Dims())
    d: int = token(Int("D"))
    text_hidden: int = token(Int("N"))


@dataclass(frozen=True)
class AudioOutput(Specialisation):
    family: ClassVar[str] = "audio_output"
    clips: int = token(Int("B"))
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    text_hidden: int = token(Int("N"))


@dataclass(frozen=True)
class MlxRmsNorm(Specialisation):
    family: ClassVar[str] = "mlx_rms_norm"
    rows: int = token(Int("R"))
    d: int = token(Int("D"))


@dataclass(frozen=True)
class TokenMerge(Specialisation):
    family: ClassVar[str] = "token_merge"
    capacity: int = token(Int("C"))
    hidden: int = token(Int("H"))
    audio_rows: int = token(Int("A"))


@dataclass(frozen=True)
class DensePle(Specialisation):
    family: ClassVar[str] = "dense_ple"
    capacity: int = token(Int("C"))
    hidden: int = token(Int("H"))
    layers: int = token(Int("L"))
    per_layer: int = token(Int("P"))
