"""Structural (FileCheck-style) checks on emitted MLIR text.

Three views of the emitted text are used:
* the single-op probe module (`emitters.probe.probe_module`: one op inlined behind `@main`);
* the production audio module as shipped (`emit_audio_module`: everything inlined into one function
  per entry) -- what the compiler actually sees;
* the same module un-inlined: `ModuleBuilder.build` is wrapped so that the builder used by
  `emit_audio_module` is captured and also built with `inline=False`, which keeps one verified,
  printed function per op specialisation (for per-function counts and the call graph).
Printed (verified) text is checked rather than template text wherever possible, so the checks hold
for what the MLIR parser made of the templates.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

import pytest

from gemma3n_iree.contracts.emulation import lane_threads
from gemma3n_iree.contracts.policy import CONTRACTS, F32_REFERENCE, MLX_CUDA_V1, NumericContract
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.entries import EncodeEntry
from gemma3n_iree.emitters.ops import OpEmitter
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.emitters.render import ModuleBuilder
from gemma3n_iree.emitters.specialisations import CumulativeGroupNorm, LaneXorSum, PrefixScan, RmsNorm
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.audio_weights import HF_LAYOUT, audio_weight_specs

TINY = builtin_config("tiny")


# ---------------------------------------------------------------------------------------------- parsing
@dataclass
class Emitted:
    text: str  # as emit_audio_module returns it (inlined)
    flat: str  # the same builder built with inline=False
    builder: ModuleBuilder


def emit_captured(spec: AudioModuleSpec) -> Emitted:
    captured: dict[str, object] = {}
    original = ModuleBuilder.build

    def build(self: ModuleBuilder, inline: bool = True) -> str:
        captured["builder"] = self
        captured["flat"] = original(self, inline=False)
        return original(self, inline=inline)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ModuleBuilder, "build", build)
        text = emit_audio_module(spec)
    return Emitted(text, captured["flat"], captured["builder"])  # type: ignore[arg-type]


@cache
def tiny_module(contract_name: str, buckets: tuple[int, ...] = (100,), clips: tuple[int, ...] = (1,)) -> Emitted:
    return emit_captured(AudioModuleSpec(TINY, CONTRACTS[contract_name], buckets, clips))


_FUNC = re.compile(r"^  func\.func (?:private )?@([\w$.]+)\((.*?)\{\n(.*?)^  \}$", re.M | re.S)


def functions(text: str) -> dict[str, str]:
    """symbol -> body text of every function defined in a printed module."""
    return {m.group(1): m.group(3) for m in _FUNC.finditer(text)}


def ops(body: str, name: str) -> list[str]:
    """The lines of `body` whose op is exactly `name` (e.g. 'stablehlo.add')."""
    pat = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?\"?" + re.escape(name) + r"\b(?!_)\"?", re.M)
    return [body[m.start() : body.index("\n", m.start())] for m in pat.finditer(body)]


def has_reduce(body: str) -> bool:
    """A `stablehlo.reduce` or `reduce_window` (not `reduce_precision`)."""
    return bool(re.search(r"stablehlo\.reduce\b|reduce_window", body))


def calls(body: str) -> list[str]:
    return re.findall(r"(?:func\.)?call @([\w$.]+)\(", body)


_DEF = re.compile(r"^\s*(%[\w]+)(?::\d+)? = \"?([\w.]+)\"?[ (](.*)$", re.M)


def defs(body: str) -> dict[str, tuple[str, str]]:
    """SSA name -> (op name, rest of the line) for single-line ops."""
    return {m.group(1): (m.group(2), m.group(3)) for m in _DEF.finditer(body)}


def operands(rest: str) -> list[str]:
    return re.findall(r"%[\w]+", rest.split(" : ")[0])


_SLICE = re.compile(r"^(%\w+) \[(.*)\]")


def halving_steps(body: str) -> dict[str, tuple[str, int]]:
    """XOR-butterfly halving adds: result -> (source, m) for `add(slice(s)[..., 0:m], slice(s)[..., m:2m])`
    where s has 2m lanes on its last axis."""
    d = defs(body)
    slices: dict[str, tuple[str, tuple[int, int], int]] = {}
    for name, (op, rest) in d.items():
        if op != "stablehlo.slice":
            continue
        m = _SLICE.match(rest)
        if not m:
            continue
        last = m.group(2).split(",")[-1].strip()
        lo, hi = (int(v) for v in last.split(":")[:2])
        src_type = re.search(r": \(tensor<([\dx]+)xf32>\)", rest)
        src_last = int(src_type.group(1).split("x")[-1]) if src_type else -1
        slices[name] = (m.group(1), (lo, hi), src_last)
    steps: dict[str, tuple[str, int]] = {}
    for name, (op, rest) in d.items():
        if op != "stablehlo.add":
            continue
        args = operands(rest)
        if len(args) != 2 or not all(a in slices for a in args):
            continue
        (sa, ra, na), (sb, rb, nb) = slices[args[0]], slices[args[1]]
        m = ra[1] - ra[0]
        if sa == sb and ra == (0, m) and rb == (m, 2 * m) and na == nb == 2 * m:
            steps[name] = (sa, m)
    return steps


def warp_stages(body: str) -> int:
    """Complete 16, 8, 4, 2, 1 butterflies (each step consuming the previous step's result)."""
    steps = halving_steps(body)
    complete = 0
    for name, (_src, m) in steps.items():
        if m != 1:
            continue
        chain, cur = [1], name
        while True:
            src = steps[cur][0]
            if src in steps and steps[src][1] == 2 * steps[cur][1]:
                cur = src
                chain.append(steps[cur][1])
            else:
                break
        # the first step (m=16) reads a reshape/pad of 32 lanes, not another step
        if chain == [1, 2, 4, 8, 16]:
            complete += 1
    return complete


# ---------------------------------------------------------------------------------------------- prefix scan
SCAN_WIDTHS = (5, 7, 25, 130, 750, 1499, 4096)


def _assert_scan_body(body: str, where: str) -> None:
    assert len(ops(body, "stablehlo.add")) == 17, f"{where}: {len(ops(body, 'stablehlo.add'))} adds"
    assert len(ops(body, "stablehlo.concatenate")) == 3, where
    for banned in ("stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.convert"):
        assert not ops(body, banned), f"{where}: has {banned}"
    assert not has_reduce(body), where


@pytest.mark.parametrize("width", SCAN_WIDTHS)
def test_prefix_scan_probe_structure(width):
    text = probe_module(MLX_CUDA_V1, lambda o: o.prefix_scan(2, width))
    body = functions(text)["main"]
    _assert_scan_body(body, f"probe prefix_scan W{width}")
    assert not calls(body), "probe module is inlined"


@pytest.mark.parametrize("width", SCAN_WIDTHS)
def test_prefix_scan_fragment_structure(width):
    builder = ModuleBuilder("scan")
    func = OpEmitter(builder, MLX_CUDA_V1).prefix_scan(3, width)
    frag = builder.fragments[func.symbol].text
    assert len(re.findall(r"= stablehlo\.add ", frag)) == 17
    assert len(re.findall(r"= stablehlo\.concatenate ", frag)) == 3
    assert not has_reduce(frag) and "convert" not in frag


def test_prefix_scans_in_production_module():
    flat = functions(tiny_module(MLX_CUDA_V1.name).flat)
    scans = [name for name in flat if name.startswith("prefix_scan_")]
    assert len(scans) == 2  # one per SSCP stage (frames 50 and 25)
    for name in scans:
        _assert_scan_body(flat[name], name)


# ---------------------------------------------------------------------------------------------- convolutions
_CONV = re.compile(
    r"stablehlo\.convolution\(.*? : \((tensor<[\dx]+x(\w+)>), (tensor<[\dx]+x(\w+)>)\) -> "
    r"tensor<([\dx]+)x(\w+)>$",
    re.M,
)
PRODUCTION = [c for c in CONTRACTS.values() if c.production]


@pytest.mark.parametrize("contract", PRODUCTION, ids=lambda c: c.name)
def test_sscp_convolutions_types(contract: NumericContract):
    text = tiny_module(contract.name).text
    convs = _CONV.findall(text)
    assert len(convs) == len(re.findall(r"stablehlo\.convolution", text)) == 2, "two SSCP convolutions"
    want = contract.operand_dtype
    for _lt, lhs, _rt, rhs, shape, result in convs:
        assert (lhs, rhs) == (want, want), f"{contract.name}: convolution operands {lhs}, {rhs}"
        assert result == "f32", f"{contract.name}: convolution result {shape}x{result}"
    assert not re.search(r"stablehlo\.convolution.*-> tensor<[\dx]+xbf16>$", text, re.M)


def test_mlx_sscp_convolution_bf16_operands_f32_result():
    text = tiny_module(MLX_CUDA_V1.name).text
    lines = [l for l in text.splitlines() if "stablehlo.convolution" in l]
    assert lines and all(
        re.search(r": \(tensor<[\dx]+xbf16>, tensor<[\dx]+xbf16>\) -> tensor<[\dx]+xf32>$", l) for l in lines
    )


@pytest.mark.parametrize("contract", PRODUCTION, ids=lambda c: c.name)
def test_contractions_operand_dtype(contract: NumericContract):
    text = tiny_module(contract.name).text
    dots = [l for l in text.splitlines() if "stablehlo.dot_general" in l]
    assert len(dots) > 10
    want = contract.operand_dtype
    for l in dots:
        m = re.search(r": \(tensor<[\dx]+x(\w+)>, tensor<[\dx]+x(\w+)>\) -> tensor<[\dx]+x(\w+)>$", l)
        assert m and m.groups() == (want, want, "f32"), l[-160:]


def test_f32_reference_has_no_bf16_rounding_or_operands():
    text = tiny_module(F32_REFERENCE.name).text
    assert "e8m7" not in text
    for l in text.splitlines():
        if "stablehlo.dot_general" in l or "stablehlo.convolution" in l:
            operand_types = l.rsplit(" : (", 1)[1].split(") ->")[0]
            assert "bf16" not in operand_types, l[-160:]
    # the weights themselves stay BF16 parameters (they are converted to F32 in the graph)
    assert re.search(r"util\.global private @w_\w+ = .*xbf16>", text)


# ---------------------------------------------------------------------------------------------- reductions
def test_no_float_add_reduce_in_production():
    """Every float sum is a pinned schedule: the only `stablehlo.reduce`s are the softmax row max
    (order-independent) and integer counts."""
    for contract in PRODUCTION:
        text = tiny_module(contract.name).text
        reduces = [l for l in text.splitlines() if re.search(r"stablehlo\.reduce\b(?!_)", l)]
        assert reduces
        for l in reduces:
            if "applies stablehlo.maximum" in l:
                continue
            assert "applies stablehlo.add" in l and re.search(r"tensor<[\dx]+xi32>, tensor<i32>\)", l), l
        assert "reduce_window" not in text


def _stages(width: int, reads: int) -> int:
    return 1 if lane_threads(width, reads) == 32 else 2


@pytest.mark.parametrize(
    "rows,width,reads,square",
    [
        (4, 128, 4, False),
        (4, 64, 4, False),
        (4, 32, 4, False),
        (4, 1536, 8, True),
        (4, 256, 8, True),
        (4, 24, 1, False),
        (3, 4096, 4, False),
        (2, 8192, 8, True),
        (2, 1024, 1, False),
    ],
)
def test_lane_xor_sum_halving_steps(rows, width, reads, square):
    """5 halving steps (slice [0:m] + slice [m:2m] -> add, m = 16..1) per warp stage, `reads` serial adds."""
    text = probe_module(MLX_CUDA_V1, lambda o: o.lane_xor_sum(rows, width, reads, square))
    body = functions(text)["main"]
    stages = _stages(width, reads)
    assert warp_stages(body) == stages
    assert len(halving_steps(body)) == 5 * stages
    assert len(ops(body, "stablehlo.add")) == reads + 5 * stages
    assert len(ops(body, "stablehlo.multiply")) == (1 if square else 0)
    assert not has_reduce(body)


def test_every_lane_sum_function_in_production_has_its_butterflies():
    flat = functions(tiny_module(MLX_CUDA_V1.name).flat)
    lanes = [n for n in flat if n.startswith("lane_xor_sum_")]
    assert lanes
    for name in lanes:
        lane = LaneXorSum.from_symbol(name)
        stages = _stages(lane.width, lane.reads)
        assert warp_stages(flat[name]) == stages, name
        assert len(ops(flat[name], "stablehlo.add")) == lane.reads + 5 * stages, name


def test_group_norm_uses_four_lane_sums():
    flat = functions(tiny_module(MLX_CUDA_V1.name).flat)
    norms = [n for n in flat if n.startswith("cumulative_group_norm_")]
    assert len(norms) == 2
    for name in norms:
        norm = CumulativeGroupNorm.from_symbol(name)
        b, t, f, ch = norm.clips, norm.frames, norm.freq, norm.channels
        called = calls(flat[name])
        lane = [c for c in called if c.startswith("lane_xor_sum_")]
        assert len(lane) == 4, f"{name}: {lane}"  # 2 per statistic (channels, then frequency)
        assert Counter(lane) == Counter({LaneXorSum(b * t * f, ch, 4).symbol: 2, LaneXorSum(b * t, f, 4).symbol: 2})
        assert called.count(PrefixScan(b, t).symbol) == 2
        assert not has_reduce(flat[name]), name


def test_every_rms_norm_uses_squared_lane_sum():
    flat = functions(tiny_module(MLX_CUDA_V1.name).flat)
    norms = [n for n in flat if n.startswith("rms_norm_")]
    assert len(norms) >= 3  # conformer [1,25], embedder soft [1,7] and hard [128] (+ noscale post norms)
    for name in norms:
        d = RmsNorm.from_symbol(name).d
        lane = [c for c in calls(flat[name]) if c.startswith("lane_xor_sum_")]
        assert len(lane) == 1, name
        sumsq = LaneXorSum.from_symbol(lane[0])
        assert (sumsq.width, sumsq.reads, sumsq.square) == (d, 8, True), name
        assert not has_reduce(flat[name]), name
    # and every RMS norm call site in the graph goes through one of them
    callers = [n for n, body in flat.items() for c in calls(body) if c.startswith("rms_norm_")]
    assert len(callers) >= 8


def test_softmax_sum_is_lane_sum():
    flat = functions(tiny_module(MLX_CUDA_V1.name).flat)
    attn = [n for n in flat if n.startswith("attention_")]
    assert len(attn) == 1
    context = TINY.context_size
    lane = [c for c in calls(flat[attn[0]]) if c.startswith("lane_xor_sum_")]
    assert len(lane) == 1
    softmax_sum = LaneXorSum.from_symbol(lane[0])
    assert (softmax_sum.width, softmax_sum.reads, softmax_sum.square) == (context, 1, False)
    # the only reduce in attention is the (exact) row max
    reduces = [l for l in flat[attn[0]].splitlines() if re.search(r"stablehlo\.reduce\b(?!_)", l)]
    assert len(reduces) == 1 and "applies stablehlo.maximum" in reduces[0]


def _reach(flat: dict[str, str], root: str) -> Counter:
    """How many times each function is executed per call of `root` (call-graph multiplicity)."""
    total: Counter = Counter()

    def visit(name: str, times: int) -> None:
        for callee in calls(flat[name]):
            total[callee] += times
            visit(callee, times)

    visit(root, 1)
    return total


def test_inlined_module_keeps_every_lane_sum_butterfly():
    """The inlined entry (what the compiler sees) contains exactly as many complete 32-lane butterflies
    as the un-inlined call graph says it should: no pinned sum was lost or folded."""
    emitted = tiny_module(MLX_CUDA_V1.name)
    flat = functions(emitted.flat)
    entry = EncodeEntry(100, 1).symbol
    reach = _reach(flat, entry)
    lanes = {f: LaneXorSum.from_symbol(f) for f in reach if f.startswith("lane_xor_sum_")}
    want = sum(n * _stages(lanes[f].width, lanes[f].reads) for f, n in reach.items() if f in lanes)
    inlined = functions(emitted.text)
    assert set(inlined) == {entry}
    assert warp_stages(inlined[entry]) == want
    assert want >= 8 + 2 * 9 + 3  # 2 group norms x 4 sums, 9+ RMS norms per block x 2 layers, embedders


# ---------------------------------------------------------------------------------------------- mel boundary
def test_mel_boundary_rounds_before_padding_and_convolution():
    text = tiny_module(MLX_CUDA_V1.name).text
    body = functions(text)[EncodeEntry(100, 1).symbol]
    lines = body.splitlines()
    first = lambda pat: next(i for i, l in enumerate(lines) if re.search(pat, l))  # noqa: E731
    mel_round = first(r"stablehlo\.reduce_precision .*format = e8m7 : tensor<1x100x128xf32>")
    assert mel_round < first(r"stablehlo\.pad\b") and mel_round < first(r"stablehlo\.convolution")
    # stronger: follow the first convolution's input back to that rounding through data movement only
    d = defs(body)
    conv_name = next(n for n, (op, _) in d.items() if op == "stablehlo.convolution")
    cur = operands(d[conv_name][1])[0]
    chain = []
    while d[cur][0] in ("stablehlo.pad", "stablehlo.convert", "stablehlo.reshape"):
        chain.append(d[cur][0])
        cur = operands(d[cur][1])[0]
    assert d[cur][0] == "stablehlo.reduce_precision" and "format = e8m7" in d[cur][1], (cur, d[cur])
    assert "stablehlo.pad" in chain and "stablehlo.convert" in chain


def test_mel_boundary_fragment():
    builder = ModuleBuilder("mel")
    func = OpEmitter(builder, MLX_CUDA_V1).mel_boundary(1, 100, 128)
    frag = builder.fragments[func.symbol].text
    body = frag.split("{", 1)[1]
    first_op = re.search(r"= (stablehlo\.\w+)", body).group(1)
    assert first_op == "stablehlo.reduce_precision" and "format = e8m7" in body


# ---------------------------------------------------------------------------------------------- weights
_GLOBAL = re.compile(
    r'^  util\.global private @(\w+) = #flow\.parameter\.named<"(\w+)"::"([^"]+)"> : '
    r"tensor<([\dx]+)x(\w+)>$",
    re.M,
)
_DENSE = re.compile(r"dense<(.*?)> : tensor<((?:\d+x)*)(\w+)>")


def _shape(dims: str) -> tuple[int, ...]:
    return tuple(int(v) for v in dims.strip("x").split("x")) if dims.strip("x") else ()


@pytest.mark.parametrize("contract", PRODUCTION, ids=lambda c: c.name)
def test_weights_are_named_parameters_never_inlined(contract):
    text = tiny_module(contract.name).text
    specs = audio_weight_specs(TINY, HF_LAYOUT)
    found = {m.group(1): m.groups()[1:] for m in _GLOBAL.finditer(text)}
    assert len(re.findall(r"util\.global ", text)) == len(found) == len(specs)
    for w in specs:
        assert w.symbol.startswith("w_")
        scope, key, dims, dtype = found[w.symbol]
        assert (scope, key, _shape(dims), dtype) == ("model", w.key, tuple(w.shape), w.dtype), w.logical
    weight_shapes = {tuple(w.shape) for w in specs}
    dense = _DENSE.findall(text)
    assert dense
    for value, dims, _dtype in dense:
        assert _shape(dims) not in weight_shapes, f"a dense constant of weight shape {dims}"
        splat = not (value.startswith('"') or value.startswith("["))
        if not splat:  # the timing signal [max_past + 1, D] is the only non-splat constant
            assert _shape(dims) == (TINY.max_past + 1, TINY.hidden_size), dims


def test_entries_per_bucket_and_clips_share_globals():
    buckets, clips = (100, 200), (1, 2)
    emitted = tiny_module(MLX_CUDA_V1.name, buckets, clips)
    text = emitted.text
    funcs = functions(text)
    want = {EncodeEntry(f, c).symbol for f in buckets for c in clips}
    assert set(funcs) == want
    assert want == {"encode_f100_c1", "encode_f100_c2", "encode_f200_c1", "encode_f200_c2"}
    for f in buckets:
        for c in clips:
            header = re.search(rf"^  func\.func @encode_f{f}_c{c}\((.*?)\) -> ", text, re.M).group(1)
            assert header == f"%arg0: tensor<{c}x{f}x128xf32>, %arg1: tensor<{c}xi32>"
    specs = audio_weight_specs(TINY, HF_LAYOUT)
    globals_ = _GLOBAL.findall(text)
    assert len(globals_) == len(specs) == len({g[0] for g in globals_})  # one set, no per-entry copies
    for name, body in funcs.items():
        loaded = set(re.findall(r"util\.global\.load @(\w+)", body))
        assert loaded <= {g[0] for g in globals_}, name
        assert len(loaded) == len(specs), name  # every entry uses every weight (hence the sharing)
