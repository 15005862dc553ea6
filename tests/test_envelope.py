"""The accumulation envelope: legitimate BF16 outcomes of an F32 dot product under any order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts.emulation import round_bf16
from gemma3n_iree.contracts.envelope import envelope_bf16, exact_f32, inside_envelope, reachable_sums

BF16_VALUES = st.floats(min_value=-(2.0**20), max_value=2.0**20, allow_nan=False, width=32).map(
    lambda v: float(round_bf16(np.float32(v)))
)


@st.composite
def dot_operands(draw):
    """BF16-valued operand pairs, often built to cancel (x and -x terms)."""
    k = draw(st.integers(1, 96))
    a = np.array(draw(st.lists(BF16_VALUES, min_size=k, max_size=k)), np.float32)
    b = np.array(draw(st.lists(BF16_VALUES, min_size=k, max_size=k)), np.float32)
    if draw(st.booleans()) and k >= 2:  # cancellation: append the negated products
        a = np.concatenate([a, -a])
        b = np.concatenate([b, b])
    return a, b


@settings(max_examples=150, deadline=None)
@given(dot_operands())
def test_exact_sum_rounds_into_the_envelope(operands):
    a, b = operands
    exact = np.sum(a.astype(np.float64) * b.astype(np.float64))
    outcomes = envelope_bf16(a, b)
    assert round_bf16(np.float32(exact)) in outcomes


@settings(max_examples=100, deadline=None)
@given(dot_operands())
def test_every_enumerated_order_is_a_member(operands):
    a, b = operands
    outcomes = envelope_bf16(a, b)
    for value in reachable_sums(a * b).values():
        assert inside_envelope(float(round_bf16(value)), a, b)
    assert set(round_bf16(np.array(list(reachable_sums(a * b).values()), np.float32))) <= set(outcomes)


def test_seed_exact_tie_cancellation_reaches_both_zero_and_one():
    """The seed's probe channel: 2^24 + 1 - 2^24 is 0 or 1 depending on the order; both legitimate."""
    a = np.array([2.0**24, 1.0, -(2.0**24)], np.float32)
    b = np.ones(3, np.float32)
    outcomes = envelope_bf16(a, b)
    assert 0.0 in outcomes and 1.0 in outcomes
    assert inside_envelope(0.0, a, b) and inside_envelope(1.0, a, b)
    assert not inside_envelope(2.0, a, b)


def test_seed_probe_magnitudes():
    """±16384, ±2^24, ±1024 and 2^-14 terms (the seed's 3x3 SSCP probe): sums land in {0, 1}-like sets."""
    a = np.array([16384.0, 2.0**24, -16384.0, -(2.0**24), 1024.0, -1024.0, 2.0**-14, 1.0, 0.0], np.float32)
    b = np.ones_like(a)
    outcomes = envelope_bf16(a, b)
    assert round_bf16(exact_f32(a.astype(np.float64))) in outcomes
    assert len(outcomes) >= 2  # the order matters for this element


def test_a_wrong_value_is_outside():
    rng = np.random.default_rng(0)
    a = round_bf16(rng.standard_normal(64).astype(np.float32))
    b = round_bf16(rng.standard_normal(64).astype(np.float32))
    exact = round_bf16(exact_f32(a.astype(np.float64) * b))
    wrong = np.float32(exact * 1.5 + 1.0)
    assert inside_envelope(float(exact), a, b)
    assert not inside_envelope(float(wrong), a, b)
