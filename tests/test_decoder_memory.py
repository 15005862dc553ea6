"""The decoder program's device memory report (`emitters/decoder_memory.py`, `scripts/decoder_memory.py`).

The expected numbers are derived here from the configuration's fields (every weight's shape as the spec gives it,
the cache as `contracts/kv_cache.py` lays it out), not from the module's own arithmetic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.decoder import DecoderModuleSpec
from gemma3n_iree.emitters.decoder_memory import decoder_memory
from gemma3n_iree.model.decoder_config import builtin_decoder_config

CFG = builtin_decoder_config("tiny")
ROOT = Path(__file__).resolve().parent.parent


def weight_bytes(cfg) -> int:
    """Every resident decoder weight, BF16 (gemma3n-text: the tied embedding, the per-layer input projection and
    norm, the AltUp projections, the final norm; per layer the attention (k/v projections and k_norm only where the
    layer owns its K/V), the MLP, four norms, AltUp, LAuReL and the per-layer input gate)."""
    d, n, p, r = cfg.hidden_size, cfg.altup_num_inputs, cfg.hidden_size_per_layer_input, cfg.laurel_rank
    q = cfg.num_attention_heads * cfg.head_dim
    kv = cfg.num_key_value_heads * cfg.head_dim
    total = cfg.vocab_size * d + cfg.num_hidden_layers * p * d + p + 2 * (n - 1) * d * d + d
    for layer in range(cfg.num_hidden_layers):
        f = cfg.intermediate_sizes[layer]
        attention = q * d + cfg.head_dim + d * q
        if layer < cfg.first_kv_shared_layer:
            attention += 2 * kv * d + cfg.head_dim
        altup = d + n * n + n * n * n + n * d + d
        total += attention + 3 * f * d + 4 * d + altup + (2 * r * d + d) + (2 * p * d + d)
    return 2 * total


def test_tiny_program_memory():
    slots, capacity = 3, 40
    got = decoder_memory(DecoderModuleSpec(CFG, MLX_CUDA_V1, slots, capacity, prompts=(16,), batches=(2,)))
    assert got.weights == weight_bytes(CFG)
    assert got.host_tables == 2 * CFG.vocab_size_per_layer_input * CFG.num_hidden_layers * 16
    # owning layers 0-4: four sliding (a ring of the 6-row window) and layer 4 full (40 rows); 2 heads x 16, BF16
    row = 2 * 16 * 2
    assert CFG.layer_types[:5] == ("sliding_attention",) * 4 + ("full_attention",)
    per_slot = 2 * (4 * 6 + 40) * row
    assert (got.kv_per_slot, got.kv_per_position, got.kv_rings_per_slot) == (per_slot, 2 * row, 2 * 4 * 6 * row)
    assert got.kv_cache == (slots + 1) * per_slot  # the scratch slot included
    assert got.resident == got.weights + got.kv_cache
    f32 = decoder_memory(DecoderModuleSpec(CFG, F32_REFERENCE, slots, capacity, prompts=(16,), batches=(2,)))
    assert f32.kv_cache == 2 * got.kv_cache and f32.weights == got.weights  # F32 cache, BF16 weights
    short = decoder_memory(DecoderModuleSpec(CFG, MLX_CUDA_V1, 1, 4, prompts=(4,), batches=(1,)))
    assert short.kv_per_slot == 2 * 5 * 4 * row  # a window longer than the capacity: every ring has 4 rows


def test_e4b_figures_add_up():
    e4b = builtin_decoder_config("e4b")
    got = decoder_memory(DecoderModuleSpec(e4b, MLX_CUDA_V1, 64, 4096, prompts=(), batches=(64,)))
    assert got.weights == weight_bytes(e4b)
    full = sum(1 for t in e4b.layer_types[: e4b.first_kv_shared_layer] if t == "full_attention")
    rings = e4b.first_kv_shared_layer - full
    row = e4b.num_key_value_heads * e4b.head_dim * 2
    assert got.kv_per_slot == 2 * (full * 4096 + rings * e4b.sliding_window) * row
    assert got.kv_per_slot == 4096 * got.kv_per_position + got.kv_rings_per_slot


def test_decoder_memory_script():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "decoder_memory.py"),
            "--variant",
            "tiny",
            "--slots",
            "3",
            "--capacity",
            "40",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(out.stdout)
    assert report["decoder"]["weights"] == weight_bytes(CFG)
    assert report["decoder"]["kv_cache"] == 4 * 2 * (4 * 6 + 40) * 64
    assert (
        report["resident_total"]
        == report["decoder"]["resident"] + report["encoder_weights"] + report["prefill_weights"]
    )
