"""Property tests (hypothesis) of the decoder's pure policies: the KV cache's ring and column index math against
transformers' masks, the looped block sum against the audio stage's lane/XOR sum, the KV-sharing producer map
against transformers' rule, the cache layout's sizes against the spec's table, and the contract table."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts import emulation as E
from gemma3n_iree.contracts.decoder_policy import FAMILIES, POINTS, decoder_contract_identity, rounds
from gemma3n_iree.contracts.kv_cache import (
    KVCache,
    KVCacheLayout,
    column_positions,
    visible,
    visible_columns,
    write_row,
)
from gemma3n_iree.model.audio_config import ConfigError
from gemma3n_iree.model.decoder_config import FULL, SLIDING, builtin_decoder_config, default_layer_types

F32 = np.float32
PROPERTY = settings(max_examples=200, deadline=None)


# ---------------------------------------------------------------------------------------------- ring and columns
@PROPERTY
@given(window=st.integers(1, 64), query=st.integers(0, 400))
def test_sliding_columns_hold_exactly_the_window(window, query):
    columns = column_positions(True, query, window, window)
    seen = visible_columns(True, query, window, window)
    # the visible columns hold the window's positions, each once, each at its ring row
    assert sorted(columns[seen].tolist()) == list(range(max(0, query - window + 1), query + 1))
    for c in np.flatnonzero(seen):
        assert write_row(True, int(columns[c]), window) == c
    # and agree with transformers' mask for every key position
    for key in range(0, query + 3):
        in_ring = key in columns[seen]
        assert in_ring == visible(True, query, key, window)


@PROPERTY
@given(capacity=st.integers(1, 300), query=st.integers(0, 299), window=st.integers(1, 64))
def test_full_columns_are_positions(capacity, query, window):
    if query >= capacity:
        return
    seen = visible_columns(False, query, capacity, window)
    assert np.array_equal(np.flatnonzero(seen), np.arange(query + 1))
    assert np.array_equal(column_positions(False, query, capacity, window), np.arange(capacity))
    assert write_row(False, query, window) == query


@PROPERTY
@given(window=st.integers(1, 16), length=st.integers(1, 60), steps=st.integers(0, 20))
def test_a_written_ring_holds_the_last_window(window, length, steps):
    """Writing positions 0..p in order leaves ring row r holding the last position congruent to r."""
    layout = KVCacheLayout(
        slots=1, capacity=length + steps, window=window, kv_heads=1, head_dim=1, sliding=(True,), dtype="f32"
    )
    cache = KVCache(layout)
    last = length + steps - 1
    for p in range(last + 1):
        cache.write(0, 0, p, np.full((1, 1), p, F32), np.full((1, 1), -p, F32))
    rows = layout.rows(0)
    held = cache.keys[0][0, :, 0, 0]
    seen = visible_columns(True, last, rows, window)
    assert np.array_equal(held[seen], column_positions(True, last, rows, window)[seen])


def test_positions_past_the_capacity_are_refused():
    layout = KVCacheLayout(slots=2, capacity=8, window=4, kv_heads=1, head_dim=2, sliding=(True, False), dtype="bf16")
    cache = KVCache(layout)
    cache.write(0, 1, 100, np.zeros((1, 2)), np.zeros((1, 2)))  # a ring takes any position
    with pytest.raises(ValueError, match="capacity"):
        cache.write(1, 1, 8, np.zeros((1, 2)), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="position"):
        write_row(True, -1, 4)


def test_layout_sizes_match_the_spec_table():
    """Spec §11.4: 20 cache layers, 2048 B per token-layer, 16 min(c, 512) + 4 c rows (20 MiB @512, 80 MiB @8192)."""
    for name in ("e2b", "e4b"):
        cfg = builtin_decoder_config(name)
        for capacity, mib in ((512, 20), (8192, 80)):
            layout = KVCacheLayout.for_config(cfg, MLX_CUDA_V1, slots=1, capacity=capacity)
            assert layout.layers == 20 and sum(layout.sliding) == 16
            assert layout.nbytes == mib * 2**20
        assert KVCacheLayout.for_config(cfg, F32_REFERENCE, 3, 512).nbytes == 3 * 2 * 20 * 2**20
    with pytest.raises(ValueError, match="max_position_embeddings"):
        KVCacheLayout.for_config(builtin_decoder_config("tiny"), MLX_CUDA_V1, 1, 257)


# ---------------------------------------------------------------------------------------------- block sum
@st.composite
def rows(draw, max_width: int):
    width = draw(st.integers(1, max_width))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([1.0, 1e-3, 1e4]))
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((3, width)) * scale).astype(F32)


@PROPERTY
@given(x=rows(600), reads=st.sampled_from([1, 2, 4, 8]))
def test_block_sum_is_the_lane_xor_sum_within_one_block(x, reads):
    if x.shape[-1] > 1024 * reads:
        return
    assert np.array_equal(D.block_sum(x, reads).view(np.uint32), E.lane_xor_sum(x, reads).view(np.uint32))


@PROPERTY
@given(
    x=rows(300), reads=st.sampled_from([1, 4, 8]), extra=st.integers(1, 5000), threads=st.sampled_from([32, 64, 1024])
)
def test_trailing_zeros_never_change_a_block_sum(x, reads, extra, threads):
    padded = np.pad(x, [(0, 0), (0, extra)])
    got, want = D.block_sum(padded, reads, threads), D.block_sum(x, reads, threads)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@PROPERTY
@given(x=rows(3000))
def test_looped_block_sum_is_a_sum(x):
    """Past one block (here 32 threads x 4 reads) the loop still adds every value once."""
    got = D.block_sum(x, 4, max_threads=32).astype(np.float64)
    exact = x.astype(np.float64).sum(-1)
    bound = x.shape[-1] * 2.0**-23 * np.abs(x.astype(np.float64)).sum(-1)
    assert (np.abs(got - exact) <= bound).all()


# ---------------------------------------------------------------------------------------------- producer map
@st.composite
def sharing_configs(draw):
    layers = draw(st.integers(2, 24))
    types = draw(st.lists(st.sampled_from([SLIDING, FULL]), min_size=layers, max_size=layers))
    shared = draw(st.integers(0, layers - 1))
    return layers, tuple(types), shared


@PROPERTY
@given(case=sharing_configs())
def test_producer_map(case):
    layers, types, shared = case
    base = builtin_decoder_config("tiny")
    try:
        cfg = dataclasses.replace(
            base,
            num_hidden_layers=layers,
            layer_types=types,
            num_kv_shared_layers=shared,
            intermediate_sizes=(64,) * layers,
            activation_sparsity=(0.0,) * layers,
        )
    except ConfigError as err:
        # refused exactly when a shared layer's type has no owning layer below the first shared layer
        first = layers - shared
        assert shared and set(types[first:]) - set(types[:first]), err
        return
    first = cfg.first_kv_shared_layer
    for layer, producer in enumerate(cfg.kv_producers):
        if layer < first:
            assert producer == layer and cfg.owns_kv(layer)
        else:
            assert not cfg.owns_kv(layer) and producer < first and types[producer] == types[layer]
            assert all(types[i] != types[layer] for i in range(producer + 1, first))
    assert set(cfg.kv_store_layers.values()) <= set(range(first))


def test_default_layer_types_rule():
    assert default_layer_types(10) == (SLIDING,) * 4 + (FULL,) + (SLIDING,) * 4 + (FULL,)


# ---------------------------------------------------------------------------------------------- the contract table
def test_contract_table():
    assert all(POINTS[p].rounds for p in ("rms_norm.normalized", "rms_norm.scaled", "attention.probs"))
    islands = {p.name for p in POINTS.values() if not p.rounds}
    assert islands == {
        "router.tanh",
        "predict.coefs",
        "predict.mix",
        "correct.coefs",
        "correct.product",
        "attention.scores",
    }
    for point in POINTS:
        assert rounds(MLX_CUDA_V1, point) == POINTS[point].rounds and not rounds(F32_REFERENCE, point)
    with pytest.raises(ValueError, match="unknown decoder rounding point"):
        rounds(MLX_CUDA_V1, "attention.typo")
    assert all(f.computes and f.semantics for f in FAMILIES)
    ids = {decoder_contract_identity(c) for c in (MLX_CUDA_V1, F32_REFERENCE)}
    assert len(ids) == 2 and all(":decoder-table=" in i for i in ids)


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
@PROPERTY
@given(x=rows(300), seed=st.integers(0, 2**32 - 1))
def test_decoder_norm_is_the_prefill_stage_norm(contract, x, seed):
    """The decoder's table-driven norm and the prefill stage's `mlx_rms_norm` give the same bits."""
    x = E.round_bf16(x)
    w = E.round_bf16(1 + 0.3 * np.random.default_rng(seed).standard_normal(x.shape[-1]).astype(F32))
    cfg = builtin_decoder_config("tiny")
    assert np.array_equal(
        D.rms_norm(contract, cfg, x, w).view(np.uint32),
        E.mlx_rms_norm(contract, x, w, cfg.rms_norm_eps).view(np.uint32),
    )


def test_design_note_embeds_the_table():
    """contracts/DECODER.md shows `python -m gemma3n_iree.contracts.decoder_policy` verbatim."""
    import subprocess
    from pathlib import Path

    from gemma3n_iree.contracts.decoder_policy import markdown_table

    note = (Path(__file__).resolve().parent.parent / "contracts" / "DECODER.md").read_text()
    embedded = note.split("<!-- decoder-policy-table -->\n", 1)[1].split("<!-- /decoder-policy-table -->", 1)[0]
    assert embedded == markdown_table()
    printed = subprocess.run(
        [sys.executable, "-m", "gemma3n_iree.contracts.decoder_policy"], check=True, capture_output=True, text=True
    ).stdout
    assert printed == markdown_table()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_padding_prompts_name_distinct_slots_no_real_prompt_uses(data):
    """A batched prefill's slots are distinct (its cache scatters promise distinct rows): the padding prompts take
    the scratch slot first, then the lowest slots free in the call, as many as the entry's width leaves."""
    from gemma3n_iree.runtime.text.decoder import padding_slots

    slots = data.draw(st.integers(1, 12))
    used = data.draw(st.lists(st.integers(0, slots - 1), min_size=1, max_size=slots, unique=True))
    width = data.draw(st.integers(len(used), slots))
    padding = padding_slots(used, width, slots)
    assert len(padding) == width - len(used)
    assert len(set(used + padding)) == width and all(0 <= s <= slots for s in padding)
    if padding:
        assert padding[0] == slots
        assert padding[1:] == sorted(set(range(slots)) - set(used))[: len(padding) - 1]
