"""The sampling contract (contracts/sampling.py): transformers' warpers' masks exactly, the softmax it should
follow statistically, a draw that depends on (seed, counter) only.

* Masks: on tie-free random logits, the tokens that can be drawn are exactly those transformers'
  `TemperatureLogitsWarper`, `TopKLogitsWarper` and `TopPLogitsWarper` leave finite (the oracle nobody here
  wrote), over many temperatures, k and p.
* Distribution: 40,000 draws at fixed logits (one seed, counters 0..N-1) against the renormalized softmax of
  the kept tokens in float64: Pearson's chi-square below its 0.999 quantile (Wilson-Hilferty), so a sampler
  drawing from a wrong distribution (e.g. skipping the temperature, or the renormalization) fails.
* The draw: `uniform` is in [0, 1) on the 2^-24 grid, spreads evenly, and a row's token does not depend on
  the other rows of the call.
* The compiled sampler (`templates/token_sample.mlir.j2`, llvm-cpu) gives the contract's tokens bit for bit
  (with IREE's exponential), over rows of different parameters and many draws.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts import MLX_CUDA_V1
from gemma3n_iree.contracts.decoder_ops import IREE_MATH
from gemma3n_iree.contracts.sampling import (
    MAX_TOP_K,
    SampleRows,
    SamplingError,
    SamplingParams,
    sample,
    sample_rows,
    sampled_logprob,
    uniform,
)

F32 = np.float32
ROWS, VOCAB = 64, 1000


def _hf_kept(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> set[int]:
    torch = pytest.importorskip("torch")
    warpers = pytest.importorskip("transformers.generation.logits_process")
    scores = torch.from_numpy(logits[None].copy())
    for warp in (
        warpers.TemperatureLogitsWarper(temperature),
        warpers.TopKLogitsWarper(top_k),
        warpers.TopPLogitsWarper(top_p),
    ):
        scores = warp(None, scores)
    return set(np.flatnonzero(torch.isfinite(scores[0]).numpy()).tolist())


def _tie_free_normal_logits(rng: np.random.Generator, size: int) -> np.ndarray:
    """Standard-normal-shaped logits with no two equal: the normal quantiles of one jittered point per
    1/size stratum, shuffled (independent draws collide in float32 now and then, e.g. seed 427)."""
    strata = (np.arange(size) + rng.uniform(0.05, 0.95, size)) / size
    quantiles = np.array([NormalDist().inv_cdf(q) for q in strata])
    return rng.permutation(quantiles).astype(F32)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    temperature=st.sampled_from([0.3, 0.7, 1.0, 1.5]),
    top_k=st.integers(1, MAX_TOP_K),
    top_p=st.sampled_from([0.05, 0.5, 0.9, 0.95, 1.0]),
    spread=st.sampled_from([1.0, 4.0]),
)
def test_the_drawable_tokens_are_transformers_warpers_kept_tokens(seed, temperature, top_k, top_p, spread):
    logits = _tie_free_normal_logits(np.random.default_rng(seed), 1000) * F32(spread)
    assert len(np.unique(logits)) == logits.size  # tie-free: transformers keeps every tie at the k-th logit
    got = sample_rows(logits[None], [SamplingParams(temperature, top_k, top_p, seed)], [0])
    assert set(got.candidates[0][got.kept[0]].tolist()) == _hf_kept(logits, temperature, top_k, top_p)
    assert got.kept[0][got.candidates[0] == got.token[0]].all()


def _chi_square_bound(dof: int, quantile: float = 0.999) -> float:
    """The chi-square distribution's `quantile` (Wilson-Hilferty's normal approximation)."""
    z = NormalDist().inv_cdf(quantile)
    return dof * (1 - 2 / (9 * dof) + z * np.sqrt(2 / (9 * dof))) ** 3


def test_draws_follow_the_renormalized_softmax_of_the_kept_tokens():
    rng = np.random.default_rng(5)
    logits = (rng.standard_normal(300) * 2).astype(F32)
    params, draws = SamplingParams(0.8, 40, 0.9, seed=1234), 40_000
    got = sample(
        np.broadcast_to(logits, (draws, logits.size)),
        np.full(draws, params.temperature, F32),
        np.full(draws, params.top_k, np.int32),
        np.full(draws, params.top_p, F32),
        np.full(draws, params.seed, np.uint32),
        np.arange(draws, dtype=np.uint32),
    )
    kept = got.candidates[0][got.kept[0]]
    z = logits.astype(np.float64)[kept] / params.temperature
    expected = np.exp(z - z.max())
    expected *= draws / expected.sum()
    counts = np.array([(got.token == t).sum() for t in kept])
    assert counts.sum() == draws  # nothing outside the kept tokens is ever drawn
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < _chi_square_bound(len(kept) - 1), (chi2, len(kept))
    # the same draws without the temperature follow another distribution: the test can tell them apart
    plain = np.exp(logits.astype(np.float64)[kept] - logits[kept].max())
    plain *= draws / plain.sum()
    assert float(((counts - plain) ** 2 / plain).sum()) > 10 * _chi_square_bound(len(kept) - 1)


def test_the_uniform_draw_is_on_the_grid_and_even():
    u = uniform(np.uint32(7), np.arange(200_000, dtype=np.uint32))
    assert u.dtype == F32 and (u >= 0).all() and (u < 1).all()
    assert np.array_equal(u * F32(2**24), np.floor(u * F32(2**24)))
    histogram = np.histogram(u, bins=50, range=(0, 1))[0]
    expected = len(u) / 50
    assert ((histogram - expected) ** 2 / expected).sum() < _chi_square_bound(49)
    assert not np.array_equal(uniform(np.uint32(8), np.arange(10, dtype=np.uint32)), u[:10])  # the seed matters


def test_a_rows_token_depends_on_its_own_seed_and_counter_only():
    rng = np.random.default_rng(9)
    logits = (rng.standard_normal((6, 500)) * 3).astype(F32)
    params = [SamplingParams(1.0, 64, 0.95, seed=s) for s in (3, 3, 11, 12, 3, 99)]
    counters = [0, 1, 5, 5, 0, 7]
    together = sample_rows(logits, params, counters).token
    alone = [sample_rows(logits[i : i + 1], [params[i]], [counters[i]]).token[0] for i in range(6)]
    assert together.tolist() == alone


def test_parameters_outside_the_sampler_are_refused_by_name():
    for bad, message in (
        (dict(temperature=0.0), "temperature must be > 0"),
        (dict(temperature=1.0, top_k=0), r"top_k must be in \[1, 64\]"),
        (dict(temperature=1.0, top_k=65), r"top_k must be in \[1, 64\]"),
        (dict(temperature=1.0, top_p=0.0), r"top_p must be in \(0, 1\]"),
        (dict(temperature=1.0, seed=-1), "seed must be a 32-bit"),
    ):
        with pytest.raises(SamplingError, match=message):
            SamplingParams(**bad)


@pytest.fixture(scope="module")
def compiled_sampler():
    from conftest import compile_cpu, run_vmfb

    from gemma3n_iree.emitters.probe import decoder_probe_module
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    module = decoder_probe_module(MLX_CUDA_V1, builtin_decoder_config("tiny"), lambda o: o.token_sample(ROWS, VOCAB))
    vmfb = compile_cpu(module)
    return lambda *args: run_vmfb(vmfb, *args)


def test_the_compiled_sampler_is_the_contract_bit_for_bit(compiled_sampler):
    rng = np.random.default_rng(13)
    shared = (rng.standard_normal(VOCAB) * 2).astype(F32)
    logits = np.where(np.arange(ROWS)[:, None] < ROWS // 2, shared, rng.standard_normal((ROWS, VOCAB)) * 3).astype(F32)
    temperature = rng.choice([0.2, 0.7, 1.0, 1.8], ROWS).astype(F32)
    top_k = rng.integers(1, MAX_TOP_K + 1, ROWS).astype(np.int32)
    top_p = rng.choice([0.1, 0.8, 0.95, 1.0], ROWS).astype(F32)
    seed = rng.integers(0, 2**32, ROWS, dtype=np.uint64).astype(np.uint32)
    counter = rng.integers(0, 2**32, ROWS, dtype=np.uint64).astype(np.uint32)
    counter[: ROWS // 2] = np.arange(ROWS // 2)  # many draws from the same logits: thresholds all over the mass
    got = compiled_sampler(logits, temperature, top_k, top_p, seed.view(np.int32), counter.view(np.int32))
    want = sample(logits, temperature, top_k, top_p, seed, counter, IREE_MATH)
    token, logit, top_logit = got
    np.testing.assert_array_equal(token, want.token)
    np.testing.assert_array_equal(logit.view(np.uint32), want.logit.view(np.uint32))
    np.testing.assert_array_equal(top_logit.view(np.uint32), want.top_logit.view(np.uint32))
    np.testing.assert_array_equal(np.take_along_axis(logits, want.token[:, None], axis=-1)[:, 0], want.logit)
    assert len(set(want.token[: ROWS // 2].tolist())) > 1  # the shared rows did not all draw one token


def test_the_drawn_tokens_logprob_is_the_models_log_softmax():
    """`sampled_logprob` from the greedy selection's -L and the two logits, against float64's log-softmax of
    the drawn token: three F32 roundings (x - m, L, the sum) of values below 40 in magnitude, so within 1e-5."""
    from gemma3n_iree.contracts.decoder_ops import token_select

    rng = np.random.default_rng(21)
    logits = (rng.standard_normal((ROWS, VOCAB)) * 4).astype(F32)
    got = sample_rows(logits, [SamplingParams(1.5, MAX_TOP_K, 1.0, s) for s in range(ROWS)], list(range(ROWS)))
    logprob = sampled_logprob(got.logit, got.top_logit, token_select(logits).logprob)
    x = logits.astype(np.float64)
    log_softmax = x - x.max(-1, keepdims=True) - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))
    want = np.take_along_axis(log_softmax, got.token[:, None], axis=-1)[:, 0]
    assert (got.token != np.argmax(logits, -1)).any()  # some rows drew a token other than the greedy one
    np.testing.assert_allclose(logprob, want, rtol=0, atol=1e-5)


def test_sample_rows_arrays_pad_with_greedy_rows_and_keep_the_uint32_bits():
    rows = SampleRows((SamplingParams(0.7, 5, 0.9, 2**32 - 1), None), (2**32 - 2, 3))
    temperature, top_k, top_p, seed, counter = rows.arrays(4)
    assert temperature.tolist() == [np.float32(0.7), 1.0, 1.0, 1.0] and top_k.tolist() == [5, 1, 1, 1]
    assert seed.view(np.uint32).tolist() == [2**32 - 1, 0, 0, 0] and counter.view(np.uint32).tolist() == [
        2**32 - 2,
        3,
        0,
        0,
    ]
    with pytest.raises(SamplingError, match="width 1"):
        rows.arrays(1)
    with pytest.raises(SamplingError, match="counter"):
        SampleRows((None,), (-1,))
