"""What each op family's function is specialised on, and its symbol (`emitters/symbols.py`).

`OpEmitter` names every function it renders by one of these (`LaneXorSum(4, 128, 4).symbol` is
`lane_xor_sum_R4_W128_X4`), and tests read symbols back with `from_symbol` / `parse_symbol`. `kernel`
says that the function calls a committed Hopper kernel (`_Ksm90`) instead of IREE's code for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .symbols import Choice, Decimal, Dims, F32Bits, Flag, Int, OptionalInt, Specialisation, Switch, token

DTYPES = ("bf16", "f32")
KERNEL = "Ksm90"
#: a contraction whose BF16 operands the dot reads as F32 (emitters/lowering.py: a CPU without a BF16 dot)
WIDENED = "Df32"


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
    #: written as an im2col matmul (emitters/lowering.py) rather than a convolution
    im2col: bool = token(Flag("im2col"), default=False)
    widened: bool = token(Flag(WIDENED), default=False)


@dataclass(frozen=True)
class CumulativeGroupNorm(Specialisation):
    family: ClassVar[str] = "cumulative_group_norm"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    freq: int = token(Int("F"))
    channels: int = token(Int("C"))


@dataclass(frozen=True)
class Linear(Specialisation):
    """`bf16_result`: the GEMM kernel's BF16 result is handed over as it is; `splits`: the decode-linear kernel
    sums K in that many ranges (its partials are added by the template), where `kernel` is the GEMM otherwise."""

    family: ClassVar[str] = "linear"
    lead: tuple[int, ...] = token(Dims())
    k: int = token(Int("K"))
    out: int = token(Int("N"))
    operand_dtype: str = token(Choice("I", DTYPES))
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")
    kernel: bool = token(Flag(KERNEL), default=False)
    bf16_result: bool = token(Flag("Ybf16"), default=False)
    widened: bool = token(Flag(WIDENED), default=False)
    splits: int | None = token(OptionalInt("P"), default=None)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.splits is not None and (not self.kernel or self.bf16_result):
            raise ValueError("the decode-linear kernel hands an F32 result over, and only as a kernel")


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
    widened: bool = token(Flag(WIDENED), default=False)


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
    kernel: bool = token(Flag(KERNEL), default=False)
    output: str = token(Choice("Y", DTYPES, omitted="f32"), default="f32")  # a kernel's BF16 operand of a linear


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


# ---------------------------------------------------------------------------------------------- the text decoder
PHASES = ("prefill", "decode")


@dataclass(frozen=True)
class BlockSum(Specialisation):
    """`decoder_ops.block_sum` for rows longer than one block (one pass is `LaneXorSum`)."""

    family: ClassVar[str] = "block_sum"
    rows: int = token(Int("R"))
    width: int = token(Int("W"))
    reads: int = token(Int("X"))


@dataclass(frozen=True)
class RowMean(Specialisation):
    family: ClassVar[str] = "row_mean"
    rows: int = token(Int("R"))
    width: int = token(Int("W"))


@dataclass(frozen=True)
class RmsMagnitude(Specialisation):
    """`floor`: transformers' 1e-5 floor on the mean square (the rescaled streams; none on the target)."""

    family: ClassVar[str] = "rms_magnitude"
    rows: int = token(Int("R"))
    d: int = token(Int("D"))
    floor: bool = token(Flag("floor"), default=False)


@dataclass(frozen=True)
class AltupRescale(Specialisation):
    family: ClassVar[str] = "altup_rescale"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))


@dataclass(frozen=True)
class AltupInit(Specialisation):
    family: ClassVar[str] = "altup_init"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))


@dataclass(frozen=True)
class AltupCollapse(Specialisation):
    family: ClassVar[str] = "altup_collapse"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))


@dataclass(frozen=True)
class AltupRouter(Specialisation):
    family: ClassVar[str] = "altup_router"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))


@dataclass(frozen=True)
class AltupPredict(Specialisation):
    family: ClassVar[str] = "altup_predict"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))
    active: int = token(Int("A"))
    clip: float | None = token(F32Bits("clip"), default=None)
    kernel: bool = token(Flag(KERNEL), default=False)  # the router and the step in one committed kernel


@dataclass(frozen=True)
class AltupCorrect(Specialisation):
    family: ClassVar[str] = "altup_correct"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))
    active: int = token(Int("A"))
    clip: float | None = token(F32Bits("clip"), default=None)
    kernel: bool = token(Flag(KERNEL), default=False)  # the router and the step in one committed kernel


@dataclass(frozen=True)
class Laurel(Specialisation):
    family: ClassVar[str] = "laurel"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    rank: int = token(Int("R"))
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")  # the normalized input's carrier
    # a decode step's: its linear's partial sums of this many K ranges arrive from `DecodeLinears`
    partials: int | None = token(OptionalInt("P"), default=None)
    kernel: bool = token(Flag(KERNEL), default=False)  # the right linear and the residual in kernels


@dataclass(frozen=True)
class DecodeLinears(Specialisation):
    """Linears of one input at a decode step in one launch of a decode-linear group file: each one's F32
    partial sums of `splits` K ranges."""

    family: ClassVar[str] = "decode_linears"
    tokens: int = token(Int("T"))
    k: int = token(Int("K"))
    outs: tuple[int, ...] = token(Dims("N"))
    splits: int = token(Int("P"))
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")  # the normalized input's carrier


@dataclass(frozen=True)
class PartialsSum(Specialisation):
    """A decode linear from its `splits` partial sums: added in split order, then the linear's rounding."""

    family: ClassVar[str] = "partials_sum"
    splits: int = token(Int("P"))
    tokens: int = token(Int("T"))
    out: int = token(Int("N"))


@dataclass(frozen=True)
class ProjectedNorm(Specialisation):
    """norm(round(x @ W^T)) over `groups` rows per token (a head's q/k/v, or the whole output); `kernel`: the
    decode-linear kernel's partials summed, rounded and normalized by the partials-norm kernel."""

    family: ClassVar[str] = "projected_norm"
    tokens: int = token(Int("T"))
    k: int = token(Int("K"))
    out: int = token(Int("N"))
    groups: int = token(Int("G"))
    kernel: bool = token(Flag(KERNEL), default=False)
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")  # the normalized input's carrier


@dataclass(frozen=True)
class Rope(Specialisation):
    family: ClassVar[str] = "rope"
    tokens: int = token(Int("T"))
    heads: int = token(Int("H"))
    head_dim: int = token(Int("hd"))


@dataclass(frozen=True)
class QueryProjection(Specialisation):
    family: ClassVar[str] = "query_projection"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    heads: int = token(Int("H"))
    head_dim: int = token(Int("hd"))
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")  # the normalized input's carrier
    # a decode step's: its linear's partial sums of this many K ranges arrive from `DecodeLinears`
    partials: int | None = token(OptionalInt("P"), default=None)


@dataclass(frozen=True)
class KeyValueProjection(Specialisation):
    family: ClassVar[str] = "key_value_projection"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    kv_heads: int = token(Int("K"))
    head_dim: int = token(Int("hd"))
    x_dtype: str = token(Choice("X", DTYPES, omitted="f32"), default="f32")  # the normalized input's carrier
    # the rows' dtype: F32, or the cache's (a decode step's, from the partials-norm kernel's cache variants)
    cache_dtype: str = token(Choice("C", DTYPES, omitted="f32"), default="f32")
    # a decode step's: its linear's partial sums of this many K ranges arrive from `DecodeLinears`
    partials: int | None = token(OptionalInt("P"), default=None)


@dataclass(frozen=True)
class DecoderAttention(Specialisation):
    """The attention core. prefill: queries over a prompt's own keys [C, K, hd] (column = position; a
    sliding layer's denominator sums its ring of `window` columns); decode: each query over its own
    sequence's cache rows [C, K, hd] (column = row)."""

    family: ClassVar[str] = "decoder_attention"
    phase: str = token(Choice("", PHASES))
    queries: int = token(Int("T"))
    columns: int = token(Int("C"))
    heads: int = token(Int("H"))
    kv_heads: int = token(Int("K"))
    head_dim: int = token(Int("hd"))
    window: int | None = token(OptionalInt("sw"), default=None)
    ring: int | None = token(OptionalInt("ring"), default=None)
    widened: bool = token(Flag(WIDENED), default=False)
    kernel: bool = token(Flag(KERNEL), default=False)  # decode: the contractions in the committed kernels
    q_dtype: str = token(Choice("Q", DTYPES, omitted="f32"), default="f32")  # decode kernels: BF16 queries arrive
    # decode kernels: the value products' F32 partial sums handed over unsummed (the output projection reads them)
    partials_out: bool = token(Flag("Pout"), default=False)
    # prefill of several query rows: the softmax between IREE's products in the committed prompt-softmax kernel
    softmax_kernel: bool = token(Flag("Smax"), default=False)


@dataclass(frozen=True)
class AttentionResidual(Specialisation):
    family: ClassVar[str] = "attention_residual"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    width: int = token(Int("Q"))
    kernel: bool = token(Flag(KERNEL), default=False)  # the output projection's kernel, then the residual's
    # the attention's value partial sums of this many column ranges arrive, read by the output projection's kernel
    partials: int | None = token(OptionalInt("P"), default=None)


@dataclass(frozen=True)
class GeluTanh(Specialisation):
    family: ClassVar[str] = "gelu_tanh"
    shape: tuple[int, ...] = token(Dims())


@dataclass(frozen=True)
class GaussianTopk(Specialisation):
    family: ClassVar[str] = "gaussian_topk"
    tokens: int = token(Int("T"))
    width: int = token(Int("F"))
    sparsity: float = token(Decimal("s"))


@dataclass(frozen=True)
class DecoderMlp(Specialisation):
    family: ClassVar[str] = "decoder_mlp"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    width: int = token(Int("F"))
    sparsity: float | None = token(Decimal("s"), default=None)
    kernel: bool = token(Flag(KERNEL), default=False)  # the down-projection's kernel, then the residual's
    # the gate, up and GELU product in one kernel (then the down-projection's and the residual's)
    gelu_product: bool = token(Flag("gelu"), default=False)


@dataclass(frozen=True)
class PleGate(Specialisation):
    family: ClassVar[str] = "ple_gate"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))
    per_layer: int = token(Int("P"))
    active: int = token(Int("A"))
    scaled: bool = token(Switch("scaled", "noscale"))
    kernel: bool = token(Flag(KERNEL), default=False)  # the projection's kernel, then the streams' norm kernel
    scaled_gate: bool = token(Flag("sg"), default=False)  # the gate's scaling done as its kernel reads the input


@dataclass(frozen=True)
class ScaledLinear(Specialisation):
    """round(round(x * s) @ W^T) for F32 x and a BF16 scale per input, at a decode step in one kernel launch (the
    scaling done as it reads x; `splits`: its partial sums' K ranges)."""

    family: ClassVar[str] = "scaled_linear"
    tokens: int = token(Int("T"))
    k: int = token(Int("K"))
    out: int = token(Int("N"))
    splits: int = token(Int("P"))


@dataclass(frozen=True)
class DecoderHead(Specialisation):
    family: ClassVar[str] = "decoder_head"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    streams: int = token(Int("N"))
    vocab: int = token(Int("V"))
    cap: float | None = token(Decimal("cap"), default=None)


@dataclass(frozen=True)
class DecoderEmbedding(Specialisation):
    """A decode step's new tokens from their host-gathered rows, as the prefill stage embeds a prompt."""

    family: ClassVar[str] = "decoder_embedding"
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    layers: int = token(Int("L"))
    per_layer: int = token(Int("P"))


@dataclass(frozen=True)
class DecoderLayer(Specialisation):
    """One decoder layer of one structure (the layer index is not part of it: layers of the same shape,
    type and sparsity share a function). `kv`: owns its K/V (writes the cache) or reads a producer's."""

    family: ClassVar[str] = "decoder_layer"
    phase: str = token(Choice("", PHASES))
    tokens: int = token(Int("T"))
    d: int = token(Int("D"))
    width: int = token(Int("F"))
    kv: str = token(Choice("", ("own", "shared")))
    columns: int = token(Int("C"))
    window: int | None = token(OptionalInt("sw"), default=None)
    sparsity: float | None = token(Decimal("s"), default=None)
    #: a prefill of several prompts at once (`tokens` rows of each), None for one
    prompts: int | None = token(OptionalInt("p"), default=None)


#: The selections find indices as F32 values (`_macros.lowest_index`): exact up to 2^24.
INDEX_BOUND = 2**24


@dataclass(frozen=True)
class TokenSelect(Specialisation):
    """The token selection of [rows, vocab] F32 logits (`decoder_ops.token_select`: the greedy token, its
    log-softmax, the non-finite logits' count and first index); with `top_k`, the k most likely tokens and
    their log-softmax instead (`decoder_ops.token_top_k`, its first stage on chunks of `chunk` columns)."""

    family: ClassVar[str] = "token_select"
    rows: int = token(Int("R"))
    vocab: int = token(Int("V"))
    top_k: int | None = token(OptionalInt("k"), default=None)
    chunk: int | None = token(OptionalInt("W"), default=None)

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.top_k is None) != (self.chunk is None):
            raise ValueError("a top-k selection has both k and its chunk width, the greedy one neither")
        if self.vocab + (self.chunk or 0) > INDEX_BOUND:
            raise ValueError(
                f"a selection's column indices go through F32 exactly up to {INDEX_BOUND}, got {self.vocab}"
            )


@dataclass(frozen=True)
class TokenSample(Specialisation):
    """A sampled token of [rows, vocab] F32 logits (`contracts/sampling.sample`) from its `top_k` best candidates."""

    family: ClassVar[str] = "token_sample"
    rows: int = token(Int("R"))
    vocab: int = token(Int("V"))
    top_k: int = token(Int("k"))
