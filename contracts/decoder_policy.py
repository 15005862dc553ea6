"""The text decoder's numeric contract as data: every op family, its rounding points and reduction schedules.

One table serves both contracts.  Under `mlx-cuda-v1` (BF16 operands, F32 contraction results) every point
marked `rounds` is a BF16 round-to-nearest-even, placed where MLX (mlx-vlm's Gemma 3n on mx.fast kernels)
rounds: each MLX op on BF16 arrays rounds its result, Python scalars become BF16 constants, and values MLX
keeps in F32 (`rounds=False`: the router's modalities, the AltUp coefficient matmuls, the fused attention's
scores) are F32 islands.  Under `f32-reference` the same graph runs with the same schedules and no rounding
at all.  Where MLX deviates from transformers' *semantics* (spec gemma3n-text §9-10) the contract keeps
transformers' semantics: a KV-shared layer's query is rotated at its own position p (MLX: p + S), prefill
text embeddings are scaled by sqrt(hidden) (mlx-vlm's prefill path forgets it), and the AltUp magnitude
keeps transformers' floor (mean square >= 1e-5; MLX has none and gives 0 * inf on an all-zero row).

The emulation (`decoder_ops.py`) reads this table at every rounding point (`rnd(contract, x, point)`
refuses a name that is not here), templates are meant to read it the same way, and its digest is part of
`decoder_contract_identity`, so any change to it changes every decoder artifact's identity.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .policy import NumericContract


@dataclass(frozen=True)
class Point:
    """A named rounding point: BF16 rounding under a rounding contract when `rounds`, else an F32 island."""

    name: str
    rounds: bool
    note: str = ""


@dataclass(frozen=True)
class Reduction:
    """How one reduction is associated: `block-sum` (`decoder_ops.block_sum`, `reads` adjacent values per
    thread), `lane-xor` (`emulation.lane_xor_sum`, the norms'), `sequential` (left to right in F32) or
    `contraction` (BF16/F32 operands, an exactly rounded F32 result: a backend's order is judged by the
    accumulation envelope)."""

    name: str
    schedule: str
    reads: int = 0
    note: str = ""


@dataclass(frozen=True)
class OpFamily:
    name: str
    computes: str
    semantics: str
    points: tuple[Point, ...] = ()
    reductions: tuple[Reduction, ...] = ()


R, ISLAND = True, False

#: Reads per thread of the softmax denominators' block sum (F32 values: 16-byte loads of 4).
DENOMINATOR_READS = 4
#: Reads per thread of the row means' block sum (BF16 values: 16-byte loads of 8, as the norms' sums).
MEAN_READS = 8

FAMILIES: tuple[OpFamily, ...] = (
    OpFamily(
        "embedding",
        "token rows -> inputs_embeds [S, D] and per_layer_inputs [S, L, P] (decode steps: the same "
        "on the new tokens' host-gathered rows)",
        "the prefill stage's own functions (contracts/prefill.py: scaled_text_rows, dense_ple): "
        "round(row * 45.25); dense PLE with the width-P two-rounding norm; transformers' scaling of text rows "
        "(mlx-vlm's prefill path leaves them unscaled, spec §9.3)",
    ),
    OpFamily(
        "rms_norm",
        "x [.., W] -> x * rsqrt(sum(x^2)/W + eps) * w; v_norm is the same with w = 1",
        "mx.fast.rms_norm (spec §9.5): two rounding points, round(round(x * inv) * w); transformers rounds once "
        "(§6.1).  The same bits as the prefill stage's width-256 norm (emulation.mlx_rms_norm); "
        "rsqrt = 1/sqrt, both IEEE (templates take the sqrt in F64)",
        (Point("rms_norm.normalized", R), Point("rms_norm.scaled", R, "exact with w = 1 (v_norm)")),
        (Reduction("rms_norm.sum_of_squares", "lane-xor", 8, "squares accumulated serially from 0 per lane"),),
    ),
    OpFamily(
        "mean",
        "x [.., W] -> round(round(sum(x)) * round(1/W)): the AltUp magnitudes' and the sparsity statistics' row means",
        "mx.mean = sum(x) * (1/W) in the array's dtype (checked against mlx 0.32.4: 100 % of rows); equal to "
        "one rounding of sum/W whenever W is a power of two (every released width)",
        (Point("mean.sum", R), Point("mean.scale", R)),
        (Reduction("mean.sum", "block-sum", MEAN_READS, "more than 1024 threads' worth: each thread loops"),),
    ),
    OpFamily(
        "altup.magnitude",
        "streams -> rescaled to the RMS of stream 0 (init: from inputs_embeds through "
        "altup_projections; collapse: through altup_unembed_projections, then the mean of the streams)",
        "MLX's order x * (t / m) (spec §9.9); transformers' floor: m = sqrt(max(mean(x^2), 1e-5)) "
        "(1e-5 as a BF16 constant under rounding contracts), none on the target t",
        (
            Point("altup.projection", R),
            Point("altup.square", R),
            Point("altup.root", R),
            Point("altup.ratio", R),
            Point("altup.scaled", R),
            Point("collapse.sum", R),
            Point("collapse.scale", R),
        ),
        (Reduction("collapse.sum", "sequential", 0, "stream 0 + stream 1 + ... in F32 (mx.mean over axis 0)"),),
    ),
    OpFamily(
        "altup.router",
        "stream 0 -> modalities [S, n] = tanh(router_norm(x) * (1/D) @ W_router^T)",
        "MLX: the linear rounds (BF16 operands), tanh runs in F32 and the modalities STAY F32 (spec §9.4; "
        "transformers rounds them)",
        (
            Point("router.scale", R, "exact: a power of two"),
            Point("router.linear", R),
            Point("router.tanh", ISLAND, "transformers rounds here"),
        ),
    ),
    OpFamily(
        "altup.predict",
        "streams [n, S, D] -> predictions: pred_i = sum_j C[i, j] X_j + X_i, "
        "C = modalities @ clip(prediction_coefs, +-120)^T",
        "MLX (spec §9.4): coefficients and the stream mix in F32 with coefficient weights clipped at "
        "altup_coef_clip (transformers: BF16 coefficients, unclipped at inference), one rounding at the end",
        (Point("predict.coefs", ISLAND), Point("predict.mix", ISLAND), Point("predict.out", R)),
        (
            Reduction("predict.coefs", "sequential", 0, "K = n products, F32, no fused multiply-add"),
            Reduction("predict.mix", "sequential", 0, "over streams j = 0..n-1, F32, then + X_i"),
        ),
    ),
    OpFamily(
        "altup.correct",
        "predictions, layer output -> corrected: corr_i = (out - pred_0) * c_i + pred_i, "
        "c = modalities' @ clip(correction_coefs)^T + 1",
        "MLX (spec §9.4): the coefficients and the product in F32 (BF16 innovation times F32 coefficient), "
        "one rounding at the end",
        (
            Point("correct.coefs", ISLAND),
            Point("correct.innovation", R),
            Point("correct.product", ISLAND),
            Point("correct.out", R),
        ),
        (Reduction("correct.coefs", "sequential", 0, "K = n products, F32, then + 1"),),
    ),
    OpFamily(
        "laurel",
        "xn -> xn + post_laurel_norm(xn @ L^T @ R^T)",
        "MLX and transformers agree (BF16 linears)",
        (Point("laurel.left", R), Point("laurel.right", R), Point("laurel.residual", R)),
    ),
    OpFamily(
        "attention.projections",
        "xn -> q [S, H, hd], k, v [S, K, hd] (q_norm, k_norm per head, v_norm without weight), RoPE on q and k",
        "BF16 linears; keys stored in the KV cache after k_norm and RoPE, values after v_norm",
        (Point("attention.q_proj", R), Point("attention.k_proj", R), Point("attention.v_proj", R)),
    ),
    OpFamily(
        "rope",
        "x [.., hd], position p -> x * cos + rotate_half(x) * sin (neox halves)",
        "transformers' form (spec §4.3, §9.7): inv_freq[i] = 1 / theta^(2i/hd) as an F32 (power correctly "
        "rounded, then an F32 reciprocal), angle = f32(p) * inv_freq in F32, cos/sin of that angle correctly "
        "rounded to F32 then to BF16 (host tables), three rounding points",
        (Point("rope.table", R), Point("rope.x_cos", R), Point("rope.rot_sin", R), Point("rope.sum", R)),
    ),
    OpFamily(
        "attention.core",
        "q, the layer's key/value columns (kv_cache.py) -> softmax(q k^T) v per head, "
        "query head h on K/V head h // (H/K); scale 1.0, no soft-cap",
        "a fused attention (MLX sdpa): scores and the softmax in F32, masked columns selected to "
        "finfo(bf16).min before the max; probabilities rounded to BF16 as the operand of P.V (as transformers' "
        "eager attention does)",
        (
            Point("attention.scores", ISLAND, "transformers' eager attention rounds here"),
            Point("attention.probs", R),
            Point("attention.output", R),
        ),
        (
            Reduction("attention.scores", "contraction", 0, "over hd"),
            Reduction(
                "attention.denominator",
                "block-sum",
                DENOMINATOR_READS,
                "over the key columns in column order (ring order for sliding layers)",
            ),
            Reduction("attention.values", "contraction", 0, "over the key columns"),
        ),
    ),
    OpFamily(
        "attention.residual",
        "attention, laurel -> h = ((a + post_attention_norm(o_proj(attn))) + lau) * 2^-0.5",
        "MLX: a BF16 multiply by 0.70703125 (spec §9.4; transformers divides by sqrt(2) in F32)",
        (
            Point("attention.o_proj", R),
            Point("residual.attention", R),
            Point("residual.laurel", R),
            Point("residual.scale", R),
        ),
    ),
    OpFamily(
        "mlp",
        "h -> h + post_ffw_norm(down((act(gate(f)) * up(f)))), f = pre_ffw_norm(h); "
        "act = gelu_tanh, after Gaussian top-k in sparse layers",
        "MLX's gelu_topk (spec §4.5, §9.6): mean, std = sqrt(mean(round((g - mean)^2))) two-pass, "
        "cutoff = mean + std * z with z = Phi^-1(s) as F32 then the activation dtype (0.95 -> 1.6484375), "
        "relu(g - cutoff), every op rounded",
        (
            Point("mlp.gate", R),
            Point("sparsity.centered", R),
            Point("sparsity.square", R),
            Point("sparsity.std", R),
            Point("sparsity.std_scaled", R),
            Point("sparsity.cutoff", R),
            Point("sparsity.shifted", R),
            Point("mlp.up", R),
            Point("mlp.product", R),
            Point("mlp.down", R),
            Point("residual.mlp", R),
        ),
    ),
    OpFamily(
        "gelu",
        "x -> 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
        "mlx.nn.gelu_approx: a chain of elementwise ops, each rounded, constants as BF16 (checked against "
        "mlx 0.32.4 on every finite BF16 |x| < 1e4: 100 %)",
        (
            Point("gelu.cube", R, "exact: a BF16 cube fits F32"),
            Point("gelu.cubic_term", R),
            Point("gelu.inner", R),
            Point("gelu.scaled_inner", R),
            Point("gelu.tanh", R),
            Point("gelu.one_plus", R),
            Point("gelu.half_x", R, "exact"),
            Point("gelu.out", R),
        ),
    ),
    OpFamily(
        "ple_gate",
        "corrected stream 0, per_layer_input -> added to streams 1.. : post_norm(proj(gelu(gate(corr_0 * s)) * ple_l))",
        "MLX and transformers agree (BF16 ops)",
        (
            Point("ple_gate.scale", R),
            Point("ple_gate.linear", R),
            Point("ple_gate.product", R),
            Point("ple_gate.projection", R),
            Point("ple_gate.residual", R),
        ),
    ),
    OpFamily(
        "head",
        "collapsed stream -> final norm -> tied LM head -> tanh(x / cap) * cap",
        "both: three rounded elementwise ops for the soft-cap",
        (Point("head.linear", R), Point("softcap.divide", R), Point("softcap.tanh", R), Point("softcap.scale", R)),
    ),
    OpFamily(
        "selection",
        "logits [R, V] -> the greedy token, its log-softmax, the count and first index of non-finite logits; "
        "on request the k most likely tokens and their log-softmax",
        "on the F32 logits, nothing rounded: the first index of the largest logit (numpy.argmax), "
        "log-softmax (x - m) - log(sum(exp(x - m))) with the backend's exp and log; top-k by logit "
        "descending, index ascending",
        (),
        (
            Reduction(
                "selection.denominator",
                "block-sum",
                DENOMINATOR_READS,
                "exp(x - m) over the vocabulary in column order",
            ),
        ),
    ),
)

POINTS: dict[str, Point] = {p.name: p for f in FAMILIES for p in f.points}
REDUCTIONS: dict[str, Reduction] = {r.name: r for f in FAMILIES for r in f.reductions}
assert len(POINTS) == sum(len(f.points) for f in FAMILIES), "rounding point names must be unique"


def rounds(contract: NumericContract, point: str) -> bool:
    """Whether `point` rounds to BF16 under `contract` (a point not in the table is an error)."""
    try:
        entry = POINTS[point]
    except KeyError:
        raise ValueError(f"unknown decoder rounding point {point!r}") from None
    return entry.rounds and contract.rounds_at(point)


def table_digest() -> str:
    """A digest of the whole table (every family, point and schedule)."""
    return hashlib.sha256(repr((FAMILIES, DENOMINATOR_READS, MEAN_READS)).encode()).hexdigest()[:16]


def decoder_contract_identity(contract: NumericContract) -> str:
    return f"{contract.identity()}:decoder-table={table_digest()}"


def markdown_table() -> str:
    """The table as markdown (contracts/DECODER.md embeds this output; a test keeps them equal)."""
    lines = [
        "| family | computes | rounding points under mlx-cuda-v1 (in order; *italic*: F32 island) | "
        "reductions | semantics |",
        "|---|---|---|---|---|",
    ]
    for f in FAMILIES:
        points = ", ".join(f"`{p.name}`" if p.rounds else f"*`{p.name}`*" for p in f.points) or "—"
        reductions = (
            ", ".join(f"`{r.name}`: {r.schedule}" + (f" ({r.reads} reads)" if r.reads else "") for r in f.reductions)
            or "—"
        )
        lines.append(f"| {f.name} | {f.computes} | {points} | {reductions} | {f.semantics} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
