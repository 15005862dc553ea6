"""The text decoder's emulation (`contracts/decoder*.py`) against two independent references, on the tiny
configuration (`builtin_decoder_config("tiny")`: both layer types, KV sharing, sparse and dense layers,
per-layer widths, 4 AltUp streams, a window of 6) with every parameter random (tests/oracles/hf_decoder.py),
written as a BF16 checkpoint and read back through the decoder's weight loader.

References: a float64 evaluation of the spec (tests/oracles/decoder_f64.py) and transformers 5.24's
`Gemma3nForCausalLM` (eager attention) in fp32, bf16 (`from_pretrained(dtype=bf16)`) and float64.

Tolerances, and why:
* oracle vs transformers in float64 with its fp32 islands patched out: 1e-12 relative (float64 rounding of
  two different association orders; measured ~1e-14);
* f32-reference vs the oracle and vs transformers-fp32: 1e-5 relative (L2 and max |diff| / max |ref|), on the
  logits of a 13-token prefill and 8 decode steps and on the KV cache: F32 evaluation of ~10 layers (each
  ~50 ops of relative error 2^-24 plus F32 accumulation of short contractions); measured ~1e-6 (oracle) and
  ~3e-6 (transformers-fp32, which carries its own F32 error);
* mlx-cuda-v1 (MLX's rounding points) vs transformers-fp32 no farther than 1.5x transformers-bf16, judged
  per layer: each layer fed transformers-fp32's own inputs (so the distance is that layer's rounding cost,
  not the amplification of earlier layers' differences), every layer's output streams and every cache
  layer's keys and values together.  End to end the random tiny model amplifies any BF16-size
  perturbation about tenfold over its ten layers (transformers-bf16 is 5-12 % off fp32 in the logits), so
  there the ratio is a statistic of two chaotic trajectories (measured 0.8-1.34 aggregated over steps for
  two seeds, single steps up to 1.9x); it is asserted only as a gross-error guard (<= 2x aggregated);
* prefill + decode steps vs one longer prefill, a batched decode vs each sequence alone, a dirty (reused)
  slot vs a fresh one, and skipping the shared layers' prompt rows: bit for bit under both contracts (every
  row is computed on its own and the key columns are laid out identically, kv_cache.py);
* greedy tokens of f32-reference equal transformers' `generate(do_sample=False)` (and spec §11.2's manual
  loop from inputs_embeds) for 32 new tokens, EOS switched off on both sides (the random model would emit
  it at any time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.contracts import decoder as DEC
from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts import prefill as P
from gemma3n_iree.contracts.decoder_policy import POINTS
from gemma3n_iree.contracts.emulation import round_bf16
from gemma3n_iree.contracts.kv_cache import KVCache, KVCacheLayout
from gemma3n_iree.contracts.metrics import relative_l2
from gemma3n_iree.contracts.policy import NumericContract
from gemma3n_iree.model.decoder_config import builtin_decoder_config
from gemma3n_iree.model.decoder_weights import decoder_weight_specs, read_decoder_weights

torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from oracles import hf_decoder as H  # noqa: E402
from oracles.decoder_f64 import DecoderF64  # noqa: E402

CFG = builtin_decoder_config("tiny")
F32 = np.float32
#: 13 tokens (longer than the window of 6): chat ids, ids past the per-layer vocabulary (512: its row 0),
#: an audio-vocabulary id, end of turn
PROMPT = [2, 105, 2364, 107, 300, 301, 600, 7000, 511, 512, 100000, 262273, 106]
#: forced decode tokens (cache checks), taking the sequence to 21 positions: 3.5 windows
CONTINUATION = [4368, 107, 302, 303, 9000, 304, 305, 50000]
CAPACITY = 64
CONTRACTS = [F32_REFERENCE, MLX_CUDA_V1]


@dataclass
class Case:
    model: Any
    weights: dict[str, np.ndarray]
    oracle: DecoderF64
    hf32: dict
    hf16: dict


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> Case:
    model = H.make_model(CFG, seed=7)
    directory = tmp_path_factory.mktemp("decoder-ckpt")
    H.write_checkpoint(model, CFG, directory)
    weights = {k: np.asarray(v, F32) for k, v in read_decoder_weights(directory, CFG).items()}
    oracle = DecoderF64(CFG.to_config_json()["text_config"], H.checkpoint_tensors(model))
    return Case(
        model,
        weights,
        oracle,
        H.run_cached(model, PROMPT, CONTINUATION),
        H.run_cached(H.load_bf16(model), PROMPT, CONTINUATION),
    )


def emulate(
    c: NumericContract, w: dict, prompt=PROMPT, continuation=CONTINUATION, slot: int = 0, cache: KVCache | None = None
) -> tuple[np.ndarray, list[KVCache]]:
    """Logits [1 + steps, V] of a prefill and forced decode steps, and a copy of the cache after each call."""
    cache = cache or KVCache(KVCacheLayout.for_config(CFG, c, slots=3, capacity=CAPACITY))
    embeds, pli = DEC.text_inputs(c, CFG, w, prompt)
    logits, caches = [DEC.prefill(c, CFG, w, cache, slot, embeds, pli)], [cache.copy()]
    for i, token in enumerate(continuation):
        text, ple = DEC.token_rows(CFG, w, [token])
        logits.append(DEC.decode_step(c, CFG, w, cache, [slot], [len(prompt) + i], text, ple)[0])
        caches.append(cache.copy())
    return np.stack(logits), caches


def oracle_run(oracle: DecoderF64) -> tuple[np.ndarray, list[dict]]:
    cache: dict = {}
    logits = [oracle.prefill_ids(np.array(PROMPT), cache)[-1]]
    snapshots = [{k: (v[0].copy(), v[1].copy(), v[2].copy()) for k, v in cache.items()}]
    for i, token in enumerate(CONTINUATION):
        logits.append(oracle.step_ids(np.array([token]), len(PROMPT) + i, cache)[-1])
        snapshots.append({k: (v[0].copy(), v[1].copy(), v[2].copy()) for k, v in cache.items()})
    return np.stack(logits), snapshots


def ours_at(cache: KVCache, layer: int, slot: int, positions) -> tuple[np.ndarray, np.ndarray]:
    """Our cache's keys and values of `positions` (rows by the layout's rule)."""
    rows = [p % CFG.sliding_window if CFG.is_sliding(layer) else p for p in positions]
    return cache.keys[layer][slot][rows], cache.values[layer][slot][rows]


def rel_max(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


# ---------------------------------------------------------------------------------------------- the references
def test_weight_schema_is_transformers(case):
    specs = decoder_weight_specs(CFG)
    assert {s.key: s.shape for s in specs.values()} == {k: v.shape for k, v in H.checkpoint_tensors(case.model).items()}
    for name in ("e2b", "e4b"):
        cfg = builtin_decoder_config(name)
        with torch.device("meta"):
            meta = H.Gemma3nForCausalLM(H.hf_text_config(cfg))
        hf = {
            H.CHECKPOINT_PREFIX + n[len("model.") :]: tuple(p.shape)
            for n, p in meta.named_parameters()
            if n.startswith("model.")
        }
        assert {s.key: s.shape for s in decoder_weight_specs(cfg).values()} == hf
        assert len(hf) == {"e2b": 701, "e4b": 806}[name]  # spec §8.1


def test_oracle_equals_transformers_in_float64(case):
    """Spec §11.3: the float64 spec evaluation equals transformers run in float64 with its fp32 islands patched out
    (RMSNorm, router tanh, softmax, RoPE cos/sin; the scalar buffers hold exact float64 values)."""
    model64 = H.load_f64(case.model)
    with H.float64_islands_patched(case.oracle.freqs):
        full = H.full_logits(model64, PROMPT + CONTINUATION)
        cached = H.run_cached(model64, PROMPT, CONTINUATION)
    ours = case.oracle.prefill_ids(np.array(PROMPT + CONTINUATION), {})
    assert rel_max(ours, full) <= 1e-12
    logits, caches = oracle_run(case.oracle)
    assert rel_max(logits, cached["logits"]) <= 1e-12
    for layer, (keys, values) in cached["caches"][-1].items():
        k, v, positions = caches[-1][layer]
        assert rel_max(k[-len(keys) :], keys) <= 1e-12 and rel_max(v[-len(values) :], values) <= 1e-12
    # and the cached path equals the full one at every decoded position
    assert rel_max(logits[1:], full[len(PROMPT) :]) <= 1e-12


def test_models_built_from_tensors_are_the_loaded_ones(case):
    """The real-shape script builds transformers' models from checkpoint tensors (no save/load of 14 GB): the
    same logits as the model itself and as `from_pretrained(dtype=bf16)`, bit for bit."""
    built = H.model_from_tensors(CFG, H.checkpoint_tensors(case.model))
    np.testing.assert_array_equal(H.full_logits(built, PROMPT), H.full_logits(case.model, PROMPT))
    np.testing.assert_array_equal(
        H.full_logits(H.to_bf16_as_loaded(built), PROMPT), H.full_logits(H.load_bf16(case.model), PROMPT)
    )


def test_constants_equal_transformers():
    icdf = torch.distributions.normal.Normal(0, 1).icdf(torch.tensor(0.95, dtype=torch.float32)).item()
    assert float(D.sparsity_multiplier(F32_REFERENCE, 0.95)) == icdf
    assert float(D.sparsity_multiplier(MLX_CUDA_V1, 0.95)) == 1.6484375
    for cfg in (CFG, builtin_decoder_config("e4b")):
        rotary = H.modeling.Gemma3nRotaryEmbedding(H.hf_text_config(cfg))
        for kind, theta in (("sliding_attention", cfg.rope_theta_sliding), ("full_attention", cfg.rope_theta_full)):
            hf = getattr(rotary, f"{kind}_inv_freq").numpy()
            ours = D.rope_inv_freq(theta, cfg.head_dim)
            ulps = np.abs(ours.view(np.int32) - hf.view(np.int32))
            # a correctly rounded power vs torch's CPU pow: equal, or one F32 step apart (1 of 128 at 256)
            assert ulps.max() <= 1 and (ulps == 0).mean() >= 0.99 if cfg.head_dim == 256 else (ulps == 0).all()


# ---------------------------------------------------------------------------------------------- f32-reference
def test_f32_reference_matches_the_oracle(case):
    logits, caches = emulate(F32_REFERENCE, case.weights)
    ref, ref_caches = oracle_run(case.oracle)
    for step in range(len(logits)):
        assert relative_l2(logits[step], ref[step]) <= 1e-5, step
        assert rel_max(logits[step], ref[step]) <= 1e-5, step
    for ours_cache, theirs in zip(caches, ref_caches):
        for layer, (k, v, positions) in theirs.items():
            seen = positions[-CFG.sliding_window :] if CFG.is_sliding(layer) else positions
            ok, ov = ours_at(ours_cache, layer, 0, seen)
            assert rel_max(ok, k[-len(seen) :]) <= 1e-5 and rel_max(ov, v[-len(seen) :]) <= 1e-5, layer


def test_f32_reference_matches_transformers_fp32_logits_and_cache(case):
    logits, caches = emulate(F32_REFERENCE, case.weights)
    for step in range(len(logits)):
        assert relative_l2(logits[step], case.hf32["logits"][step]) <= 1e-5, step
    total = len(PROMPT)
    for step, (ours_cache, theirs) in enumerate(zip(caches, case.hf32["caches"])):
        assert sorted(theirs) == list(range(CFG.first_kv_shared_layer))  # shared layers hold no cache
        for layer, (keys, values) in theirs.items():
            # transformers keeps window - 1 sliding rows after a call, our ring the window: compare what both hold
            positions = range(total + step - len(keys), total + step)
            ok, ov = ours_at(ours_cache, layer, 0, positions)
            assert relative_l2(ok, keys) <= 1e-5 and relative_l2(ov, values) <= 1e-5, (step, layer)
            if CFG.is_sliding(layer):
                assert len(keys) == min(total + step, CFG.sliding_window - 1)


def test_greedy_f32_reference_equals_generate(case):
    """32 new tokens, token for token, EOS ignored on both sides (stop_ids=(); generation config eos None); spec
    §11.2's manual loop from inputs_embeds gives transformers' own generate tokens too."""
    n = 32
    want = H.generate_tokens(case.model, PROMPT, n)
    cache = KVCache(KVCacheLayout.for_config(CFG, F32_REFERENCE, slots=1, capacity=CAPACITY))
    embeds, pli = DEC.text_inputs(F32_REFERENCE, CFG, case.weights, PROMPT)
    streamed: list[int] = []
    tokens, step_logits = DEC.greedy(
        F32_REFERENCE, CFG, case.weights, cache, 0, embeds, pli, n, stop_ids=(), on_token=streamed.append
    )
    assert tokens == want == streamed and len(step_logits) == n
    assert H.greedy_from_embeds(case.model, PROMPT, n) == want


# ---------------------------------------------------------------------------------------------- mlx-cuda-v1
def _hf_forced(model, prompt: list[int], inputs: dict[int, np.ndarray] | None) -> tuple[dict, dict, dict]:
    """transformers with each layer's input streams replaced by `inputs[l]` (cast to the model's dtype): each
    layer's (input, output) and the cache it fills."""
    seen_in, seen_out = {}, {}

    def pre(module, args, kwargs, layer):
        if inputs is not None:
            args = (torch.from_numpy(inputs[layer][:, None]).to(module.input_layernorm.weight.dtype),) + args[1:]
        seen_in[layer] = args[0][:, 0].detach().float().numpy().copy()
        return args, kwargs

    hooks = [
        m.register_forward_pre_hook(lambda mod, a, kw, i=i: pre(mod, a, kw, i), with_kwargs=True)
        for i, m in enumerate(model.model.layers)
    ]
    hooks += [
        m.register_forward_hook(lambda mod, a, out, i=i: seen_out.__setitem__(i, out[:, 0].float().numpy().copy()))
        for i, m in enumerate(model.model.layers)
    ]
    cache = H.DynamicCache(config=model.config)
    try:
        with torch.no_grad():
            model(input_ids=torch.tensor([prompt]), use_cache=True, **H._with_cache(model, cache))
    finally:
        for h in hooks:
            h.remove()
    return seen_in, seen_out, H.cache_contents(cache)


def test_mlx_cuda_v1_rounding_costs_no_more_than_transformers_bf16_per_layer(case):
    model16 = H.load_bf16(case.model)
    mine, theirs, ratios = [], [], []
    for prompt in (PROMPT, [2, 9, 8, 7, 6, 5, 4, 3, 1000, 2000, 3000]):
        inputs32, out32, cache32 = _hf_forced(case.model, prompt, None)
        _, out16, cache16 = _hf_forced(model16, prompt, inputs32)
        stages: dict = {}
        cache = KVCache(KVCacheLayout.for_config(CFG, MLX_CUDA_V1, slots=1, capacity=CAPACITY))
        embeds, pli = DEC.text_inputs(MLX_CUDA_V1, CFG, case.weights, prompt)
        DEC.prefill(
            MLX_CUDA_V1,
            CFG,
            case.weights,
            cache,
            0,
            embeds,
            pli,
            stages=stages,
            shared_layers_last_row_only=False,
            forced_inputs={k: round_bf16(v) for k, v in inputs32.items()},
        )
        for layer in range(CFG.num_hidden_layers):
            pairs = [(stages[f"layers.{layer}.output"], out16[layer], out32[layer])]
            if layer in cache32:
                positions = range(len(prompt) - len(cache32[layer][0]), len(prompt))
                ok, ov = ours_at(cache, layer, 0, positions)
                pairs += [(ok, cache16[layer][0], cache32[layer][0]), (ov, cache16[layer][1], cache32[layer][1])]
            for ours, bf16, fp32 in pairs:
                mine.append((ours - fp32).ravel())
                theirs.append((bf16 - fp32).ravel())
                ratios.append(relative_l2(ours, fp32) / relative_l2(bf16, fp32))
    total = np.linalg.norm(np.concatenate(mine)) / np.linalg.norm(np.concatenate(theirs))
    print(
        f"per-layer rounding cost vs transformers-bf16: {total:.2f} (single tensors {min(ratios):.2f}"
        f"..{max(ratios):.2f})"
    )
    assert total <= 1.5


def test_mlx_cuda_v1_end_to_end_against_transformers(case):
    logits, caches = emulate(MLX_CUDA_V1, case.weights)
    fp32, bf16 = case.hf32["logits"], case.hf16["logits"]
    ours, theirs = relative_l2(logits, fp32), relative_l2(bf16, fp32)
    steps = [relative_l2(a, b) / relative_l2(x, b) for a, x, b in zip(logits, bf16, fp32)]
    print(
        f"end to end: ours {ours:.3e}, transformers-bf16 {theirs:.3e} (ratio {ours / theirs:.2f}; per step "
        f"{min(steps):.2f}..{max(steps):.2f})"
    )
    assert ours <= 2.0 * theirs  # a gross-error guard: the per-layer test above is the 1.5x criterion
    assert theirs <= 0.2  # the regime the docstring describes (BF16 noise amplified, not a broken reference)


# ---------------------------------------------------------------------------------------------- program properties
@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_prefill_plus_decode_steps_equals_a_longer_prefill(case, contract):
    """Bit for bit, logits and cache; also from a dirty slot (one a longer sequence used before)."""
    logits, caches = emulate(contract, case.weights)
    for k in (1, 2, 5, len(CONTINUATION)):
        longer = PROMPT + CONTINUATION[:k]
        cache = KVCache(KVCacheLayout.for_config(CFG, contract, slots=3, capacity=CAPACITY))
        embeds, pli = DEC.text_inputs(contract, CFG, case.weights, longer)
        whole = DEC.prefill(contract, CFG, case.weights, cache, 0, embeds, pli)
        np.testing.assert_array_equal(whole, logits[k], err_msg=f"{k} decode steps")
        for layer in range(CFG.first_kv_shared_layer):
            written = min(len(longer), cache.layout.rows(layer))
            np.testing.assert_array_equal(cache.keys[layer][0][:written], caches[k].keys[layer][0][:written])
            np.testing.assert_array_equal(cache.values[layer][0][:written], caches[k].values[layer][0][:written])
    dirty = KVCache(KVCacheLayout.for_config(CFG, contract, slots=3, capacity=CAPACITY))
    emulate(contract, case.weights, prompt=[2] + CONTINUATION * 3, continuation=[5, 6], slot=1, cache=dirty)
    again, _ = emulate(contract, case.weights, slot=1, cache=dirty)
    np.testing.assert_array_equal(again, logits)


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_batched_decode_equals_each_sequence_alone(case, contract):
    w = case.weights
    prompts = {0: PROMPT, 2: [2, 9, 8, 7, 6, 5, 4, 3]}
    layout = KVCacheLayout.for_config(CFG, contract, slots=3, capacity=CAPACITY)
    batch, alone = KVCache(layout), {s: KVCache(layout) for s in prompts}
    for slot, prompt in prompts.items():
        for cache in (batch, alone[slot]):
            DEC.prefill(contract, CFG, w, cache, slot, *DEC.text_inputs(contract, CFG, w, prompt))
    untouched = batch.copy()
    for step, tokens in enumerate(([4368, 17], [107, 18], [302, 600])):
        slots, positions = list(prompts), [len(prompts[s]) + step for s in prompts]
        text, ple = DEC.token_rows(CFG, w, tokens)
        together = DEC.decode_step(contract, CFG, w, batch, slots, positions, text, ple)
        for b, slot in enumerate(slots):
            single = DEC.decode_step(
                contract, CFG, w, alone[slot], [slot], [positions[b]], text[b : b + 1], ple[b : b + 1]
            )
            np.testing.assert_array_equal(together[b], single[0])
    for layer in range(CFG.first_kv_shared_layer):  # slot 1 was not in the batch: its rows are untouched
        np.testing.assert_array_equal(batch.keys[layer][1], untouched.keys[layer][1])
        for slot in prompts:
            np.testing.assert_array_equal(batch.keys[layer][slot], alone[slot].keys[layer][slot])


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_skipping_the_shared_layers_prompt_rows_is_exact(case, contract):
    """Spec §7.5: the shared layers' outputs matter for the last prompt row only."""
    w = case.weights
    embeds, pli = DEC.text_inputs(contract, CFG, w, PROMPT)
    layout = KVCacheLayout.for_config(CFG, contract, slots=1, capacity=CAPACITY)
    short, full = KVCache(layout), KVCache(layout)
    np.testing.assert_array_equal(
        DEC.prefill(contract, CFG, w, short, 0, embeds, pli),
        DEC.prefill(contract, CFG, w, full, 0, embeds, pli, shared_layers_last_row_only=False),
    )


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_decode_step_inputs_are_the_prefill_stage_inputs(case, contract):
    """A token's decode-step embedding and per-layer inputs are the prefill stage's rows for it."""
    w = case.weights
    embeds, pli = DEC.text_inputs(contract, CFG, w, PROMPT)
    text, ple = DEC.token_rows(CFG, w, PROMPT)
    np.testing.assert_array_equal(embeds, P.scaled_text_rows(contract, CFG, text))
    stage = P.dense_ple(
        contract, CFG, embeds, ple, w["per_layer_model_projection"], w["per_layer_projection_norm"], len(PROMPT)
    )
    np.testing.assert_array_equal(pli, stage["per_layer_inputs"])


def test_every_rounding_point_is_reached(case, monkeypatch):
    reached: set[str] = set()
    original = D.rnd

    def spy(c, x, point):
        reached.add(point)
        return original(c, x, point)

    monkeypatch.setattr(D, "rnd", spy)
    emulate(MLX_CUDA_V1, case.weights, continuation=CONTINUATION[:1])
    assert reached == set(POINTS)


def test_input_errors(case):
    w, c = case.weights, MLX_CUDA_V1
    cache = KVCache(KVCacheLayout.for_config(CFG, c, slots=2, capacity=16))
    embeds, pli = DEC.text_inputs(c, CFG, w, PROMPT)
    with pytest.raises(ValueError, match="slot 2"):
        DEC.prefill(c, CFG, w, cache, 2, embeds, pli)
    with pytest.raises(ValueError, match="capacity"):
        DEC.prefill(c, CFG, w, cache, 0, np.concatenate([embeds, embeds]), np.concatenate([pli, pli]))
    with pytest.raises(ValueError, match="per_layer_inputs"):
        DEC.prefill(c, CFG, w, cache, 0, embeds, pli[:, :-1])
    text, ple = DEC.token_rows(CFG, w, [5, 6])
    with pytest.raises(ValueError, match="each slot once"):
        DEC.decode_step(c, CFG, w, cache, [0, 0], [3, 4], text, ple)
    with pytest.raises(ValueError, match="position 16"):
        DEC.decode_step(c, CFG, w, cache, [0], [16], text[:1], ple[:1])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        DEC.token_rows(CFG, w, [CFG.vocab_size])
    DEC.prefill(c, CFG, w, cache, 0, embeds, pli)
    with pytest.raises(ValueError, match="reached the KV cache capacity"):
        DEC.greedy(c, CFG, w, cache, 0, embeds, pli, 10, stop_ids=())


# ---------------------------------------------------------------------------------------------- MLX's own ops
def test_mlx_elementwise_chains_are_mlx():
    """gelu_approx, mean and std as MLX evaluates them (mlx 0.32.4, CPU): the rounding points of the table.
    Sums are made exact (small integers times a power of two), so MLX's CPU summation order cannot matter."""
    mx = pytest.importorskip("mlx.core", reason="MLX reference (test-only dependency)")
    nn = pytest.importorskip("mlx.nn")
    bits = (np.arange(1 << 16, dtype=np.uint32) << 16).view(F32)
    x = bits[np.isfinite(bits) & (np.abs(bits) < 1e4)]
    theirs = np.array(nn.gelu_approx(mx.array(x).astype(mx.bfloat16)).astype(mx.float32))
    np.testing.assert_array_equal(D.gelu_tanh(MLX_CUDA_V1, x, D.CORRECTLY_ROUNDED), theirs)
    rng = np.random.default_rng(0)
    for width in (96, 128):
        g = (rng.integers(-64, 65, (64, width)) * 2.0**-5).astype(F32)
        a = mx.array(g).astype(mx.bfloat16)
        mean = np.array(mx.mean(a, axis=-1, keepdims=True).astype(mx.float32))
        std = np.array(mx.std(a, axis=-1, keepdims=True).astype(mx.float32))
        ours_mean = D.mean(MLX_CUDA_V1, g)
        centered = D.rnd(MLX_CUDA_V1, g - ours_mean, "sparsity.centered")
        ours_std = D.rnd(
            MLX_CUDA_V1,
            np.sqrt(D.mean(MLX_CUDA_V1, D.rnd(MLX_CUDA_V1, centered * centered, "sparsity.square"))),
            "sparsity.std",
        )
        np.testing.assert_array_equal(ours_mean, mean)
        np.testing.assert_array_equal(ours_std, std)
