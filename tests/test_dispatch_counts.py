"""The dispatches one decode step launches on the H200, pinned here from the compiled program (no GPU needed).

A decode step is launch-bound long before it is bandwidth-bound (shared/notes/decode-speed.md: ~2,400 launches
of a few microseconds each per E4B step), so the number of kernel launches of one call of a decode entry is
pinned exactly: the tiny decoder program compiled for cuda sm_90 with `--kernels auto` under mlx-cuda-v1, read at
IREE's stream level, where every launch of an entry is one `stream.cmd.dispatch` of its public function
(`diagnostics/dispatches.py`: how they are counted and attributed to the embedding, the AltUp init, each decoder
layer and the head).

**A change that brings launches back must fail here.** The expected counts are updated on purpose, only when a
change reduces them: `python scripts/dispatch_counts.py --variant tiny --slots 4 --capacity 64 --batch 1
--batch 4` prints the numbers of `EXPECTED` (and `--variant e4b --slots 8 --capacity 64 --batch 1 --batch 8` those of
`EXPECTED_E4B`, the real shapes, where the decode-linear kernel serves the linears).

The KV cache write of a step is checked here too: it stores exactly `KVCacheLayout.decode_write_bytes` into the
cache global (each owning layer's key and value rows of each sequence: a regression to writing the whole cache
fails), bound in place, and IREE spreads each scatter's rows over threads (a scatter without its
`unique_indices` promise runs as one thread: `decoder_layer.attend.decode_own.mlir.j2`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from functools import cache

import pytest

from gemma3n_iree.contracts import MLX_CUDA_V1
from gemma3n_iree.diagnostics.dispatches import decode_step_counts, emit_with_locations, read_stream, stream_profile
from gemma3n_iree.emitters.compile import compile_mlir_to, parse_target
from gemma3n_iree.emitters.decoder import DecoderModuleSpec, emit_decoder_module
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.lowering import lowering_for
from gemma3n_iree.model.decoder_config import builtin_decoder_config

CFG = builtin_decoder_config("tiny")
SM90 = parse_target("cuda", "sm_90")

#: One call of each decode entry of the tiny program (10 layers: 0-4 own their K/V, 5-9 share them; layers 0-2
#: are sparse). "entry": the step's cache indices (`decoder_entry.mlir.j2`'s `decode_indices`), one dispatch,
#: and at B > 1 one more for the repeated-slot check. "extern": the committed kernels among them.
#: "token_select": the device's token selection after the head (greedy token, log-probability, non-finite
#: count), added with it (9 dispatches, one a committed kernel). Before the KV write's indices moved to the entry
#: and without the selection: 637 and 660 in total, own layers 71/70/70/66/66 (B = 1) and 75/73/73/69/69 (B = 4).
#: Before AltUp's sequential products shared one barrier per matmul and per mix (13 barriers a layer, one
#: dispatch each, down to 1 + 1 + 1 + 1): 637 and 640, own layers 69/68/68/64/64 and 68/67/67/63/63, shared 54/52.
#: Before the decoder's norms were one dispatch of the RMS-norm kernel's MLX variant (the lane sum and IREE's
#: normalization: two) and the linears narrower than a 64-column tile took the narrow decode-linear file: 517 and
#: 520, layers 57/56/56/52/52/42/40/40/40/40 and 56/55/55/51/51/42/40/40/40/40, 127 externs each. Before a
#: decode linear whose only reader is a norm handed its partials to the partials-norm kernel (their sum and the
#: norm: two dispatches, one per linear where the decode-linear kernel serves it) and the norms before the
#: attention projections and the MLP handed their linears BF16 (an F32 pass between): 507 and 510. Before AltUp's
#: kept products lost their optimization barriers on cuda (emitters/lowering.py, `unfused_mul_add`): 482 and 485,
#: layers 53/52/52/48/48/39/37/37/37/37 at B = 1, and 42 host waits a call (four a layer, each ending the
#: call's execution region: the device idled while the host recorded the next).
#: Before AltUp's predict and correct steps each became one dispatch of the AltUp kernel, router included (the
#: router's norm, its scaled operand, its linear, the partials' sum with tanh and the coefficients, the mix:
#: kernels/altup_triton.py): 474 and 485, layers 52/51/51/47/47/38/36/36/36/36 and 52/51/51/47/47/39/37/37/37/37.
#: Before the down-projection's norm and the MLP residual after it were one dispatch of the partials-norm kernel's
#: residual variant (layers whose MLP is 128 wide, where the decode-linear kernel serves the down-projection): 404
#: and 405, layers 45/44/44/40/40/31/29/29/29/29 and 44/43/43/39/39/31/29/29/29/29.
#: "host_waits": where one call's host waits for the device: the call's end only (before the logits lost their
#: barrier before the token selection on cuda, `decoder_entry.mlir.j2`: two).
#: Before the token selection's maxima and non-finite count reduced the 262,400 logits in chunks of 1,024 (two
#: reductions each, where one row's reduction took one workgroup: about 100 us each on an H100): 399 and 400,
#: token_select 11 and 9.
EXPECTED = {
    "decoder_decode_c64_s4_x64_b1": {
        "total": 405,
        "layers": [45, 43, 44, 39, 40, 30, 29, 28, 29, 28],
        # token_select 17 (16 at batch 4, where IREE fuses more): the token's and the first non-finite column's
        # F32 maxima are reductions of their own (an i32 minimum gave -1 on CUDA), each in two stages
        "other": {"altup_init": 12, "embedding": 5, "entry": 1, "head": 15, "token_select": 17},
        "extern": 132,
        "host_waits": 1,
    },
    "decoder_decode_c64_s4_x64_b4": {
        "total": 407,
        "layers": [44, 42, 43, 38, 39, 30, 29, 28, 29, 28],
        "other": {"altup_init": 15, "embedding": 5, "entry": 2, "head": 19, "token_select": 16},
        "extern": 132,
        "host_waits": 1,
    },
}

#: The same at E4B's shapes (35 layers: 0-19 own their K/V, 20-34 share them; 0-9 sparse), 8 slots of 64 rows:
#: the tiny program's linears are too narrow for the decode-linear kernel, so only these shapes show its launches.
#: Before a decode step's linears of one input shared one launch of the decode-linear kernel's group entries
#: (LAuReL's left linear, q, k, v; the MLP's gate and up) and the queries' norm and RoPE were one head-row kernel
#: handing the decode-attention kernels BF16: 1,208 at batch 1 (layer 0: 38, layer 34: 28); then 1,063 and
#: 1,070 before LAuReL's post-norm and residual were one dispatch of the partials-norm kernel's LAuReL residual;
#: 1,028 and 1,035 before a dense MLP's gate, up and GELU product were one kernel (the GELU-product entry); 1,003 and
#: 1,010 before the per-layer input gate scaled its input as its kernel read it (the scaled entry); 968 and 975
#: before LAuReL's right linear read the left one's partial sums (the summed entry); 933 and 940 before the output
#: projection read the attention's value partial sums the same way (at 64 positions: up to 16 column ranges).
EXPECTED_E4B = {
    "decoder_decode_c64_s8_x64_b1": {
        "total": 898,
        "own_layers": [30] * 10 + [24] * 10,  # a sparse MLP: the pair, the Gaussian top-k and the GELU product
        "shared_layers": [20] * 15,
        "extern": 744,
    },
    "decoder_decode_c64_s8_x64_b8": {
        "total": 905,
        "own_layers": [30] * 10 + [24] * 10,
        "shared_layers": [20] * 15,
        "extern": 744,
    },
}


def spec(cfg=CFG, slots: int = 4, capacity: int = 64, batches: tuple[int, ...] = (1, 4)) -> DecoderModuleSpec:
    return DecoderModuleSpec(
        cfg,
        MLX_CUDA_V1,
        slots,
        capacity,
        prompts=(),
        batches=batches,
        kernels=select_kernels("auto", SM90, MLX_CUDA_V1),
        lowering=lowering_for(SM90, MLX_CUDA_V1),
    )


def three_layers() -> DecoderModuleSpec:
    """A sliding and a full layer owning K/V and a sliding layer sharing them (short compiles)."""
    three = dataclasses.replace(
        CFG,
        num_hidden_layers=3,
        intermediate_sizes=CFG.intermediate_sizes[:3],
        layer_types=(CFG.layer_types[0], CFG.layer_types[4], CFG.layer_types[0]),
        activation_sparsity=CFG.activation_sparsity[:3],
        num_kv_shared_layers=1,
    )
    return spec(three, slots=2, capacity=16, batches=(1, 2))


@pytest.fixture(scope="module")
def tiny():
    s = spec()
    return s, stream_profile(lambda: emit_decoder_module(s), SM90)


def test_decode_step_dispatches_are_pinned(tiny):
    s, profile = tiny
    counts = decode_step_counts(profile, s)
    for name, want in EXPECTED.items():
        got = counts[name]
        assert got["own_layers"] + got["shared_layers"] == got["layers"]
        assert got["total"] == sum(got["layers"]) + sum(got["other"].values())
        assert {key: got[key] for key in want} == want, f"{name}: {got}"


def test_e4b_decode_step_dispatches_are_pinned():
    s = spec(builtin_decoder_config("e4b"), slots=8, batches=(1, 8))
    counts = decode_step_counts(stream_profile(lambda: emit_decoder_module(s), SM90), s)
    for name, want in EXPECTED_E4B.items():
        got = counts[name]
        assert {key: got[key] for key in want} == want, f"{name}: {got}"
        assert got["cache_bytes_written"] == s.kv_layout.decode_write_bytes(int(name.rsplit("_b", 1)[1]))


def test_a_decode_step_writes_only_the_new_cache_rows(tiny):
    """Every dispatch that writes the cache global is one layer's key or value scatter, writing one row per
    sequence; together exactly `decode_write_bytes`. The global stays one resource, bound in place, never
    copied."""
    s, profile = tiny
    layout = s.kv_layout
    size = (s.slots + 1) * s.slot_rows * layout.row_bytes
    for e in s.decode_entries:
        entry = profile.entries[e.symbol]
        writes = [(d, b) for d in entry.dispatches for b in d.bindings if b.lifetime == "variable" and b.mode != "ro"]
        assert len(writes) == 2 * layout.layers, e.symbol
        for d, b in writes:
            assert "_scatter_" in d.symbol and b.mode == "rw" and b.length == size, d
            assert b.written == e.batch * layout.row_bytes, d
        assert (
            entry.written("variable", size)
            == layout.decode_write_bytes(e.batch)
            == (e.batch * CFG.first_kv_shared_layer * 2 * CFG.num_key_value_heads * CFG.head_dim * 2)
        )
    text = profile.text
    assert re.findall(r"util\.global private @(\w+) : !stream\.resource<variable>", text) == ["kv_cache"]
    for op in ("stream.cmd.copy", "stream.async.copy", "stream.async.clone"):
        assert not re.search(rf"{op}[^\n]*!stream\.resource<variable>", text), op


@cache
def _three_layer_configurations() -> str:
    return compile_mlir_to(emit_decoder_module(three_layers()), SM90, "executable-configurations")


def test_the_cache_scatters_are_spread_over_threads():
    """IREE's CUDA configuration of every cache write: a scatter with its `unique_indices` promise, tiled to
    threads storing at most 8 elements each (16 bytes of BF16), not the single thread it runs a scatter without
    that promise on."""
    text = _three_layer_configurations()
    scatters = re.findall(
        r"iree_linalg_ext\.scatter \{lowering_config = (.*?)\} dimension_map = [^\n]*unique_indices\((\w+)\)", text
    )
    assert len(scatters) >= 2 * 2  # (at least) two owning layers' keys and values
    for config, unique in scatters:
        assert unique == "true"
        thread = re.search(r"thread = \[([\d, ]+)\]", config)
        assert thread, f"a cache scatter is not tiled to threads: {config}"
        assert math.prod(int(n) for n in thread.group(1).split(",")) <= 8, config


def test_locations_do_not_change_the_dispatches():
    """The counted program (emitted with locations) has the production program's dispatches, call for call."""
    s = three_layers()
    plain = read_stream(compile_mlir_to(emit_decoder_module(s), SM90, "stream"), {})
    located = emit_with_locations(lambda: emit_decoder_module(s))
    counted = read_stream(compile_mlir_to(located.text, SM90, "stream"), located.calls)
    assert plain.entries.keys() == counted.entries.keys()
    for name, entry in plain.entries.items():
        assert [d.symbol for d in entry.dispatches] == [d.symbol for d in counted.entries[name].dispatches]
        assert entry.transient_allocations == counted.entries[name].transient_allocations
    assert {d.origin for d in plain.entries["decoder_decode_c16_s2_x16_b2"].dispatches} == {"entry"}
    calls = {"entry", "inputs", "streams0", "layer 0", "layer 1", "layer 2", "logits_raw", "selection"}
    assert set(counted.entries["decoder_decode_c16_s2_x16_b2"].by_call()) == calls
