"""The token selection (`decoder_ops.token_select` / `token_top_k`, template `token_select`): the numpy emulation
against a plain numpy reference (hypothesis), and the compiled probe (llvm-cpu) against both.

* The greedy token is `numpy.argmax`'s (ties to the lowest index), bit for bit; the top k are the first k of
  a stable sort by logit descending (`numpy.lexsort`), exactly, ties included: the two-stage selection
  (chunk maxima, then the best chunks' columns) is exact, which the property test exercises on vocabularies
  with heavy ties and chunk-sized edge cases.
* Log-probabilities are F32 (max, exp(x - max), the block sum, log): within `decoder_ops.logprob_error_bound`
  of the float64 log-softmax of the same F32 logits (a first-order bound from the vocabulary size: the F32
  differences, IREE's exp, the block sum's depth and the log; 1.8e-5 at 262400 tokens). Measured: at most
  ~2e-7 for the greedy token at 262400 tokens (about 1 % of the bound).
* The compiled probe equals the emulation with IREE's own exp and log (`IREE_MATH`) bit for bit; non-finite
  logits are counted and the first one found, so a caller raises without reading the logits.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import compile_cpu, run_vmfb
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts import MLX_CUDA_V1
from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.emitters.decoder_ops import SELECT_CHUNK
from gemma3n_iree.emitters.probe import decoder_probe_module
from gemma3n_iree.emitters.specialisations import TokenSelect
from gemma3n_iree.model.decoder_config import builtin_decoder_config

CFG = builtin_decoder_config("tiny")
F32 = np.float32
ROWS, VOCAB, K = 4, 1000, 20


def reference(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """argmax, the stable top k and the float64 log-softmax of F32 logits [R, V]."""
    x64 = np.asarray(x, np.float64)
    top = x64.max(axis=-1, keepdims=True)
    log_softmax = x64 - top - np.log(np.exp(x64 - top).sum(axis=-1, keepdims=True))
    order = np.stack([np.lexsort((np.arange(x.shape[-1]), -row))[:k] for row in x64])
    return np.argmax(x, axis=-1), order, log_softmax


def assert_selection(x: np.ndarray, token, logprob, top_tokens=None, top_logprobs=None) -> None:
    """The selection of finite logits x against `reference`: ids exact, log-probabilities within the bound."""
    k = 0 if top_tokens is None else top_tokens.shape[1]
    want_token, want_top, log_softmax = reference(x, max(k, 1))
    np.testing.assert_array_equal(token, want_token)
    shift = x.max(axis=-1).astype(np.float64)[:, None] - np.take_along_axis(x, want_top, 1)
    exact = np.take_along_axis(log_softmax, want_token[:, None], 1)[:, 0]
    assert (np.abs(logprob - exact) <= D.logprob_error_bound(x.shape[-1], logprob)).all()
    if k:
        np.testing.assert_array_equal(top_tokens, want_top[:, :k])
        exact = np.take_along_axis(log_softmax, want_top[:, :k], 1)
        assert (np.abs(top_logprobs - exact) <= D.logprob_error_bound(x.shape[-1], top_logprobs, shift[:, :k])).all()
        np.testing.assert_array_equal(top_tokens[:, 0], token)
        assert (top_logprobs[:, 0] == logprob).all()  # the greedy token's own, bit for bit


# ---------------------------------------------------------------------------------------------- the emulation
@st.composite
def logits(draw) -> tuple[np.ndarray, int]:
    """Rows of logits with many ties (values from a small set, or a few repeated maxima), and k."""
    vocab = draw(st.integers(1, 600))
    k = draw(st.integers(1, min(vocab, 24)))
    rows = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    levels = draw(st.sampled_from([2, 5, 50, 0]))  # 0: continuous values
    if levels:
        x = rng.integers(0, levels, (rows, vocab)).astype(F32) * F32(draw(st.sampled_from([0.5, 3.0, 40.0])))
    else:
        x = (rng.standard_normal((rows, vocab)) * draw(st.sampled_from([0.1, 4.0, 30.0]))).astype(F32)
    if draw(st.booleans()):  # tied maxima at random columns
        x[:, rng.integers(0, vocab, 3)] = x.max() + F32(1)
    if draw(st.booleans()):
        x[:, : vocab // 2] = -x[:, : vocab // 2]  # -0.0 beside 0.0
    return x, k


@settings(max_examples=300, deadline=None)
@given(logits())
def test_the_emulation_is_argmax_and_a_stable_top_k(case):
    x, k = case
    selection = D.token_select(x)
    ids, logprobs = D.token_top_k(x, k)
    assert_selection(x, selection.token, selection.logprob, ids, logprobs)
    assert (selection.nonfinite == 0).all() and (selection.first_nonfinite == x.shape[-1]).all()


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 300_000), st.integers(1, 40))
def test_the_chunk_width_leaves_k_chunks(vocab, k):
    if k > vocab:
        with pytest.raises(ValueError, match="1 <= k <= vocabulary size"):
            D.top_k_chunk(vocab, k)
        return
    width = D.top_k_chunk(vocab, k)
    assert width & (width - 1) == 0 and width <= D.TOP_K_CHUNK and -(-vocab // width) >= k
    assert width == D.TOP_K_CHUNK or vocab // (2 * width) < k


def test_the_bound_at_the_real_vocabulary():
    """1.8e-5 for the greedy token at 262400 tokens: u (3 ln V + 2 + 270)."""
    bound = float(D.logprob_error_bound(262400, -3.0))
    assert bound == pytest.approx(2.0**-24 * (3 * np.log(262400) + 2 + 270)) and 1.8e-5 < bound < 1.9e-5


def test_non_finite_rows_are_counted():
    x = np.zeros((4, 50), F32)
    x[0, [7, 9]] = np.nan
    x[1, 3] = np.inf
    x[2, [30, 2]] = -np.inf
    selection = D.token_select(x)
    assert selection.nonfinite.tolist() == [2, 1, 2, 0]
    assert selection.first_nonfinite.tolist() == [7, 3, 2, 50]
    assert selection.token[1] == 3 and selection.token[3] == 0  # an infinite maximum is still argmax's


# ---------------------------------------------------------------------------------------------- the compiled op
def probe(build):
    vmfb = compile_cpu(decoder_probe_module(MLX_CUDA_V1, CFG, build))
    return lambda *args: run_vmfb(vmfb, *args)


@pytest.fixture(scope="module")
def compiled():
    """The greedy and the top-k probe of ROWS x VOCAB logits (a small vocabulary: the op is shape-generic; the
    decoder program's own, at 262400 tokens, is tests/test_decoder_program.py's)."""
    return probe(lambda o: o.token_select(ROWS, vocab=VOCAB)), probe(lambda o: o.token_select(ROWS, K, VOCAB))


def _cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    spread = (rng.standard_normal((ROWS, VOCAB)) * 5).astype(F32)
    ties = np.round(rng.standard_normal((ROWS, VOCAB)) * 2).astype(F32)  # ~10 distinct values: ties everywhere
    ties[0, [911, 5, 400]] = ties.max() + 1  # the maximum three times, the lowest index in the middle
    flat = np.zeros((ROWS, VOCAB), F32)  # every logit tied
    flat[1, 999] = 1e-30  # one barely larger, last
    flat[2, :] = -0.0
    flat[2, 17] = 0.0
    return {"spread": spread, "ties": ties, "flat": flat}


@pytest.mark.parametrize("case", list(_cases()))
def test_the_compiled_selection_is_the_emulation(compiled, case):
    greedy, top_k = compiled
    x = _cases()[case]
    token, logprob, nonfinite, first = greedy(x)
    want = D.token_select(x, D.IREE_MATH)
    for got, expected in zip(
        (token, logprob, nonfinite, first), (want.token, want.logprob, want.nonfinite, want.first_nonfinite)
    ):
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    ids, logprobs = top_k(x)
    want_ids, want_logprobs = D.token_top_k(x, K, D.IREE_MATH)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(logprobs.view(np.uint32), want_logprobs.view(np.uint32))
    assert_selection(x, token, logprob, ids, logprobs)
    if case == "ties":
        assert token[0] == 5 and ids[0, :3].tolist() == [5, 400, 911]
    if case == "flat":
        assert token.tolist() == [0, 999, 0, 0] and ids[0].tolist() == list(range(K))


def test_the_top_k_stacks_its_selections_without_strided_copies():
    """The top k's K selections become one [K, rows] tensor by contiguous copies, then one transpose: no
    executable writes a single column (stacked as the columns of [rows, K], each selection was a strided copy,
    an executable of its own; the one copy executable left pads the logits to whole chunks)."""
    from gemma3n_iree.emitters.compile import compile_mlir_to, parse_target

    text = decoder_probe_module(MLX_CUDA_V1, CFG, lambda o: o.token_select(ROWS, K, VOCAB))
    sources = compile_mlir_to(text, parse_target("llvm-cpu"), "executable-sources")
    exports = re.findall(r"hal\.executable\.export public @(\w+)", sources)
    assert len([e for e in exports if "memcpy" in e]) == 1
    column_stores = re.findall(rf"dispatch\.tensor\.store [^\n]*sizes = \[{ROWS}, 1\]", sources)
    assert "transpose" in sources and not column_stores


def test_the_compiled_selection_counts_non_finite_logits(compiled):
    greedy, _ = compiled
    x = (np.random.default_rng(4).standard_normal((ROWS, VOCAB))).astype(F32)
    x[0, [640, 12]] = np.nan
    x[1, 999] = np.inf
    x[2, [3, 4, 5]] = -np.inf
    token, _, nonfinite, first = greedy(x)
    assert nonfinite.tolist() == [2, 1, 3, 0] and first.tolist() == [12, 999, 3, VOCAB]
    assert token[0] == VOCAB  # a NaN row has no token
    assert token[1] == 999 and token[3] == np.argmax(x[3])


LONG = 2 * SELECT_CHUNK + 452  # two whole chunks and a padded one


@pytest.fixture(scope="module")
def compiled_long():
    """The greedy probe of rows longer than `SELECT_CHUNK`: its maxima and count reduce chunk by chunk."""
    return probe(lambda o: o.token_select(ROWS, vocab=LONG))


def test_rows_longer_than_a_chunk_select_as_the_emulation(compiled_long):
    """The two-stage reductions (chunks, then across them; the last chunk padded) give the emulation's bits:
    maxima and ties in every chunk, the padded one included, and non-finite logits anywhere."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((ROWS, LONG)) * 5).astype(F32)
    top = x.max() + 1
    x[0, [LONG - 1, SELECT_CHUNK + 3]] = top  # a tie across chunks: the lower index, in the middle chunk
    x[1, [LONG - 2, LONG - 1]] = top  # the maximum twice in the padded chunk
    x[2, [5, 2 * SELECT_CHUNK + 7]] = [np.nan, -np.inf]  # non-finite in the first and the padded chunk
    x[3, :] = -np.inf
    x[3, SELECT_CHUNK] = np.inf
    token, logprob, nonfinite, first = compiled_long(x)
    want = D.token_select(x, D.IREE_MATH)
    for got, expected in zip(
        (token, logprob, nonfinite, first), (want.token, want.logprob, want.nonfinite, want.first_nonfinite)
    ):
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    assert token.tolist() == [SELECT_CHUNK + 3, LONG - 2, LONG, SELECT_CHUNK]
    assert nonfinite.tolist() == [0, 0, 2, LONG] and first.tolist() == [LONG, LONG, 5, 0]


def test_long_rows_reduce_chunk_by_chunk():
    """Each of the greedy selection's three F32 maxima and its count is two reductions past `SELECT_CHUNK`."""
    module = decoder_probe_module(MLX_CUDA_V1, CFG, lambda o: o.token_select(ROWS, vocab=LONG))
    reductions = [line for line in module.splitlines() if "stablehlo.reduce(" in line]
    chunked = [line for line in reductions if f"x3x{SELECT_CHUNK}x" in line]
    assert len(chunked) == 4 and sum("stablehlo.maximum" in line for line in chunked) == 3
    across = [line for line in reductions if f"(tensor<{ROWS}x3xf32>" in line or f"(tensor<{ROWS}x3xi32>" in line]
    assert len(across) == 4  # then each across the 3 chunks


def test_indices_are_found_by_an_f32_maximum_not_an_i32_minimum():
    """IREE 3.13's CUDA code for an i32 minimum reduction gave -1 on every row of an H100 (every greedy token and
    top-k id of the E4B decoder): the selections find the lowest index as an F32 maximum of bound - index."""
    # the greedy selection: the row maximum, the token's and the first non-finite index's F32 maxima
    for build, f32_maxima in (
        (lambda o: o.token_select(ROWS, vocab=VOCAB), 3),
        (lambda o: o.token_select(ROWS, K, VOCAB), None),
    ):
        reductions = [
            line for line in decoder_probe_module(MLX_CUDA_V1, CFG, build).splitlines() if "stablehlo.reduce(" in line
        ]
        assert not [
            line
            for line in reductions
            if "stablehlo.minimum" in line or "stablehlo.maximum" in line and "xi32>" in line
        ]
        if f32_maxima is not None:
            assert sum("stablehlo.maximum" in line and "xf32>" in line for line in reductions) == f32_maxima
    with pytest.raises(ValueError, match="exactly up to 16777216"):
        TokenSelect(1, 2**24 + 1)


def test_the_symbol_names_the_selection():
    assert TokenSelect(4, 262400).symbol == "token_select_R4_V262400"
    assert TokenSelect(4, 262400, 20, 128).symbol == "token_select_R4_V262400_k20_W128"
    assert TokenSelect.from_symbol("token_select_R1_V262400_k20_W128") == TokenSelect(1, 262400, 20, 128)
    with pytest.raises(ValueError, match="both k and its chunk width"):
        TokenSelect(4, 262400, 20)
