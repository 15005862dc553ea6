"""Structural checks on the emitted prefill module (printed, verified MLIR; helpers of tests/test_structure.py).

Pins the dense per-layer inputs' width-256 RMS schedule where the compiler sees it: in the un-inlined
module (one function per op specialisation) and in the shipped, inlined entry.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from test_structure import Emitted, calls, defs, functions, has_reduce, operands, ops, warp_stages

from gemma3n_iree.contracts.emulation import contract_scalar
from gemma3n_iree.contracts.policy import CONTRACTS, F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.entries import PrefillEntry
from gemma3n_iree.emitters.prefill import PrefillModuleSpec, emit_prefill_module
from gemma3n_iree.emitters.render import ModuleBuilder, f32_hex
from gemma3n_iree.emitters.specialisations import DensePle, LaneXorSum, MlxRmsNorm
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.text_config import builtin_text_config

AUDIO, TEXT = builtin_config("tiny"), builtin_text_config("tiny")
CAP, CLIPS = 256, 1


@cache
def prefill_module(contract_name: str, text: str = "tiny") -> Emitted:
    captured: dict[str, object] = {}
    original = ModuleBuilder.build

    def build(self: ModuleBuilder, inline: bool = True) -> str:
        captured["builder"] = self
        captured["flat"] = original(self, inline=False)
        return original(self, inline=inline)

    spec = PrefillModuleSpec(
        AUDIO if text == "tiny" else builtin_config(text),
        builtin_text_config(text),
        CONTRACTS[contract_name],
        (CAP,),
        (CLIPS,),
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ModuleBuilder, "build", build)
        mlir = emit_prefill_module(spec)
    return Emitted(mlir, captured["flat"], captured["builder"])  # type: ignore[arg-type]


def _ple_sum_symbol(text=TEXT) -> str:
    return LaneXorSum(CAP * text.num_hidden_layers, 256, 8, square=True).symbol


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
def test_ple_norm_sum_is_32_lanes_by_8_reads_then_one_xor_butterfly(contract):
    flat = functions(prefill_module(contract.name).flat)
    norm = MlxRmsNorm(CAP * TEXT.num_hidden_layers, 256).symbol
    assert _ple_sum_symbol() in calls(flat[norm])
    body = flat[_ple_sum_symbol()]
    rows = CAP * TEXT.num_hidden_layers
    # 256 values -> [rows, 32 lanes, 8 adjacent reads], no padding (32 x 8 = 256 exactly)
    assert re.search(rf"stablehlo\.reshape %\w+ : \(tensor<{rows}x256xf32>\) -> tensor<{rows}x32x8xf32>", body)
    assert not ops(body, "stablehlo.pad")
    # each lane: 0 + r0 + r1 + ... + r7, serially (8 adds, each consuming the previous one)
    d = defs(body)
    reads = [n for n, (op, rest) in d.items() if op == "stablehlo.slice" and "x32x8xf32>" in rest]
    assert len(reads) == 8
    serial = [n for n, (op, rest) in d.items() if op == "stablehlo.add" and f"tensor<{rows}x32xf32>" in rest]
    assert len(serial) == 8
    for prev, cur in zip(serial, serial[1:]):
        assert prev in operands(d[cur][1]), f"{cur} does not accumulate {prev}"
    # one warp: exactly one complete 16, 8, 4, 2, 1 butterfly and no second (warp-totals) stage
    assert warp_stages(body) == 1
    assert len(ops(body, "stablehlo.add")) == 8 + 5
    assert not has_reduce(body)
    if contract is F32_REFERENCE:  # F32 squares are materialised (no FMA into the serial adds)
        assert ops(body, "stablehlo.optimization_barrier")


def test_ple_norm_rounds_twice_in_mlx_order():
    """round(x * inv) then round(. * w): two rounding points, the weight multiply between them."""
    flat = functions(prefill_module(MLX_CUDA_V1.name).flat)
    body = flat[MlxRmsNorm(CAP * TEXT.num_hidden_layers, 256).symbol]
    d = defs(body)
    rounds = [n for n, (op, rest) in d.items() if op == "stablehlo.reduce_precision"]
    assert len(rounds) == 2 and all("e8m7" in d[n][1] for n in rounds)
    first_in = operands(d[rounds[0]][1])[0]
    second_in = operands(d[rounds[1]][1])[0]
    assert d[first_in][0] == "stablehlo.multiply"  # x * inv
    assert d[second_in][0] == "stablehlo.multiply" and rounds[0] in operands(d[second_in][1])  # round(.) * w
    # 1 / sqrt, both in F64 then rounded to F32 (IEEE F32 results on CUDA too, whose F32 sqrt and 1 / x are
    # approximate); the only F32 divide is the mean (sum / 256, exact); no rsqrt
    sqrts, divides = ops(body, "stablehlo.sqrt"), ops(body, "stablehlo.divide")
    assert len(sqrts) == 1 and sqrts[0].endswith("xf64>")
    assert sorted(line.rsplit("x", 1)[-1] for line in divides) == ["f32>", "f64>"]
    assert not ops(body, "stablehlo.rsqrt")


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
def test_model_constants_are_the_contracts(contract):
    """BF16 constants under mlx-cuda-v1 (45.25-style embed scale, 2048^-0.5 and 2^-0.5 as BF16), F32 otherwise."""
    flat = functions(prefill_module(contract.name).flat)
    merge = next(b for n, b in flat.items() if n.startswith("token_merge_"))
    ple = next(b for n, b in flat.items() if n.startswith("dense_ple_"))
    h = TEXT.hidden_size
    assert f32_hex(contract_scalar(contract, h**0.5)) in _scalars(merge)
    for value in (16.0, h**-0.5, 2.0**-0.5):
        assert f32_hex(contract_scalar(contract, value)) in _scalars(ple), value
    if contract is MLX_CUDA_V1:
        assert f32_hex(contract_scalar(contract, 2.0**-0.5)) == "0x3F350000"  # 0.70703125
        assert f32_hex(contract_scalar(contract, 2048**-0.5)) == "0x3CB50000"  # 0.0220947265625
        assert f32_hex(contract_scalar(contract, 2048**0.5)) == "0x42350000"  # 45.25


def _scalars(body: str) -> set[str]:
    """The f32 scalar constants of a printed body, as exact hex bit patterns (printed hex or decimal)."""
    out = set()
    for value in re.findall(r"stablehlo\.constant dense<([^>]+)> : tensor<f32>", body):
        out.add(value.upper().replace("0X", "0x") if value.lower().startswith("0x") else f32_hex(float(value)))
    return out


def test_inlined_entry_keeps_the_schedule_and_has_no_reduce():
    text = prefill_module(MLX_CUDA_V1.name).text
    body = functions(text)[PrefillEntry(CAP, CLIPS).symbol]
    assert not has_reduce(body)  # every sum is a pinned lane/XOR schedule
    rows = CAP * TEXT.num_hidden_layers
    assert len(re.findall(rf"-> tensor<{rows}x32x8xf32>", body)) == 1  # the PLE norm's lane grid
    assert warp_stages(body) >= 3  # PLE norm + the hard embedder's two norms (one warp stage each at least)
    # the big tables are inputs, never parameters; the resident weights are
    globals_ = re.findall(r'#flow\.parameter\.named<"model"::"([^"]+)">', text)
    assert sorted(globals_) == sorted(
        [
            "model.embed_audio.embedding.weight",
            "model.embed_audio.hard_embedding_norm.weight",
            "model.embed_audio.embedding_projection.weight",
            "model.language_model.per_layer_model_projection.weight",
            "model.language_model.per_layer_projection_norm.weight",
        ]
    )
    assert "embed_tokens" not in text


def test_real_shapes_emit_and_keep_the_schedule():
    """E4B: 35 layers x 256 from 2048; the same one-warp schedule at the real width."""
    e4b = builtin_text_config("e4b")
    flat = functions(prefill_module(MLX_CUDA_V1.name, "e4b").flat)
    body = flat[_ple_sum_symbol(e4b)]
    assert warp_stages(body) == 1 and not has_reduce(body)
    assert DensePle(CAP, 2048, 35, 256).symbol in flat
